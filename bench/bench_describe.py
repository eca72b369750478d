"""``describe_rows`` on files whose every row carries a field of its own: work proportional to the
data means seconds per MB that stay flat as the file grows (the red team's case: 0.7 MB took
18 s, 1.5 MB 69 s, 3 MB 256 s, reading every field over every row).

    .venv/bin/python bench/bench_describe.py [--mb 0.7 1.5 3] [--budget-s 300]

Each file: 4 rollouts per task, a reward, a ``note`` on every row and one ``field_<i>`` on row i
(so fields grow with rows). A size is skipped once the last took over a quarter of
``--budget-s``. To compare with another tree, run with that tree first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def write(path: Path, mb: float) -> int:
    rows = 0
    with open(path, "w") as fh:
        while fh.tell() < mb * 1e6:
            fh.write(json.dumps({"task_id": f"t{rows // 4}", "reward": float(rows % 2),
                                 "note": rows, f"field_{rows}": "x" * 20}) + "\n")
            rows += 1
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, nargs="+", default=[0.7, 1.5, 3.0])
    parser.add_argument("--budget-s", type=float, default=300)
    args = parser.parse_args()
    import whileai_core
    from whileai_core import describe_rows

    print(f"whileai_core from {Path(whileai_core.__file__).parent}, load average "
          f"{os.getloadavg()[0]:.2f}")
    print("| MB | rows (= fields) | describe s | s per MB |\n|---|---|---|---|")
    took = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for mb in args.mb:
            if took > args.budget_s / 4:  # (quadratic work would take 4x as long at twice the size)
                print(f"| {mb:g} | | skipped (the last took over a quarter of --budget-s) | |")
                continue
            path = Path(tmp) / f"rows-{mb:g}.jsonl"
            rows = write(path, mb)
            started = time.perf_counter()
            describe_rows(path)
            took = time.perf_counter() - started
            print(f"| {mb:g} | {rows:,} | {took:.2f} | {took / mb:.2f} |")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
