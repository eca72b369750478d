"""Write a prime-rl ``rl`` config (TOML) for a taskset and a method, pinned to prime-rl 559b447.

Rules from prime-rl's schema (packages/prime-rl-configs/src/prime_rl/configs/): unknown keys are
errors, so only keys of 559b447 are written; each shared value is set once (top-level
``max_steps``, ``seq_len``, ``[model]``); ``batch_size`` is divisible by ``group_size``;
``[inference]`` makes ``rl`` start vLLM for the policy; one node gets filesystem weight broadcast
(:func:`_weight_broadcast`); multi-node needs ``[slurm]``. The config is checked with
:func:`whileai_core.prime_rl.schema.validate_config` before it is written.
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import urlparse

import tomli_w
from pydantic import Field

from .. import defaults as D
from ..errors import ArgumentError, ConfigError
from ..io import write_atomic
from ..methods.specs import method_names
from ..operations import WRITES, operation
from ..operations.args import (MAX_COUNT, MAX_GPUS_PER_NODE, MAX_NODES, MAX_TOKENS, MAX_VOCAB,
                               METHOD_SCHEMA_URI, OUT, Arg, Overwrite, Seed, WorkspaceRoot)
from ..voice import arg
from . import grammar
from .request import ConfigRequest
from .result import PrimeRLConfig
from .schema import validate_config
from .teacher import is_local


# --- the arguments as the surfaces take them ---------------------------------------------------
# The method's object forms are detailed in the resource whileai://methods/schema.json (and
# docs/methods.md), so the tool's own input schema stays small.

def _method_doc() -> str:
    return ("The method: a name or an object of its name and knobs, e.g. {\"name\": \"opd\", "
            "\"teacher\": \"Qwen/Qwen3-32B@http://host:8001/v1\"} ('opd' needs its teacher). "
            f"Every knob: the resource {METHOD_SCHEMA_URI}; route_rows's next_step gives the "
            "exact value.")


def _method_schema() -> dict[str, Any]:
    return {"anyOf": [{"type": "string", "enum": list(method_names())},
                      {"type": "object", "required": ["name"]}]}


def _int(low: int, high: int, text: str) -> Any:
    return Annotated[int | None, Field(ge=low, le=high, description=text)]


# the optional counts (null: the method's default)
GroupSize = _int(1, MAX_COUNT, "Rollouts per prompt.")
MaxTokens = _int(1, MAX_TOKENS, "Completion token cap per turn.")
SeqLen = _int(1, MAX_TOKENS, "Tokens per sample (null: 2048, raised to fit max_tokens).")
EvalInterval = _int(1, MAX_COUNT, "Evaluate every N steps (null: at the start and the end).")
EvalExamples = _int(1, MAX_COUNT, "Examples per eval (null: the whole split).")
InferenceGpus = _int(1, MAX_GPUS_PER_NODE, "GPUs for the policy's vLLM on a node (null: half).")
StudentVocab = _int(1, MAX_VOCAB, "The policy's vocabulary size, for the OPD tokenizer check.")


@operation(
    cli="config", toolset="core", effect=WRITES, title="Write a prime-rl config",
    description=(
        "Write a prime-rl (commit 559b447) `rl` TOML for a taskset, a method and a model, "
        "checked against prime-rl's schema first. Returns the TOML, where each knob landed, "
        "what prime-rl ignores and why, warnings, the launch command and, for OPD, how the "
        "teacher is served (`teacher`). Writes `out` atomically, never over a file unless "
        "overwrite=true. Knobs left null take the method's default."),
    doing="writing a prime-rl config",
    serves=("method_spec", "RLMethod", "OPD", "OPSD", "Async", "Endpoint"))
def prime_rl_config(
        taskset: Annotated[str, Field(min_length=1, max_length=500, description=(
            "verifiers taskset/environment id to train on, e.g. 'reverse-text'.")),
            Arg(positional=True)],
        method: Annotated[str | dict[str, Any], Field(examples=[
            "grpo", {"name": "opsd", "privileged": "reference"}]),
            Arg(describe=_method_doc, schema=_method_schema)] = "grpo", *,
        model: Annotated[str, Field(min_length=1, max_length=500, description=(
            "Hub id of the policy to train, e.g. 'Qwen/Qwen3-8B'."))],
        out: Annotated[str | None, Field(max_length=4096, description=(
            "Where to write the TOML (folders are created); null: only preview it.")),
            Arg(OUT, metavar="FILE", writes="toml")] = None,
        overwrite: Overwrite = False,
        gpus: Annotated[int, Field(ge=1, le=MAX_GPUS_PER_NODE,
                                   description="GPUs per node.")] = D.PRIME_RL_GPUS,
        nodes: Annotated[int, Field(ge=1, le=MAX_NODES, description=(
            "Nodes; more than 1 writes a multi-node (SLURM) deployment."))] = 1,
        steps: Annotated[int, Field(ge=1, le=MAX_COUNT, description=(
            "Optimizer steps (max_steps)."))] = D.PRIME_RL_STEPS,
        batch: Annotated[int, Field(ge=1, le=MAX_COUNT, description=(
            "Rollouts per step; divisible by group_size."))] = D.PRIME_RL_BATCH,
        group_size: GroupSize = None,
        lora: Annotated[bool, Field(description=(
            "Train a LoRA adapter (false: full weights)."))] = True,
        lr: Annotated[float | None, Field(gt=0, lt=1, allow_inf_nan=False,
                                          description="Learning rate.")] = None,
        temperature: Annotated[float | None, Field(
            ge=0, le=D.PRIME_RL_MAX_TEMPERATURE, allow_inf_nan=False,
            description="Sampling temperature, in [0, 2].")] = None,
        max_tokens: MaxTokens = None,
        seq_len: SeqLen = None,
        renderer: Annotated[str | None, Field(max_length=200, description=(
            "prime-rl chat renderer (null: from the model id)."))] = None,
        train_split: Annotated[str | None, Field(max_length=200, description=(
            "Split to train on, e.g. 'train[:872]'."))] = None,
        eval_split: Annotated[str | None, Field(max_length=200, description=(
            "Split to evaluate on (adds an eval section)."))] = None,
        eval_interval: EvalInterval = None,
        eval_examples: EvalExamples = None,
        inference_gpus: InferenceGpus = None,
        serve_policy: Annotated[bool | Annotated[str, Field(max_length=2000)], Field(description=(
            "true: prime-rl starts vLLM for the policy; false or a base URL: you serve it."))
        ] = True,
        vllm_memory: Annotated[float | None, Field(gt=0, le=1, allow_inf_nan=False, description=(
            "vLLM gpu_memory_utilization."))] = None,
        student_vocab: StudentVocab = None,
        seed: Annotated[Seed, Field(description=(
            "The policy's vLLM seed ([inference.vllm]; null: 0). Re-runs for a noise floor need "
            "distinct seeds: two engines with one seed sample alike."))] = None,
        overrides: Annotated[dict[str, Any] | None, Field(max_length=200, description=(
            "Dotted prime-rl keys set last, each to its value (e.g. trainer.optim.max_norm to "
            "0.5); each is reported under `reads`.")), Arg(metavar="KEY=VALUE")] = None,
        wandb_project: Annotated[str | None, Field(max_length=200, description=(
            "Adds a Weights & Biases monitor for this project."))] = None,
        run_name: Annotated[str | None, Field(max_length=200,
                                              description="The run's name.")] = None,
        checkpoint: Annotated[bool, Field(description="Save a checkpoint at the end.")] = True,
        teacher_served: Annotated[bool, Field(description=(
            "OPD: true when the teacher already runs at its URL; false: `teacher` says how to "
            "start it."))
        ] = False,
        gpu_memory_gb: Annotated[float, Field(ge=1, le=1024, allow_inf_nan=False, description=(
            "Memory of one GPU in GB, to size the OPD teacher (80: H100; 141: H200)."))
        ] = D.TEACHER_GPU_MEMORY_GB,
        root: WorkspaceRoot = None) -> PrimeRLConfig:
    """Write a prime-rl 559b447 ``rl`` config for ``taskset`` trained with ``method``.

    ``method``: a name, a dict or a spec object (``OPD``, ``OPSD``, ``Async``, ``RLMethod``),
    parsed by :func:`whileai_core.methods.method_spec`. Knobs left None take the method's
    default, else prime-rl's: ``group_size`` (grpo/max_rl 16, rae 1), ``lr`` (1e-6 full weights,
    1e-4 LoRA), ``max_tokens`` (OPD 8192; else none, bounded by ``seq_len``), ``seq_len`` (2048,
    raised to fit ``max_tokens`` + 1024), ``vllm_memory`` (0.9; 0.4 for OPD with a local teacher
    on the inference GPU; read only when rl starts the policy's vLLM). ``lora``: rank 16.
    ``seed``: the policy's vLLM engine seed; re-runs meant for a noise floor need distinct seeds
    (prime-rl sends no per-request seed, so two engines with one seed sample alike). ``root``:
    open ``out`` and every tokenizer path under this root, confined (the MCP server's
    workspace); None: the user's own paths. Either way through the path door
    (``whileai_core.safepath``).

    Every argument is checked once, first (:class:`.request.ConfigRequest`; every string that
    reaches the TOML by ``prime_rl.grammar``); one builder per table (``TABLES``) then reads the
    request, the overrides are applied, and the TOML text is parsed back and compared with the
    config before anything is written. Raises SpecError / ConfigError / ArgumentError naming the
    knob and the fix.
    """
    request = ConfigRequest.of(**locals())  # every argument, by name
    reads, notes, warnings = dict(request.reads), list(request.notes), list(request.warnings)
    config: dict[str, Any] = {}
    for table in TABLES:
        config.update(table(request, reads))
    if request.overrides:
        _apply_overrides(config, request.overrides, reads)
    setup = _setup(request, notes, warnings)
    text = _checked_text(request, config, setup)
    path = None
    if request.out is not None:
        path = str(write_atomic(request.out, text, overwrite=request.overwrite, root=request.root))
    spec, keys = request.spec, request.keys
    return PrimeRLConfig(
        method=keys.label, method_spec={"name": spec.name, **spec.knobs()}, model=request.model,
        taskset=request.taskset.id, config=copy.deepcopy(config), text=text, path=path,
        reads=reads, ignored=keys.ignored, warnings=warnings, notes=notes,
        command=f"uv run rl @ {path or '<config.toml>'}", setup_commands=setup,
        gpus=request.gpus, steps=request.steps, batch=request.batch,
        group_size=request.group_size,
        max_off_policy_steps=(keys.off_policy_steps if keys.off_policy_steps is not None
                              else D.ASYNC_OFF_POLICY_STEPS),
        prime_rl_commit=D.PRIME_RL_COMMIT, teacher=request.teacher)


# --- one builder per table: each returns its top-level keys (none when it writes nothing) ------

Reads = dict[str, str]


def _shared(req: ConfigRequest, reads: Reads) -> dict[str, Any]:
    """The shared top-level keys: ``max_steps``, ``seq_len`` and ``[model]``."""
    return {"max_steps": req.steps, "seq_len": req.seq_len, "model": {"name": req.model}}


def _run(req: ConfigRequest, reads: Reads) -> dict[str, Any]:
    return {} if req.run_name is None else {"run": {"name": req.run_name}}


def _deployment(req: ConfigRequest, reads: Reads) -> dict[str, Any]:
    split = req.gpus
    if split.nodes > 1:
        return {"deployment": {"type": "multi_node", "gpus_per_node": split.gpus_per_node,
                               "num_train_nodes": split.train_nodes,
                               "num_infer_nodes": split.inference_nodes}}
    return {"deployment": {"type": "single_node", "gpus_per_node": split.gpus_per_node,
                           "num_train_gpus": split.train_gpus,
                           "num_infer_gpus": split.inference_gpus}}


def _slurm(req: ConfigRequest, reads: Reads) -> dict[str, Any]:
    """Several nodes launch through SLURM: the job is named after the run."""
    if req.gpus.nodes == 1:
        return {}
    return {"slurm": {"job_name": req.run_name or f"whileai-{req.keys.algo['type']}"}}


def _weight_broadcast(req: ConfigRequest, reads: Reads) -> dict[str, Any]:
    if req.gpus.nodes > 1:
        return {}
    # prime-rl 559b447 picks NCCL broadcast when [inference] is set and LoRA is off
    # (packages/prime-rl-configs/src/prime_rl/configs/rl.py:449-460), and every one of its
    # own single-node CI RL configs forces filesystem instead: "NCCL weight broadcast
    # currently crashes the trainer on CI GPU runners" (configs/ci/integration/
    # reverse-text/start.toml); the weights then pass through output_dir each step
    reads["weight_broadcast"] = (
        "weight_broadcast.type = 'filesystem' (one node; prime-rl would pick NCCL without "
        "LoRA, which its own single-node CI avoids: NCCL init crashes the trainer). Each "
        "step's weights go through output_dir: keep it on local disk. NCCL: put "
        f"weight_broadcast.type=nccl in {arg('overrides')}")
    return {"weight_broadcast": {"type": "filesystem"}}


def _orchestrator(req: ConfigRequest, reads: Reads) -> dict[str, Any]:
    """``[orchestrator]``: the batch, the method's algo, the renderer, the train and eval data,
    and the policy's server when you serve it."""
    orch: dict[str, Any] = {"batch_size": req.batch, "group_size": req.group_size}
    if req.keys.off_policy_steps is not None:
        orch["max_off_policy_steps"] = req.keys.off_policy_steps
    orch["algo"] = req.keys.algo
    if req.renderer is not None:
        orch["renderer"] = {"name": req.renderer}
        reads["renderer"] = f"orchestrator.renderer.name = {req.renderer!r} ({req.renderer_why})"
    orch["train"] = _train(req, reads)
    if isinstance(req.serve_policy, str):
        orch["model"] = {"client": {"base_url": req.serve_policy}}
        reads["serve_policy"] = "orchestrator.model.client.base_url"
    if req.eval_split is not None:
        orch["eval"] = _eval(req, reads)
    return {"orchestrator": orch}


def _train(req: ConfigRequest, reads: Reads) -> dict[str, Any]:
    """``[orchestrator.train]``: its sampler (when a cap or a temperature is set) and source."""
    sampling: dict[str, Any] = {}
    if req.max_tokens is not None:
        sampling["max_completion_tokens"] = req.max_tokens
        reads["max_tokens"] = "orchestrator.train.sampling.max_completion_tokens"
    if req.temperature is not None:
        sampling["temperature"] = req.temperature
        reads["temperature"] = "orchestrator.train.sampling.temperature"
    train: dict[str, Any] = {"sampling": sampling} if sampling else {}
    train["source"] = [_source(req, req.train_split, "train_split", reads)]
    return train


def _eval(req: ConfigRequest, reads: Reads) -> dict[str, Any]:
    """``[orchestrator.eval]`` on ``eval_split``, sampled as training samples.

    prime-rl 559b447 leaves eval.sampling's temperature, top_p, top_k and min_p None, and then
    the inference server samples at the checkpoint's generation_config values, not the training
    sampler's (configs/orchestrator.py EvalSamplingConfig): the training sampler's are written
    out (PRIME_RL_TRAIN_SAMPLER: what training sends).
    """
    ev: dict[str, Any] = {"interval": req.eval_interval}
    if req.eval_examples is not None:
        ev["num_examples"] = req.eval_examples
    sampling: dict[str, Any] = {}
    if req.max_tokens is not None:
        sampling["max_completion_tokens"] = req.max_tokens
    sampling["temperature"] = D.PRIME_RL_TEMPERATURE if req.temperature is None else req.temperature
    sampling.update(D.PRIME_RL_TRAIN_SAMPLER)
    ev["sampling"] = sampling
    reads["eval_temperature"] = (
        f"orchestrator.eval.sampling: temperature {sampling['temperature']:g}, "
        + ", ".join(f"{k} {v:g}" for k, v in D.PRIME_RL_TRAIN_SAMPLER.items())
        + " (the training sampler's; unset, the server would use the checkpoint's own)")
    ev["source"] = [_source(req, req.eval_split, "eval_split", reads)]
    reads["eval_interval"] = (f"orchestrator.eval.interval = {req.eval_interval} (plus the "
                              "startup eval before any training)")
    return ev


def _source(req: ConfigRequest, split: str | None, knob: str, reads: Reads) -> dict[str, Any]:
    """One ``[[orchestrator.*.source]]`` entry for the taskset (verifiers v1 env block)."""
    info = req.taskset
    taskset: dict[str, Any] = {"id": info.id}
    if split is not None:  # the request made sure the taskset has a split key
        taskset[info.split_key] = split
        reads[knob] = f"orchestrator.{knob.split('_')[0]}.source.env.taskset.{info.split_key}"
    env: dict[str, Any] = {"taskset": taskset}
    for agent in info.agents:
        env[agent] = {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}}
    return {"name": info.id, "env": env}


