"""Our own check of a prime-rl ``rl`` TOML against the part of the 559b447 schema we know.

prime-rl forbids unknown keys everywhere but ``[inference.vllm]``, so a stale or misspelt key
fails only when the GPU job starts. :func:`validate_config` says it before: every table the
writer emits and the repo's examples use is modelled with its keys (extra keys forbidden), and
the cross-field rules of prime-rl's validators (packages/prime-rl-configs/src/prime_rl/configs/
rl.py; docs/methods.md lists them) are checked. Deep tables we do not model key by key
(compile, routers, verifiers agent internals...) are accepted as tables. A renamed key gets its
new spelling in the message.
"""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import Field, ValidationError

from ..errors import ArgumentError, ConfigError
from ..operations import READS, VERDICT, operation
from ..operations.args import PATH, Arg, WorkspaceRoot
from ..result import Result
from ..safepath import UserPath, as_user_path
from . import grammar
from .hazards import hazards as _hazards
from .key_tree import near_key
from .keys_top import RLConfig, SingleNode
from .keys_trainer import Cosine, Linear
from .targets import AUTO_RENDERER_MODELS

# ---- cross-field rules (prime-rl-schema.md sec. 1 and 4) ------------------------------------


def _cross_checks(cfg: RLConfig, raw: dict[str, Any]) -> list[str]:
    return (_shared_conflicts(cfg, raw) + _renderer_errors(cfg) + _deployment_errors(cfg, raw)
            + _scheduler_errors(cfg) + _source_errors(cfg) + _hazards(raw))


def _shared_conflicts(cfg: RLConfig, raw: dict[str, Any]) -> list[str]:
    """A shared key set again, differently, in a sub-table; the trainer's and orchestrator's
    step counts and sequence lengths."""
    errors: list[str] = []
    orch, trainer = cfg.orchestrator, cfg.trainer

    def conflict(shared: str, value: Any, subs: dict[str, Any]) -> None:
        for where, sub in subs.items():
            if value is not None and sub is not None and sub != value:
                errors.append(f"shared `{shared}` = {value!r} conflicts with `{where}` = {sub!r}; "
                              "set it in one place (the shared key)")

    raw_orch = raw.get("orchestrator", {})
    conflict("max_steps", cfg.max_steps, {"trainer.max_steps": trainer.max_steps,
                                          "orchestrator.max_steps": orch.max_steps})
    conflict("seq_len", cfg.seq_len, {"trainer.model.seq_len": trainer.model.seq_len,
                                      "orchestrator.seq_len": orch.seq_len})
    if cfg.model is not None:
        conflict("model.name", cfg.model.name, {
            "trainer.model.name": trainer.model.name,
            "orchestrator.model.name": raw_orch.get("model", {}).get("name"),
            "inference.vllm.model": cfg.inference.vllm.model if cfg.inference else None})
    if cfg.max_steps is None and trainer.max_steps is not None and orch.max_steps is not None \
            and trainer.max_steps != orch.max_steps:
        errors.append(f"`trainer.max_steps` {trainer.max_steps} != `orchestrator.max_steps` "
                      f"{orch.max_steps}; set the shared `max_steps` once")
    t_seq = trainer.model.seq_len or cfg.seq_len or 2048
    o_seq = orch.seq_len or cfg.seq_len or 2048
    if t_seq < o_seq:
        errors.append(f"`trainer.model.seq_len` {t_seq} < `orchestrator.seq_len` {o_seq}")
    return errors


def _renderer_errors(cfg: RLConfig) -> list[str]:
    orch = cfg.orchestrator
    if orch.renderer.name != "auto":
        return []
    tokenizer = (cfg.tokenizer.name if cfg.tokenizer and cfg.tokenizer.name else None) \
        or orch.tokenizer.name or (cfg.model.name if cfg.model else orch.model.name)
    if tokenizer in AUTO_RENDERER_MODELS:
        return []
    return [f"`orchestrator.renderer.name` is 'auto' but {tokenizer!r} is not in "
            "prime-rl's renderer map (renderers 0.1.11), so validation fails. Fix: "
            "[orchestrator.renderer] name = 'default' (tokenizer chat template) or a "
            "family renderer ('prime-qwen3' for PrimeIntellect Qwen3 fine-tunes)"]


