"""What every surface does with an operation, written once: read its arguments from the
signature, validate a call, resolve paths and inline records, call it, page and picture it, and
give its answer as data.

The MCP server (``server.tooling``) and the CLI (``whileai_core.cli``) both go through
:func:`invoke`; they differ only in the :class:`Context` (the server's workspace root, or the
caller's own paths) and in how they print.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from pydantic import (BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema,
                      create_model)
from pydantic.fields import FieldInfo

from ..defaults import MCP_INLINE_ROWS_MAX, RUN_ID_PATTERN, TASK_PAGE_DEFAULT
from ..errors import ArgumentError, RowsError
from ..progress import noting
from ..safepath import UserPath
from . import HERE, Context, Operation
from .checks import bad_arguments
from .args import (ARM, NAMED, OUT, PATH, RUN_OR_PATH, RUNS, SOURCE, VALUE, Arg, Detail,
                   FromContext, Limit, ModelFilter, Offset, Plot)


# --- the arguments of an operation ---------------------------------------------------------------

@dataclass(frozen=True)
class Param:
    """One argument: its name, type (the wire type, with its Field), how surfaces take it, and
    its default (``inspect.Parameter.empty`` when required)."""

    name: str
    annotation: Any
    arg: Arg
    default: Any
    info: FieldInfo = field(compare=False)
    many: bool = False  # ``*name`` in Python (its annotation is the whole list's type)

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty

    @property
    def description(self) -> str:
        if self.arg.describe is not None:
            return self.arg.describe()
        return self.info.description or ""

    def wire(self) -> Any:
        """The type as a surface builds it (a computed description and schema filled in)."""
        extra: list[Any] = []
        if self.arg.schema is not None:
            extra.append(WithJsonSchema(self.arg.schema()))
        if self.arg.describe is not None:
            extra.append(Field(description=self.description))
        return typing.Annotated[(self.annotation, *extra)] if extra else self.annotation


def _args_in(annotation: Any) -> list[Arg]:
    """The ``Arg`` metadata of a type, its union members' first (``Rows | None`` keeps the
    kind of ``Rows``), then its own."""
    inner = typing.get_args(annotation)[0] if typing.get_origin(annotation) is typing.Annotated \
        else annotation
    found = []
    if typing.get_origin(inner) in (typing.Union, types.UnionType):
        for member in typing.get_args(inner):
            found += _args_in(member)
    return found + [m for m in getattr(annotation, "__metadata__", ()) if isinstance(m, Arg)]


def _arg_of(annotation: Any) -> Arg:
    found = _args_in(annotation)
    if not found:
        return Arg()
    kind = next((a.kind for a in reversed(found) if a.kind != VALUE), VALUE)
    merged: dict[str, Any] = {"kind": kind}
    for a in found:  # later metadata (the operation's own) wins over the shared type's
        for name in ("positional", "metavar", "describe", "schema", "rows", "form", "writes"):
            value = getattr(a, name)
            if value not in (None, False):
                merged[name] = value
        merged["cli"] = merged.get("cli", True) and a.cli
        merged["mcp"] = merged.get("mcp", True) and a.mcp
    return Arg(**merged)


def _field_info(annotation: Any) -> FieldInfo:
    return FieldInfo.from_annotation(annotation)


def _from_context(annotation: Any) -> FromContext | None:
    """What of the :class:`Context` a parameter is filled with, if it is one the surface fills:
    the whole Context (annotated ``Context``), or one field of it (``args.FromContext``)."""
    if annotation is Context:
        return FromContext("")
    return next((m for m in getattr(annotation, "__metadata__", ())
                 if isinstance(m, FromContext)), None)


def _is_context(annotation: Any) -> bool:
    return _from_context(annotation) is not None


def params(op: Operation, surface: str | None = None) -> list[Param]:
    """The operation's arguments in signature order (``surface``: only those it offers, with
    the options the surfaces add: ``plot``, and ``detail``/``offset``/``limit`` for a paged
    result)."""
    key = f"params:{surface}"
    if key in op._cache:
        return op._cache[key]
    hints = typing.get_type_hints(op.fn, include_extras=True)
    out: list[Param] = []
    for p in inspect.signature(op.fn).parameters.values():
        annotation = hints.get(p.name, Any)
        if _is_context(annotation):
            continue
        arg = _arg_of(annotation)
        if surface is not None and not getattr(arg, surface):
            continue
        many = p.kind is inspect.Parameter.VAR_POSITIONAL
        default = inspect.Parameter.empty if many else p.default
        out.append(Param(p.name, annotation, arg, default, _field_info(annotation), many))
    if surface is not None:
        extra: list[tuple[str, Any, Any]] = []
        if op.picture is not None:
            extra.append(("plot", Plot, False))
        if op.paged:
            extra += [("detail", Detail, False), ("offset", Offset, 0),
                      ("limit", Limit, TASK_PAGE_DEFAULT)]
        extra += [("model_filter", ModelFilter, None)] * any(p.arg.rows for p in out)
        out += [Param(n, a, _arg_of(a), d, _field_info(a)) for n, a, d in extra]
    op._cache[key] = out
    return out


def context_params(op: Operation, ctx: Context) -> dict[str, Any]:
    """The parameters the surface fills from its :class:`Context`, each with its value: the
    Context itself, or the field of it the parameter names (``args.FromContext``)."""
    hints = typing.get_type_hints(op.fn, include_extras=True)
    marks = {n: _from_context(t) for n, t in hints.items() if n != "return"}
    return {n: getattr(ctx, m.field) if m.field else ctx for n, m in marks.items()
            if m is not None}


class Arguments(BaseModel):
    """Base of every generated input model: unknown arguments are refused, never dropped."""

    model_config = ConfigDict(extra="forbid")


def input_model(op: Operation, surface: str = "mcp",
                base: type[BaseModel] = Arguments) -> type[BaseModel]:
    """The pydantic model of the operation's arguments on ``surface`` (the MCP input schema;
    the CLI validates what it parsed with the same model, so both refuse the same calls)."""
    key = f"model:{surface}:{base.__module__}.{base.__qualname__}"
    if key not in op._cache:
        fields = {p.name: (p.wire(), ... if p.required else p.default)
                  for p in params(op, surface)}
        name = "".join(w.capitalize() for w in op.name.split("_")) + "Input"
        op._cache[key] = create_model(name, __base__=base, __doc__=op.title, **fields)
    return op._cache[key]


# --- a call --------------------------------------------------------------------------------------

def validate(op: Operation, values: dict[str, Any], surface: str) -> dict[str, Any]:
    """``values`` checked against the operation's input model: the clean values, or an
    ``ArgumentError`` naming each bad argument, its value, what it must be and the fix."""
    model = input_model(op, surface)
    try:
        checked = model.model_validate(values)
    except ValidationError as exc:
        raise ArgumentError(bad_arguments(exc, model, op.name)) from None
    return {name: getattr(checked, name) for name in type(checked).model_fields}


def _inline(value: list, argument: str) -> list:
    if len(value) > MCP_INLINE_ROWS_MAX:
        raise RowsError(f"`{argument}` has {len(value)} inline records, more than the "
                        f"{MCP_INLINE_ROWS_MAX} accepted inline",
                        fix="write them to a .jsonl file under the workspace root and pass its path")
    return value


def _is_run_id(value: Any) -> bool:
    return isinstance(value, str) and re.match(RUN_ID_PATTERN, value.strip()) is not None


def resolve(param: Param, value: Any, ctx: Context) -> Any:
    """One argument as the core takes it: paths under the caller's root, inline records
    bounded, run ids kept as ids."""
    kind, name = param.arg.kind, param.name
    if value is None or kind == VALUE:
        return value
    if kind in (PATH, OUT):
        writes = param.arg.writes if kind == OUT else None
        if isinstance(value, list):
            return [ctx.locate(v, argument=f"{name}[{i}]", writes=writes)
                    for i, v in enumerate(value)]
        return ctx.locate(value, argument=name, writes=writes)
    if kind == SOURCE:
        return ctx.locate(value, argument=name) if isinstance(value, str) else _inline(value, name)
    if kind == ARM:
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return [ctx.locate(v, argument=f"{name}[{i}]") for i, v in enumerate(value)]
        return resolve(Param(name, param.annotation, Arg(SOURCE), None, param.info), value, ctx)
    if kind == RUNS:
        return [ctx.locate(v, argument=f"{name}[{i}]") if isinstance(v, str) else v
                for i, v in enumerate(value)]
    if kind == NAMED:
        return {k: ctx.locate(v, argument=f"{name}.{k}") for k, v in value.items()}
    if kind == RUN_OR_PATH:
        return value.strip() if _is_run_id(value) else ctx.locate(value.strip(), argument=name)
    raise ValueError(f"unknown argument kind {kind!r} of {name}")


def invoke(op: Operation, values: dict[str, Any], ctx: Context) -> Any:
    """Call ``op`` with checked ``values`` (every argument its surface offers) in ``ctx``:
    paths resolved, the surface's options (``plot``, the page) applied. Returns the result."""
    values = dict(values)
    values.pop("plot", None)
    writer = values.pop("model_filter", None)
    page = None
    if op.paged:
        page = (values.pop("detail", False), values.pop("offset", 0),
                values.pop("limit", TASK_PAGE_DEFAULT))
    by_name = {p.name: p for p in params(op)}
    call = {name: resolve(by_name[name], value, ctx) for name, value in values.items()}
    with noting() as notes:  # what the reader changed in the input, said in the answer
        if ctx.root is not None:  # a server: each rows file parsed once per version of it
            for name, value in call.items():
                if by_name[name].arg.rows:
                    call[name] = _loaded(value, values.get("threshold"))
        if writer is not None or values.get("threshold") is not None:  # model_filter, the mark
            from ..writers import rows_arguments  # lazy: numpy loads on the call
            rows = [p.name for p in by_name.values() if p.arg.rows]
            call.update(rows_arguments(call, rows, writer, values.get("threshold")))
        call.update(context_params(op, ctx))
        spread = [p.name for p in by_name.values() if p.many]
        result = op.fn(*(call.pop(spread[0]) if spread else ()), **call)
    if notes and hasattr(result, "with_read_notes"):
        result = result.with_read_notes(notes)
    if page is not None and page[0]:
        result = result.with_page(page[1], page[2])
    return result