def _trainer(req: ConfigRequest, reads: Reads) -> dict[str, Any]:
    """``[trainer]``: the learning rate, the method's loss, and LoRA when it is on."""
    trainer: dict[str, Any] = {"optim": {"lr": req.lr}}
    if req.keys.loss is not None:
        trainer["loss"] = req.keys.loss
    if req.lora:
        trainer["model"] = {"lora": {"rank": D.LORA_RANK, "alpha": D.LORA_ALPHA}}
        reads["lora"] = (f"trainer.model.lora (rank {D.LORA_RANK}, alpha {D.LORA_ALPHA:g}); "
                         "weight broadcast: filesystem (prime-rl's choice with LoRA)")
    else:
        reads["lora"] = "off: full weights (no trainer.model.lora)"
    return {"trainer": trainer}


def _ckpt(req: ConfigRequest, reads: Reads) -> dict[str, Any]:
    if not req.checkpoint:
        return {}
    reads["checkpoint"] = "[ckpt] (checkpoint at the end)"
    return {"ckpt": {}}


def _inference(req: ConfigRequest, reads: Reads) -> dict[str, Any]:
    """``[inference]``: rl starts vLLM for the policy. A policy you serve has none: its seed
    goes on your server's start line (:func:`_setup`)."""
    split, seed = req.gpus, req.seed
    if split.policy_served_by != "rl":
        if seed is not None:
            reads["seed"] = f"your inference server's --vllm.seed {seed} (the start line)"
        return {}
    inference: dict[str, Any] = {}
    if req.vllm_memory is not None:
        inference["vllm"] = {"gpu_memory_utilization": req.vllm_memory}
        reads["vllm_memory"] = "inference.vllm.gpu_memory_utilization"
    if seed is not None:
        inference.setdefault("vllm", {})["seed"] = seed
        reads["seed"] = (f"inference.vllm.seed = {seed} (the policy's vLLM engine; prime-rl "
                         "sends no per-request seed)")
    one = split.nodes == 1
    reads["serve_policy"] = ("[inference]: rl starts vLLM for the policy on "
                             f"{split.inference_gpus if one else 'the inference'} "
                             f"{'GPU(s)' if one else 'node(s)'}"
                             + (" with LoRA serving" if req.lora else ""))
    return {"inference": inference}


