"""Values a description names, read from the core's Literals: never retyped by hand."""

from __future__ import annotations

import typing

from pydantic import BaseModel


def values_of(model: type[BaseModel], field: str) -> tuple[str, ...]:
    """The values of the Literal field ``field`` of ``model`` (optional or not), in order."""
    def literals(tp) -> list:
        if typing.get_origin(tp) is typing.Literal:
            return list(typing.get_args(tp))
        return [v for arg in typing.get_args(tp) for v in literals(arg)]

    found = literals(model.model_fields[field].annotation)
    if not found:
        raise TypeError(f"{model.__name__}.{field} is not a Literal field")
    return tuple(found)


def named(values) -> str:
    """Values as a description names them: "`a`, `b` or `c`"."""
    quoted = [f"`{v}`" for v in values]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" or {quoted[-1]}"
