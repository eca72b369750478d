"""The base of every method spec: frozen pydantic data whose bad knobs raise one clear SpecError.

Pydantic reports a bad field as a ``ValidationError`` listing locations; a user needs one line
naming the knob, the bad value, the allowed range and the default. :class:`Spec` converts.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import PydanticUndefined

from ..errors import SpecError


class Spec(BaseModel):
    """Immutable, validated method spec. Positional arguments fill ``_positional`` in order."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    _positional: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        if len(args) > len(cls._positional):
            raise SpecError(f"{cls.__name__} takes at most {len(cls._positional)} positional "
                            f"argument(s) ({', '.join(cls._positional) or 'none'}); got {len(args)}",
                            fix="pass the other knobs by name")
        for name, value in zip(cls._positional, args):
            if name in kwargs:
                raise SpecError(f"{cls.__name__}: `{name}` given twice (positionally and by name)")
            kwargs[name] = value
        try:
            super().__init__(**kwargs)
        except ValidationError as err:
            raise SpecError(_explain(cls, err)) from None

    def knobs(self) -> dict[str, Any]:
        """The knobs as plain data (JSON-ready), for results and the MCP server."""
        return self.model_dump(mode="json", exclude_none=True)


def _explain(cls: type[BaseModel], err: ValidationError) -> str:
    parts = []
    for item in err.errors():
        loc = ".".join(str(p) for p in item["loc"]) or "?"
        knob = str(item["loc"][0]) if item["loc"] else "?"
        message = item["msg"].removeprefix("Value error, ")
        text = f"{cls.__name__}: knob `{loc}` {message}"
        if not item["loc"]:  # a rule across knobs: its message names them
            parts.append(f"{cls.__name__}: {message}")
            continue
        if item["type"] == "extra_forbidden":
            known = ", ".join(sorted(cls.model_fields))
            text = f"{cls.__name__}: unknown knob `{loc}`; known knobs: {known}"
        elif item["type"] != "missing":
            text += f" (got {item.get('input')!r})"
        field = cls.model_fields.get(knob)
        if field is not None and item["type"] != "extra_forbidden":
            if field.description:
                text += f"; allowed: {field.description}"
            if field.default is not PydanticUndefined:
                text += f"; default {field.default!r}"
            else:
                text += "; required"
        parts.append(text)
    unknown = any(item["type"] == "extra_forbidden" for item in err.errors())
    fix = ("drop the unknown knob, or use one of the known ones" if unknown
           else "give each knob named a value it allows")
    return ". ".join(parts) + f". Fix: {fix}"
