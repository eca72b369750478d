"""How a failure inside a tool reaches the caller: always as a tool error, never as a crash.

- What is the caller's to fix (``whileai_core.failures.explain``): a
  :class:`~whileai_core.errors.WhileaiError`, whose message already names the problem and the
  fix, is passed on word for word; an ``OSError`` names the path and the fix; a missing optional
  package names the pip command.
- Anything else is a bug here. Its traceback goes to stderr (the server's log; stdout carries the
  protocol under stdio) and the caller gets what was being done, the exception, that the input is
  not to blame and where to report it, and that the server is still up, so the agent can report
  it instead of retrying blindly.

- Arguments that do not fit the tool's input model are named one by one with the bad value and
  what is expected, instead of pydantic's multi-line dump.

All become ``ToolError``, which the SDK returns as a ``CallToolResult`` with ``isError: true``
(prefixed "Error executing tool <name>: ").
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ValidationError

from whileai_core.failures import bug_report, explain

logger = logging.getLogger("whileai.server")

T = TypeVar("T")


def run_core(doing: str, call: Callable[[], T]) -> T:
    """Run ``call`` (a thin call into whileai_core); turn every failure into a ``ToolError``.

    ``doing`` says what the call was doing, for the unexpected case ("routing graded rows").
    """
    try:
        return call()
    except ToolError:
        raise
    except Exception as err:  # noqa: BLE001 - the server must answer, whatever happened
        message = explain(err)  # the caller's to fix: a refused input, a path, a missing extra
        if message is not None:
            raise ToolError(message) from err
        logger.exception("unexpected error while %s", doing)
        raise ToolError(bug_report(err, doing, traceback_at="in the server's stderr log (the "
                                   "server is still running)")) from err


def bad_arguments(exc: ValidationError, model: type[BaseModel]) -> str:
    """One line per argument that does not fit ``model``: name, bad value, expected, fix."""
    allowed = ", ".join(model.model_fields) or "none"
    by_arg: dict[str, list[str]] = {}
    values: dict[str, object] = {}
    for err in exc.errors(include_url=False):
        arg = str(err["loc"][0]) if err["loc"] else "(arguments)"
        if err["type"] == "extra_forbidden":
            by_arg.setdefault(arg, []).append(f"not an argument of this tool (allowed: {allowed})")
            continue
        if err["type"] == "missing":
            field = model.model_fields.get(arg)
            what = f": {field.description}" if field is not None and field.description else ""
            by_arg.setdefault(arg, []).append(f"is required{what}")
            continue
        values.setdefault(arg, err.get("input"))
        # loc parts after the argument name: union branch tags (skipped) and list indexes
        items = [p for p in err["loc"][1:] if isinstance(p, int)]
        msg = err["msg"] + (f" (item {items[0]})" if items else "")
        span = _range(model.model_fields.get(arg))
        if span and err["type"] in _RANGE_ERRORS:
            msg += f"; allowed: {span}"
        if msg not in by_arg.setdefault(arg, []):
            by_arg[arg].append(msg)
    parts = []
    for arg, msgs in by_arg.items():
        shown = f" = {_short(values[arg])}" if arg in values else ""
        parts.append(f"`{arg}`{shown}: " + "; or ".join(msgs[:4]))
    return ("invalid arguments: " + " | ".join(parts)
            + ". Fix: follow the tool's inputSchema (each argument's description says what it takes)")


def _short(value: object, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "...(truncated)"


_RANGE_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal",
                 "finite_number"}


def _range(field) -> str:
    """A field's numeric range from its schema constraints, e.g. "(0, 1)" or "[1, 64]"."""
    if field is None:
        return ""
    low = high = None
    for item in field.metadata:
        for name, bracket in (("ge", "["), ("gt", "(")):
            if getattr(item, name, None) is not None:
                low = f"{bracket}{getattr(item, name):g}"
        for name, bracket in (("le", "]"), ("lt", ")")):
            if getattr(item, name, None) is not None:
                high = f"{getattr(item, name):g}{bracket}"
    if low is None and high is None:
        return ""
    return f"{low or '(-inf'}, {high or 'inf)'}"