def _deployment_errors(cfg: RLConfig, raw: dict[str, Any]) -> list[str]:
    """LoRA and the weight broadcast; what each deployment needs."""
    errors: list[str] = []
    lora = cfg.trainer.model.lora is not None
    broadcast = cfg.weight_broadcast.type if cfg.weight_broadcast is not None else (
        "filesystem" if lora or cfg.inference is None else "nccl")
    if lora and broadcast != "filesystem":
        errors.append(f"LoRA with `weight_broadcast.type` {broadcast!r}: prime-rl supports LoRA "
                      "with filesystem broadcast only")
    deploy = cfg.deployment
    if isinstance(deploy, SingleNode):
        if broadcast == "nccl" and deploy.num_train_gpus + deploy.num_infer_gpus < 2:
            errors.append("NCCL weight broadcast needs at least 2 GPUs in `deployment`")
        return errors
    if cfg.slurm is None:
        errors.append("a multi_node deployment needs [slurm] (prime-rl launches it with sbatch)")
    infer_nodes = deploy.num_infer_nodes if deploy.num_infer_nodes is not None else (
        0 if cfg.inference is None else 1)
    if infer_nodes > 0 and cfg.inference is None:
        errors.append("multi_node with inference nodes needs [inference]")
    if infer_nodes == 0 and cfg.inference is not None:
        errors.append("[inference] with `deployment.num_infer_nodes` = 0")
    if cfg.inference is not None and "router" in raw.get("inference", {}) \
            and raw["inference"]["router"] is None:
        errors.append("multi_node deployments need `inference.router`")
    return errors


def _scheduler_errors(cfg: RLConfig) -> list[str]:
    steps = cfg.max_steps or cfg.trainer.max_steps
    sched = cfg.trainer.scheduler
    if isinstance(sched, Cosine):
        if steps is None:
            return ["cosine scheduler needs `max_steps`"]
        if sched.warmup_steps >= steps:
            return [f"cosine `warmup_steps` {sched.warmup_steps} >= max_steps {steps}"]
    if isinstance(sched, Linear):
        if steps is None:
            return ["linear scheduler needs `max_steps`"]
        if sched.warmup_steps + sched.decay_steps > steps:
            return [f"linear warmup_steps + decay_steps ({sched.warmup_steps} + "
                    f"{sched.decay_steps}) > max_steps {steps}"]
    return []


def _source_errors(cfg: RLConfig) -> list[str]:
    """Checkpointing set on one side only; the train sources."""
    errors: list[str] = []
    orch = cfg.orchestrator
    if cfg.ckpt is None and (cfg.trainer.ckpt is None) != (orch.ckpt is None):
        errors.append("checkpointing set on only one of trainer and orchestrator; use the shared "
                      "[ckpt]")
    if not orch.train.source:
        errors.append("no [[orchestrator.train.source]]: the orchestrator has nothing to sample")
    names = [s.name or s.env.taskset.id for s in orch.train.source]
    if len(set(names)) != len(names):
        errors.append(f"duplicate train source names {names}; give each a unique `name`")
    return errors


# ---- the public check ---------------------------------------------------------------------

