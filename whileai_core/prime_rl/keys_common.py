"""prime-rl 559b447 key tree as pydantic models, part 1: the pieces every table uses and
[orchestrator.algo] (facts: prime-rl@559b447 packages/prime-rl-configs/src/prime_rl/configs/,
orchestrator.py and algorithm.py).

Every model forbids extra keys, as prime-rl does. A union on ``type`` treats a missing ``type``
as the default variant (prime-rl's semantics) and names a wrong one with its fix.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from .targets import RENDERER_NAMES

Table = dict[str, Any]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _union(default: str, variants: dict[str, type[BaseModel]]) -> Any:
    """A union on ``type`` where a missing ``type`` means ``default`` (prime-rl's semantics)."""
    def pick(value: Any) -> str:
        tag = value.get("type", default) if isinstance(value, dict) else getattr(value, "type", default)
        return tag if tag in variants else "__bad__"
    choices = tuple(Annotated[cls, Tag(tag)] for tag, cls in variants.items())
    return Annotated[Union[choices + (Annotated[_BadType, Tag("__bad__")],)], Discriminator(pick)]


class _BadType(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: Any = None

    @model_validator(mode="after")
    def _refuse(self) -> _BadType:
        hint = _TYPE_HINTS.get(str(self.type), "")
        raise ValueError(f"`type` {self.type!r} is not a variant prime-rl 559b447 has{hint}")


_TYPE_HINTS = {
    "self_distill": " (on-policy self-distillation is type = 'opsd')",
    "icepop": " (IcePop is not built in: type = 'custom' with import_path "
              "'whileai_core.methods.icepop.icepop_loss')",
    "tis": " (TIS is verl's; prime-rl's losses are default, ipo, custom)",
}

# ---- shared pieces ------------------------------------------------------------------------


class Tokenizer(Strict):
    name: str | None = None
    trust_remote_code: bool | None = None
    chat_template: str | None = None


class Client(Strict):
    wait_for_ready_timeout: int = 1800
    base_url: str = "http://localhost:8000/v1"
    api_key_var: str = "VLLM_API_KEY"
    headers: dict[str, str] = {}
    headers_from_env: dict[str, str] = {}
    extra_headers_from_state: dict[str, str] = {}
    skip_model_check: bool = False
    admin_base_url: list[str] | None = None


class Frozen(Client):
    name: str

    @model_validator(mode="before")
    @classmethod
    def _explicit_url(cls, data: Any) -> Any:
        if isinstance(data, dict) and "base_url" not in data:
            raise ValueError("a frozen model (teacher) needs an explicit `base_url`, e.g. "
                             "'http://localhost:8001/v1'")
        return data


class Sampling(Strict):
    source: Literal["policy"] | Frozen = "policy"


_RENDERER_OPTIONS = frozenset({
    "thinking_retention", "enable_thinking", "tool_parser", "reasoning_parser", "add_vision_id",
    "image_cache_max", "preserve_thinking", "reasoning_effort", "clear_thinking", "import_path",
    "kwargs"})


class Renderer(BaseModel):
    model_config = ConfigDict(extra="allow")  # per-renderer options, checked by name below
    name: str = "auto"

    @model_validator(mode="after")
    def _name(self) -> Renderer:
        if self.name not in RENDERER_NAMES:
            raise ValueError(f"renderer `name` {self.name!r} is not a prime-rl 559b447 renderer")
        unknown = sorted(set(self.model_extra or {}) - _RENDERER_OPTIONS)
        if unknown:
            raise ValueError(f"unknown renderer key `{unknown[0]}` (prime-rl 559b447 renderers "
                             f"take {', '.join(sorted(_RENDERER_OPTIONS))})")
        return self


class _Algo(Strict):
    sampling: Sampling = Sampling()
    loss_kind: Any = Field(None, exclude=True)

    @model_validator(mode="after")
    def _policy_sourced(self) -> _Algo:
        if self.sampling.source != "policy" and getattr(self, "type") != "sft":
            raise ValueError(f"algo {getattr(self, 'type')!r} samples from the live policy; a frozen "
                             "`sampling.source` is for 'sft' only")
        return self


class LengthPenalty(Strict):
    type: Literal["linear"] = "linear"
    num_output_tokens_weight: float = 0.25
    num_input_tokens_weight: float = 0.1
    num_turns_weight: float = 0.1


class GRPO(_Algo):
    type: Literal["grpo"] = "grpo"
    length_penalty: LengthPenalty | None = None


class Echo(GRPO):
    type: Literal["echo"] = "echo"  # type: ignore[assignment]
    roles: Table = {}
    filter: Table | None = None


class MaxRL(_Algo):
    type: Literal["max_rl"] = "max_rl"


class RAE(_Algo):
    type: Literal["rae"] = "rae"
    decay: float = Field(0.95, ge=0.0, lt=1.0)


class HierarchicalGRPO(_Algo):
    type: Literal["hierarchical_grpo"] = "hierarchical_grpo"
    episode_agents: list[str] = Field(min_length=1)


class OPDAlgo(_Algo):
    type: Literal["opd"] = "opd"
    teacher: Frozen


class OPSDAlgo(_Algo):
    type: Literal["opsd"] = "opsd"
    demo_key: str = "demonstration"
    template: str = ("Here is an example of an expert response:\n<demonstration>\n{demonstration}\n"
                     "</demonstration>")
    renderer: Renderer = Renderer()

    @model_validator(mode="after")
    def _placeholder(self) -> OPSDAlgo:
        if "{demonstration}" not in self.template:
            raise ValueError("opsd `template` must contain '{demonstration}'")
        return self


class SFTAlgo(_Algo):
    type: Literal["sft"] = "sft"

    @model_validator(mode="after")
    def _frozen(self) -> SFTAlgo:
        if self.sampling.source == "policy":
            raise ValueError("algo 'sft' needs a frozen `sampling.source` (name + base_url) to "
                             "sample from")
        return self


Algo = _union("grpo", {"grpo": GRPO, "echo": Echo, "max_rl": MaxRL, "rae": RAE,
                      "hierarchical_grpo": HierarchicalGRPO, "opd": OPDAlgo, "opsd": OPSDAlgo,
                      "sft": SFTAlgo})
