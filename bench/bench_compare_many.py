"""compare_many by a field with many values: time at 1k, 10k and 100k groups, in one run.

    .venv/bin/python bench/bench_compare_many.py [--groups 1000 10000 100000]

Each size: two runs of G tasks x 2 rollouts, compared by `task_id` (one group per task, the
worst case: every group is its own comparison). Baseline measured in the same run: the split
the code did before (a mask over every row for each group: G passes over 2G rows), timed alone,
without the comparisons. Issue 11's checker found `compare_many(by="task_id")` on 100k tasks
unanswered after 600 s; the split by one sort is what changed. Timings on a shared 2-core
machine are noisy: read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def rows(n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    p = rng.choice([0.0, 0.2, 0.5, 0.8, 1.0], size=n)
    return [{"task_id": f"t{i}", "reward": float(r)}
            for _ in range(2) for i, r in enumerate(rng.random(n) < p)]


def main() -> None:
    from whileai_core import load_rows
    from whileai_core.stats import compare_many

    ap = argparse.ArgumentParser()
    ap.add_argument("--groups", type=int, nargs="+", default=[1000, 10000, 100000])
    for g in ap.parse_args().groups:
        before, after = load_rows(rows(g, 0)), load_rows(rows(g, 1))
        t = time.perf_counter()
        compare_many(before, after, by="task_id")
        now = time.perf_counter() - t
        keys = np.array([r["task_id"] for r in before.records], dtype=object)
        t = time.perf_counter()
        for name in dict.fromkeys(keys.tolist()):  # the old split, one arm only
            before.where(keys == name)
            if time.perf_counter() - t > 300:
                break
        old = time.perf_counter() - t
        print(f"{g:>7} groups: compare_many {now:7.2f} s; the old split alone (one arm) "
              f"{old:7.2f} s{' (stopped at 300 s)' if old > 300 else ''}")


if __name__ == "__main__":
    main()
