"""Method specs that prime-rl runs: the grouped RL bases, OPD, OPSD and Async around them;
:func:`method_spec`, which parses any method from a name, a dict or an object; and the operation
:func:`rollout_update` (one batch of a single-rollout method, for your own trainer).

References (cited from the code by number):
[1] Agarwal et al. 2024, On-Policy Distillation of Language Models, arXiv:2306.13649 (OPD).
[2] Shenfeld et al. 2026, Self-Distillation Enables Continual Learning (SDFT), arXiv:2601.19897.
[3] Huebotter et al. 2026, Reinforcement Learning via Self-Distillation (SDPO), arXiv:2601.20802.
[4] Zhao et al. 2026, Self-Distilled Reasoner (OPSD), arXiv:2601.18734.
[5] prime-rl 559b447, packages/prime-rl-configs (algorithm and loss config), read as facts.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal
from urllib.parse import urlparse

from pydantic import Field, field_validator, model_validator

from .. import defaults as D
from ._spec import Spec
from .. import safejson
from ..errors import SpecError, did_you_mean
from ..operations import READS, operation
from ..operations.args import Records

# lazy: this module loads without numpy (prime_rl's config writer and the server's method schema
# read it), so the numpy-backed specs and rows are imported inside method_spec and rollout_update

# Hosted chat APIs: they return completion log-probabilities at best, never the prompt's, so
# they cannot score the student's tokens as a teacher [1].
CHAT_API_HOSTS = ("api.openai.com", "api.anthropic.com", "generativelanguage.googleapis.com",
                  "openrouter.ai", "api.together.xyz", "api.groq.com", "api.mistral.ai",
                  "api.deepseek.com", "api.fireworks.ai")

BASE_METHODS = ("grpo", "max_rl", "rae")
SINGLE_ROLLOUT = ("flash_reinforce", "sao", "bpco")  # rollout_update runs these

# Upper bounds that keep every number of a spec finite and sane (an argument schema has a
# finite range for every number); far above any real setting.
MAX_COUNT = 10**9
MAX_TOKENS = 10**8
MAX_VOCAB = 10**8
MAX_RATIO = 1e6


def _check_url(url: str) -> str:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError("must be an http(s) URL with a host, e.g. 'http://localhost:8001/v1'")
    return url.rstrip("/")


class Endpoint(Spec):
    """A served model: an OpenAI-compatible server (vLLM for a teacher) at ``url`` serving ``model``.

    ``vocab`` is optional tokenizer evidence for OPD's same-tokenizer check: the vocabulary size
    (int) or a local path to a ``tokenizer.json`` (or the folder holding it).
    Parse ``"model@http://host:port/v1"`` with :meth:`parse`.
    """

    _positional: ClassVar[tuple[str, ...]] = ("url", "model")

    url: str = Field(description="an http(s) URL with a host, e.g. 'http://localhost:8001/v1'")
    model: str = Field(min_length=1, description="the served model name (non-empty)")
    api_key_var: str = Field("VLLM_API_KEY", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
                             description="an environment variable name")
    vocab: Annotated[int, Field(ge=1, le=MAX_VOCAB)] | str | None = Field(
        None, description="vocab size (1 to 10^8) or a local tokenizer path; None = not known")
    params_b: float | None = Field(None, gt=0.0, le=10_000.0,
                                   description="parameters in billions, to size the server; None "
                                               "= read from the model id (e.g. '32B')")
    dtype: Literal["bfloat16", "float16", "float32", "fp8", "int8", "int4"] | None = Field(
        None, description="dtype the weights are served in; None = bfloat16")

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _check_url(value)

    @field_validator("vocab")
    @classmethod
    def _vocab(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and value <= 0:
            raise ValueError("must be a positive vocab size or a tokenizer path")
        return value

    @classmethod
    def parse(cls, spec: str) -> Endpoint:
        """``"org/model@http://host:8001/v1"`` -> ``Endpoint(url, model)``."""
        model, sep, url = spec.rpartition("@")
        if not sep or not url.startswith(("http://", "https://")) or not model:
            raise SpecError(f"endpoint {spec!r} is not 'model@http://host:port/v1'",
                            fix="write the "
                            "served model name, '@', and the server's base URL")
        return cls(url=url, model=model)

    @property
    def host(self) -> str:
        return urlparse(self.url).hostname or ""

    def __str__(self) -> str:
        return f"{self.model}@{self.url}"


class RLMethod(Spec):
    """One of prime-rl's reward-driven bases: ``grpo``, ``max_rl`` or ``rae`` [5].

    grpo: advantage = reward - group mean. max_rl: (reward - mean) / mean. rae: reward minus an
    EMA of past rewards (``decay``), so a group of one still has a signal.
    """

    _positional: ClassVar[tuple[str, ...]] = ("name",)

    name: Literal["grpo", "max_rl", "rae"] = Field("grpo", description="'grpo', 'max_rl' or 'rae'")
    decay: float | None = Field(None, ge=0.0, lt=1.0,
                                description=f"rae only: 0 <= decay < 1 (prime-rl {D.RAE_DECAY})")

    @model_validator(mode="after")
    def _decay_only_for_rae(self) -> RLMethod:
        if self.decay is not None and self.name != "rae":
            raise ValueError(f"`decay` is a knob of rae only, not of {self.name}")
        return self


def _endpoint(value: Any) -> Endpoint:
    if isinstance(value, Endpoint):
        return value
    if isinstance(value, dict):
        return Endpoint(**value)
    if isinstance(value, str):
        if "@" in value and "://" in value:
            return Endpoint.parse(value)
        raise ValueError(f"{value!r} names a model, not a server that returns prompt "
                         "log-probabilities. Fix: Endpoint(url, model) of a vLLM server, or "
                         "'model@http://host:port/v1'")
    raise ValueError(f"a {type(value).__name__} cannot serve as a teacher; it must return prompt "
                     "log-probabilities. Fix: Endpoint(url, model) of a vLLM server, or "
                     "'model@http://host:port/v1'")


class OPD(Spec):
    """On-policy distillation from a frozen teacher [1]: per-token advantage
    ``log pi_T(y_t) - log pi_theta(y_t)`` on the student's own samples (reverse KL).

    The teacher must score the student's tokens, which needs prompt log-probabilities (vLLM's
    ``prompt_logprobs``); a chat API cannot, so only an :class:`Endpoint`, a ``"model@url"``
    string or ``{"url": ..., "model": ...}`` is accepted. Same tokenizer required; give
    ``teacher.vocab`` and ``student_vocab`` to have it checked.
    """

    _positional: ClassVar[tuple[str, ...]] = ("teacher",)

    teacher: Endpoint = Field(description="Endpoint(url, model), 'model@http://host:port/v1' or "
                                          "{'url', 'model'}")
    samples: int = Field(D.OPD_SAMPLES, ge=1, le=MAX_COUNT,
                         description="integer >= 1 (samples per prompt)")
    temperature: float = Field(D.OPD_TEMPERATURE, ge=0.0, le=D.PRIME_RL_MAX_TEMPERATURE,
                               description="0 <= temperature <= 2")
    max_tokens: int = Field(D.OPD_MAX_TOKENS, ge=1, le=MAX_TOKENS,
                            description="integer >= 1; score the teacher at the student's "
                                        "max_tokens")
    lr: float | None = Field(None, gt=0.0, lt=1.0, description=f"0 < lr < 1; None = "
                             f"{D.OPD_LR_FULL} full weights, {D.OPD_LR_LORA} LoRA")
    top_k: int | None = Field(None, ge=1, le=MAX_VOCAB,
                              description="integer >= 1 or None (teacher support size)")
    divergence: Literal["reverse_kl", "forward_kl", "jsd"] = Field(
        "reverse_kl", description="'reverse_kl', 'forward_kl' or 'jsd'")
    student_vocab: Annotated[int, Field(ge=1, le=MAX_VOCAB)] | str | None = Field(
        None, description="student vocab size (1 to 10^8) or local tokenizer path; None = not "
                          "known")

    @field_validator("teacher", mode="before")
    @classmethod
    def _teacher(cls, value: Any) -> Endpoint:
        teacher = _endpoint(value)
        if teacher.host in CHAT_API_HOSTS:
            raise ValueError(f"{teacher.host} is a chat API: it does not return prompt "
                             "log-probabilities, so it cannot score the student's tokens. Fix: "
                             "serve the teacher with vLLM and pass its URL")
        return teacher

    @property
    def name(self) -> str:
        return "opd"


_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_ANCHOR = re.compile(r"^(live|initial|ema(?::(\d*\.?\d+(?:[eE]-?\d+)?))?)$")


class OPSD(Spec):
    """On-policy self-distillation [2, 3, 4]: the teacher is the same model shown privileged
    context (a demonstration, reference answer, hint, environment feedback, or any task field)
    in a leading message; reverse KL per token.

    ``anchor`` picks the teacher's weights: ``"live"`` (the current policy; prime-rl's only
    option), ``"ema"``/``"ema:<rate>"`` (an EMA of the policy, rate 0.01 in SDFT/SDPO) or
    ``"initial"``. ``template`` must contain ``{demonstration}``; by default it is worded for the
    kind of ``privileged`` context. Needs in-context learning strong enough to use the hint:
    about 7B and up [4].
    """

    _positional: ClassVar[tuple[str, ...]] = ("privileged",)

    privileged: str = Field(D.OPSD_PRIVILEGED, description="'demonstration', 'reference', 'hint', "
                            "'feedback' or a task field name")
    anchor: str = Field(D.OPSD_ANCHOR, description="'live', 'initial', 'ema' or 'ema:<rate>' with "
                                                   "0 < rate < 1")
    template: str | None = Field(None, description="text containing '{demonstration}'; None = the "
                                                   "default for the privileged kind")
    samples: int = Field(D.OPSD_SAMPLES, ge=1, le=MAX_COUNT,
                         description="integer >= 1 (samples per prompt)")
    lr: float | None = Field(None, gt=0.0, lt=1.0, description=f"0 < lr < 1; None = {D.OPSD_LR}")

    @field_validator("privileged")
    @classmethod
    def _privileged(cls, value: str) -> str:
        if not _FIELD.fullmatch(value):
            raise ValueError("must be a kind of context or a task field name (letters, digits, "
                             "'_', '.', '-')")
        return value

    @field_validator("anchor")
    @classmethod
    def _anchor(cls, value: str) -> str:
        match = _ANCHOR.match(value.strip())
        if not match:
            raise ValueError("must be 'live', 'initial', 'ema' or 'ema:<rate>'")
        if match.group(2) is not None and not 0.0 < float(match.group(2)) < 1.0:
            raise ValueError("has an EMA rate outside (0, 1)")
        return value.strip()

    @field_validator("template")
    @classmethod
    def _template(cls, value: str | None) -> str | None:
        if value is not None and "{demonstration}" not in value:
            raise ValueError("must contain the placeholder '{demonstration}'")
        return value

    @property
    def name(self) -> str:
        return "opsd"

    @property
    def ema_rate(self) -> float | None:
        """The EMA rate of an ``ema`` anchor (0.01 when ``"ema"`` alone), else None."""
        if not self.anchor.startswith("ema"):
            return None
        _, _, rate = self.anchor.partition(":")
        return float(rate) if rate else float(D.OPSD_ANCHOR.partition(":")[2])

    @property
    def resolved_template(self) -> str:
        """The template in force: the one given, or the default for the privileged kind."""
        if self.template is not None:
            return self.template
        return D.OPSD_TEMPLATES.get(self.privileged, D.OPSD_TEMPLATE)


class Async(Spec):
    """A stale sampler around ``grpo``, ``max_rl``, ``rae``, :class:`OPD` or :class:`OPSD`, with an
    off-policy correction on the tokens sampled by an older policy [5]:

    - ``"ipo"``: mask a token when ``|p_train - p_infer| > ipo_threshold`` (prime-rl built-in);
    - ``"icepop"``: mask a token when ``pi/mu`` leaves ``[icepop_low, icepop_high]``;
    - ``"tis"``: weight by ``min(pi/mu, tis_cap)`` (verl's; prime-rl has no such loss).

    ``off_policy_steps`` bounds staleness in policy versions. Not around another Async or a
    single-rollout method (those carry their own trust region).
    """

    _positional: ClassVar[tuple[str, ...]] = ("method",)

    method: Any = Field(description="'grpo', 'max_rl', 'rae', an OPD or an OPSD (or their dict form)")
    correction: Literal["ipo", "icepop", "tis"] = Field(D.ASYNC_CORRECTION,
                                                        description="'ipo', 'icepop' or 'tis'")
    off_policy_steps: int = Field(D.ASYNC_OFF_POLICY_STEPS, ge=0, le=MAX_COUNT,
                                  description="integer >= 0")
    ipo_threshold: float = Field(D.IPO_THRESHOLD, gt=0.0, le=1.0, description="0 < threshold <= 1")
    icepop_low: float = Field(D.ICEPOP_LOW, gt=0.0, lt=1.0, description="0 < low < 1")
    icepop_high: float = Field(D.ICEPOP_HIGH, gt=1.0, le=MAX_RATIO, description="high > 1")
    tis_cap: float = Field(D.TIS_CAP, gt=1.0, le=MAX_RATIO, description="cap > 1")

    @field_validator("method", mode="before")
    @classmethod
    def _inner(cls, value: Any) -> Any:
        inner = method_spec(value)
        if isinstance(inner, Async):
            raise ValueError("cannot wrap another Async; set correction and off_policy_steps on one")
        if not isinstance(inner, (RLMethod, OPD, OPSD)):
            raise ValueError(f"cannot wrap {type(inner).__name__}: Async wraps grpo, max_rl, rae, "
                             "OPD or OPSD (single-rollout methods carry their own trust region)")
        return inner

    @property
    def name(self) -> str:
        return "async"


# One parser for every shape a method arrives in (Python objects, CLI strings, MCP JSON)
_ALIASES = {"max-rl": "max_rl", "maxrl": "max_rl", "flashreinforce": "flash_reinforce",
            "flash-reinforce": "flash_reinforce", "groupwise": "groupwise_grading",
            "groupwisegrading": "groupwise_grading", "groupwise-grading": "groupwise_grading",
            "reinforce_ada": "reinforce_ada", "reinforceada": "reinforce_ada",
            "reinforce-ada": "reinforce_ada"}

_WRONG_NAMES = {
    "self_distill": "prime-rl calls on-policy self-distillation 'opsd'",
    "self-distill": "prime-rl calls on-policy self-distillation 'opsd'",
    "icepop": "IcePop is an Async correction: {'name': 'async', 'method': 'grpo', "
              "'correction': 'icepop'}",
    "ipo": "IPO is an Async correction: {'name': 'async', 'method': 'grpo', 'correction': 'ipo'}",
}


def method_names() -> tuple[str, ...]:
    """Every method name :func:`method_spec` accepts."""
    return ("grpo", "max_rl", "rae", "opd", "opsd", "async", "groupwise_grading",
            "flash_reinforce", "sao", "bpco", "reinforce_ada")


def method_spec(obj: Any) -> Spec:
    """Parse a method from any shape a caller has: a spec object (returned as is), a name
    (``"opd"`` alone is refused: it needs a teacher), or a dict (or its JSON text) with ``"name"``
    and the knobs, e.g. ``{"name": "async", "method": "grpo", "correction": "icepop"}``.
    A SpecError names the bad name or knob and the accepted ones.
    """
    if isinstance(obj, Spec):
        return obj
    if isinstance(obj, str) and obj.lstrip().startswith("{"):
        import json
        try:
            obj = safejson.loads(obj)
        except json.JSONDecodeError as err:
            raise SpecError(f"method JSON {obj!r} is invalid ({err})", fix="e.g. "
                            '\'{"name": "opsd", "anchor": "live"}\'') from None
    if isinstance(obj, str):
        name, knobs = obj, {}
    elif isinstance(obj, dict):
        knobs = dict(obj)
        name = knobs.pop("name", None)
        if name is None:
            raise SpecError(f"method dict {obj!r} has no 'name'", fix="add 'name': one of "
                            f"{', '.join(method_names())}")
    else:
        raise SpecError(f"method must be a name, a dict with 'name', or a spec object; got a "
                        f"{type(obj).__name__}", fix=f"e.g. 'grpo' or {{'name': 'opd', 'teacher': "
                        "'model@http://host:8001/v1'}")
    if not isinstance(name, str):
        raise SpecError(f"method name must be a string; got {name!r}")
    key = name.strip().lower().replace(" ", "_")
    key = _ALIASES.get(key, key)
    if key in _WRONG_NAMES:
        raise SpecError(f"unknown method {name!r}: {_WRONG_NAMES[key]}")
    if key in BASE_METHODS:
        return RLMethod(name=key, **knobs)
    if key == "opd":
        if "teacher" not in knobs:
            raise SpecError("method 'opd' needs a teacher that returns prompt log-probabilities",
                            fix="{'name': 'opd', 'teacher': 'model@http://host:8001/v1'} or "
                            "OPD(Endpoint(url, model))")
        return OPD(**knobs)
    if key == "opsd":
        return OPSD(**knobs)
    if key == "async":
        return Async(**knobs)
    from .grouping import GroupwiseGrading
    from .sampling import ReinforceAda
    from .single_rollout import BPCO, SAO, FlashReinforce

    others = {"groupwise_grading": GroupwiseGrading, "flash_reinforce": FlashReinforce,
              "sao": SAO, "bpco": BPCO, "reinforce_ada": ReinforceAda}
    if key in others:
        return others[key](**knobs)
    close = did_you_mean(name, method_names(), spell=repr)
    raise SpecError(f"unknown method {name!r}{f' ({close})' if close else ''}", fix="one of "
                    f"{', '.join(method_names())}")


@operation(
    toolset="methods", effect=READS,
    title="One single-rollout update (FlashReinforce, SAO, BPCO)",
    description=(
        "The update of a single-rollout method on one batch (one rollout per prompt, where "
        "GRPO's group advantage is zero): per trajectory whether it was admitted, advantages and "
        "per-token coefficients for your loss (-sum coef x logprob), critic targets, stats and "
        "notes. For your own trainer: prime-rl cannot run these methods."),
    result="whileai_core.methods.rollout_batch:RolloutUpdate",
    doing="computing a single-rollout update", serves=("FlashReinforce", "SAO", "BPCO"))
def rollout_update(
        method: Annotated[Literal["flash_reinforce", "sao", "bpco"] | dict[str, Any], Field(
            description=(
                "'flash_reinforce', 'sao' or 'bpco', or an object with a name and knobs, e.g. "
                "{\"name\": \"sao\", \"band\": [0.2, 4.0]} (knob names and ranges as in the "
                "library's FlashReinforce, SAO and BPCO; a bad knob is named with its range)."),
            examples=["flash_reinforce", {"name": "flash_reinforce", "trust": 0.05}])],
        batch: Annotated[Records, Field(description=(
            "One batch of trajectories, one rollout per prompt. Each: {\"reward\": number, "
            "\"logprobs\": [learner log-prob per generated token, <= 0], \"behavior_logprobs\": "
            "[sampler's, optional], \"values\": [critic per token; SAO and BPCO], "
            "\"action_mask\": [false on tokens the environment wrote, optional]}."),
            examples=[[{"reward": 1.0, "logprobs": [-0.5, -1.2, -0.3]},
                       {"reward": 0.0, "logprobs": [-0.7, -0.4]}]])], *,
        step: Annotated[int | None, Field(ge=0, le=10**9, description=(
            "SAO/BPCO: the training step (their critic warms up first); null: after the "
            "warm-up."))] = None):
    """``spec.update`` of a single-rollout method on the batch's trajectories. The result type
    is named in the declaration, not imported: this module loads without numpy."""
    from ..rows import read_records

    spec = method_spec(method)
    if spec.name not in SINGLE_ROLLOUT:
        raise SpecError(f"rollout_update runs {', '.join(SINGLE_ROLLOUT)}, not {spec.name!r}",
                        fix="grouped methods (grpo, max_rl, rae, opd, opsd) train in prime-rl: "
                        "write their config with prime_rl_config")
    trajectories = read_records(batch, noun="trajectory").items
    if spec.name == "flash_reinforce":
        return spec.update(trajectories)
    return spec.update(trajectories, step=step)
