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
    """One line per argument that does not fit ``model`` (the core's wording, in the MCP
    reader's voice: ``whileai_core.operations.surface.bad_arguments``)."""
    from whileai_core.operations.surface import bad_arguments as explain_bad
    from whileai_core.voice import MCP, speaking

    with speaking(MCP):
        return explain_bad(exc, model)