def _loaded(value: Any, threshold: float | None) -> Any:
    """Graded rows as resolved, each file among them (a UserPath) loaded through the session's
    cache (``whileai_core.rows_cache``); inline rows and numbers as they are."""
    if isinstance(value, UserPath):
        from ..rows_cache import load_rows_cached  # lazy: numpy loads on the first call

        return load_rows_cached(value, threshold=threshold)
    if isinstance(value, list) and any(isinstance(v, UserPath) for v in value):
        return [_loaded(v, threshold) for v in value]
    if isinstance(value, dict) and any(isinstance(v, UserPath) for v in value.values()):
        return {k: _loaded(v, threshold) for k, v in value.items()}
    return value


def picture(op: Operation, values: dict[str, Any], result: Any, ctx: Context, *,
            out: Any = None, overwrite: bool = False) -> Any:
    """The operation's picture of ``result`` (``op.picture``), written to ``out`` when given."""
    by_name = {p.name: p for p in params(op)}
    call = {name: resolve(by_name[name], value, ctx) for name, value in values.items()
            if name in by_name}
    return op.picture(call, result, out=out, overwrite=overwrite)


# --- the answer as data --------------------------------------------------------------------------

def summary(result: Any) -> str:
    """The result's summary sentence (``Result.summary``), and what the reader changed in its
    input (``Result.with_read_notes``)."""
    if hasattr(result, "summary"):
        notes = getattr(result, "_read_notes", ())
        return result.summary() + "".join(f"; note: {n}" for n in notes)
    text = str(result).strip()
    return text.splitlines()[0] if text else ""


def structured(result: Any) -> dict[str, Any]:
    """The result as JSON data, with its summary sentence: what an MCP client reads as the
    structured content and ``--json`` prints, standing alone without the text."""
    data = result.model_dump(mode="json")
    return {**data, "summary": summary(result)}


def output_schema(result_type: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of :func:`structured` for ``result_type`` (serialization mode)."""
    schema = result_type.model_json_schema(mode="serialization")
    schema.setdefault("properties", {})["summary"] = {
        "type": "string", "description": "The answer in one sentence (the text's first line)."}
    schema["required"] = [*schema.get("required", []), "summary"]
    return schema
