"""Loading and routing a million rows, against what a user could reach for instead, in one run.

    .venv/bin/python bench/bench_rows.py [--rows 1000000] [--repeats 5]

The file: ROWS graded rows (ROWS/4 tasks x 4 rollouts, 89 MB at 1M), written at bench time.

1. ``load_rows`` + ``route`` against ``json.loads`` per line (the stdlib floor, the parse most
   code does) and polars ``read_ndjson`` + ``group_by(task_id)`` (what a user with a columnar
   reader would write: per-task count, passes and reward sum). Goals: at most 0.35x the floor
   and 1.5x polars. Interleaved per repeat so load from other processes hits all alike; the
   ratios are medians of per-repeat ratios. polars is not a dependency: its line is printed
   only where it is installed (``python -m pip install polars`` in the bench's own venv, e.g.
   one made with ``--system-site-packages`` or a ``.pth`` line pointing at this venv).
2. Peak resident memory of ``whileai-skills route`` on the file, against the file's size
   (goal: at most 3x).
3. ``route_rows`` twice on the file in one MCP server session (an in-process client, its
   modules imported beforehand by a call on a two-row file): the second call reads the loaded
   rows from ``whileai_core.rows_cache`` (goal: under a tenth of the first).

Timings on a shared 2-core machine are noisy: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODEL = "Qwen/Qwen3-8B"


def make_rows_file(path: Path, n_rows: int) -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    n_tasks = n_rows // 4
    p = rng.random(n_tasks)
    rewards = (rng.random((n_tasks, 4)) < p[:, None]).astype(float)
    with open(path, "w") as fh:
        for i in range(n_tasks):
            for j in range(4):
                fh.write(json.dumps({"task_id": f"task-{i:07d}", "reward": rewards[i, j],
                                     "truncated": False, "model": "Qwen/Qwen3-8B"}) + "\n")


def floor(path: Path) -> list:
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def ours(path: Path):
    from whileai_core import load_rows, route

    rows = load_rows(path)
    return rows, route(rows, model=MODEL)


def polars_group(path: Path):
    import polars as pl

    frame = pl.read_ndjson(path)
    return frame.group_by("task_id", maintain_order=True).agg(
        n=pl.len(), passes=(pl.col("reward") >= 1.0).sum(), reward_sum=pl.col("reward").sum())


def bench_load(path: Path, repeats: int) -> None:
    try:
        import polars  # noqa: F401
        contenders = [("json.loads per line (stdlib floor)", floor), ("load_rows + route", ours),
                      ("polars read_ndjson + group_by", polars_group)]
    except ImportError:
        contenders = [("json.loads per line (stdlib floor)", floor), ("load_rows + route", ours)]
    ours(path)  # imports (numpy, scipy's first use, msgspec) outside the timings
    times: dict[str, list[float]] = {name: [] for name, _ in contenders}
    for _ in range(repeats):
        for name, fn in contenders:
            t0 = time.perf_counter()
            fn(path)
            times[name].append(time.perf_counter() - t0)
    med = statistics.median
    ours_t, floor_t = times["load_rows + route"], times["json.loads per line (stdlib floor)"]
    print(f"\n## load + route on {path.stat().st_size / 1e6:.0f} MB ({repeats} repeats, medians)")
    print("| what | median s | ours / this (median of per-repeat ratios) | goal |")
    print("|---|---|---|---|")
    goals = {"json.loads per line (stdlib floor)": "ours <= 0.35x",
             "polars read_ndjson + group_by": "ours <= 1.5x"}
    for name, _ in contenders:
        ratio = "" if name == "load_rows + route" else \
            f"{med([o / t for o, t in zip(ours_t, times[name])]):.2f}x"
        print(f"| {name} | {med(times[name]):.3f} | {ratio} | {goals.get(name, '')} |")
    if len(contenders) == 2:
        print("(polars is not installed here: install it in the bench's own venv for its line)")
    print(f"per repeat, ours: {', '.join(f'{t:.2f}' for t in ours_t)}; floor: "
          f"{', '.join(f'{t:.2f}' for t in floor_t)}")


def bench_rss(path: Path) -> None:
    cli = Path(sys.executable).with_name("whileai-skills")
    command = ([str(cli)] if cli.exists() else [sys.executable, "-m", "whileai_core.cli"]) + [
        "route", str(path), "--model", MODEL]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        print(f"\nwhileai-skills route failed: {done.stderr.strip()[-400:]}")
        return
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # Linux: KiB
    size = path.stat().st_size
    print(f"\n## peak memory of `whileai-skills route` on the file: {peak / 2**20:.0f} MiB "
          f"= {peak / size:.2f}x the file's {size / 2**20:.0f} MiB (goal <= 3x)")


def bench_session(path: Path) -> None:
    import anyio
    from mcp import Client

    from server.app import build_server

    logging.disable(logging.WARNING)  # the server's "no skills folder" warning
    warm = path.parent / "warm.jsonl"
    warm.write_text('{"task_id": "a", "reward": 1.0}\n{"task_id": "b", "reward": 0.0}\n')
    server = build_server(path.parent, skills_dir=path.parent / "no-skills")

    async def twice() -> list[float]:
        out = []
        async with Client(server) as client:
            # the tool's modules are imported on its first call: not the parse under test
            await client.call_tool("route_rows", {"rows": warm.name, "model": MODEL})
            for _ in range(2):
                t0 = time.perf_counter()
                result = await client.call_tool("route_rows", {"rows": path.name, "model": MODEL})
                out.append(time.perf_counter() - t0)
                assert not result.is_error, result.content[0].text
        return out

    first, second = anyio.run(twice)
    print(f"\n## route_rows twice in one server session: first {first:.3f} s, second "
          f"{second:.3f} s = {second / first:.3f}x (goal < 0.1x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import msgspec
    import numpy as np

    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, msgspec "
          f"{msgspec.__version__}, {os.cpu_count()} cpus, load average "
          f"{os.getloadavg()[0]:.2f} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.jsonl"
        make_rows_file(path, args.rows)
        bench_rss(path)  # first: the only child process, so its peak is the children's peak
        bench_load(path, args.repeats)
        bench_session(path)
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
