"""Benchmark `whileai-mcp` against a bare MCPServer with one echo tool, in one run.

    .venv/bin/python bench/bench_server.py [--starts 9] [--calls 200]

Both servers are spawned the same way (the venv's python, stdio) and driven by the same minimal
JSON-RPC client written here (initialize, then requests, one line each), so the numbers are the
servers' own: mcp.Client would add its client-side output-schema validation (jsonschema, about
1.5 ms for route's larger schema), which is the host's cost, not the server's.

1. Cold start: spawn -> initialize -> first tools/list answered. Median (and min) of --starts
   spawns, alternating the two servers so machine load hits both alike.
2. Per-call latency on one warm session each: --calls route calls on a small file (8 tasks x
   4 rollouts, mixed band: all six questions asked) against --calls echo calls, and the core's own
   time for the same work (load_rows + route, in this process). The three are interleaved in
   rounds of 20. Medians.

Targets: cold start <= 1.3x the bare server's; route <= 1.2x (echo + core).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BARE = """\
from mcp.server.mcpserver import MCPServer

server = MCPServer("echo", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    return text


server.run("stdio")
"""

MODEL = "Qwen/Qwen3-8B"


def write_rows(folder: Path) -> Path:
    # 8 tasks x 4 rollouts; task i passes min(i mod 5, 4) of 4: a mixed band, on-policy rows.
    lines = [json.dumps({"task_id": f"t{i}", "reward": float(j < min(i % 5, 4)), "model": MODEL})
             for i in range(8) for j in range(4)]
    path = folder / "small.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


class Session:
    """A stdio MCP session driven by hand: one JSON-RPC message per line."""

    def __init__(self, cmd: list[str]) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=ROOT)
        self.next_id = 0

    def send(self, method: str, params: dict | None = None, *, notify: bool = False) -> dict | None:
        msg: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not notify:
            self.next_id += 1
            msg["id"] = self.next_id
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        if notify:
            return None
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def open(self) -> list[dict]:
        self.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "bench", "version": "0"}})
        self.send("notifications/initialized", notify=True)
        return self.send("tools/list")["tools"]

    def call(self, tool: str, arguments: dict) -> dict:
        result = self.send("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(result["content"][0]["text"])
        return result

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def cold_start(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    session = Session(cmd)
    session.open()
    elapsed = time.perf_counter() - t0
    session.close()
    return elapsed


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="whileai-mcp vs a bare MCPServer (stdio)")
    ap.add_argument("--starts", type=int, default=9)
    ap.add_argument("--calls", type=int, default=200)
    a = ap.parse_args(argv)
    from whileai_core import load_rows, route

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = write_rows(folder)
        (folder / "bare.py").write_text(BARE)
        ours = [sys.executable, "-c", "import sys; from server.main import main; sys.exit(main())",
                "--root", str(folder)]
        bare = [sys.executable, str(folder / "bare.py")]

        cold: dict[str, list[float]] = {"ours": [], "bare": []}
        for _ in range(a.starts):
            cold["ours"].append(cold_start(ours))
            cold["bare"].append(cold_start(bare))

        s_ours, s_bare = Session(ours), Session(bare)
        s_ours.open(), s_bare.open()
        args = {"rows": path.name, "model": MODEL}

        def core() -> None:
            route(load_rows(path), model=MODEL)

        for _ in range(5):  # warm-up: first-call imports, caches
            s_ours.call("route", args), s_bare.call("echo", {"text": "hello"}), core()
        lat: dict[str, list[float]] = {"route": [], "echo": [], "core": []}
        done = 0
        while done < a.calls:
            n = min(20, a.calls - done)
            lat["route"] += [timed(lambda: s_ours.call("route", args)) for _ in range(n)]
            lat["echo"] += [timed(lambda: s_bare.call("echo", {"text": "hello"})) for _ in range(n)]
            lat["core"] += [timed(core) for _ in range(n)]
            done += n
        s_ours.close(), s_bare.close()

    ms = 1e3
    med = {k: statistics.median(v) for k, v in {**cold, **lat}.items()}
    print(f"cold start, spawn -> first tools/list answered ({a.starts} spawns each):")
    print(f"  whileai-mcp      median {med['ours'] * ms:7.1f} ms   min {min(cold['ours']) * ms:7.1f} ms")
    print(f"  bare MCPServer   median {med['bare'] * ms:7.1f} ms   min {min(cold['bare']) * ms:7.1f} ms")
    print(f"  ratio            median {med['ours'] / med['bare']:7.2f}x     "
          f"min {min(cold['ours']) / min(cold['bare']):7.2f}x   (target <= 1.30x)")
    print(f"per call over stdio, median of {a.calls}:")
    print(f"  route       {med['route'] * ms:7.2f} ms")
    print(f"  echo             {med['echo'] * ms:7.2f} ms")
    print(f"  core             {med['core'] * ms:7.2f} ms   (load_rows + route in-process, no MCP)")
    ratio = med["route"] / (med["echo"] + med["core"])
    print(f"  ratio route / (echo + core)  {ratio:5.2f}x   (target <= 1.20x)")
    print(f"  server cost beyond echo + core    "
          f"{(med['route'] - med['echo'] - med['core']) * ms:+.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
