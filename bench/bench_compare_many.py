"""compare_many by a field with many values: time at 1k, 10k and 100k groups, in one run.

    .venv/bin/python bench/bench_compare_many.py [--groups 1000 10000 100000]

Each size: two runs of G tasks x 2 rollouts, compared by `task_id` (one group per task, the
worst case: every group is its own comparison). Two baselines measured in the same run:

- the comparisons alone: `compare` called on every group's two arms, split beforehand and not
  timed (the statistics compare_many cannot skip; what it adds is the split and the
  correction);
- the split the code did at first (a mask over every row for each group: G passes over 2G
  rows), timed alone on one arm, stopped after 300 s. A checker found
  `compare_many(by="task_id")` on 100k tasks unanswered after 600 s; the split by one sort is
  what changed.

Timings on a shared 2-core machine are noisy: read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def rows(n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    p = rng.choice([0.0, 0.2, 0.5, 0.8, 1.0], size=n)
    return [{"task_id": f"t{i}", "reward": float(r)}
            for _ in range(2) for i, r in enumerate(rng.random(n) < p)]


def main() -> None:
    from whileai_core import load_rows
    from whileai_core.stats import compare, compare_many

    ap = argparse.ArgumentParser()
    ap.add_argument("--groups", type=int, nargs="+", default=[1000, 10000, 100000])
    print(f"{os.cpu_count()} cpus, load average {os.getloadavg()[0]:.2f} at the start")
    for g in ap.parse_args().groups:
        before, after = load_rows(rows(g, 0)), load_rows(rows(g, 1))
        t = time.perf_counter()
        compare_many(before, after, by="task_id")
        now = time.perf_counter() - t
        arms = [(before.where(before.task_index == i), after.where(after.task_index == i))
                for i in range(min(g, 2000))]
        t = time.perf_counter()
        for b, a in arms:
            compare(b, a)
        alone = (time.perf_counter() - t) * g / len(arms)
        keys = np.array(before.column("task_id"), dtype=object)
        t = time.perf_counter()
        for name in dict.fromkeys(keys.tolist()):  # the old split, one arm only
            before.where(keys == name)
            if time.perf_counter() - t > 300:
                break
        old = time.perf_counter() - t
        print(f"{g:>7} groups: compare_many {now:7.2f} s; the comparisons alone "
              f"{alone:7.2f} s{' (2,000 timed, scaled)' if g > 2000 else ''} -> "
              f"{now / alone:.2f}x; the old split alone (one arm) {old:7.2f} s"
              f"{' (stopped at 300 s)' if old > 300 else ''}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
