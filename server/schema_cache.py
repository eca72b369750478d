"""Answer tools/list without importing the library: a cache of every tool's public description.

Building a tool's schemas needs its input model and the core's Result class, and importing those
pulls numpy and the core modules in: about a quarter of a second that every agent host pays at
each spawn before it sees a single tool. ``server/tools.json`` holds what tools/list shows for
every tool of ``server.registry.TOOL_MODULES`` (with the module each comes from). At start-up the
server lists tools from it; the module behind a tool is imported, and the real tool built, on the
tool's first call. A module missing from the cache is loaded eagerly, as before.

The cache is generated, never edited: ``python -m server.schema_cache`` (or
``UPDATE_SNAPSHOTS=1 pytest tests/test_server_snapshot.py``) rewrites it, and a test fails when
it differs from the live schemas.
"""

from __future__ import annotations

import importlib
import json
import logging
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.types import ToolAnnotations
from pydantic import PrivateAttr

from .errors import run_core
from .tooling import Env, ToolInput, WhileaiTool, describe, to_mcp_tool

CACHE = Path(__file__).with_name("tools.json")
logger = logging.getLogger("whileai.server")


def build_cache(modules: Iterable[str]) -> list[dict[str, Any]]:
    """The cache's content for ``modules``, from the live tool specs."""
    return [{"module": module, **describe(spec)}
            for module in modules for spec in importlib.import_module(module).TOOLS]


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


class LazyTool(WhileaiTool):
    """A tool listed from the cache; its module is imported on the first call."""

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

    def _load(self) -> Tool:
        module = self._entry["module"]
        for spec in importlib.import_module(module).TOOLS:
            if spec.name == self.name:
                live = describe(spec)
                stale = sorted(k for k in live if live[k] != self._entry.get(k))
                if stale:  # clients validate results against the listed outputSchema
                    logger.warning("server/tools.json is stale for %s (%s differ): clients may "
                                   "reject its results. Fix: python -m server.schema_cache",
                                   self.name, ", ".join(stale))
                return to_mcp_tool(spec, self._env)
        raise ToolError(f"tool {self.name!r} is in the server's schema cache but {module} "
                        "no longer defines it. Fix: regenerate the cache (python -m "
                        "server.schema_cache) and restart the server")

    async def run(self, arguments, context, convert_result=False):
        if self._real is None:
            try:
                self._real = await self._env.pool.run(
                    self.name, lambda: run_core(f"loading the {self.name} tool", self._load))
            except ToolError as err:  # the SDK prefixes only what fails inside Tool.run
                raise ToolError(f"Error executing tool {self.name}: {err}") from err
        return await self._real.run(arguments, context, convert_result=convert_result)


def mcp_tools(modules: Iterable[str], env: Env, *, cache: Path | None = CACHE) -> list[Tool]:
    """Tools of ``modules`` in order: from the cache where it covers a module, else built now."""
    entries = load_cache(cache) if cache is not None else None
    by_module: dict[str, list[dict[str, Any]]] = {}
    for entry in entries or ():
        by_module.setdefault(entry.get("module"), []).append(entry)
    tools: list[Tool] = []
    for module in modules:
        if module in by_module:
            tools += [LazyTool.from_entry(e, env) for e in by_module[module]]
        else:
            tools += [to_mcp_tool(spec, env) for spec in importlib.import_module(module).TOOLS]
    names = [t.name for t in tools]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RuntimeError(f"tool names registered twice: {dupes}")
    return tools


def main() -> int:
    from .registry import TOOL_MODULES

    CACHE.write_text(dumps(build_cache(TOOL_MODULES)), encoding="utf-8")
    print(f"wrote {CACHE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