_RENAMED = {
    "orchestrator.rollouts_per_example": "removed in 0.7; use `orchestrator.group_size`",
    "orchestrator.async_level": "removed; use `orchestrator.max_off_policy_steps`",
    "orchestrator.max_async_level": "removed; use `orchestrator.max_off_policy_steps`",
    "orchestrator.max_tokens": "use `orchestrator.train.sampling.max_completion_tokens`",
    "orchestrator.sampling": "use `[orchestrator.train.sampling]`",
    "orchestrator.train.sampling.max_tokens": "use `max_completion_tokens`",
    "max_tokens": "use `orchestrator.train.sampling.max_completion_tokens`",
    "wandb": "moved to `[monitors.wandb]` after v0.8.0",
    "orchestrator.wandb": "moved to `[monitors.wandb]` (shared) after v0.8.0",
    "trainer.wandb": "moved to `[monitors.wandb]` (shared) after v0.8.0",
    "inference.gpu_memory_utilization": "moved to `[inference.vllm] gpu_memory_utilization`",
    "inference.model": "moved to `[inference.vllm]` (model comes from the shared [model])",
    "inference.parallel": "moved to `[inference.vllm] tensor_parallel_size / data_parallel_size`",
    "inference.vllm_extra": "put vLLM arguments in `[inference.vllm]` directly",
    "orchestrator.optim": "removed (multi-tenant); use `[trainer.optim] lr`",
    "orchestrator.max_inflight_episodes": "use `[orchestrator.concurrency] max_inflight`",
    "orchestrator.oversampling_factor": "use `[orchestrator.concurrency]`",
    "orchestrator.pre_batch_filters": "removed; use `orchestrator.train.filter_zero_advantages`",
    "orchestrator.post_batch_filters": "removed; use `orchestrator.train.filter_zero_advantages`",
    "orchestrator.training_mode": "removed in 0.7; use `[orchestrator.algo] type`",
    "orchestrator.teacher": "removed in 0.7; use `[orchestrator.algo] type = 'opd'` with "
                            "`[orchestrator.algo.teacher]`",
    "orchestrator.teacher_model": "removed in 0.7; use `[orchestrator.algo.teacher]`",
    "orchestrator.advantage": "removed in 0.7; use `[orchestrator.algo]`",
    "orchestrator.train.env": "renamed in 0.8 to `[[orchestrator.train.source]]`",
    "orchestrator.env": "use `[[orchestrator.train.source]]`",
    "clean_output_dir": "renamed to `clean`",
    "resume_step": "use `[resume] step`",
    "trainer.ckpt.resume_step": "use `[resume] step`",
    "orchestrator.ckpt.resume_step": "use `[resume] step`",
    "trainer.loss.token_mask_low": "IcePop-style masking was removed in 0.5; use `type = 'ipo'` "
                                   "or whileai's IcePop custom loss",
    "trainer.loss.token_mask_high": "IcePop-style masking was removed in 0.5; use `type = 'ipo'` "
                                    "or whileai's IcePop custom loss",
    "trainer.loss.ratio_type": "removed in 0.5",
    "trainer.loss.ipo_mask_low": "renamed in 0.6: `dppo_mask_low` (default loss)",
    "trainer.loss.ipo_mask_high": "renamed in 0.6: `dppo_mask_high` (default loss)",
    "bench": "removed after v0.8.0",
    "trainer.max_concurrent_runs": "removed after v0.8.0",
}


class ConfigCheck(Result):
    """The verdict of :func:`validate_config`: ``ok``, each problem as one line, and what was
    not checked (``not_checked``: e.g. "taskset not checked" when prime-rl's environment is not
    importable here), so an ``ok`` never claims more than was checked."""

    ok: bool
    errors: list[str]
    source: str | None = None
    checked_against: str = "prime-rl 559b447 (the subset of its schema whileai models)"
    not_checked: list[str] = []

    negative_means: ClassVar[str | None] = (
        "the config is not valid")

    @property
    def negative(self) -> bool:
        return not self.ok

    def render(self) -> str:
        where = self.source or "config"
        unchecked = [f"  not checked: {n}" for n in self.not_checked]
        if self.ok:
            return "\n".join([f"OK: {where} passes whileai's check against "
                              f"{self.checked_against}"] + unchecked)
        return "\n".join([f"REJECTED: {where} ({len(self.errors)} problem(s), checked against "
                          f"{self.checked_against})"] + [f"  - {e}" for e in self.errors]
                         + unchecked)


def _none_strings(value: Any) -> Any:
    """TOML has no null: prime-rl reads the string "None" as None."""
    if isinstance(value, dict):
        return {k: _none_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_none_strings(v) for v in value]
    return None if value == "None" else value


