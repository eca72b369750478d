"""Who reads a message, and how to say a call or an argument in that reader's language.

The same library answers three readers: a Python caller (``launch_run('grpo', confirm=True)``),
a person at a shell (``whileai-skills launch grpo --confirm``) and an agent over MCP
(``launch_run(config_or_recipe="grpo", confirm=true)``). A message that names a call
(:func:`call`, :func:`name`) or an argument (:func:`arg`) builds it here, so each reader is told
what *they* type; :func:`choose` picks a sentence when the readers differ in more than spelling.

The entry point sets the reader once (the CLI ``speaking(CLI)``, the MCP server
``speaking(MCP)`` around each tool call; else Python), in a context variable, so concurrent
calls each keep their own.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PYTHON, CLI, MCP = "python", "cli", "mcp"
PROGRAM = "whileai-skills"
SERVER_PROGRAM = "whileai-mcp"

_reader: ContextVar[str] = ContextVar("whileai_reader", default=PYTHON)


@contextmanager
def speaking(reader: str) -> Iterator[None]:
    """Messages built inside this block are for ``reader`` (``PYTHON``, ``CLI`` or ``MCP``)."""
    if reader not in (PYTHON, CLI, MCP):
        raise ValueError(f"reader must be {PYTHON!r}, {CLI!r} or {MCP!r}, got {reader!r}")
    token = _reader.set(reader)
    try:
        yield
    finally:
        _reader.reset(token)


def reader() -> str:
    """Who reads what is built now: ``PYTHON``, ``CLI`` or ``MCP``."""
    return _reader.get()


def choose(*, python: str, cli: str | None = None, mcp: str | None = None) -> str:
    """The sentence for the current reader (``cli``/``mcp`` fall back to ``python``)."""
    who = reader()
    text = cli if who == CLI else mcp if who == MCP else None
    return python if text is None else text


# --- the calls a message may point to ----------------------------------------------------------

@dataclass(frozen=True)
class Op:
    """One library call and its two other names, the CLI command and the MCP tool (None where
    that reader has no such call), read from the declarations through ``calls.json``.
    ``positional``: the arguments written without a name at the shell, in order."""

    command: str | None
    tool: str | None
    positional: tuple[str, ...] = ()
    metavars: dict[str, str] = field(default_factory=dict)
    forms: dict[str, str] = field(default_factory=dict)  # how the shell writes each argument
    module: str = ""  # the module that declares it (imported to call it)
    title: str = ""   # its one-line title (the CLI's command list)


CALLS_FILE = Path(__file__).with_name("calls.json")


class _Ops(Mapping):
    """``OPS``: operation name -> :class:`Op`, read on first use from ``calls.json``, the table
    the operations' declarations generate (``python -m whileai_core.operations``; a test fails
    when it is stale). A message names a call without importing the declarations, which sit in
    a higher layer than this module."""

    def __init__(self) -> None:
        self._ops: dict[str, Op] | None = None

    def _load(self) -> dict[str, Op]:
        if self._ops is None:
            table = json.loads(CALLS_FILE.read_text(encoding="utf-8"))
            self._ops = {name: Op(e["command"], e["tool"], tuple(e["positional"]),
                                  dict(e["metavars"]), dict(e["forms"]), e["module"],
                                  e["title"])
                         for name, e in table.items()}
        return self._ops

    def __getitem__(self, name: str) -> Op:
        return self._load()[name]

    def __iter__(self):
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


OPS: Mapping[str, Op] = _Ops()

# Python argument -> CLI flag, where the flag is not ``--`` + the name with dashes (one place).
CLI_FLAGS: dict[str, str] = {
    "overwrite": "--force",
}


def flag(name: str) -> str:
    """The flag of an argument: its name with dashes (one letter: ``-k``), or its entry in
    ``CLI_FLAGS``."""
    if name in CLI_FLAGS:
        return CLI_FLAGS[name]
    return ("-" if len(name) == 1 else "--") + name.replace("_", "-")


def _literal(value: Any) -> str:
    """A value as the current reader writes it: Python repr, or JSON for MCP."""
    if reader() == MCP:
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def _shell_words(name: str, value: Any, spec: Op | None = None) -> list[str]:
    form = spec.forms.get(name) if spec is not None else None
    if value is None:
        return []
    if isinstance(value, bool):
        if form == "negated":
            return [] if value else ["--no-" + name.replace("_", "-")]
        if form in ("switch", None):
            return [flag(name)] if value else []
        return [flag(name), json.dumps(value)]
    if isinstance(value, (list, tuple)):
        if form == "many" or (form is None and all(isinstance(v, (str, int, float))
                                                   for v in value)):
            return [flag(name), *map(str, value)] if value else []
        return [flag(name), json.dumps(value)]
    if isinstance(value, dict):
        if form == "pairs":
            return [flag(name), *(f"{k}={v if isinstance(v, str) else json.dumps(v)}"
                                   for k, v in value.items())]
        return [flag(name), json.dumps(value)]
    return [flag(name), str(value)]


def call(op: str, **arguments: Any) -> str:
    """The call ``op`` with ``arguments`` (None ones left out) as the current reader types it;
    a reader with no such call gets the Python spelling."""
    spec = OPS[op]
    who = reader()
    args = {k: v for k, v in arguments.items() if v is not None}
    if who == CLI and spec.command is not None:
        words = [PROGRAM, spec.command]
        for name in spec.positional:
            if name in args:
                value = args.pop(name)
                words += [str(v) for v in value] if isinstance(value, (list, tuple)) else \
                    [str(value)]
        for name, value in args.items():
            words += _shell_words(name, value, spec)
        return shlex.join(words)
    if who == MCP and spec.tool is not None:
        inner = ", ".join(f"{k}={_literal(v)}" for k, v in args.items())
        return f"{spec.tool}({inner})"
    with speaking(PYTHON):
        parts = [_literal(args.pop(name)) for name in spec.positional if name in args]
        parts += [f"{k}={_literal(v)}" for k, v in args.items()]
    return f"{op}({', '.join(parts)})"


def name(op: str) -> str:
    """How the current reader names the call ``op`` in a sentence (``whileai-skills launch``,
    the tool ``launch_run``, or the function ``launch_run``)."""
    spec = OPS[op]
    who = reader()
    if who == CLI and spec.command is not None:
        return f"`{PROGRAM} {spec.command}`"
    if who == MCP and spec.tool is not None:
        return f"`{spec.tool}`"
    return f"`{op}`"


_MISSING = object()


def arg(argument: str, value: Any = _MISSING, *, op: str | None = None) -> str:
    """One argument as the current reader writes it: ``arg("overwrite", True)`` is
    ``overwrite=True``, ``--force`` or ``overwrite=true``. Without a value, its name (a CLI
    positional of ``op``: its metavar)."""
    who = reader()
    if who == CLI:
        spec = OPS.get(op) if op else None
        if spec is not None and argument in spec.positional:
            return spec.metavars.get(argument, argument.upper())
        if value is _MISSING:
            return flag(argument)
        return shlex.join(_shell_words(argument, value, spec)) or f"no {flag(argument)}"
    if value is _MISSING:
        return argument
    return f"{argument}={_literal(value)}"


def argument(op: str, name: str) -> str:
    """``name`` as the current reader names that argument of ``op`` (``--group-size``; a negated
    switch as ``lora (on unless --no-lora)``), or as it is where ``op`` takes no such argument."""
    spec = OPS.get(op)
    if spec is None or name not in spec.forms:
        return name
    if reader() == CLI and spec.forms[name] == "negated":  # on by default: name it, and its off
        return f"{name.replace('_', '-')} (on unless --no-{name.replace('_', '-')})"
    return arg(name, op=op)


def relative_paths(root: str | Path | None = None) -> str:
    """Where relative paths start, for a message about a missing file: under ``root`` (the MCP
    server's workspace, set by its --root), else the current directory."""
    if root is not None:
        return f"relative paths start at the workspace root {root} (whileai-mcp --root)"
    try:
        here = f", {Path.cwd()}"
    except OSError:  # the current directory was removed
        here = ""
    return f"relative paths start at the current directory{here}"
