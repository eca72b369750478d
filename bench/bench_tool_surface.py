"""What `tools/list` costs an agent's context, for the default surface and for every toolset.

For each surface (`whileai-mcp` as started by default, and `--toolsets all`) this prints: the
number of tools, the characters of the whole `tools/list` answer, the characters of the part a
model reads (each tool's name, description and input schema), the output schemas' share, and the
largest tool. Characters are counted on each tool as `json.dumps` writes it (", " and ": "
separators), as the issue that set the budget measured them; the wire form the SDK sends is
compact and smaller. The tools come from a real server through an in-process `mcp.Client`.

Budget of the default surface (docs/mcp-server.md, "Toolsets"): at most 15 tools, 60,000
characters in all, 30,000 for the model's part, 12,000 for any one tool. Before the toolsets
(42 tools, one list): 220,149 characters, 94,811 for the model's part, 117,944 of output schemas,
the largest tool (prime_rl_config) 25,476.

Run: .venv/bin/python bench/bench_tool_surface.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BUDGET = {"tools": 15, "total": 60_000, "model": 30_000, "largest": 12_000}


def tools_of(toolsets) -> list[dict]:
    import anyio
    from mcp import Client

    from server.app import build_server

    with tempfile.TemporaryDirectory() as tmp:
        server = build_server(tmp, skills_dir=ROOT / "skills", toolsets=toolsets)

        async def go():
            async with Client(server) as client:
                return (await client.list_tools()).tools

        listed = anyio.run(go)
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]


def sizes(tools: list[dict]) -> dict:
    each = {t["name"]: len(json.dumps(t)) for t in tools}
    model = sum(len(json.dumps({k: t[k] for k in ("name", "description", "inputSchema")}))
                for t in tools)
    outputs = sum(len(json.dumps(t.get("outputSchema", {}))) for t in tools)
    largest = max(each, key=each.get)
    return {"tools": len(tools), "total": sum(each.values()), "model": model,
            "outputs": outputs, "largest": (largest, each[largest]),
            "wire": len(json.dumps({"tools": tools}, separators=(",", ":")))}


def main() -> int:
    ok = True
    for label, toolsets in (("default (whileai-mcp)", None), ("--toolsets all", "all")):
        s = sizes(tools_of(toolsets))
        print(f"{label}: {s['tools']} tools, tools/list {s['total']:,} characters "
              f"({s['wire']:,} as sent), model's part {s['model']:,}, output schemas "
              f"{s['outputs']:,}, largest {s['largest'][0]} {s['largest'][1]:,}")
        if toolsets is None:
            checks = {"tools": s["tools"], "total": s["total"], "model": s["model"],
                      "largest": s["largest"][1]}
            for key, value in checks.items():
                within = value <= BUDGET[key]
                ok = ok and within
                print(f"  {key:8s} {value:>8,} <= {BUDGET[key]:>7,}  {'ok' if within else 'OVER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