def _key_path(loc: tuple, raw: dict[str, Any], keep_last: bool = True) -> str:
    """The TOML key path of a pydantic error location, without union-tag segments.

    A segment is kept when it indexes the raw data (a key of the table, an index of the list)
    or when it is the last one (the unknown or missing key itself); other segments are the
    names pydantic gives union variants.
    """
    parts: list[str] = []
    node: Any = raw
    for i, p in enumerate(loc):
        if isinstance(p, int) and isinstance(node, list):
            parts[-1:] = [f"{parts[-1]}[]"] if parts else ["[]"]
            node = node[p] if p < len(node) else {}
        elif isinstance(node, dict) and p in node:
            parts.append(str(p))
            node = node[p]
        elif keep_last and i == len(loc) - 1 and not isinstance(p, int) and p != "__bad__":
            parts.append(str(p))
    return ".".join(parts)


@operation(
    cli="validate", toolset="core", effect=READS, title="Check a prime-rl config",
    description=(
        "Check a prime-rl `rl` TOML (a file, or its text) before a GPU starts: ok, or one line "
        "per problem (unknown or renamed keys, values prime-rl refuses) with the fix. At the "
        "shell the exit code is 1 when it is refused."),
    exit_code=VERDICT, doing="checking a prime-rl config")
def validate_config(
        path: Annotated[str | None, Field(max_length=4096, description=(
            "A prime-rl rl TOML file. Give this or `text`.")),
            Arg(PATH, positional=True, metavar="FILE")] = None, *,
        text: Annotated[str | None, Field(max_length=1_000_000, description=(
            "The TOML itself (for a config not on disk). Give this or `path`."))] = None,
        root: WorkspaceRoot = None) -> ConfigCheck:
    """Check a prime-rl ``rl`` config before a GPU starts: a file (``path``) or its ``text``.

    ``path`` may also be, from Python, the TOML text or a parsed dict (:func:`_read`); ``text``
    is always the TOML itself, never a path. ``ok`` is False with one line per problem;
    placeholders (``<...>``, ``TODO``, empty) in the model, a taskset or the teacher are
    problems too. Whether each taskset imports is checked only where prime-rl's environment
    (verifiers) is importable; elsewhere ``not_checked`` says so. Raises ArgumentError unless
    exactly one of ``path`` and ``text`` is given, ConfigError only when a named file cannot be
    read.
    """
    if (path is None) == (text is None):
        raise ArgumentError("give exactly one of `path` (a TOML file) or `text` (the TOML "
                            "itself)", fix="pass one, not " + ("both" if path is not None
                                                               else "neither"))
    # a trailing newline keeps text text (TOML ignores it), so `text` can never open a file
    raw, source, bad = _read(path if text is None else text + "\n", root)
    if bad is not None:
        return ConfigCheck(ok=False, errors=[bad], source=source)
    raw = _none_strings(raw)
    try:
        cfg = RLConfig.model_validate(raw)
    except ValidationError as err:
        return ConfigCheck(ok=False, errors=_messages(err, raw) + _hazards(raw), source=source)
    errors = _cross_checks(cfg, raw) + _placeholders(cfg, raw)
    taskset_errors, not_checked = _tasksets(cfg)
    errors += taskset_errors
    return ConfigCheck(ok=not errors, errors=errors, source=source, not_checked=not_checked)


def _read(given: Any, root: Any) -> tuple[dict[str, Any] | None, str | None, str | None]:
    """(the parsed TOML, the file it came from, why it is not TOML): a dict as it is; a
    one-line string without '=' or '[' (or ending in .toml, or naming a file) read as a path
    under ``root``; anything else parsed as TOML text."""
    if isinstance(given, dict):
        return given, None, None
    toml, source = given, None
    one_line = "\n" not in str(given)
    looks_like_path = isinstance(given, (Path, UserPath)) or (one_line and (
        str(given).endswith(".toml") or Path(str(given)).is_file()
        or not any(c in str(given) for c in "=[")))
    if looks_like_path:
        target = as_user_path(given, root, argument="path", error=ConfigError)
        source = str(target)
        if target.kind() is None:
            raise ConfigError(f"{source} not found", fix="give the path of a prime-rl TOML, or "
                              "its text")
        toml = target.read_text("config", error=ConfigError, fix="save the TOML as UTF-8 text")
    try:
        return tomllib.loads(str(toml)), source, None
    except tomllib.TOMLDecodeError as err:
        return None, source, f"not valid TOML: {err}"


