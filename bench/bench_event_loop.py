"""How long `tools/list` waits while the server parses a large rows file (the GIL's cost).

    .venv/bin/python bench/bench_event_loop.py [--mb 100] [--form array|jsonl]

Writes a rows file of about --mb MB (4 rollouts per task), spawns `whileai-mcp` over stdio,
starts one `pass_at` on it and, until it answers, sends `tools/list` every 50 ms; prints the
call's time and the median and worst `tools/list` latency. A tool runs on a worker thread, but a
single C call (``json.loads`` of the whole file) holds the GIL for all of its run, and the event
loop waits behind it: the third red-team round saw 8.5 s for a 300 MB array.
``whileai_core.safejson`` parses a large array in steps of ``JSON_STEP_CHARS`` for this.

Measured on this 2-core machine shared with other sessions (load 10-16), 100 MB, stdio, medians
are not stable there: worst `tools/list` 2.1 s (array) and 2.1 s (JSONL) with the whole-file
parse; 1.2 s and 1.2 s parsed in steps (2026-12-01). On a loaded machine the worst case is
mostly the OS scheduling other processes. On the same machine quiet (load 1-2, 2026-12-02, two
runs each, the columnar reader decoding 8 MB chunks): array 5.8 s, tools/list median 0.038 and
0.048 s, worst 0.624 and 0.616 s; JSONL 2.0 s, median 0.032-0.051 s, worst 0.217-0.286 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[1]


def write_rows(folder: Path, mb: float, form: str) -> str:
    rng = random.Random(0)
    n = int(mb * (1 << 20) / 72)
    rows = [{"task_id": f"t{i // 4}", "reward": float(rng.random() < 0.5), "truncated": False,
             "model": "m"} for i in range(n)]
    name = "rows.json" if form == "array" else "rows.jsonl"
    with open(folder / name, "w") as fh:
        if form == "array":
            json.dump(rows, fh)
        else:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
    return name


async def measure(folder: Path, name: str) -> tuple[float, list[float]]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=str(Path(sys.executable).with_name("whileai-mcp")),
                                   args=["--root", str(folder)],
                                   env={**os.environ, "PYTHONPATH": str(REPO)})
    waits: list[float] = []
    async with Client(params) as client:
        await client.list_tools()
        await client.call_tool("holdout_size", {"effect": 0.1})  # the tool modules loaded
        done = anyio.Event()
        took = 0.0

        async def heavy() -> None:
            nonlocal took
            started = time.monotonic()
            await client.call_tool("rate", {"rows": name})
            took = time.monotonic() - started
            done.set()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(heavy)
            await anyio.sleep(0.3)
            while not done.is_set():
                started = time.monotonic()
                await client.list_tools()
                waits.append(time.monotonic() - started)
                await anyio.sleep(0.05)
    return took, waits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--form", choices=["array", "jsonl"], default="array")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        name = write_rows(Path(tmp), args.mb, args.form)
        took, waits = anyio.run(measure, Path(tmp), name)
    print(f"pass_at on {args.mb:g} MB ({args.form}): {took:.1f} s; tools/list during it: "
          f"median {statistics.median(waits):.3f} s, worst {max(waits):.3f} s "
          f"({len(waits)} calls)")


if __name__ == "__main__":
    main()
