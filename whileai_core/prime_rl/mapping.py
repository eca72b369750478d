"""How each method spec maps onto prime-rl 559b447 keys, and what prime-rl cannot run.

Everything method-specific: the ``[orchestrator.algo]`` and ``[trainer.loss]`` tables, per-method
defaults, and the reads / ignored / warnings a user must see. Facts: prime-rl@559b447
packages/prime-rl-configs/src/prime_rl/configs/ (algorithm.py, orchestrator.py, trainer.py) and
docs/methods.md, Sources.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import defaults as D
from ..errors import ConfigError
from ..methods.specs import OPD, OPSD, Async, RLMethod
from ..models import model_size_b
from ..safepath import Root
from ..voice import arg, choose
from .targets import Taskset
from .tokenizers import compare_vocab

# The IcePop loss this package ships, importable by prime-rl's trainer (custom loss signature).
ICEPOP_IMPORT_PATH = "whileai_core.methods.icepop.icepop_loss"


@dataclass
class MethodKeys:
    """What one method contributes to a config."""

    label: str
    algo: dict[str, Any]
    loss: dict[str, Any] | None = None
    group_size: int = D.PRIME_RL_GROUP_SIZE
    lr: float | None = None  # None: the writer's full/LoRA default
    max_tokens: int | None = None
    temperature: float | None = None
    off_policy_steps: int | None = None
    teacher: Any = None
    reads: dict[str, str] = field(default_factory=dict)
    ignored: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def method_keys(spec: Any, *, model: str, taskset: Taskset, lora: bool,
                renderer: str | None, student_vocab: int | str | None = None,
                root: Root | None = None) -> MethodKeys:
    """Map a parsed method spec to prime-rl keys, or raise ConfigError saying why it cannot run.

    ``root``: tokenizer paths in the spec (``teacher.vocab``, ``student_vocab``) are opened under
    it, through the path door.
    """
    if isinstance(spec, Async):
        return _async(spec, model=model, taskset=taskset, lora=lora, renderer=renderer,
                      student_vocab=student_vocab, root=root)
    if isinstance(spec, RLMethod):
        return _rl(spec)
    if isinstance(spec, OPD):
        return _opd(spec, model=model, lora=lora, student_vocab=student_vocab, root=root)
    if isinstance(spec, OPSD):
        return _opsd(spec, model=model, taskset=taskset, renderer=renderer)
    _refuse(spec)
    raise AssertionError("unreachable")  # pragma: no cover


def _rl(spec: RLMethod) -> MethodKeys:
    keys = MethodKeys(label=spec.name, algo={"type": spec.name})
    keys.reads["method"] = f"orchestrator.algo.type = {spec.name!r}"
    if spec.name == "rae":
        keys.group_size = D.RAE_GROUP_SIZE
        decay = D.RAE_DECAY if spec.decay is None else spec.decay
        if spec.decay is not None:
            keys.algo["decay"] = spec.decay
            keys.reads["decay"] = "orchestrator.algo.decay"
        keys.warnings.append(
            f"rae's baseline is an EMA of past rewards (decay {decay}) held in orchestrator memory: "
            f"it starts at 0, trails a moving reward by about {1 / (1 - decay):.0f} traces, and "
            "restarts from 0 when the orchestrator restarts; on a single-agent taskset it is "
            "REINFORCE with an EMA baseline, not a per-prompt one")
    elif spec.name == "max_rl":
        keys.notes.append("max_rl: advantage (r - mean) / mean; a group whose mean reward is 0 "
                          "carries no signal, so it wants binary rewards and some passes")
    return keys


def _opd(spec: OPD, *, model: str, lora: bool, student_vocab: int | str | None,
         root: Root | None) -> MethodKeys:
    if spec.divergence != "reverse_kl":
        raise ConfigError(f"OPD divergence {spec.divergence!r}: prime-rl's opd trains reverse KL "
                          "only (its ref_kl loss)", fix="divergence='reverse_kl', or run this "
                          "divergence in your own trainer")
    teacher = spec.teacher
    table: dict[str, Any] = {"name": teacher.model, "base_url": teacher.url}
    if teacher.api_key_var != "VLLM_API_KEY":
        table["api_key_var"] = teacher.api_key_var
    keys = MethodKeys(label="opd", algo={"type": "opd", "teacher": table}, teacher=teacher,
                      group_size=spec.samples, lr=spec.lr or (D.OPD_LR_LORA if lora else D.OPD_LR_FULL),
                      max_tokens=spec.max_tokens, temperature=spec.temperature)
    keys.reads["method"] = "orchestrator.algo.type = 'opd'"
    keys.reads["teacher"] = (f"orchestrator.algo.teacher (name, base_url; key from "
                             f"{teacher.api_key_var})")
    if spec.top_k is not None:
        keys.ignored["top_k"] = (f"top_k={spec.top_k}: prime-rl scores the teacher's full-vocabulary "
                                 "prefill; the top-k support is not a knob there")
    keys.notes.append(f"start the teacher first: a vLLM server for {teacher.model} at {teacher.url} "
                      "(prime-rl never launches it; it must return prompt log-probabilities)")
    same, why = compare_vocab(teacher.vocab, student_vocab if student_vocab is not None
                              else spec.student_vocab, root=root)
    if same is False:
        keys.warnings.append(f"OPD teacher and student tokenizers differ ({why}): per-token "
                             "reverse KL compares the teacher's and the student's log-probability "
                             "of the same token id, which is meaningless across tokenizers. Use a "
                             "teacher from the student's family, or SFT on its completions")
    elif same is None:
        keys.notes.append(f"tokenizers not compared ({why}); OPD needs the teacher and student to "
                          f"share one. {_vocab_fix()}")
    return keys


def _vocab_fix() -> str:
    """How this reader gives both vocabularies (a size or a local tokenizer path)."""
    return choose(
        python="Give Endpoint(..., vocab=) and student_vocab= to check",
        cli=("Give both in the --method JSON to check: '{\"name\": \"opd\", \"teacher\": "
             "{\"url\": ..., \"model\": ..., \"vocab\": 151936}, \"student_vocab\": 151936}'"),
        mcp=('Give both to check: method={"name": "opd", "teacher": {"url": ..., "model": ..., '
             '"vocab": 151936}, "student_vocab": 151936} (a size, or a tokenizer.json path under '
             "the root)"))


def _opsd(spec: OPSD, *, model: str, taskset: Taskset, renderer: str | None) -> MethodKeys:
    algo: dict[str, Any] = {"type": "opsd"}
    demo_key = spec.privileged
    if spec.privileged == "demonstration" and taskset.demo_field:
        demo_key = taskset.demo_field
    keys = MethodKeys(label="opsd", algo=algo, group_size=spec.samples, lr=spec.lr or D.OPSD_LR)
    keys.reads["method"] = "orchestrator.algo.type = 'opsd'"
    if demo_key != D.OPSD_PRIVILEGED:
        algo["demo_key"] = demo_key
    where = (f" ({taskset.id} keeps its demonstration in `{demo_key}`)"
             if demo_key != spec.privileged else "")
    keys.reads["privileged"] = f"orchestrator.algo.demo_key = {demo_key!r}{where}"
    if taskset.fields is not None and demo_key not in taskset.fields:
        keys.warnings.append(f"OPSD reads the privileged context from `{demo_key}`, but "
                             f"{taskset.id} tasks carry {', '.join(taskset.fields)}: every sample "
                             "would lack its hint. Fix: privileged= one of those fields")
    if spec.resolved_template != D.OPSD_TEMPLATE:
        algo["template"] = spec.resolved_template
    keys.reads["template"] = "orchestrator.algo.template" + (
        "" if "template" in algo else " (prime-rl's default, not written)")
    if renderer is not None:
        # The hint block is rendered with its own renderer, "auto" unless named (prime-rl's
        # OPSDAlgoConfig.renderer docstring): match the policy's.
        algo["renderer"] = {"name": renderer}
        keys.reads["renderer (hint block)"] = "orchestrator.algo.renderer.name"
    if spec.anchor != "live":
        keys.ignored["anchor"] = (f"anchor {spec.anchor!r}: prime-rl's opsd teacher is the live "
                                  "policy; an EMA or initial-weights anchor is not a knob there, so "
                                  "this config runs the anchor 'live'")
        keys.warnings.append(f"OPSD anchor {spec.anchor!r} is not what prime-rl runs: it scores "
                             "against the live policy (set the method's anchor to 'live' to say "
                             "so)")
    size = model_size_b(model)
    if size is None:
        keys.notes.append(f"OPSD: model size unknown from the id {model!r}; OPSD needs in-context "
                          f"learning strong enough to use the hint (about {D.OPSD_MIN_PARAMS_B:g}B "
                          "and up)")
    elif size < D.OPSD_MIN_PARAMS_B:
        keys.warnings.append(
            f"OPSD on a {size:g}B model: self-distillation needs in-context learning strong enough "
            f"to use the hint, about {D.OPSD_MIN_PARAMS_B:g}B and up (Zhao et al. 2026, SDFT, SDPO); "
            "measured on Qwen3-0.6B reverse-text, 20 steps: -0.554 [-0.614, -0.495] vs GRPO. "
            "Consider GRPO, or OPD from a stronger teacher")
    return keys


def _async(spec: Async, *, model: str, taskset: Taskset, lora: bool, renderer: str | None,
           student_vocab: int | str | None, root: Root | None) -> MethodKeys:
    keys = method_keys(spec.method, model=model, taskset=taskset, lora=lora, renderer=renderer,
                       student_vocab=student_vocab, root=root)
    keys.label = f"async({keys.label}, {spec.correction})"
    keys.off_policy_steps = spec.off_policy_steps
    keys.reads["off_policy_steps"] = "orchestrator.max_off_policy_steps"
    if spec.correction == "tis":
        raise ConfigError("Async correction 'tis' (truncated importance sampling) is verl's; "
                          "prime-rl's loss union at 559b447 is default | ipo | custom",
                          fix="correction='ipo' (built in) or 'icepop' (a custom loss this package "
                          "ships), or run TIS in verl")
    if isinstance(spec.method, (OPD, OPSD)):
        keys.ignored["correction"] = (
            f"correction={spec.correction!r}: prime-rl's [trainer.loss] applies to the rl loss "
            f"only; {keys.algo['type']} trains with the fixed ref_kl loss (a one-sided 0.2 trust "
            "region plus 1e-3 log-ratio^2), so no correction key is written")
        return keys
    if spec.correction == "ipo":
        keys.loss = {"type": "ipo", "ipo_threshold": spec.ipo_threshold}
        keys.reads["correction"] = "trainer.loss.type = 'ipo'"
        keys.reads["ipo_threshold"] = "trainer.loss.ipo_threshold"
    else:
        keys.loss = {"type": "custom", "import_path": ICEPOP_IMPORT_PATH,
                     "kwargs": {"low": spec.icepop_low, "high": spec.icepop_high}}
        keys.reads["correction"] = f"trainer.loss.type = 'custom', import_path {ICEPOP_IMPORT_PATH}"
        keys.reads["icepop_low, icepop_high"] = "trainer.loss.kwargs (low, high)"
        keys.notes.append("IcePop runs as a custom loss: the trainer imports "
                          f"{ICEPOP_IMPORT_PATH}, so install whileai-skills (with torch) in the "
                          "prime-rl environment")
    return keys


def _instead() -> str:
    return ("run its .update(batch) in your own trainer, or use prime-rl's one-rollout option "
            f"{arg('method', 'rae')} (group size 1, EMA baseline)")


def _refuse(spec: Any) -> None:
    name = type(spec).__name__
    reasons = {
        "FlashReinforce": "it needs a batch-mean baseline and a sequence-level trust region on the "
                          "behaviour drift, which prime-rl's losses do not have",
        "SAO": "it trains a value critic, and prime-rl hosts only the policy",
        "BPCO": "it trains a bounded value critic, and prime-rl hosts only the policy",
    }
    if name in reasons:
        raise ConfigError(f"prime-rl cannot run {name}: {reasons[name]}", fix=f"{_instead()}")
    if name == "GroupwiseGrading":
        raise ConfigError("GroupwiseGrading shapes a group's rewards or advantages in your own "
                          "trainer; prime-rl has no hook for it", fix="write grpo here, or apply "
                          "GroupwiseGrading.shape in your trainer's reward function")
    if name == "ReinforceAda":
        raise ConfigError("ReinforceAda is a sampler that runs before a grouped update in your own "
                          "trainer; prime-rl has no such sampler", fix="write grpo here")
    raise ConfigError(f"prime_rl_config writes grpo, max_rl, rae, OPD, OPSD and Async around "
                      f"them; got {name}")
