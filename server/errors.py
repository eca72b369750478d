"""How a failure inside a tool reaches the caller: always as a tool error, never as a crash.

The caller's to fix (``whileai_core.failures.explain``: a ``WhileaiError``, an ``OSError``, a
missing optional package) is passed on in its own words. Anything else is a bug: its traceback
goes to stderr, and the caller learns what was being done, that the input is not to blame, where
to report it, and that the server is still up. Arguments that do not fit a tool's input model
are named one by one. All become ``ToolError`` (an ``isError`` result).
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
    """Run ``call``; every failure becomes a ``ToolError`` (``doing``: "routing graded rows",
    for a bug report)."""
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
    """One line per argument that does not fit ``model`` (the core's wording, in the MCP
    reader's voice: ``whileai_core.operations.surface.bad_arguments``)."""
    from whileai_core.operations.surface import bad_arguments as explain_bad
    from whileai_core.voice import MCP, speaking

    with speaking(MCP):
        return explain_bad(exc, model)


# --- every answer can be sent -------------------------------------------------------------------

# JSON travels as UTF-8 (RFC 8259), and a lone UTF-16 surrogate (a "\ud800" escape with no pair)
# cannot be encoded: an answer is checked before it is sent (``AnswerCheck``).

FIELD_SHOWN_MAX = 120  # characters of a field's path shown in the message


def unencodable(value: object, where: str = "") -> str | None:
    """The path of the first string (or key) in ``value`` (what ``model_dump`` gives) that cannot
    be encoded as UTF-8, as ``structuredContent.rows[3].task_id``; None when every one can."""
    if isinstance(value, str):
        return None if _utf8(value) else (where or "(the answer)")
    if isinstance(value, dict):
        for key, item in value.items():
            name = key if isinstance(key, str) else str(key)
            path = f"{where}.{name}" if where else name
            if not _utf8(name):
                return f"{where + '.' if where else ''}(a field name)"
            found = unencodable(item, path)
            if found is not None:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = unencodable(item, f"{where}[{i}]")
            if found is not None:
                return found
    return None


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def escaped(value: object) -> object:
    """``value`` with every string's lone surrogates written out as ``\\udXXX`` text (what
    is sent where nothing could be named: a notification, a task's status line)."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {escaped(k): escaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [escaped(v) for v in value]
    return value


def shown_field(path: str) -> str:
    """A field's path as a message shows it: bounded, and itself encodable."""
    safe = escaped(path)
    return safe if len(safe) <= FIELD_SHOWN_MAX else safe[:FIELD_SHOWN_MAX] + "..."


def unsendable_message(path: str) -> str:
    """Why an answer was not sent, with the fix (the field named; its text never repeated)."""
    return (f"the answer cannot be sent: its field `{shown_field(path)}` holds text that is not "
            "valid Unicode (a lone UTF-16 surrogate such as \\ud800, which no UTF-8 text can "
            "carry), copied from an input file or an argument. Nothing else went wrong and the "
            "server is still running. Fix: find the surrogate escapes in the input or the "
            "arguments (a \\ud800-\\udfff escape not part of a pair) and replace them with the "
            "characters meant, or remove them")


def sendable_answer(tool: object, result: object) -> object:
    """A tool's answer (a ``CallToolResult``, a dict, another model) as it can be sent: itself,
    or an ``isError`` answer naming the field that cannot be encoded."""
    from mcp.types import CallToolResult, TextContent

    dumped = (result.model_dump(by_alias=True, exclude_none=True)
              if isinstance(result, BaseModel) else result)
    where = unencodable(dumped)
    if where is None:
        return result
    logger.warning("%s: answer not sent, field %s is not valid Unicode", tool, shown_field(where))
    name = tool if isinstance(tool, str) and unencodable(tool) is None else "?"
    return CallToolResult(content=[TextContent(
        type="text", text=f"Error executing tool {name}: {unsendable_message(where)}")],
        is_error=True)
