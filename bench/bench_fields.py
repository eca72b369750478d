"""What reading every field's role costs a route, against the load and the route itself, in one run.

    .venv/bin/python bench/bench_fields.py [--rows 1000000] [--repeats 5]

The file: ROWS graded rows (ROWS/4 tasks x 4 rollouts) with a model, a cut-off flag, a category,
a repo and a reply length, written at bench time. Per repeat, on freshly loaded rows: the load
(``load_rows``), the roles (``whileai_core.roles.read_fields``, which the route reads once per
load) and the route on rows whose roles are already read. Printed: medians, and the roles'
share of load + roles + route (the cost every answer now pays once per load). Timings on a
shared 2-core machine are noisy: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    from whileai_core.roles import read_fields
    from whileai_core.routing import route
    from whileai_core.rows import load_rows

    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.jsonl"
        with path.open("w") as fh:
            for i in range(args.rows):
                t = i // 4
                fh.write(json.dumps({"task_id": f"t{t}", "reward": float((i * 7) % 3 == 0),
                                     "model": "Qwen/Qwen3-8B", "truncated": i % 50 == 0,
                                     "category": f"c{t % 7}", "repo": f"r{t % 40}",
                                     "completion_tokens": 100 + i % 900}) + "\n")
        print(f"load average before: {os.getloadavg()[0]:.1f}")
        loads, roles, routes = [], [], []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            data = load_rows(str(path))
            t1 = time.perf_counter()
            read_fields(data)
            t2 = time.perf_counter()
            route(data, model="Qwen/Qwen3-8B", cluster=None)
            t3 = time.perf_counter()
            loads.append(t1 - t0), roles.append(t2 - t1), routes.append(t3 - t2)
        load, role, rt = (statistics.median(x) for x in (loads, roles, routes))
        print(f"{args.rows:,} rows, medians of {args.repeats}: load {load:.2f} s, roles "
              f"{role:.2f} s, route {rt:.2f} s; roles are {role / (load + role + rt):.0%} of "
              "load + roles + route")
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
