"""Benchmark the statistics' hot paths against named baselines measured in the same run.

    .venv/bin/python bench/bench_core.py [--tasks 100000] [--repeats 5]

(Loading and routing a million rows has its own bench: bench/bench_rows.py.)

1. pass_at and compare on TASKS tasks (4 rollouts each, 10,000 resamples) against
   scipy.stats.bootstrap (percentile; paired for compare; same resample count, vectorised) and a
   plain-Python per-draw bootstrap (random.choices per draw; timed on 20 draws and scaled to
   10,000, stated as such).
2. compare on TASKS tasks of continuous rewards (every value distinct: no multinomial shortcut)
   against scipy's paired bootstrap on the same values.
Prints medians (seconds) and ratios. Targets: compare at least 20x faster than scipy (1.); on
continuous rewards at least as fast as scipy (2.).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from whileai_core import compare, load_rows, pass_at  # noqa: E402
from whileai_core.defaults import BOOTSTRAP_RESAMPLES  # noqa: E402


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def python_bootstrap_per_draw(d: list[float], draws: int) -> list[float]:
    n = len(d)
    return [sum(random.choices(d, k=n)) / n for _ in range(draws)]


def bench_intervals(n_tasks: int, repeats: int) -> None:
    from scipy import stats as sps

    rng = np.random.default_rng(1)
    base = rng.integers(0, 5, size=n_tasks)
    lift = np.clip(base + rng.integers(-1, 3, size=n_tasks), 0, 4)

    def rows_for(counts):
        return [{"task_id": f"t{i}", "reward": 1.0 if j < c else 0.0}
                for i, c in enumerate(counts.tolist()) for j in range(4)]

    before, after = load_rows(rows_for(base)), load_rows(rows_for(lift))
    pb, pa = base / 4.0, lift / 4.0
    B = BOOTSTRAP_RESAMPLES

    t_pass = median_time(lambda: pass_at(before, k=1), repeats)
    t_cmp = median_time(lambda: compare(before, after), repeats)
    t_sp_one = median_time(lambda: sps.bootstrap(
        (pb,), np.mean, n_resamples=B, method="percentile", vectorized=True,
        random_state=0, batch=500), max(1, repeats // 2))
    t_sp_pair = median_time(lambda: sps.bootstrap(
        (pb, pa), lambda x, y, axis=-1: np.mean(y - x, axis=axis), paired=True,
        n_resamples=B, method="percentile", vectorized=True, random_state=0, batch=500),
        max(1, repeats // 2))
    d = (pa - pb).tolist()
    t_py = median_time(lambda: python_bootstrap_per_draw(d, 20), 3) * (B / 20)
    print(f"\n## intervals on {n_tasks:,} tasks x 4 rollouts, {B:,} resamples")
    print("| what | median s | ours faster by |")
    print("|---|---|---|")
    print(f"| pass_at (ours, rows already loaded) | {t_pass:.4f} | |")
    print(f"| scipy.stats.bootstrap, one sample | {t_sp_one:.3f} | {t_sp_one / t_pass:.0f}x |")
    print(f"| compare (ours, paired) | {t_cmp:.4f} | |")
    print(f"| scipy.stats.bootstrap, paired | {t_sp_pair:.3f} | {t_sp_pair / t_cmp:.0f}x |")
    print(f"| plain Python per-draw (20 draws scaled to {B:,}) | {t_py:.1f} | "
          f"{t_py / t_cmp:.0f}x |")

    # Continuous rewards: every task's value is distinct, so no multinomial shortcut: compare
    # draws task indices (the arms share one draw and the difference reuses it) against scipy's
    # paired bootstrap on the same values. Interleaved, median of per-repeat ratios.
    xb = rng.random(n_tasks)
    xa = np.clip(xb + rng.normal(0.01, 0.1, n_tasks), 0, 1)
    rb = load_rows([{"task_id": f"t{i}", "reward": float(v)} for i, v in enumerate(xb)])
    ra = load_rows([{"task_id": f"t{i}", "reward": float(v)} for i, v in enumerate(xa)])
    ours_t, sp_t, ratios = [], [], []
    for _ in range(max(1, repeats // 2)):
        t0 = time.perf_counter()
        compare(rb, ra, metric="reward")
        ours_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        sps.bootstrap((xb, xa), lambda x, y, axis=-1: np.mean(y - x, axis=axis), paired=True,
                      n_resamples=B, method="percentile", vectorized=True, random_state=0,
                      batch=500)
        sp_t.append(time.perf_counter() - t0)
        ratios.append(sp_t[-1] / ours_t[-1])
    print(f"| compare, continuous rewards (index path; both arms + delta) | "
          f"{statistics.median(ours_t):.2f} | |")
    print(f"| scipy.stats.bootstrap, paired, same values | {statistics.median(sp_t):.2f} | "
          f"{statistics.median(ratios):.1f}x (median of per-repeat ratios) |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} cpus")
    bench_intervals(args.tasks, args.repeats)


if __name__ == "__main__":
    main()
