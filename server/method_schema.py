"""The method argument of prime_rl_config in detail: the resource ``whileai://methods/schema.json``.

A method is a name or an object with ``name`` and its knobs (``methods.method_spec``). The tool's
input schema names the forms in a sentence; this resource gives every knob. Each object form is
a model of the core spec's own fields (``RLMethod``, ``OPD``, ``OPSD``, ``Async``, the teacher's
``Endpoint``: copied, never retyped), tagged by ``name``, with an example.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from whileai_core.methods.specs import OPD, OPSD, Async, Endpoint, RLMethod, method_names

def _copy(info: FieldInfo, annotation: Any = None) -> tuple[Any, FieldInfo]:
    """The field as the wire model has it: the core's annotation and FieldInfo (default,
    description, range), or ``annotation`` with the core's default and description."""
    if annotation is None:
        return info.annotation, info
    default = ... if info.is_required() else info.default
    return annotation, Field(default, description=info.description)


def _wire(model_name: str, spec: type[BaseModel], name: Any, name_doc: str, *,
          examples: list[dict], replace: dict[str, Any] | None = None,
          skip: tuple[str, ...] = ()) -> type[BaseModel]:
    fields: dict[str, Any] = {"name": (name, Field(description=name_doc))}
    for field, info in spec.model_fields.items():
        if field == "name" or field in skip:
            continue
        fields[field] = _copy(info, (replace or {}).get(field))
    doc = (spec.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
    return create_model(model_name, __config__=ConfigDict(
        extra="forbid", json_schema_extra={"examples": examples}), __doc__=doc, **fields)


TeacherObject = create_model(
    "Teacher", __config__=ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"url": "http://localhost:8001/v1", "model": "Qwen/Qwen3-32B", "vocab": 151936},
        {"url": "https://teacher.example.org/v1", "model": "Qwen/Qwen3-32B", "params_b": 32,
         "dtype": "bfloat16"}]}),
    __doc__=("The OPD teacher: an OpenAI-compatible vLLM server that returns prompt "
             "log-probabilities, serving `model` at `url`. A chat API cannot score the student's "
             "tokens and is refused."),
    **{field: _copy(info) for field, info in Endpoint.model_fields.items()})

TeacherArg = Annotated[TeacherObject | Annotated[str, Field(pattern=r"^[^@\s]+@https?://\S+$")],
                       Field(description="The teacher: an object {url, model, vocab, params_b, "
                                         "dtype}, or the string 'model@http://host:port/v1'.")]

RLObject = _wire("RLMethodObject", RLMethod, Literal["grpo", "max_rl", "rae"],
                 "'grpo', 'max_rl' or 'rae' (prime-rl's reward-driven bases).",
                 examples=[{"name": "rae", "decay": 0.9}])
OPDObject = _wire("OPDObject", OPD, Literal["opd"], "'opd': on-policy distillation.",
                  replace={"teacher": TeacherArg},
                  examples=[{"name": "opd", "teacher": {"url": "http://localhost:8001/v1",
                                                        "model": "Qwen/Qwen3-32B",
                                                        "vocab": 151936},
                             "student_vocab": 151936}])
OPSDObject = _wire("OPSDObject", OPSD, Literal["opsd"],
                   "'opsd': on-policy self-distillation (the model shown privileged context).",
                   examples=[{"name": "opsd", "privileged": "reference"}])
InnerName = Literal["grpo", "max_rl", "rae", "opsd"]
InnerMethod = Annotated[InnerName | Annotated[RLObject | OPDObject | OPSDObject,
                                              Field(discriminator="name")],
                        Field(description="The method Async wraps: 'grpo', 'max_rl', 'rae', "
                                          "'opsd', or an object of those or of 'opd'.")]
AsyncObject = _wire("AsyncObject", Async, Literal["async"],
                    "'async': a stale sampler around another method, with an off-policy "
                    "correction.", replace={"method": InnerMethod},
                    examples=[{"name": "async", "method": "grpo", "correction": "icepop"}])

MethodName = Literal[method_names()]  # type: ignore[valid-type]
MethodTyped = Annotated[MethodName | Annotated[RLObject | OPDObject | OPSDObject | AsyncObject,
                                               Field(discriminator="name")],
                        Field(description="a method")]


def _inline(schema: Any, defs: dict[str, Any]) -> Any:
    """``schema`` with every ``$ref`` replaced by its definition (the schema travels inside one
    argument of the tool's input schema, where no ``$defs`` sits)."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = dict(defs[ref.rsplit("/", 1)[-1]])
            target.update({k: v for k, v in schema.items() if k != "$ref"})
            return _inline(target, defs)
        return {k: _inline(v, defs) for k, v in schema.items() if k != "$defs"}
    if isinstance(schema, list):
        return [_inline(v, defs) for v in schema]
    return schema


def method_json_schema() -> dict[str, Any]:
    """The detailed schema of a method (names and every object form), with no ``$ref``."""
    from pydantic import TypeAdapter

    raw = TypeAdapter(MethodTyped).json_schema()
    schema = _inline(raw, raw.get("$defs", {}))
    schema.pop("description", None)
    schema.pop("discriminator", None)
    for alt in schema.get("anyOf", ()):
        alt.pop("discriminator", None)
    return schema


def method_schema_text() -> str:
    """The schema as the resource ``whileai://methods/schema.json`` serves it."""
    import json

    return json.dumps(method_json_schema(), indent=1, sort_keys=True) + "\n"