def _monitors(req: ConfigRequest, reads: Reads) -> dict[str, Any]:
    if req.wandb_project is None:
        return {}
    reads["wandb_project"] = "monitors.wandb.project (shared)"
    return {"monitors": {"wandb": {"project": req.wandb_project}}}


# prime-rl 559b447's tables, in the order the TOML holds them
TABLES: tuple[Callable[[ConfigRequest, Reads], dict[str, Any]], ...] = (
    _shared, _run, _deployment, _slurm, _weight_broadcast, _orchestrator, _trainer, _ckpt,
    _inference, _monitors)


# --- what runs outside the TOML, and the text ---------------------------------------------------

def _setup(req: ConfigRequest, notes: list[str], warnings: list[str]) -> list[str]:
    """The servers to start before ``rl`` (the OPD teacher, a policy you serve), and what the
    deployment asks of you, added to ``notes`` and ``warnings``."""
    split, lora, plan = req.gpus, req.lora, req.teacher
    setup: list[str] = []
    if split.policy_served_by != "rl":
        url = (req.serve_policy if isinstance(req.serve_policy, str)
               else f"http://localhost:{D.POLICY_PORT}/v1")
        port = urlparse(url).port or D.POLICY_PORT
        lora_flags = (f" --vllm.enable-lora --vllm.max-lora-rank {D.LORA_RANK}" if lora else "")
        devices = ",".join(str(i) for i in range(split.train_gpus, split.train_gpus +
                                                  split.inference_gpus))
        seed_flag = f" --vllm.seed {req.seed}" if req.seed is not None else ""
        setup.append(f"CUDA_VISIBLE_DEVICES={devices} uv run inference --vllm.model {req.model} "
                     f"--server.port {port}{lora_flags}{seed_flag}")
        notes.append(f"you serve the policy: prime-rl's inference server for {req.model} must "
                     f"listen at {url} (the trainer takes GPU(s) 0..{split.train_gpus - 1}; the "
                     f"server gets {devices})" + ("; enable LoRA serving, max rank "
                                                  f"{D.LORA_RANK}" if lora else ""))
    if split.nodes > 1 and lora:
        notes.append("LoRA on several nodes: prime-rl moves adapter weights through the "
                     "filesystem, so output_dir must be on storage every node shares")
    teacher = req.keys.teacher
    if split.nodes > 1 and plan is not None and is_local(teacher.url) and not req.teacher_served:
        warnings.append(f"the OPD teacher is at {teacher.url} in a multi-node deployment: "
                        "localhost is the orchestrator's own node; give the teacher's routable "
                        "address")
    if plan is not None and plan.start is not None:
        setup.insert(0, plan.start)
    return setup


