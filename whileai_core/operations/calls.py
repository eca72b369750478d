"""How the shell writes each argument of an operation, and the table of calls the lower layers
read: ``whileai_core/calls.json`` (each operation's module, command, tool, positional arguments
and shell forms), written by ``python -m whileai_core.operations`` and read by
``whileai_core.voice`` and the package's exports, so neither imports the declarations."""

from __future__ import annotations

import types
import typing
from typing import Any

from ..voice import CALLS_FILE
from . import operations
from .args import NAMED, RUNS
from .surface import Param, params

__all__ = ["CALLS_FILE", "call_table", "cli_form", "is_dict", "is_list", "members"]


def members(annotation: Any) -> list[Any]:
    """The types a value may have (Annotated and None taken off, from the whole and from each
    member: ``bool | Annotated[str, ...]`` is ``[bool, str]``)."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [m for a in typing.get_args(annotation) if a is not type(None)
                for m in members(a)]
    return [annotation]


def is_dict(tp: Any) -> bool:
    return tp is dict or typing.get_origin(tp) is dict


def is_list(tp: Any) -> bool:
    return tp is list or typing.get_origin(tp) is list


def cli_form(param: Param) -> str:
    """How the shell writes an argument (``whileai_core.cli`` parses it, ``whileai_core.voice``
    spells it): ``positional``; ``many`` (one or more words: a positional list, or a flag
    followed by its items); ``switch`` (a flag without a value); ``negated`` (``--no-<name>``:
    true unless given); ``pairs`` (a flag followed by NAME=VALUE words); ``json`` (one word,
    JSON when the value is a list or a mapping); ``word`` (a flag and its value)."""
    kinds = members(param.annotation)
    if param.arg.positional:
        return "many" if param.arg.kind == RUNS else "positional"
    if param.arg.form is not None:
        return param.arg.form
    if all(m is bool for m in kinds):
        return "negated" if param.default is True else "switch"
    if param.arg.kind == NAMED or (len(kinds) == 1 and is_dict(kinds[0])):
        return "pairs"
    if len(kinds) == 1 and is_list(kinds[0]):
        return "many"
    if any(is_list(m) or is_dict(m) for m in kinds):
        return "json"
    return "word"


def call_table() -> dict[str, dict[str, Any]]:
    """Every operation as the lower layers name it, without importing the declarations: its
    module (the package's export), its command and tool (null where that surface lacks it), its
    positional arguments with their placeholders, and how the shell writes each argument.
    Written to ``whileai_core/calls.json`` by ``python -m whileai_core.operations``; read by
    ``whileai_core.voice`` and the package's ``__init__``."""
    table = {}
    for name, op in operations().items():
        cli = params(op, "cli")
        shell = [p for p in cli if p.arg.positional]
        table[name] = {
            "module": op.module,
            "title": op.title,
            "command": op.command if "cli" in op.surfaces else None,
            "tool": name if "mcp" in op.surfaces else None,
            "positional": [p.name for p in shell],
            "metavars": {p.name: p.arg.metavar or p.name.upper() for p in shell},
            "forms": {p.name: cli_form(p) for p in cli}}
    return table

