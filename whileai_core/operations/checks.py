"""One check of an operation's arguments for every caller: the surfaces validate a call with the
operation's input model (``surface.validate``), and a Python call of a declared function has its
numbers checked against the same declared types (:func:`checked`): a range written in a
signature is the one range every caller meets, and its refusal reads the same at each
(:func:`bad_arguments`).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo

from ..errors import ArgumentError
from ..voice import arg as spell
from ..voice import choose
from .args import FromContext

_NUMBERS = (int, float)


class _Given(BaseModel):
    """The declared arguments of a Python call (the numbers given are checked)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)


def checked(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, refusing a call whose numbers fall outside their declared ranges (or give a
    fraction for a whole number), with the surfaces' message. Every other value (text, rows,
    mappings, ``None``, a number where a word belongs) reaches ``fn`` as it is: ``fn`` names it
    in its own terms (at a surface, the input model has already checked its kind)."""
    signature = inspect.signature(fn)
    model: list[type[BaseModel]] = []

    def given() -> type[BaseModel]:
        if not model:
            hints = typing.get_type_hints(fn, include_extras=True)
            fields = {name: (hints[name], None) for name, p in signature.parameters.items()
                      if name in hints and p.kind is not p.VAR_POSITIONAL
                      and not any(isinstance(m, FromContext)
                                  for m in getattr(hints[name], "__metadata__", ()))}
            model.append(create_model(f"{fn.__name__}_arguments", __base__=_Given, **fields))
        return model[0]

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return fn(*args, **kwargs)  # Python's own words for a call that does not bind
        declared = given()
        plain = {k: v for k, v in bound.arguments.items()
                 if k in declared.model_fields and type(v) in _NUMBERS}
        if plain:
            try:
                declared.model_validate(plain)
            except ValidationError as exc:
                # a number outside its range, or a fraction for a whole number (a number where a
                # word belongs is left to fn's own words)
                if any(e["type"] in _RANGE_ERRORS | {"int_from_float"} for e in exc.errors()):
                    raise ArgumentError(bad_arguments(exc, declared, fn.__name__)) from None
        return fn(*args, **kwargs)

    return call


# --- bad arguments, in the reader's voice -----------------------------------------------------------

_RANGE_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal",
                 "finite_number"}
# pydantic's error types in a person's words, at every door (its own messages speak Python:
# "Input should be greater than or equal to 1", "a valid integer")
_WORDS = {
    "greater_than_equal": "must be at least {ge}", "greater_than": "must be above {gt}",
    "less_than_equal": "must be at most {le}", "less_than": "must be below {lt}",
    "finite_number": "must be a finite number",
    "int_parsing": "must be a whole number", "int_from_float": "must be a whole number",
    "int_type": "must be a whole number", "float_parsing": "must be a number",
    "float_type": "must be a number", "bool_parsing": "must be true or false",
}


def bad_arguments(exc: ValidationError, model: type[BaseModel], op: str | None = None) -> str:
    """One part per argument that does not fit ``model``: its name (as the reader types it: a
    positional by its metavar at the shell, when ``op`` names the operation), the bad value,
    what is expected, and the fix."""
    this = choose(python="call", cli="command", mcp="tool")
    allowed = ", ".join(spell(n, op=op) for n in model.model_fields) or "none"
    by_arg: dict[str, list[str]] = {}
    values: dict[str, object] = {}
    for err in exc.errors(include_url=False):
        name = str(err["loc"][0]) if err["loc"] else "(arguments)"
        if err["type"] == "extra_forbidden":
            by_arg.setdefault(name, []).append(f"not an argument of this {this} (allowed: {allowed})")
            continue
        if err["type"] == "missing":
            info = model.model_fields.get(name)
            what = (f": {info.description.rstrip('.')}" if info is not None and info.description
                    else "")
            by_arg.setdefault(name, []).append(f"is required{what}")
            continue
        values.setdefault(name, err.get("input"))
        # loc parts after the argument name: union branch tags (skipped) and list indexes
        items = [p for p in err["loc"][1:] if isinstance(p, int)]
        msg = err["msg"] + (f" (item {items[0]})" if items else "")
        ctx = err.get("ctx") or {}
        if err["type"] == "too_short":  # pydantic's "List should have at least 2 items after..."
            msg = f"needs at least {ctx.get('min_length')}, got {ctx.get('actual_length')}"
        elif err["type"] == "list_type":
            msg += choose(python="", cli=" (at the shell, a JSON list in quotes: '[...]')")
        if err["type"] in _WORDS:  # in a person's words: "must be at least 1 (1 to 100000)"
            msg = _WORDS[err["type"]].format(**{k: _bound(v) for k, v in ctx.items()
                                                if isinstance(v, (int, float))})
            span = _range_words(model.model_fields.get(name))
            if span and err["type"] in _RANGE_ERRORS:
                msg += f" ({span})"
        if msg not in by_arg.setdefault(name, []):
            by_arg[name].append(msg)
    parts = []
    for name, msgs in by_arg.items():
        shown = f" = {_short(values[name])}" if name in values else ""
        parts.append(f"`{spell(name, op=op) if name in model.model_fields else name}`{shown}: "
                     + "; or ".join(msgs[:4]))
    fix = choose(python="follow each argument's description (its type and range)",
                 cli="see the command's --help (each flag's type and range)",
                 mcp="follow the tool's inputSchema (each argument's description says what it "
                     "takes)")
    return "invalid arguments: " + " | ".join(parts) + f". Fix: {fix}"


def _short(value: object, limit: int = 80) -> str:
    words = value if isinstance(value, list) else [value]
    shell = choose(python="", cli="shell") and all(isinstance(w, (str, int, float)) for w in words)
    text = " ".join(map(str, words)) if shell else repr(value)  # at the shell: as typed
    return text if len(text) <= limit else text[:limit] + "...(truncated)"


def _range_words(info: FieldInfo | None) -> str:
    """A field's numeric range as a person says it: "1 to 100000", "above 0 and below 1",
    "at least 0"."""
    if info is None:
        return ""
    low = high = None
    for item in info.metadata:
        for name, word in (("ge", "at least"), ("gt", "above")):
            if getattr(item, name, None) is not None:
                low = (word, _bound(getattr(item, name)))
        for name, word in (("le", "at most"), ("lt", "below")):
            if getattr(item, name, None) is not None:
                high = (word, _bound(getattr(item, name)))
    if low and high and low[0] == "at least" and high[0] == "at most":
        return f"{low[1]} to {high[1]}"
    return " and ".join(f"{p[0]} {p[1]}" for p in (low, high) if p)


def _bound(value: float) -> str:
    """A bound as written: an integer whole (2**63 - 1, not 9.22337e+18), a float short."""
    return str(value) if isinstance(value, int) else f"{value:g}"