def _placeholders(cfg: RLConfig, raw: dict[str, Any]) -> list[str]:
    """Model, taskset and teacher values that are placeholders or break their grammar."""
    errors: list[str] = []
    checks: list[tuple[str, Any, Any]] = []
    if cfg.model is not None:
        checks.append(("model.name", cfg.model.name, grammar.model_id))
    orch = raw.get("orchestrator") if isinstance(raw.get("orchestrator"), dict) else {}
    for group in ("train", "eval"):
        sources = (orch.get(group) or {}).get("source") if isinstance(orch.get(group), dict) \
            else None
        for i, src in enumerate(sources if isinstance(sources, list) else []):
            taskset = (((src or {}).get("env") or {}).get("taskset") or {}) \
                if isinstance(src, dict) else {}
            if isinstance(taskset, dict) and "id" in taskset:
                checks.append((f"orchestrator.{group}.source[{i}].env.taskset.id", taskset["id"],
                               grammar.taskset_id))
    algo = orch.get("algo") if isinstance(orch.get("algo"), dict) else {}
    teacher = algo.get("teacher") if isinstance(algo.get("teacher"), dict) else {}
    if "name" in teacher:
        checks.append(("orchestrator.algo.teacher.name", teacher["name"], grammar.model_id))
    if isinstance(teacher.get("base_url"), str):
        checks.append(("orchestrator.algo.teacher.base_url", teacher["base_url"], grammar.url))
    for key, value, check in checks:
        if value is None:
            continue
        try:
            check(value, argument=key)
        except ArgumentError as err:
            errors.append(str(err))
    return errors


def _tasksets(cfg: RLConfig) -> tuple[list[str], list[str]]:
    """(errors, not_checked): does each taskset's package import? Only where verifiers does."""
    ids = sorted({s.env.taskset.id for s in cfg.orchestrator.train.source
                  if s.env.taskset.id and grammar.placeholder(s.env.taskset.id) is None})
    if not ids:
        return [], []
    if importlib.util.find_spec("verifiers") is None:
        return [], [f"taskset not checked: {', '.join(repr(i) for i in ids)} (prime-rl's "
                    "environment, verifiers, is not importable here; prime-rl imports each "
                    "taskset's package when it starts, so check it there: `uv run rl @ CONFIG "
                    "--dry-run`)"]
    errors = []
    for taskset in ids:
        package = taskset.split("@")[0].rsplit("/", 1)[-1].replace("-", "_").replace(".", "_")
        try:
            found = importlib.util.find_spec(package) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            errors.append(f"taskset {taskset!r}: its package {package!r} is not installed, so "
                          "prime-rl cannot load it. Fix: install the environment (e.g. `prime "
                          "env install` or `uv pip install` its package) or correct the id")
    return errors, []


def _messages(err: ValidationError, raw: dict[str, Any]) -> list[str]:
    out = []
    for item in err.errors():
        loc = _key_path(item["loc"], raw, keep_last=item["type"] in ("extra_forbidden", "missing"))
        msg = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            key = loc.replace("[]", "")
            hint = _RENAMED.get(key) or _RENAMED.get(key.rsplit(".", 1)[-1])
            close = "" if hint else near_key(key)
            line = f"unknown key `{loc}`" + (f" ({hint})" if hint else f" ({close})" if close
                                            else " (prime-rl 559b447 has no such key)")
        elif item["type"] == "missing":
            line = f"missing required key `{loc}`" + (
                " (a bare [trainer] table is enough)" if loc == "trainer" else "")
        else:
            line = f"`{loc}`: {msg}" if loc else msg
        if line not in out:
            out.append(line)
    return out
