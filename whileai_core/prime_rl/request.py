"""The arguments of ``prime_rl_config``, checked once and resolved against the method.

:meth:`ConfigRequest.of` is the one place an argument of
:func:`whileai_core.prime_rl.writer.prime_rl_config` is checked, in the order its body reads;
each refusal names the argument and the fix. The writer's table builders refuse nothing; what is
left to refuse is the finished config (an override's path, prime-rl's schema, an existing
``out``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from .. import defaults as D
from ..errors import ArgumentError, ConfigError
from ..methods.specs import method_spec
from ..safepath import Root, UserPath
from ..voice import arg
from . import grammar
from .mapping import MethodKeys, method_keys
from .result import GPUSplit
from .targets import RENDERER_NAMES, Taskset, pick_renderer, taskset_info
from .teacher import TeacherPlan, plan_teacher


@dataclass(frozen=True)
class ConfigRequest:
    """Every argument of ``prime_rl_config``, checked, with the values in force (given, else
    the method's or prime-rl's default; ``vllm_memory`` None when prime-rl does not start the
    policy's vLLM), and what resolving them reports (``reads``, ``notes``, ``warnings``)."""

    taskset: Taskset
    model: str
    spec: Any
    keys: MethodKeys
    steps: int
    batch: int
    group_size: int
    max_tokens: int | None
    seq_len: int
    temperature: float | None
    lr: float
    lora: bool
    renderer: str | None
    renderer_why: str
    gpus: GPUSplit
    serve_policy: bool | str
    train_split: str | None
    eval_split: str | None
    eval_interval: int | None
    eval_examples: int | None
    checkpoint: bool
    seed: int | None
    vllm_memory: float | None
    wandb_project: str | None
    run_name: str | None
    overrides: dict[str, Any] | None
    teacher_served: bool
    teacher: TeacherPlan | None
    out: str | Path | UserPath | None
    overwrite: bool
    root: Root | None
    reads: dict[str, str]
    notes: tuple[str, ...]
    warnings: tuple[str, ...]

    @classmethod
    def of(cls, **given: Any) -> ConfigRequest:
        """Check ``prime_rl_config``'s arguments (by name, all of them) and resolve them."""
        a = SimpleNamespace(**given)
        spec = method_spec(a.method)
        _check_strings(spec, a)
        seed = None if a.seed is None else _positive_int("seed", a.seed, minimum=0)
        steps, batch = _positive_int("steps", a.steps), _positive_int("batch", a.batch)
        info = taskset_info(a.taskset)
        renderer, renderer_why = _renderer(a.model, a.renderer)
        keys = method_keys(spec, model=a.model, taskset=info, lora=a.lora, renderer=renderer,
                           student_vocab=a.student_vocab, root=a.root)
        reads = {"model": "model.name (shared: trainer, orchestrator, inference)",
                 "steps": "max_steps (shared: trainer, orchestrator)", **keys.reads}
        notes, warnings = list(keys.notes), list(keys.warnings)
        group = _group_size(a.group_size, keys, batch, reads)
        cap, seq = _token_budget(a.max_tokens, a.seq_len, keys, reads, notes)
        temperature, lr = _temperature_and_lr(a.temperature, a.lr, a.lora, keys, reads)
        gpus = _gpu_split(a.gpus, a.nodes, a.inference_gpus, a.serve_policy)
        eval_interval, eval_examples = _splits(a, info, steps)
        teacher = _teacher(a, keys, gpus, notes, warnings)
        memory = _vllm_memory(a.vllm_memory, keys, teacher, gpus, notes)
        if a.overrides and not isinstance(a.overrides, dict):
            raise ArgumentError(f"`overrides` must map dotted keys to values; got "
                                f"{type(a.overrides).__name__}")
        return cls(
            taskset=info, model=a.model, spec=spec, keys=keys, steps=steps, batch=batch,
            group_size=group, max_tokens=cap, seq_len=seq, temperature=temperature, lr=lr,
            lora=a.lora, renderer=renderer, renderer_why=renderer_why, gpus=gpus,
            serve_policy=a.serve_policy, train_split=a.train_split, eval_split=a.eval_split,
            eval_interval=eval_interval, eval_examples=eval_examples, checkpoint=a.checkpoint,
            seed=seed, vllm_memory=memory, wandb_project=a.wandb_project, run_name=a.run_name,
            overrides=a.overrides, teacher_served=a.teacher_served, teacher=teacher, out=a.out,
            overwrite=a.overwrite, root=a.root, reads=reads, notes=tuple(notes),
            warnings=tuple(warnings))


def _positive_int(name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ArgumentError(f"`{name}` must be an integer >= {minimum}; got {value!r}")
    return value


def _check_strings(spec: Any, a: SimpleNamespace) -> None:
    """Every string argument that lands in the TOML (or its comments) against its grammar, and
    ``serve_policy`` (True, False or a base URL)."""
    grammar.taskset_id(a.taskset)
    grammar.model_id(a.model)
    for knob, value in (("train_split", a.train_split), ("eval_split", a.eval_split)):
        if value is not None:
            grammar.split(value, argument=knob)
    for knob, value in (("run_name", a.run_name), ("wandb_project", a.wandb_project)):
        if value is not None:
            grammar.name(value, argument=knob)
    _serve_policy(a.serve_policy)
    inner = getattr(spec, "method", None)
    for part in (spec, inner):
        teacher = getattr(part, "teacher", None)
        if teacher is not None:
            grammar.model_id(teacher.model, argument="method.teacher.model")
            grammar.url(teacher.url, argument="method.teacher.url")
        template = getattr(part, "template", None)
        if isinstance(template, str):
            grammar.text(template, argument="method.template")


def _serve_policy(value: Any) -> None:
    if isinstance(value, str):
        grammar.url(value, argument="serve_policy")
        if not value.startswith(("http://", "https://")):
            raise ArgumentError(f"`serve_policy` {value!r} is not a base URL such as "
                                f"'http://localhost:{D.POLICY_PORT}/v1'")
    elif not isinstance(value, bool):
        raise ArgumentError(f"`serve_policy` must be True, False or a base URL; got {value!r}")


def _renderer(model: str, renderer: str | None) -> tuple[str | None, str]:
    """The renderer to write (None: "auto") and why."""
    if renderer is None:
        return pick_renderer(model)
    if renderer not in RENDERER_NAMES:
        raise ArgumentError(f"`renderer` {renderer!r} is not a prime-rl 559b447 renderer",
                            fix=f"one of {', '.join(sorted(RENDERER_NAMES))}, or leave it "
                            "out (picked from the model id)")
    return (None if renderer == "auto" else renderer), "given"


def _group_size(given: Any, keys: MethodKeys, batch: int, reads: dict[str, str]) -> int:
    """Rollouts per prompt in force; the batch must hold whole groups."""
    group = keys.group_size if given is None else _positive_int("group_size", given)
    base = keys.algo["type"]
    if group == 1 and base in ("grpo", "max_rl"):
        raise ConfigError(f"{base} with group_size 1: every advantage is zero (reward minus the "
                          "mean of a group of one), so nothing trains", fix="group_size >= 2, or "
                          "method='rae' (EMA baseline, group_size 1 allowed)")
    if batch % group:  # the whole groups nearest below (at least one) and above
        fits = sorted({max(group, batch - batch % group), batch + group - batch % group})
        raise ConfigError(f"`batch` {batch} is not divisible by group_size {group} (prime-rl "
                          "rejects it)", fix=f"batch = {' or '.join(map(str, fits))}")
    reads["batch"] = f"orchestrator.batch_size (rollouts per step: {batch // group} prompts x {group})"
    reads["group_size"] = "orchestrator.group_size"
    return group


def _token_budget(max_tokens: Any, seq_len: Any, keys: MethodKeys, reads: dict[str, str],
                  notes: list[str]) -> tuple[int | None, int]:
    """The completion cap in force (given, else the method's) and ``seq_len``, which must hold
    it with room for a prompt (raised to, when not given)."""
    cap = max_tokens if max_tokens is not None else keys.max_tokens
    if cap is not None:
        _positive_int("max_tokens", cap)
    if max_tokens is None and cap is not None:  # a guess: say so (the rows may carry the cap)
        notes.append(f"max_tokens {cap} is the method's default, not the budget the model was "
                     f"graded on: give {arg('max_tokens')} (the route takes it from rows that "
                     "carry one)")
    allowance = D.PROMPT_TOKEN_ALLOWANCE
    if seq_len is None:
        seq = D.PRIME_RL_SEQ_LEN
        if cap is not None and cap + allowance > seq:
            seq = -(-(cap + allowance) // 1024) * 1024
            notes.append(f"seq_len raised to {seq} to hold {cap} completion tokens plus "
                         f"{allowance} prompt tokens")
    else:
        seq = _positive_int("seq_len", seq_len)
        if cap is not None and cap >= seq:
            raise ConfigError(f"`max_tokens` {cap} does not fit `seq_len` {seq} with any prompt",
                              fix=f"seq_len >= {cap + allowance}")
    reads["seq_len"] = "seq_len (shared: trainer, orchestrator)"
    return cap, seq


def _temperature_and_lr(temperature: Any, lr: Any, lora: bool, keys: MethodKeys,
                        reads: dict[str, str]) -> tuple[float | None, float]:
    """The sampling temperature (None: prime-rl's) and the learning rate in force."""
    temp = temperature if temperature is not None else keys.temperature
    if temp is not None and not 0.0 <= temp <= D.PRIME_RL_MAX_TEMPERATURE:
        raise ArgumentError(f"`temperature` must be in [0, {D.PRIME_RL_MAX_TEMPERATURE}]; got {temp}")
    rate = lr if lr is not None else keys.lr
    if rate is None:
        rate = D.PRIME_RL_LR_LORA if lora else D.PRIME_RL_LR_FULL
    if not 0.0 < rate < 1.0:
        raise ArgumentError(f"`lr` must be in (0, 1); got {rate}")
    reads["lr"] = "trainer.optim.lr"
    return temp, rate


def _gpu_split(gpus: Any, nodes: Any, inference_gpus: Any, serve_policy: bool | str) -> GPUSplit:
    """The GPUs the config deploys: ``gpus`` per node on ``nodes`` nodes (several: half of them,
    at least one, run the policy's inference), the policy's vLLM beside the trainer on one."""
    gpus, nodes = _positive_int("gpus", gpus), _positive_int("nodes", nodes)
    served_by = "rl" if serve_policy is True else "you"
    if nodes > 1:
        if served_by != "rl":
            raise ArgumentError("multi-node configs here let rl start the policy's inference "
                                "nodes; `serve_policy` must be True when nodes > 1")
        infer_nodes = max(1, nodes // 2)
        return GPUSplit(nodes=nodes, gpus_per_node=gpus, train_gpus=(nodes - infer_nodes) * gpus,
                        inference_gpus=infer_nodes * gpus, train_nodes=nodes - infer_nodes,
                        inference_nodes=infer_nodes, policy_served_by=served_by)
    if gpus < 2:
        raise ArgumentError(f"`{arg('gpus')}` {gpus}: prime-rl puts the trainer and the policy's "
                            "vLLM on separate GPUs, so one node needs at least 2",
                            fix=f"{arg('gpus', 2)}")
    infer = max(1, gpus // 2) if inference_gpus is None else inference_gpus
    if isinstance(infer, bool) or not isinstance(infer, int) or not 1 <= infer <= gpus - 1:
        raise ArgumentError(f"`{arg('inference_gpus')}` must be a whole number from 1 to "
                            f"{gpus - 1} ({arg('gpus', gpus)}: the trainer needs at least one); "
                            f"got {inference_gpus!r}")
    return GPUSplit(nodes=1, gpus_per_node=gpus, train_gpus=gpus - infer, inference_gpus=infer,
                    policy_served_by=served_by)


def _splits(a: SimpleNamespace, info: Taskset, steps: int) -> tuple[int | None, int | None]:
    """The taskset's split key for each split given; the eval's interval (default ``steps``)
    and examples, which need ``eval_split``."""
    _split_key(info, a.train_split, "train_split")
    if a.eval_split is None:
        if a.eval_interval is not None or a.eval_examples is not None:
            raise ArgumentError("`eval_interval`/`eval_examples` need `eval_split` (the data to "
                                "evaluate on)")
        return None, None
    interval = steps if a.eval_interval is None else _positive_int("eval_interval",
                                                                   a.eval_interval)
    examples = None if a.eval_examples is None else _positive_int("eval_examples",
                                                                  a.eval_examples)
    _split_key(info, a.eval_split, "eval_split")
    return interval, examples


def _split_key(info: Taskset, split: str | None, knob: str) -> None:
    if split is not None and info.split_key is None:
        raise ConfigError(f"`{knob}` {split!r}: taskset {info.id!r} has no dataset-split key "
                          "that whileai knows, and prime-rl rejects unknown keys", fix="drop "
                          f"{knob}, or set the taskset's own key through overrides")


def _teacher(a: SimpleNamespace, keys: MethodKeys, gpus: GPUSplit, notes: list[str],
             warnings: list[str]) -> TeacherPlan | None:
    """The OPD teacher's serving plan (None: the method has no teacher), what it says in
    ``notes`` and ``warnings``."""
    if not isinstance(a.teacher_served, bool):
        raise ArgumentError(f"`teacher_served` must be true or false; got {a.teacher_served!r}")
    memory_gb = a.gpu_memory_gb
    if isinstance(memory_gb, bool) or not isinstance(memory_gb, (int, float)) \
            or not 1 <= memory_gb <= 1024:
        raise ArgumentError(f"`gpu_memory_gb` must be a number of GB in [1, 1024]; got "
                            f"{memory_gb!r}", fix="80 for an H100, 141 for an H200")
    teacher = keys.teacher
    if teacher is None:
        if a.teacher_served:
            raise ArgumentError("`teacher_served` is for OPD: this method has no teacher",
                                fix="drop teacher_served")
        return None
    node, nodes = gpus.gpus_per_node, gpus.nodes
    plan = plan_teacher(teacher.model, teacher.url, params_b=teacher.params_b,
                        dtype=teacher.dtype, served=a.teacher_served, first_free_gpu=node,
                        nodes=nodes, gpu_memory_gb=memory_gb)
    if a.teacher_served:
        notes[:] = [n for n in notes if not n.startswith("start the teacher first")]
    if plan.layout == "size_unknown":  # said once, as the warning it is
        warnings.append(f"the teacher's size is unknown: {plan.reason}")
    else:
        notes.append(plan.reason)
    if plan.layout == "dedicated" and nodes == 1 and node + plan.gpus > D.MODAL_MAX_GPUS:
        warnings.append(
            f"the teacher's {plan.gpus} GPU(s) after the {node} prime-rl uses need a node of "
            f"{node + plan.gpus} GPUs, more than one node's {D.MODAL_MAX_GPUS}. Fix: serve "
            f"the teacher on a machine of its own and pass {arg('teacher_served', True)} "
            "with its URL, give it a smaller dtype (fp8, int4), or give prime-rl fewer GPUs")
    return plan


def _vllm_memory(given: Any, keys: MethodKeys, plan: TeacherPlan | None, gpus: GPUSplit,
                 notes: list[str]) -> float | None:
    """The policy's vLLM ``gpu_memory_utilization`` in force when rl starts that vLLM: given,
    else less than prime-rl's when a local OPD teacher shares its GPU (None: prime-rl's)."""
    if gpus.policy_served_by != "rl":
        return None
    memory = given
    local_teacher = plan is not None and plan.layout in ("colocated", "size_unknown")
    if memory is None and local_teacher and gpus.nodes == 1:
        memory = D.OPD_COLOCATED_MEMORY
        notes.append(f"the teacher at {keys.teacher.url} is local: the policy's vLLM takes "
                     f"{memory} of its GPU's memory so the teacher fits beside it (start the "
                     f"teacher at {memory} too)")
    if memory is not None and not 0.0 < memory <= 1.0:
        raise ArgumentError(f"`vllm_memory` must be in (0, 1]; got {memory}")
    return memory