def _checked_text(req: ConfigRequest, config: dict[str, Any], setup: list[str]) -> str:
    """The TOML text, once the config passes the grammar and prime-rl's schema and the text
    parses back to it."""
    grammar.check_tree(config)
    check = validate_config(config)
    if not check.ok:
        raise ConfigError("the config would be rejected by prime-rl 559b447: "
                          + "; ".join(check.errors), fix="change the knob or override named")
    text = _header(req.keys.label, req.model, req.taskset.id, setup) + tomli_w.dumps(config)
    if tomllib.loads(text) != config:  # the header is comments only: nothing may add a key
        raise ConfigError("the TOML text does not parse back to the config it was written from; "
                          "nothing was written. This is a bug in whileai: please report it")
    return text


def _apply_overrides(config: dict[str, Any], overrides: dict[str, Any], reads: Reads) -> None:
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
    """The prime-rl recipe's three reverse-text arms as ``prime_rl_config`` keyword arguments
    (batch and group sizes from prime-rl's own debug/algo configs). ``opd_teacher``: an
    ``Endpoint`` or ``"model@url"`` in place of the published teacher (e.g. the grpo arm's final
    weights, a teacher that never saw the held-out slice).
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


# Where an arm's number may come from: prime-rl's reverse-text example (examples/reverse_text)
# trained the published teacher on the whole `train` split, which holds our held-out slice.
REVERSE_TEXT_CAVEATS = {
    "opd": ("teacher PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL was trained by prime-rl's "
            "reverse-text example on the whole `train` split of PrimeIntellect/Reverse-Text-RL, "
            "which contains the held-out slice train[872:]: it may have seen held-out prompts, so "
            "OPD's held-out gain can include what the teacher memorised. A clean comparison needs "
            "a teacher trained on train[:872] only (e.g. this recipe's GRPO arm's checkpoint)"),
}


