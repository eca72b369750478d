"""Answer size and time of the row-reading tools at 1k, 100k and 1M tasks, in one run.

    .venv/bin/python bench/bench_responses.py [--sizes 1000 100000 1000000] [--k 2] [--repeats 3]

For each size, two row files of SIZE tasks x K rollouts are written (a baseline and a shifted
run), then each tool is called through an in-process ``mcp.Client`` (the whole protocol path:
argument validation, the worker thread, the answer and the client's own output-schema check).
Measured per call: the answer's bytes (text content + structured JSON, what reaches the agent's
context) and wall time, median of --repeats.

Baselines measured in the same run:
- size: the answer first reported too large, every task's rate in the structured content and the same
  JSON again as text (``per_task`` as the server sent it before), built here from the same rows;
- time: the core's own work for pass_at (``load_rows`` + ``pass_at``, in this process, no
  protocol), so the ratio is what the server adds.

The bound is ``whileai_core.defaults.MCP_ANSWER_MAX_BYTES``. Timings on a shared 2-core machine
are noisy: read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from mcp import Client  # noqa: E402

MODEL = "Qwen/Qwen3-8B"


def write_rows(path: Path, n_tasks: int, k: int, seed: int, shift: float = 0.0) -> None:
    rng = random.Random(seed)
    with path.open("w") as fh:
        for t in range(n_tasks):
            p = min(1.0, rng.random() + shift)
            fh.write("".join(json.dumps({"task_id": f"task-{t:07d}", "reward":
                                         float(rng.random() < p), "model": MODEL}) + "\n"
                             for _ in range(k)))


CALLS = (
    ("rate", {"rows": "a.jsonl"}),
    ("rate detail", {"rows": "a.jsonl", "detail": True}),
    ("compare", {"before": "a.jsonl", "after": "b.jsonl"}),
    ("route", {"rows": "a.jsonl", "model": MODEL, "taskset": "reverse-text"}),
    ("inspect_rows", {"rows": "a.jsonl", "model": MODEL}),
    ("rate reward", {"rows": "a.jsonl", "metric": "reward"}),
    ("split_by_task", {"rows": "a.jsonl"}),
)


def answer_bytes(result) -> int:
    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    data = json.dumps(result.structured_content) if result.structured_content else ""
    return len(text.encode()) + len(data.encode())


def old_pass_at_bytes(root: Path) -> int:
    """The answer before answers were bounded: the result with ``per_task`` (every task's rate), sent as
    structured content and again as its JSON text."""
    from whileai_core import load_rows, pass_at

    rows = load_rows(root / "a.jsonl")
    data = pass_at(rows).model_dump(mode="json")
    data.pop("tasks", None)
    data.pop("page", None)
    data["per_task"] = rows.per_task()
    return 2 * len(json.dumps(data).encode())


def core_time(root: Path) -> float:
    from whileai_core import load_rows, pass_at

    start = time.perf_counter()
    pass_at(load_rows(root / "a.jsonl"))
    return time.perf_counter() - start


def measure(root: Path, repeats: int) -> dict:
    from server.app import build_server

    server = build_server(root, skills_dir=root / "none")
    out: dict[str, dict] = {}

    async def go():
        async with Client(server) as client:
            for label, args in CALLS:
                name = label.split()[0]
                times, size = [], 0
                for _ in range(repeats):
                    start = time.perf_counter()
                    result = await client.call_tool(name, args)
                    times.append(time.perf_counter() - start)
                    assert not result.is_error, result.content[0].text
                    size = answer_bytes(result)
                out[label] = {"bytes": size, "seconds": statistics.median(times)}

    anyio.run(go)
    out["_core pass_at"] = {"seconds": statistics.median(core_time(root) for _ in range(repeats))}
    out["_old pass_at answer"] = {"bytes": old_pass_at_bytes(root)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000, 1_000_000])
    parser.add_argument("--k", type=int, default=2, help="rollouts per task (default 2)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from whileai_core.defaults import MCP_ANSWER_MAX_BYTES

    print(f"bound: {MCP_ANSWER_MAX_BYTES} bytes; k = {args.k} rollouts per task; medians of "
          f"{args.repeats}")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            write_rows(root / "a.jsonl", size, args.k, seed=0)
            write_rows(root / "b.jsonl", size, args.k, seed=1, shift=0.05)
            res = measure(root, args.repeats)
        core = res.pop("_core pass_at")["seconds"]
        old = res.pop("_old pass_at answer")["bytes"]
        print(f"\n{size:,} tasks ({size * args.k:,} rows): core pass_at {core:.3f} s; the old "
              f"pass_at answer {old:,} bytes")
        for label, r in res.items():
            flag = "" if r["bytes"] <= MCP_ANSWER_MAX_BYTES else "  OVER THE BOUND"
            print(f"  {label:16} {r['bytes']:7,} bytes  {r['seconds']:8.3f} s{flag}")
        p = res["rate"]
        print(f"  rate: {old / p['bytes']:,.0f}x smaller than the old answer; "
              f"{p['seconds'] / core:.2f}x the core's own time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
