"""The start-up cache of the tools' schemas: ``tools/list`` without importing the core.

``server/tools.json`` holds what ``tools/list`` shows of every tool, plus its toolset: the
reviewed contract (``tests/test_server_snapshot.py``). The server lists tools from it and imports
an operation on its first call (:class:`LazyTool`); a stale entry met then is logged.
``python -m server.schema_cache`` regenerates it.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.types import ToolAnnotations
from pydantic import PrivateAttr

from .errors import run_core
from .tooling import Env, ToolInput, WhileaiTool, op_entry, op_tool

CACHE = Path(__file__).with_name("tools.json")
logger = logging.getLogger("whileai.server")


def build_cache() -> list[dict[str, Any]]:
    """The cache's content, from the live declarations: every operation MCP serves, with its
    toolset."""
    from .registry import served_operations

    return [{"toolset": op.toolset, **op_entry(op)} for op in served_operations()]


def dumps(entries: list[dict[str, Any]]) -> str:
    return json.dumps(entries, indent=1, sort_keys=True) + "\n"


def load_cache(path: Path = CACHE) -> list[dict[str, Any]] | None:
    """The cached entries, or None when the file is missing or unreadable (then: eager)."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return entries if isinstance(entries, list) else None


def _not_called(**_: Any) -> Any:  # a LazyTool never calls its own fn
    raise RuntimeError("LazyTool.fn is a placeholder")


_LISTED = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


class LazyTool(WhileaiTool):
    """A tool listed from the cache; its operation is imported on the first call."""

    _entry: dict[str, Any] = PrivateAttr()
    _env: Env = PrivateAttr()
    _real: Tool | None = PrivateAttr(default=None)

    @classmethod
    def from_entry(cls, entry: dict[str, Any], env: Env) -> LazyTool:
        tool = cls(fn=_not_called, name=entry["name"], title=entry.get("title"),
                   description=entry.get("description", ""), parameters=entry["inputSchema"],
                   fn_metadata=FuncMetadata(arg_model=ToolInput,
                                            output_schema=entry.get("outputSchema")),
                   is_async=False, annotations=ToolAnnotations.model_validate(
                       entry.get("annotations") or {}))
        tool._entry, tool._env = entry, env
        return tool

    def _stale(self, live: dict[str, Any]) -> None:
        stale = sorted(k for k in _LISTED if live.get(k) != self._entry.get(k))
        if stale:  # clients validate results against the listed outputSchema
            logger.warning("server/tools.json is stale for %s (%s differ): clients may reject "
                           "its results. Fix: python -m server.schema_cache", self.name,
                           ", ".join(stale))

    def _load(self) -> Tool:
        from whileai_core.errors import ArgumentError
        from whileai_core.operations import load

        try:
            op = load(self.name)
        except ArgumentError:
            op = None
        if op is None or "mcp" not in op.surfaces:
            raise ToolError(f"tool {self.name!r} is in the server's schema cache but no "
                            "operation of the core declares it. Fix: regenerate the cache "
                            "(python -m server.schema_cache) and restart the server")
        live = op_entry(op)
        self._stale(live)
        return op_tool(op, self._env, live)

    async def run(self, arguments, context, convert_result=False):
        if self._real is None:
            try:
                self._real = await self._env.pool.run(
                    self.name, lambda: run_core(f"loading the {self.name} tool", self._load))
            except ToolError as err:  # the SDK prefixes only what fails inside Tool.run
                raise ToolError(f"Error executing tool {self.name}: {err}") from err
        return await self._real.run(arguments, context, convert_result=convert_result)


def mcp_tools(env: Env, *, cache: Path | None = CACHE) -> list[tuple[Tool, str]]:
    """Every tool with its toolset, from the cache when there is one, else built now
    (``cache=None``: always built now)."""
    entries = load_cache(cache) if cache is not None else None
    if entries is None:
        from .registry import served_operations

        tools = [(op_tool(op, env), op.toolset) for op in served_operations()]
    else:
        tools = [(LazyTool.from_entry(e, env), e.get("toolset", "core")) for e in entries]
    names = [t.name for t, _ in tools]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RuntimeError(f"tool names registered twice: {dupes}")
    return tools


def main() -> int:
    CACHE.write_text(dumps(build_cache()), encoding="utf-8")
    print(f"wrote {CACHE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
