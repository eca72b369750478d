"""Write a prime-rl ``rl`` config (TOML) for a taskset and a method, pinned to prime-rl 559b447.

Rules from prime-rl's schema (prime-rl@559b447 packages/prime-rl-configs/src/prime_rl/configs/): unknown keys are errors, so
only keys of 559b447 are written; each shared value is set once (top-level ``max_steps``,
``seq_len``, ``[model]``); ``batch_size`` (rollouts per step) is divisible by ``group_size``;
``[inference]`` makes ``rl`` start vLLM for the policy; one node gets filesystem weight broadcast
written out (prime-rl would pick NCCL without LoRA, which its own single-node CI configs avoid);
multi-node needs ``[slurm]``. The config is checked with
:func:`whileai_core.prime_rl.schema.validate_config` before it is written.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import tomli_w

from .. import defaults as D
from ..errors import ArgumentError, ConfigError
from ..io import write_atomic
from ..methods.specs import method_spec
from ..safepath import Root, UserPath
from ..voice import arg
from . import grammar
from .mapping import method_keys
from .result import GPUSplit, PrimeRLConfig
from .targets import RENDERER_NAMES, pick_renderer, taskset_info
from .teacher import is_local, plan_teacher
from .schema import validate_config

PROMPT_TOKEN_ALLOWANCE = D.PROMPT_TOKEN_ALLOWANCE


def _positive_int(name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ArgumentError(f"`{name}` must be an integer >= {minimum}; got {value!r}")
    return value


def prime_rl_config(taskset: str, method: Any = "grpo", *, model: str,
                    out: str | Path | UserPath | None = None,
                    gpus: int = 2, nodes: int = 1, steps: int = 100, batch: int = D.PRIME_RL_BATCH,
                    lora: bool = True, max_tokens: int | None = None, seq_len: int | None = None,
                    renderer: str | None = None, train_split: str | None = None,
                    eval_split: str | None = None, overrides: dict[str, Any] | None = None,
                    overwrite: bool = False, group_size: int | None = None,
                    lr: float | None = None, temperature: float | None = None,
                    inference_gpus: int | None = None, serve_policy: bool | str = True,
                    eval_interval: int | None = None, eval_examples: int | None = None,
                    vllm_memory: float | None = None, wandb_project: str | None = None,
                    run_name: str | None = None, checkpoint: bool = True,
                    student_vocab: int | str | None = None, seed: int | None = None,
                    root: Root | None = None, teacher_served: bool = False,
                    gpu_memory_gb: float = D.TEACHER_GPU_MEMORY_GB) -> PrimeRLConfig:
    """Write a prime-rl 559b447 ``rl`` config for ``taskset`` trained with ``method``.

    Args:
        taskset: verifiers taskset id (``"reverse-text"``, ``"kuhn-poker"``, ...).
        method: a name (``"grpo"``, ``"max_rl"``, ``"rae"``, ``"opsd"``), a dict
            (``{"name": "opd", "teacher": "model@http://host:8001/v1"}``, ``{"name": "async",
            "method": "grpo", "correction": "icepop"}``) or a spec object (``OPD``, ``OPSD``,
            ``Async``, ``RLMethod``); parsed by :func:`whileai_core.methods.method_spec`.
        model: the policy's model id (``[model] name``).
        out: where to write the TOML (atomically); None writes nothing.
        gpus: GPUs per node. nodes: node count; > 1 writes a multi-node (SLURM) deployment.
        steps: optimizer steps (``max_steps``).
        batch: rollouts per step (``orchestrator.batch_size``), divisible by ``group_size``.
        lora: train a LoRA adapter (``[trainer.model.lora]``, rank 16) instead of full weights.
        max_tokens: completion cap per turn (``max_completion_tokens``); default: the method's
            (OPD 8192), else none (bounded by ``seq_len``).
        seq_len: tokens per sample; default 2048, raised to fit ``max_tokens`` + 1024.
        renderer: ``[orchestrator.renderer] name``; default picked from the model id.
        train_split / eval_split: dataset split of the taskset (e.g. ``"train[:872]"``); an eval
            split adds ``[orchestrator.eval]`` on it.
        overrides: ``{"dotted.key": value}`` applied last (each reported under ``reads``).
        overwrite: replace an existing ``out``.
        group_size: rollouts per prompt; default: the method's (grpo/max_rl 16, rae 1, OPD
            samples, OPSD samples).
        lr: learning rate; default: the method's, else 1e-6 full weights / 1e-4 LoRA.
        temperature: sampling temperature (0..2); default: the method's, else prime-rl's 1.0.
        inference_gpus: GPUs for the policy's vLLM on one node (default half, at least 1).
        serve_policy: True: ``rl`` starts vLLM for the policy (``[inference]``). False or a base
            URL: you serve it (default ``http://localhost:8000/v1``); the report says where.
        eval_interval / eval_examples: eval every N steps (default: ``steps``, plus step 0) on
            N examples (default all).
        vllm_memory: ``[inference.vllm] gpu_memory_utilization``; default prime-rl's 0.9, or
            0.4 for OPD with a local teacher that shares the inference GPU.
        wandb_project: adds ``[monitors.wandb]``. run_name: ``[run] name``.
        checkpoint: a bare ``[ckpt]`` (checkpoint at the end).
        student_vocab: the policy's vocab size or local tokenizer path (OPD tokenizer check).
        seed: the policy's vLLM engine seed (``[inference.vllm] seed``; prime-rl's default 0).
            Runs meant as re-runs of one another (a noise floor) need distinct seeds: prime-rl
            sends no per-request seed, so two engines with one seed sample alike.
        teacher_served: the OPD teacher is already served at its URL: no start line for it.
        gpu_memory_gb: memory of one GPU, to size the OPD teacher (default 80: H100/A100-80GB).
        root: open ``out`` and every tokenizer path (``student_vocab``, the teacher's ``vocab``)
            under this root, confined (the MCP server's workspace); None: the user's own paths.
            Either way they go through the path door (``whileai_core.safepath``).

    Every string that reaches the TOML is checked first (``prime_rl.grammar``: model and taskset
    ids, URLs, names and splits by their grammar, placeholders refused, no control characters
    anywhere), the TOML is written by tomli-w, and its text is parsed back and compared with the
    config before anything is written.

    Returns a :class:`PrimeRLConfig`. Raises SpecError / ConfigError / ArgumentError naming the
    knob and the fix (a method prime-rl cannot run, ``group_size`` 1 with grpo/max_rl, an
    indivisible batch, an existing file...).
    """
    spec = method_spec(method)
    grammar.taskset_id(taskset)
    grammar.model_id(model)
    _check_strings(spec, train_split=train_split, eval_split=eval_split, run_name=run_name,
                   wandb_project=wandb_project, serve_policy=serve_policy)
    gpus, nodes = _positive_int("gpus", gpus), _positive_int("nodes", nodes)
    if seed is not None:
        _positive_int("seed", seed, minimum=0)
    steps, batch = _positive_int("steps", steps), _positive_int("batch", batch)
    info = taskset_info(taskset)

    if renderer is None:
        renderer, renderer_why = pick_renderer(model)
    else:
        if renderer not in RENDERER_NAMES:
            raise ArgumentError(f"`renderer` {renderer!r} is not a prime-rl 559b447 renderer. "
                                f"Fix: one of {', '.join(sorted(RENDERER_NAMES))}, or leave it "
                                "out (picked from the model id)")
        renderer_why = "given"
        renderer = None if renderer == "auto" else renderer

    keys = method_keys(spec, model=model, taskset=info, lora=lora, renderer=renderer,
                       student_vocab=student_vocab, root=root)
    reads = {"model": "model.name (shared: trainer, orchestrator, inference)",
             "steps": "max_steps (shared: trainer, orchestrator)", **keys.reads}
    warnings, notes = list(keys.warnings), list(keys.notes)

    group = keys.group_size if group_size is None else _positive_int("group_size", group_size)
    base = keys.algo["type"]
    if group == 1 and base in ("grpo", "max_rl"):
        raise ConfigError(f"{base} with group_size 1: every advantage is zero (reward minus the "
                          "mean of a group of one), so nothing trains. Fix: group_size >= 2, or "
                          "method='rae' (EMA baseline, group_size 1 allowed)")
    if batch % group:
        raise ConfigError(f"`batch` {batch} is not divisible by group_size {group} (prime-rl "
                          f"rejects it). Fix: batch = {max(group, batch - batch % group)} or "
                          f"{batch + group - batch % group}")
    reads["batch"] = f"orchestrator.batch_size (rollouts per step: {batch // group} prompts x {group})"
    reads["group_size"] = "orchestrator.group_size"

    cap = max_tokens if max_tokens is not None else keys.max_tokens
    if cap is not None:
        _positive_int("max_tokens", cap)
    if max_tokens is None and cap is not None:  # a guess: say so (the rows may carry the cap)
        notes.append(f"max_tokens {cap} is the method's default, not the budget the model was "
                     f"graded on: give {arg('max_tokens')} (the route takes it from rows that "
                     "carry one)")
    if seq_len is None:
        seq = D.PRIME_RL_SEQ_LEN
        if cap is not None and cap + PROMPT_TOKEN_ALLOWANCE > seq:
            seq = -(-(cap + PROMPT_TOKEN_ALLOWANCE) // 1024) * 1024
            notes.append(f"seq_len raised to {seq} to hold {cap} completion tokens plus "
                         f"{PROMPT_TOKEN_ALLOWANCE} prompt tokens")
    else:
        seq = _positive_int("seq_len", seq_len)
        if cap is not None and cap >= seq:
            raise ConfigError(f"`max_tokens` {cap} does not fit `seq_len` {seq} with any prompt. "
                              f"Fix: seq_len >= {cap + PROMPT_TOKEN_ALLOWANCE}")
    reads["seq_len"] = "seq_len (shared: trainer, orchestrator)"

    temp = temperature if temperature is not None else keys.temperature
    if temp is not None and not 0.0 <= temp <= D.PRIME_RL_MAX_TEMPERATURE:
        raise ArgumentError(f"`temperature` must be in [0, {D.PRIME_RL_MAX_TEMPERATURE}]; got {temp}")
    rate = lr if lr is not None else keys.lr
    if rate is None:
        rate = D.PRIME_RL_LR_LORA if lora else D.PRIME_RL_LR_FULL
    if not 0.0 < rate < 1.0:
        raise ArgumentError(f"`lr` must be in (0, 1); got {rate}")
    reads["lr"] = "trainer.optim.lr"

    config: dict[str, Any] = {"max_steps": steps, "seq_len": seq, "model": {"name": model}}
    if run_name is not None:
        config["run"] = {"name": run_name}
    split, deployment = _deployment(gpus, nodes, inference_gpus, serve_policy, run_name or
                                    f"whileai-{base}")
    config.update(deployment)
    if nodes == 1:
        # prime-rl 559b447 picks NCCL broadcast when [inference] is set and LoRA is off
        # (packages/prime-rl-configs/src/prime_rl/configs/rl.py:449-460), and every one of its
        # own single-node CI RL configs forces filesystem instead: "NCCL weight broadcast
        # currently crashes the trainer on CI GPU runners" (configs/ci/integration/
        # reverse-text/start.toml); the weights then pass through output_dir each step
        config["weight_broadcast"] = {"type": "filesystem"}
        reads["weight_broadcast"] = (
            "weight_broadcast.type = 'filesystem' (one node; prime-rl would pick NCCL without "
            "LoRA, which its own single-node CI avoids: NCCL init crashes the trainer). Each "
            "step's weights go through output_dir: keep it on local disk. NCCL: put "
            f"weight_broadcast.type=nccl in {arg('overrides')}")

    orch: dict[str, Any] = {"batch_size": batch, "group_size": group}
    if keys.off_policy_steps is not None:
        orch["max_off_policy_steps"] = keys.off_policy_steps
    orch["algo"] = keys.algo
    if renderer is not None:
        orch["renderer"] = {"name": renderer}
        reads["renderer"] = f"orchestrator.renderer.name = {renderer!r} ({renderer_why})"
    sampling: dict[str, Any] = {}
    if cap is not None:
        sampling["max_completion_tokens"] = cap
        reads["max_tokens"] = "orchestrator.train.sampling.max_completion_tokens"
    if temp is not None:
        sampling["temperature"] = temp
        reads["temperature"] = "orchestrator.train.sampling.temperature"
    train: dict[str, Any] = {}
    if sampling:
        train["sampling"] = sampling
    train["source"] = [_source(info, train_split, "train_split", reads)]
    orch["train"] = train
    if isinstance(serve_policy, str):
        orch["model"] = {"client": {"base_url": serve_policy}}
        reads["serve_policy"] = "orchestrator.model.client.base_url"
    if eval_split is not None:
        interval = steps if eval_interval is None else _positive_int("eval_interval", eval_interval)
        ev: dict[str, Any] = {"interval": interval}
        if eval_examples is not None:
            ev["num_examples"] = _positive_int("eval_examples", eval_examples)
        # prime-rl 559b447 leaves eval.sampling's temperature, top_p, top_k and min_p None,
        # and then the inference server samples at the checkpoint's generation_config values,
        # not the training sampler's (configs/orchestrator.py EvalSamplingConfig): write the
        # training sampler's out (PRIME_RL_TRAIN_SAMPLER: what training sends)
        ev_sampling: dict[str, Any] = {}
        if cap is not None:
            ev_sampling["max_completion_tokens"] = cap
        ev_sampling["temperature"] = D.PRIME_RL_TEMPERATURE if temp is None else temp
        ev_sampling.update(D.PRIME_RL_TRAIN_SAMPLER)
        ev["sampling"] = ev_sampling
        reads["eval_temperature"] = (
            f"orchestrator.eval.sampling: temperature {ev_sampling['temperature']:g}, "
            + ", ".join(f"{k} {v:g}" for k, v in D.PRIME_RL_TRAIN_SAMPLER.items())
            + " (the training sampler's; unset, the server would use the checkpoint's own)")
        ev["source"] = [_source(info, eval_split, "eval_split", reads)]
        orch["eval"] = ev
        reads["eval_interval"] = (f"orchestrator.eval.interval = {interval} (plus the startup eval "
                                  "before any training)")
    elif eval_interval is not None or eval_examples is not None:
        raise ArgumentError("`eval_interval`/`eval_examples` need `eval_split` (the data to "
                            "evaluate on)")
    config["orchestrator"] = orch

    trainer: dict[str, Any] = {"optim": {"lr": rate}}
    if keys.loss is not None:
        trainer["loss"] = keys.loss
    if lora:
        trainer["model"] = {"lora": {"rank": D.LORA_RANK, "alpha": D.LORA_ALPHA}}
        reads["lora"] = (f"trainer.model.lora (rank {D.LORA_RANK}, alpha {D.LORA_ALPHA:g}); "
                         "weight broadcast: filesystem (prime-rl's choice with LoRA)")
    else:
        reads["lora"] = "off: full weights (no trainer.model.lora)"
    config["trainer"] = trainer
    if checkpoint:
        config["ckpt"] = {}
        reads["checkpoint"] = "[ckpt] (checkpoint at the end)"

    setup: list[str] = []
    teacher = keys.teacher
    if not isinstance(teacher_served, bool):
        raise ArgumentError(f"`teacher_served` must be true or false; got {teacher_served!r}")
    if isinstance(gpu_memory_gb, bool) or not isinstance(gpu_memory_gb, (int, float)) \
            or not 1 <= gpu_memory_gb <= 1024:
        raise ArgumentError(f"`gpu_memory_gb` must be a number of GB in [1, 1024]; got "
                            f"{gpu_memory_gb!r}. Fix: 80 for an H100, 141 for an H200")
    plan = None
    if teacher is not None:
        plan = plan_teacher(teacher.model, teacher.url, params_b=teacher.params_b,
                            dtype=teacher.dtype, served=teacher_served, first_free_gpu=gpus,
                            nodes=nodes, gpu_memory_gb=gpu_memory_gb)
        if teacher_served:
            notes[:] = [n for n in notes if not n.startswith("start the teacher first")]
        if plan.layout == "size_unknown":  # said once, as the warning it is
            warnings.append(f"the teacher's size is unknown: {plan.reason}")
        else:
            notes.append(plan.reason)
        if plan.layout == "dedicated" and nodes == 1 and gpus + plan.gpus > D.MODAL_MAX_GPUS:
            warnings.append(
                f"the teacher's {plan.gpus} GPU(s) after the {gpus} prime-rl uses need a node of "
                f"{gpus + plan.gpus} GPUs, more than one node's {D.MODAL_MAX_GPUS}. Fix: serve "
                f"the teacher on a machine of its own and pass {arg('teacher_served', True)} "
                "with its URL, give it a smaller dtype (fp8, int4), or give prime-rl fewer GPUs")
    elif teacher_served:
        raise ArgumentError("`teacher_served` is for OPD: this method has no teacher. Fix: "
                            "drop teacher_served")
    local_teacher = plan is not None and plan.layout in ("colocated", "size_unknown")
    if split.policy_served_by == "rl":
        inference: dict[str, Any] = {}
        memory = vllm_memory
        if memory is None and local_teacher and nodes == 1:
            memory = D.OPD_COLOCATED_MEMORY
            notes.append(f"the teacher at {teacher.url} is local: the policy's vLLM takes "
                         f"{memory} of its GPU's memory so the teacher fits beside it (start the "
                         f"teacher at {memory} too)")
        if memory is not None:
            if not 0.0 < memory <= 1.0:
                raise ArgumentError(f"`vllm_memory` must be in (0, 1]; got {memory}")
            inference["vllm"] = {"gpu_memory_utilization": memory}
            reads["vllm_memory"] = "inference.vllm.gpu_memory_utilization"
        if seed is not None:
            inference.setdefault("vllm", {})["seed"] = seed
            reads["seed"] = (f"inference.vllm.seed = {seed} (the policy's vLLM engine; prime-rl "
                             "sends no per-request seed)")
        config["inference"] = inference
        reads["serve_policy"] = ("[inference]: rl starts vLLM for the policy on "
                                 f"{split.inference_gpus if nodes == 1 else 'the inference'} "
                                 f"{'GPU(s)' if nodes == 1 else 'node(s)'}"
                                 + (" with LoRA serving" if lora else ""))
    else:
        url = serve_policy if isinstance(serve_policy, str) else f"http://localhost:{D.POLICY_PORT}/v1"
        port = urlparse(url).port or D.POLICY_PORT
        lora_flags = (f" --vllm.enable-lora --vllm.max-lora-rank {D.LORA_RANK}" if lora else "")
        devices = ",".join(str(i) for i in range(split.train_gpus, split.train_gpus +
                                                  split.inference_gpus))
        seed_flag = f" --vllm.seed {seed}" if seed is not None else ""
        setup.append(f"CUDA_VISIBLE_DEVICES={devices} uv run inference --vllm.model {model} "
                     f"--server.port {port}{lora_flags}{seed_flag}")
        if seed is not None:
            reads["seed"] = f"your inference server's --vllm.seed {seed} (the start line)"
        notes.append(f"you serve the policy: prime-rl's inference server for {model} must listen at "
                     f"{url} (the trainer takes GPU(s) 0..{split.train_gpus - 1}; the server gets "
                     f"{devices})" + ("; enable LoRA serving, max rank "
                                      f"{D.LORA_RANK}" if lora else ""))
    if nodes > 1 and lora:
        notes.append("LoRA on several nodes: prime-rl moves adapter weights through the "
                      "filesystem, so output_dir must be on storage every node shares")
    if nodes > 1 and plan is not None and is_local(teacher.url) and not teacher_served:
        warnings.append(f"the OPD teacher is at {teacher.url} in a multi-node deployment: "
                        "localhost is the orchestrator's own node; give the teacher's routable "
                        "address")
    if plan is not None and plan.start is not None:
        setup.insert(0, plan.start)
    if wandb_project is not None:
        config["monitors"] = {"wandb": {"project": wandb_project}}
        reads["wandb_project"] = "monitors.wandb.project (shared)"

    if overrides:
        _apply_overrides(config, overrides, reads)

    grammar.check_tree(config)
    check = validate_config(config)
    if not check.ok:
        raise ConfigError("the config would be rejected by prime-rl 559b447: "
                          + "; ".join(check.errors) + ". Fix: change the knob or override named")

    text = _header(keys.label, model, taskset, setup) + tomli_w.dumps(config)
    if tomllib.loads(text) != config:  # the header is comments only: nothing may add a key
        raise ConfigError("the TOML text does not parse back to the config it was written from; "
                          "nothing was written. This is a bug in whileai: please report it")
    path = None
    if out is not None:
        path = str(write_atomic(out, text, overwrite=overwrite, root=root))
    command = f"uv run rl @ {path or '<config.toml>'}"
    return PrimeRLConfig(
        method=keys.label, method_spec={"name": spec.name, **spec.knobs()}, model=model,
        taskset=taskset, config=copy.deepcopy(config), text=text, path=path, reads=reads,
        ignored=keys.ignored, warnings=warnings, notes=notes, command=command,
        setup_commands=setup, gpus=split, steps=steps, batch=batch, group_size=group,
        max_off_policy_steps=(keys.off_policy_steps if keys.off_policy_steps is not None
                              else D.ASYNC_OFF_POLICY_STEPS),
        prime_rl_commit=D.PRIME_RL_COMMIT, teacher=plan)


def _source(info, split: str | None, knob: str, reads: dict[str, str]) -> dict[str, Any]:
    """One ``[[orchestrator.*.source]]`` entry for the taskset (verifiers v1 env block)."""
    taskset: dict[str, Any] = {"id": info.id}
    if split is not None:
        if info.split_key is None:
            raise ConfigError(f"`{knob}` {split!r}: taskset {info.id!r} has no dataset-split key "
                              "that whileai knows, and prime-rl rejects unknown keys. Fix: drop "
                              f"{knob}, or set the taskset's own key through overrides")
        taskset[info.split_key] = split
        reads[knob] = f"orchestrator.{knob.split('_')[0]}.source.env.taskset.{info.split_key}"
    env: dict[str, Any] = {"taskset": taskset}
    for agent in info.agents:
        env[agent] = {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}}
    return {"name": info.id, "env": env}


def _deployment(gpus: int, nodes: int, inference_gpus: int | None, serve_policy: bool | str,
                job_name: str) -> tuple[GPUSplit, dict[str, Any]]:
    served_by = "rl" if serve_policy is True else "you"
    if serve_policy is not True and not (serve_policy is False or isinstance(serve_policy, str)):
        raise ArgumentError(f"`serve_policy` must be True, False or a base URL; got {serve_policy!r}")
    if isinstance(serve_policy, str) and not serve_policy.startswith(("http://", "https://")):
        raise ArgumentError(f"`serve_policy` {serve_policy!r} is not a base URL such as "
                            f"'http://localhost:{D.POLICY_PORT}/v1'")
    if nodes > 1:
        if served_by != "rl":
            raise ArgumentError("multi-node configs here let rl start the policy's inference "
                                "nodes; `serve_policy` must be True when nodes > 1")
        infer_nodes = max(1, nodes // 2)
        split = GPUSplit(nodes=nodes, gpus_per_node=gpus, train_gpus=(nodes - infer_nodes) * gpus,
                         inference_gpus=infer_nodes * gpus, train_nodes=nodes - infer_nodes,
                         inference_nodes=infer_nodes, policy_served_by=served_by)
        return split, {"deployment": {"type": "multi_node", "gpus_per_node": gpus,
                                      "num_train_nodes": nodes - infer_nodes,
                                      "num_infer_nodes": infer_nodes},
                       "slurm": {"job_name": job_name}}
    if gpus < 2:
        raise ArgumentError(f"`{arg('gpus')}` {gpus}: prime-rl puts the trainer and the policy's "
                            "vLLM on separate GPUs, so one node needs at least 2. Fix: "
                            f"{arg('gpus', 2)}")
    infer = max(1, gpus // 2) if inference_gpus is None else inference_gpus
    if isinstance(infer, bool) or not isinstance(infer, int) or not 1 <= infer <= gpus - 1:
        raise ArgumentError(f"`{arg('inference_gpus')}` must be a whole number from 1 to "
                            f"{gpus - 1} ({arg('gpus', gpus)}: the trainer needs at least one); "
                            f"got {inference_gpus!r}")
    split = GPUSplit(nodes=1, gpus_per_node=gpus, train_gpus=gpus - infer, inference_gpus=infer,
                     policy_served_by=served_by)
    return split, {"deployment": {"type": "single_node", "gpus_per_node": gpus,
                                  "num_train_gpus": gpus - infer, "num_infer_gpus": infer}}


def _apply_overrides(config: dict[str, Any], overrides: dict[str, Any], reads: dict[str, str]) -> None:
    if not isinstance(overrides, dict):
        raise ArgumentError(f"`overrides` must map dotted keys to values; got {type(overrides).__name__}")
    for dotted, value in overrides.items():
        parts = str(dotted).split(".")
        node: Any = config
        for i, part in enumerate(parts[:-1]):
            if isinstance(node, list):
                if not part.isdigit() or int(part) >= len(node):
                    raise ArgumentError(f"override `{dotted}`: `{'.'.join(parts[:i + 1])}` is a "
                                        f"list of {len(node)}; index it with 0..{len(node) - 1}")
                node = node[int(part)]
            else:
                if part in node and not isinstance(node[part], (dict, list)):
                    raise ArgumentError(f"override `{dotted}`: `{'.'.join(parts[:i + 1])}` is a "
                                        "value, not a table")
                node = node.setdefault(part, {})
        last = parts[-1]
        if isinstance(node, list):
            raise ArgumentError(f"override `{dotted}` ends inside a list; name a key of one entry")
        if value is None:
            node.pop(last, None)
        elif isinstance(value, dict) and isinstance(node.get(last), dict):
            _merge(node[last], value)
        else:
            node[last] = value
        reads[f"override {dotted}"] = dotted if value is not None else f"{dotted} (removed)"


def _merge(into: dict[str, Any], new: dict[str, Any]) -> None:
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _header(label: str, model: str, taskset: str, setup: list[str]) -> str:
    lines = [f"# prime-rl {D.PRIME_RL_COMMIT} rl config written by whileai-skills",
             f"# method {label}, model {model}, taskset {taskset}"]
    if setup:
        lines.append("# start first:")
        lines += [f"#   {cmd}" for cmd in setup]
    return "\n".join(lines) + "\n\n"


REVERSE_TEXT_STUDENT = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"
REVERSE_TEXT_TEACHER = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL"  # the published OPD teacher
REVERSE_TEXT_TEACHER_URL = "http://localhost:8001/v1"


def reverse_text_arms(opd_teacher: Any = None) -> dict[str, dict[str, Any]]:
    """The prime-rl recipe's three reverse-text arms as ``prime_rl_config`` keyword arguments.

    Shared: student PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT, 20 steps, lr 3e-6 on full
    weights, 128 completion tokens, train ``train[:872]``, eval ``train[872:]`` sampled as
    training samples, 2 GPUs, filesystem weight broadcast, vLLM seeds 1, 2, 3. grpo and
    opd sample 16 per prompt, 128 rollouts a step; opsd 1 per prompt, 32 a step (prime-rl's own
    debug/algo configs). The teacher (opd) is PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL on
    http://localhost:8001/v1, or ``opd_teacher`` (an ``Endpoint`` or ``"model@url"``: e.g. the
    grpo arm's final weights, a teacher that never saw the held-out slice).
    """
    shared = dict(taskset="reverse-text", model=REVERSE_TEXT_STUDENT,
                  steps=20, lr=3e-6, lora=False, max_tokens=128, train_split="train[:872]",
                  eval_split="train[872:]", gpus=2)
    teacher = opd_teacher or f"{REVERSE_TEXT_TEACHER}@{REVERSE_TEXT_TEACHER_URL}"
    # one vLLM seed per arm: the three startup evals sample the same untrained student on the
    # same prompts, and only distinct engine seeds make them re-runs (the noise floor)
    return {
        "grpo": {**shared, "method": "grpo", "batch": 128, "group_size": 16,
                 "seed": REVERSE_TEXT_SEEDS["grpo"]},
        # prime-rl's opsd teacher is the live policy: say so, so nothing lands in `ignored`
        "opsd": {**shared, "method": {"name": "opsd", "anchor": "live"}, "batch": 32,
                 "group_size": 1, "seed": REVERSE_TEXT_SEEDS["opsd"]},
        "opd": {**shared, "method": {"name": "opd", "teacher": teacher}, "batch": 128,
                "group_size": 16, "seed": REVERSE_TEXT_SEEDS["opd"]},
    }


REVERSE_TEXT_SEEDS = {"grpo": 1, "opsd": 2, "opd": 3}


# What a reader of the arms' results must know about where a number may come from. The OPD
# teacher is the checkpoint prime-rl published from its reverse-text example (examples/
# reverse_text: `rl.toml`, 20 steps at 8 prompts x 16 samples), which trains on the taskset's
# default split, the whole `train` split of PrimeIntellect/Reverse-Text-RL (verifiers'
# reverse_text environment loads split "train"). Our held-out slice `train[872:]` is part of that
# split, so the teacher may have trained on held-out prompts; which ones is not published.
REVERSE_TEXT_CAVEATS = {
    "opd": ("teacher PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL was trained by prime-rl's "
            "reverse-text example on the whole `train` split of PrimeIntellect/Reverse-Text-RL, "
            "which contains the held-out slice train[872:]: it may have seen held-out prompts, so "
            "OPD's held-out gain can include what the teacher memorised. A clean comparison needs "
            "a teacher trained on train[:872] only (e.g. this recipe's GRPO arm's checkpoint)"),
}


def _check_strings(spec: Any, *, train_split: str | None, eval_split: str | None,
                   run_name: str | None, wandb_project: str | None,
                   serve_policy: bool | str) -> None:
    """Every string argument that lands in the TOML (or its comments) against its grammar."""
    for knob, value in (("train_split", train_split), ("eval_split", eval_split)):
        if value is not None:
            grammar.split(value, argument=knob)
    for knob, value in (("run_name", run_name), ("wandb_project", wandb_project)):
        if value is not None:
            grammar.name(value, argument=knob)
    if isinstance(serve_policy, str):
        grammar.url(serve_policy, argument="serve_policy")
    inner = getattr(spec, "method", None)
    for part in (spec, inner):
        teacher = getattr(part, "teacher", None)
        if teacher is not None:
            grammar.model_id(teacher.model, argument="method.teacher.model")
            grammar.url(teacher.url, argument="method.teacher.url")
        template = getattr(part, "template", None)
        if isinstance(template, str):
            grammar.text(template, argument="method.template")
