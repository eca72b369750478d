"""Run every reading of readings.py through the MCP server with its default tools.

``python tests/shapes/runner.py [--markdown]`` prints one line per shape: whether the answer
agrees with the expert's reading, and the answer in short. Run with another tree's Python (e.g.
main's venv) to record what that tree answers (``before_main.md``); ``--docs FILE`` writes the
table of docs/shapes.md (shape, system, the expert's reading, main's answer, this tree's).
tests/test_shapes.py asserts every reading holds and that the table lists every shape.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent.parent)]

import make_shapes  # noqa: E402
from readings import READINGS  # noqa: E402

ALIASES = {"route_rows": ("route_rows", "route")}  # the tool's name before the design card's


class Session:
    """One MCP client session on a server rooted at ``root`` (default tools)."""

    def __init__(self, root: Path):
        from server.app import build_server

        self.root = root
        self.server = build_server(root, skills_dir=root / "no-skills")
        self.tools = anyio.run(self._list)

    async def _list(self) -> dict[str, Any]:
        from mcp import Client

        async with Client(self.server) as client:
            listed = await client.list_tools()
        return {t.name: t for t in listed.tools}

    def tool(self, name: str) -> str:
        return next((n for n in ALIASES.get(name, (name,)) if n in self.tools), name)

    def call(self, name: str, arguments: dict) -> Any:
        from mcp import Client

        async def run():
            async with Client(self.server) as client:
                return await client.call_tool(self.tool(name), arguments)

        return anyio.run(run)


def _resolve(value: Any, paths: dict[str, Any], root: Path) -> Any:
    if isinstance(value, str) and value.startswith("@"):
        name, _, index = value[1:].partition(".")
        path = paths[name] if not index else paths[name][int(index)]
        return str(Path(path).relative_to(root))
    if isinstance(value, dict):
        return {k: _resolve(v, paths, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, paths, root) for v in value]
    return value


def _get(data: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        elif isinstance(data, dict) and part in data:
            data = data[part]
        else:
            return _MISSING
    return data


_MISSING = object()


class Answer:
    def __init__(self, result: Any):
        self.error = bool(result.is_error)
        self.text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
        self.data = result.structured_content or {}
        self.blob = (self.text + "\n" + json.dumps(self.data)).lower()


def check(answer: Answer, spec: tuple, tools: dict) -> str | None:
    """None when ``spec`` holds of ``answer``, else what failed."""
    kind, *rest = spec
    if kind == "ok":
        return None if not answer.error else f"error: {answer.text[:200]}"
    if kind == "error":
        if not answer.error:
            return "no error"
        missing = [w for w in rest[0] if w.lower() not in answer.text.lower()]
        return f"error lacks {missing}" if missing else None
    if kind == "mentions":
        missing = [w for w in rest[0] if w.lower() not in answer.blob]
        return f"never says {missing}" if missing else None
    if kind == "never":
        found = [w for w in rest[0] if w.lower() in answer.blob]
        return f"says {found}" if found else None
    if kind == "callable_next":
        step = answer.data.get("next_step") or {}
        tool = step.get("tool")
        if tool is not None and tool not in tools:
            return f"next tool {tool} is not listed"
        bad = [k for k, v in (step.get("arguments") or {}).items() if "<" in json.dumps(v)]
        return f"placeholder arguments {bad}" if bad else None
    if kind == "any":
        fails = [[check(answer, s, tools) for s in group] for group in rest]
        return None if any(not any(f) for f in fails) else "; ".join(
            f for group in fails for f in group if f)
    path, *want = rest
    got = _get(answer.data, path)
    if got is _MISSING and kind != "lacks_item":
        return f"{path} missing" if not answer.error else f"error: {answer.text[:200]}"
    if kind == "eq":
        return None if got == want[0] else f"{path} = {got!r}, not {want[0]!r}"
    if kind == "ne":
        return None if got != want[0] else f"{path} = {got!r}"
    if kind == "in":
        return None if got in want[0] else f"{path} = {got!r}"
    if kind == "not_in":
        return None if got not in want[0] else f"{path} = {got!r}"
    if kind == "has":
        return None if isinstance(got, list) and want[0] in got else f"{path} = {got!r}"
    if kind == "lacks_item":
        return None if got is _MISSING or want[0] not in got else f"{path} = {got!r}"
    if kind == "approx":
        ok = isinstance(got, (int, float)) and abs(got - want[0]) <= want[1]
        return None if ok else f"{path} = {got!r}, not {want[0]} +- {want[1]}"
    raise ValueError(f"unknown check {kind!r}")


def short(answer: Answer) -> str:
    """The answer in a few words: the error's first sentence, or the route / verdict."""
    if answer.error:
        first = re.sub(r"^Error executing tool \w+: ", "", answer.text.replace("\n", " "))
        return "error: " + (first[:140] + "..." if len(first) > 140 else first)
    d = answer.data
    if "route" in d:
        return f"route `{d['route']}`"
    if "verdict" in d:
        return f"`{d['verdict']}` {d.get('summary', '')[len('verdict: ' + d['verdict']) + 2:]}"
    if "route_fields" in d:
        return "changes the route: " + (", ".join(d["route_fields"]) or "none")
    return (d.get("summary") or "")[:140]


