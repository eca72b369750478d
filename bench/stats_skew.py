"""compare on a skewed null: how often the paired rule calls a move when the mean change is 0.

The shape: a tenth of the tasks gain +0.45 and the rest lose -0.05, so the
mean change is 0 but the per-task differences are skewed right; a sample that drew few of the
gainers looks like a drop. Each cell runs the paired rule the library uses
(``whileai_core.stats.paired.paired_interval``: the sign-flip test with Hall's skewness-corrected
t interval) and, as the baseline in the same run, the rule before it (the plain t interval with
the same sign-flip gate), on the same draws. A call is "moved" when the interval lies above 0,
"moved the wrong way" below; each rate is given with its Wilson 95% interval over the replicates.
Also: the same shape with rollout noise (per-task pass rates in [0.2, 0.5], 4 rollouts before and
after), a symmetric null, and a real shift of +0.05 (power, where the two rules should agree).

    .venv/bin/python bench/stats_skew.py            # 2,000 replicates a cell (about 2 minutes)
    .venv/bin/python bench/stats_skew.py --reps 4000

Target: at most 2.5% per direction under each null (3% at 30-40 tasks is the issue's bar).
"""

from __future__ import annotations

import argparse
import sys
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from whileai_core.bootstrap import wilson_interval  # noqa: E402
from whileai_core.stats.intervals import t_interval  # noqa: E402
from whileai_core.stats.paired import paired_interval, sign_flip_pvalue  # noqa: E402

LEVEL = 0.95
RESAMPLES = 2_000  # sign patterns drawn past the exact enumeration (the library's default: 10,000)


def draw(shape: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """One eval's per-task differences after - before."""
    if shape == "symmetric":
        return rng.normal(0.0, 0.15, n)
    shift = np.where(rng.random(n) < 0.1, 0.45, -0.05)
    if shape == "shift +0.05":
        return rng.normal(0.05, 0.15, n)
    if shape == "skewed":
        return shift
    p = rng.uniform(0.2, 0.5, n)  # "skewed, 4 rollouts": pass rates read from 4 rollouts
    before = rng.binomial(4, p) / 4
    after = rng.binomial(4, np.clip(p + shift, 0.0, 1.0)) / 4
    return after - before


def plain_t(d: np.ndarray, seed: int) -> tuple[float, float] | None:
    """The rule before Hall's correction: the t interval, widened to 0 when the sign-flip test
    does not reject (the same gate)."""
    if np.ptp(d) == 0:
        return None
    lo, hi = t_interval(d.mean(), d.std(ddof=1), d.shape[0], LEVEL)
    p, _ = sign_flip_pvalue(d, seed=seed, n_resamples=RESAMPLES)
    if p > 1 - LEVEL:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    return float(lo), float(hi)


def rate(hits: int, reps: int) -> str:
    lo, hi = wilson_interval(hits, reps, 0.95)
    return f"{hits / reps:6.2%} [{lo:.2%}, {hi:.2%}]"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=2_000)
    args = parser.parse_args(argv)
    reps = args.reps
    print(f"{reps} replicates a cell, level {LEVEL}; rate of calls [Wilson 95%]")
    print(f"{'shape':20} {'tasks':>5}  {'rule':7} {'moved (above 0)':>24} {'wrong way (below 0)':>24}")
    for shape in ("skewed", "skewed, 4 rollouts", "symmetric", "shift +0.05"):
        for n in (10, 20, 30, 31, 40, 100):
            rng = np.random.default_rng(zlib.crc32(f"{shape}/{n}".encode()))
            counts = {"hall": [0, 0], "plain t": [0, 0]}
            for r in range(reps):
                d = draw(shape, n, rng)
                pi = paired_interval(d, level=LEVEL, seed=r, n_resamples=RESAMPLES)
                for rule, ci in (("hall", pi.ci), ("plain t", plain_t(d, r))):
                    if ci is not None:
                        counts[rule][0] += ci[0] > 0
                        counts[rule][1] += ci[1] < 0
            for rule, (up, down) in counts.items():
                print(f"{shape:20} {n:5d}  {rule:7} {rate(up, reps):>24} {rate(down, reps):>24}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
