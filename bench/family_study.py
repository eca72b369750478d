"""Coverage of the family-clustered interval (``cluster=``), by simulation.

    .venv/bin/python bench/family_study.py [--reps 1000] [--boot 1000] [--seed 0] [--quick]

Simulates evals whose tasks come in families: C families of m tasks, k rollouts per task. A
task's pass probability is logistic(mu + f + t), with a family effect f ~ N(0, sd_f) shared by the
family's tasks and a task effect t ~ N(0, sd_t); rollouts are Bernoulli. The estimand is the
population mean pass rate E[p] (computed once per shape from 4 million draws). Per replication
the per-task pass rates go through:

* ``ours``: the library's interval for these values, a share of 0/1 outcomes (pass@1):
  :func:`whileai_core.stats.clustered.intervals` with the rollouts as cap (families resampled,
  each drawn family's tasks kept; SE x sqrt(C/(C-1)); Agresti-Coull on the effective n
  m(1-m)/SE^2 with min(C, effective C) - 1 df: ``family_effective_n``);
* ``t``: mean +- t SE on the same SE and df (:func:`~whileai_core.stats.clustered.cluster_interval`
  as called for a paired difference: ``family_bootstrap_t``; what pass@1 took before the
  effective n);
* ``Hall``: what pass@k, pass^k and graded rewards take over families, the same SE and df with
  Hall's skewness correction, the skewness that of the family means (``intervals`` with no cap:
  ``family_hall_t``), here on the same per-task values;
* ``tasks redrawn``: the same with the second stage drawn again with replacement
  (``two_level_means(within_replace=True)``, SE as read, t_{C-1}), the other of Davison &
  Hinkley's two-stage schemes;
* ``tasks only``: the t interval over tasks that ignores families (what every interval did
  before ``cluster=``);
* ``CR1 t`` and ``CR2 t (BM df)``: the references, computed directly from the family sums of
  residuals: the cluster-robust CR1 error with t_{C-1}, and the CR2 error (each family's sum over
  sqrt(1 - n_g/N)) with Bell & McCaffrey's degrees of freedom.

A refused interval (possible only in the Hall column: every family's mean alike, by chance, with
few families) counts as a miss. Shapes: no family effect (sd_f 0), a moderate one (sd_f 0.5 against sd_t 1.0), a strong one
(sd_f 1.0 against 0.5) and the pass rate set by the family (sd_f 1.5, sd_t 0), each with 10 tasks
per family; and ``unequal``: the strong shape with family sizes 1 to 37 (mean 10; a few large
families carry most tasks), where few-cluster intervals are known to break first; and ``rare``:
the strong shape around a pass rate near 0.14 (logit -2.5), where the per-task values are skewed
and Hall's correction has something to correct; ``0.09``: a moderate family effect around a
pass rate near 0.09 (logit -2.45), and ``half in one``: the same with half of the tasks in one
family (the designs where holding the 0-of-C-families bound under every interval made it 3.8x
and 1.9-11.6x the CR1 width). Monte-Carlo error
of a coverage near 95% over R replications is sqrt(.95 x .05 / R): 0.7 points at R = 1,000.
The table is in docs/statistics-study.md ("Table F").
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import stdtrit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from whileai_core.stats.clustered import (Families, bell_mccaffrey_df,  # noqa: E402
                                          cluster_interval, intervals, two_level_means)

LEVEL = 0.95
MU = 0.0                      # logit of the typical task: pass rate about 0.5
SHAPES = {"none": (0.0, 1.0), "moderate": (0.5, 1.0), "strong": (1.0, 0.5),
          "family sets p": (1.5, 0.0), "unequal": (1.0, 0.5), "rare": (1.0, 0.5),
          "0.09": (0.5, 0.5), "half in one": (0.5, 0.5)}
# shapes around another typical task: pass rate about 0.14 (rare), about 0.09 (0.09, half in one)
SHAPE_MU = {"rare": -2.5, "0.09": -2.45, "half in one": -2.45}
FAMILIES = (3, 5, 10, 20, 50)


def truth(sd_f: float, sd_t: float, rng: np.random.Generator, mu: float = MU) -> float:
    z = rng.normal(mu, np.hypot(sd_f, sd_t), 4_000_000)
    return float(np.mean(1.0 / (1.0 + np.exp(-z))))


def sizes_for(shape: str, n_fam: int, m: int) -> np.ndarray:
    """Tasks per family: m each; for ``unequal`` a fixed spread 1..37 with mean about m; for
    ``half in one`` half of the n_fam x m tasks in the first family, the rest shared evenly."""
    if shape == "half in one":
        rest = np.full(n_fam - 1, max(1, (n_fam * m) // (2 * (n_fam - 1))))
        return np.concatenate(([int(rest.sum())], rest))
    if shape != "unequal":
        return np.full(n_fam, m)
    pattern = np.array([1, 2, 3, 5, 8, 13, 21, 37, 5, 5])      # mean 10
    return pattern[np.arange(n_fam) % pattern.shape[0]]


def draw(sizes: np.ndarray, k: int, sd_f: float, sd_t: float, rng: np.random.Generator,
         mu: float = MU) -> np.ndarray:
    """Per-task pass rates, tasks grouped by family (family i has sizes[i] tasks)."""
    f = np.repeat(rng.normal(0.0, sd_f, sizes.shape[0]), sizes)
    t = rng.normal(0.0, sd_t, f.shape[0])
    p = 1.0 / (1.0 + np.exp(-(mu + f + t)))
    return rng.binomial(k, p) / k


def cell(shape: str, n_fam: int, m: int, k: int, sd_f: float, sd_t: float, reps: int,
         boot: int, rng: np.random.Generator, target: float, mu: float = MU
         ) -> dict[str, tuple[float, float]]:
    """Coverage and mean width of each interval over ``reps`` replications."""
    sizes = sizes_for(shape, n_fam, m)
    codes = np.repeat(np.arange(n_fam), sizes)
    fam = Families("family", codes, [str(i) for i in range(n_fam)])
    q_f = stdtrit(n_fam - 1, 0.5 + LEVEL / 2)
    q_t = stdtrit(codes.shape[0] - 1, 0.5 + LEVEL / 2)
    n_all = int(sizes.sum())
    leverage = 1.0 - sizes / n_all                  # CR2's (1 - n_g / N) for a mean
    q_bm = stdtrit(bell_mccaffrey_df(fam), 0.5 + LEVEL / 2)
    hits = {"ours": [], "t": [], "Hall": [], "tasks redrawn": [], "tasks only": [], "CR1 t": [],
            "CR2 t (BM df)": []}
    widths = {name: [] for name in hits}
    for r in range(reps):
        v = draw(sizes, k, sd_f, sd_t, rng, mu)
        ours = intervals([v], [float(k * v.shape[0])], LEVEL, r, boot, fam,
                         n_resamples_clustered=boot)[0].ci
        ci = cluster_interval(v, fam, level=LEVEL, seed=r, n_resamples=boot).ci
        hall = intervals([v], [None], LEVEL, r, boot, fam, n_resamples_clustered=boot)[0].ci
        se_2 = two_level_means(v, codes, boot, r, within_replace=True).std(ddof=1)
        se_t = v.std(ddof=1) / np.sqrt(v.shape[0])
        m_all = v.mean()
        resid = np.bincount(codes, weights=v - m_all, minlength=n_fam)
        se_cr1 = np.sqrt(n_fam / (n_fam - 1) * (resid ** 2).sum()) / n_all
        se_cr2 = np.sqrt((resid ** 2 / leverage).sum()) / n_all
        for name, iv in (("ours", ours), ("t", ci), ("Hall", hall),
                         ("tasks redrawn", (m_all - q_f * se_2, m_all + q_f * se_2)),
                         ("tasks only", (m_all - q_t * se_t, m_all + q_t * se_t)),
                         ("CR1 t", (m_all - q_f * se_cr1, m_all + q_f * se_cr1)),
                         ("CR2 t (BM df)", (m_all - q_bm * se_cr2, m_all + q_bm * se_cr2))):
            if iv is None:           # refused (every family's mean alike): counted as a miss
                hits[name].append(False)
                continue
            hits[name].append(iv[0] <= target <= iv[1])
            widths[name].append(iv[1] - iv[0])
    return {name: (float(np.mean(hits[name])), float(np.mean(widths[name]) if widths[name]
                                                     else np.nan)) for name in hits}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="10 families only, 200 reps")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="shapes to run, comma-separated")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    families = (10,) if args.quick else FAMILIES
    reps = 200 if args.quick else args.reps
    print(f"Table F: 95% interval coverage (mean width), {reps} replications per cell, "
          f"{args.boot} two-level resamples; m = 10 tasks per family, k = 4 rollouts")
    print("| shape (sd_f, sd_t) | families | ours (pass@1: effective n) | t (paired "
          "differences) | Hall (pass@k, pass^k, graded) | tasks redrawn too | tasks only (no "
          "families) | CR1 t | CR2 t (BM df) |")
    print("|---|---|---|---|---|---|---|---|---|")
    start = time.time()
    for shape in args.shapes.split(","):
        sd_f, sd_t = SHAPES[shape]
        mu = SHAPE_MU.get(shape, MU)
        target = truth(sd_f, sd_t, rng, mu)
        for n_fam in families:
            res = cell(shape, n_fam, 10, 4, sd_f, sd_t, reps, args.boot, rng, target, mu)
            row = " | ".join(f"{c:.1%} ({w:.3f})" for c, w in res.values())
            print(f"| {shape} ({sd_f:g}, {sd_t:g}) | {n_fam} | {row} |", flush=True)
    print(f"\n{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