def run_all(root: Path) -> list[dict]:
    """Every reading's result on shapes built fresh under ``root``."""
    paths = make_shapes.build(root / "shapes")
    session = Session(root)
    out = []
    for reading in READINGS:
        tool, args = reading["call"]
        answer = Answer(session.call(tool, _resolve(args, paths, root)))
        fails = [f for f in (check(answer, c, session.tools) for c in reading["checks"]) if f]
        out.append({"shape": reading["shape"], "system": reading["system"],
                    "reading": reading["reading"], "passes": not fails, "fails": fails,
                    "answer": short(answer)})
    return out


DOCS_HEAD = """# Row shapes nobody here wrote

[Back to the README](../README.md). How the rows are read: [core.md](core.md#every-field-read-roles).

The corpus under `tests/shapes`: row sets shaped the way real systems and teams write them, each
with what an expert concludes, written before the route was run on it (`readings.py`, committed
before any change to the library). `make_shapes.py` writes them fresh (Inspect's logs by
inspect_ai's own `eval`; prime-rl episodes copied from a record verifiers wrote; lm-eval, vf-eval
and TRL shapes from their documented formats; the rest as teams write them), and
`tests/test_shapes.py` runs every one through the MCP server with the default tools and checks
the expert's reading. "Before" is main before this work (`before_main.md`), "after" this tree;
rewrite the table with `python tests/shapes/runner.py --docs docs/shapes.md`.

To try a shape of your own: add its maker to `make_shapes.py` and its reading (the call, what
an expert concludes, the checks) to `readings.py` before running it, then run the runner.

| shape | system | the expert's reading | before | after |
|---|---|---|---|---|
"""


def docs_table(results: list[dict]) -> str:
    """docs/shapes.md: every reading with main's answer (before_main.md) and this tree's."""
    before = {}
    for line in (HERE / "before_main.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1] in ("pass", "FAIL"):
            before[cells[0]] = f"{'holds' if cells[1] == 'pass' else 'fails'}: {cells[2]}"
    rows = [f"| {r['shape']} | {r['system']} | {r['reading']} | "
            f"{before.get(r['shape'], 'not run').replace('|', '/')} | "
            f"{'holds' if r['passes'] else 'FAILS'}: {r['answer'].replace('|', '/')} |"
            for r in results]
    held = sum(r["passes"] for r in results)
    was = sum(v.startswith("holds") for v in before.values())
    return (DOCS_HEAD + "\n".join(rows) + f"\n\nReadings that hold: {was} of {len(before)} "
            f"before, {held} of {len(results)} after.\n")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        results = run_all(Path(tmp))
    if "--docs" in sys.argv:
        Path(sys.argv[sys.argv.index("--docs") + 1]).write_text(docs_table(results),
                                                                encoding="utf-8")
    for r in results:
        if "--markdown" in sys.argv:
            print(f"| {r['shape']} | {'pass' if r['passes'] else 'FAIL'} | "
                  f"{r['answer'].replace('|', '/')} |")
        else:
            print(f"{'pass' if r['passes'] else 'FAIL'}  {r['shape']}: {r['answer']}"
                  + ("" if r["passes"] else f"\n      {'; '.join(r['fails'])}"))
    print(f"{sum(r['passes'] for r in results)} of {len(results)} readings hold")


if __name__ == "__main__":
    main()
