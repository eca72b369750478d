"""Coverage and error-rate study of the library's intervals and verdicts (issue 13).

    .venv/bin/python bench/stats_study.py [--reps 2000] [--boot 1000] [--seed 0] [--quick]

Simulates graded evals: per-task true pass rates x_i drawn from a difficulty shape (a Beta
distribution), k rollouts per task graded Binomial(k, x_i), for 5 to 1,000 tasks. Then measures,
with numpy vectorised over replications:

A. coverage, mean width and zero-width share of the 95% interval of pass@1, pass@k and pass^k
   (k = the rollouts) for the library's rule (``ours``, the rule of
   :mod:`whileai_core.stats.intervals`, built from its own vectorised functions) against the
   percentile task bootstrap (the rule before issue 13), the t interval on task means, and BCa;
B. ``compare`` under no change (both arms drawn from the same x_i): how often it says "moved" or
   "moved_the_wrong_way", per direction, for ``ours`` (the sign-flip test under 30 tasks or 30
   changed tasks, the paired percentile bootstrap above) and the old percentile bootstrap; and
   its power when every task gains a share of its headroom;
C. ``teacher_clears`` on shared tasks: false-clear rate at no gap and power at a gap, for ours
   (paired, gap >= 0.05), the old rule (non-overlapping intervals) and a paired t test;
D. the noise band: how often a pure-noise difference of two runs passes it, t band vs 2 x run_std;
E. ``compare_many`` on 10 categories: family-wise error and false discovery rate, uncorrected vs
   Benjamini-Hochberg vs Holm.

The percentile bootstrap here draws ``--boot`` resamples per replication (the library: 10,000),
by the same multinomial shortcut. Monte-Carlo error of a coverage near 95% over R replications is
sqrt(.95 x .05 / R): 0.5 points at R = 2,000. ``--quick`` runs a small grid (the test in
tests/test_stats_study.py runs a smaller one still, with tolerances from R).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import ndtr, ndtri, stdtr, stdtrit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from whileai_core import compare_many  # noqa: E402
from whileai_core.defaults import (BINARY_EXACT_BELOW, SIGN_FLIP_BELOW,  # noqa: E402
                                   SMALL_SAMPLE_TASKS)
from whileai_core.stats.intervals import agresti_coull, effective_n, mid_p  # noqa: E402
from whileai_core.stats.paired import sign_flip_pvalue  # noqa: E402

LEVEL = 0.95
ALPHA = 1 - LEVEL
SHAPES = {"uniform": (1.0, 1.0), "hard": (0.5, 2.0), "easy": (2.0, 0.5), "bimodal": (0.3, 0.3)}
STRESS = {"very hard": (0.3, 2.0)}   # most tasks near 0, a long tail: reported apart
TASKS = (5, 10, 20, 30, 100, 1000)
ROLLOUTS = (1, 4, 16)
STATS = ("pass@1", "pass@k", "pass^k")


# --- shapes and truths -------------------------------------------------------------------------

def truths(a: float, b: float, k: int) -> tuple[float, float, float]:
    """E[x], E[1 - (1-x)^k], E[x^k] for x ~ Beta(a, b) (Beta moments, exact)."""
    j = np.arange(k)
    return a / (a + b), 1.0 - float(np.prod((b + j) / (a + b + j))), \
        float(np.prod((a + j) / (a + b + j)))


def per_task_tables(k: int) -> np.ndarray:
    """(3, k+1): per-task pass@1, pass@k, pass^k as functions of c passes of k (default k)."""
    c = np.arange(k + 1)
    return np.stack([c / k, (c > 0).astype(float), (c == k).astype(float)])


# --- the intervals, vectorised over replications ----------------------------------------------

def boot_means(counts: np.ndarray, tables: np.ndarray, n_tasks: int, boot: int,
               rng: np.random.Generator) -> np.ndarray:
    """Task-bootstrap means (S, B, R) of each per-task table, from multinomial count draws.

    ``counts`` (R, V): how many tasks have each value index. A task resample is a
    Multinomial(C, counts/C) draw of those counts (the library's shortcut), made here by
    conditional binomials so numpy vectorises over (B, R).
    """
    r, v = counts.shape
    left = np.full((boot, r), n_tasks, dtype=np.int64)
    mass_left = np.ones(r)
    draws = np.zeros((boot, r, v), dtype=np.int64)
    for j in range(v - 1):
        pj = counts[:, j] / n_tasks
        cond = np.clip(np.divide(pj, mass_left, out=np.zeros(r), where=mass_left > 1e-12), 0, 1)
        draws[:, :, j] = rng.binomial(left, cond)
        left -= draws[:, :, j]
        mass_left = mass_left - pj
    draws[:, :, v - 1] = left
    return np.einsum("brv,sv->sbr", draws, tables) / n_tasks


def percentile(sorted_draws: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Inverse-CDF percentiles (the library's definition) of draws sorted along axis -2."""
    b = sorted_draws.shape[-2]
    tail = (1 - level) / 2
    lo = sorted_draws[..., int(math.ceil(tail * b)) - 1, :]
    hi = sorted_draws[..., int(math.ceil((1 - tail) * b)) - 1, :]
    return lo, hi


def bca(sorted_draws: np.ndarray, values: np.ndarray, level: float = LEVEL):
    """BCa interval (Efron 1987): bias from the share of draws below the estimate, acceleration
    from the jackknife of the mean, sum (v - m)^3 / (6 (sum (v - m)^2)^1.5)."""
    b = sorted_draws.shape[-2]
    est = values.mean(axis=-1)
    below = (sorted_draws < est[..., None, :]).mean(axis=-2)
    z0 = ndtri(np.clip(below, 1.0 / b, 1 - 1.0 / b))
    dev = values - est[..., None]
    den = 6.0 * (dev ** 2).sum(axis=-1) ** 1.5
    acc = np.divide((dev ** 3).sum(axis=-1), den, out=np.zeros_like(den), where=den > 0)
    out = []
    for q in (ndtri((1 - level) / 2), ndtri((1 + level) / 2)):
        adj = ndtr(z0 + (z0 + q) / (1 - acc * (z0 + q)))
        idx = np.clip(np.ceil(adj * b).astype(np.int64) - 1, 0, b - 1)
        out.append(np.take_along_axis(sorted_draws, idx[..., None, :], axis=-2)[..., 0, :])
    return out[0], out[1]


def ours(values: np.ndarray, n_tasks: int, caps: list, pct: tuple):
    """The library's rule (whileai_core.stats.intervals), vectorised over replications."""
    s, r, _ = values.shape
    lo, hi = np.empty((s, r)), np.empty((s, r))
    mean = values.mean(axis=-1)
    sd = values.std(axis=-1, ddof=1)
    for i in range(s):
        binary = np.all((values[i] == 0) | (values[i] == 1), axis=-1)
        x = values[i].sum(axis=-1)
        if n_tasks < BINARY_EXACT_BELOW:
            bl, bh = mid_p(x, n_tasks, LEVEL)
        else:
            bl, bh = agresti_coull(x, n_tasks, LEVEL)
        el, eh = effective_n(mean[i], sd[i] / math.sqrt(n_tasks), n_tasks, caps[i], LEVEL)
        if n_tasks >= SMALL_SAMPLE_TASKS:
            zero = pct[1][i] - pct[0][i] <= 0
            el, eh = np.where(zero, el, pct[0][i]), np.where(zero, eh, pct[1][i])
        lo[i], hi[i] = np.where(binary, bl, el), np.where(binary, bh, eh)
    return lo, hi


def t_interval(values: np.ndarray, n_tasks: int):
    mean, sd = values.mean(axis=-1), values.std(axis=-1, ddof=1)
    half = stdtrit(n_tasks - 1, (1 + LEVEL) / 2) * sd / math.sqrt(n_tasks)
    return np.clip(mean - half, 0, 1), np.clip(mean + half, 0, 1)


# --- A. one rate -------------------------------------------------------------------------------

def coverage_cell(a: float, b: float, n_tasks: int, k: int, reps: int, boot: int,
                  rng: np.random.Generator, chunk: int = 250) -> dict:
    """Coverage, width and zero-width share of each method for pass@1, pass@k, pass^k."""
    tables = per_task_tables(k)
    truth = np.array(truths(a, b, k))
    sums = {}
    for start in range(0, reps, chunk):
        r = min(chunk, reps - start)
        c = rng.binomial(k, rng.beta(a, b, size=(r, n_tasks)))
        values = tables[:, c]                                  # (3, r, C)
        counts = np.stack([np.bincount(row, minlength=k + 1) for row in c])
        draws = np.sort(boot_means(counts, tables, n_tasks, boot, rng), axis=1)
        pct = percentile(draws)
        methods = {"ours": ours(values, n_tasks, [n_tasks * k, None, None], pct),
                   "percentile": pct, "t": t_interval(values, n_tasks),
                   "bca": bca(draws, values)}
        for name, (lo, hi) in methods.items():
            cover = ((lo <= truth[:, None] + 1e-12) & (truth[:, None] <= hi + 1e-12)).sum(axis=1)
            width = (hi - lo).sum(axis=1)
            zero = (hi - lo <= 1e-12).sum(axis=1)
            acc = sums.setdefault(name, np.zeros((3, 3)))
            acc += np.stack([cover, width, zero], axis=1)
    return {name: acc / reps for name, acc in sums.items()}   # (stat, [cover, width, zero])


# --- B. compare under no change, and its power --------------------------------------------------

def _paired_ours(d: np.ndarray, before: np.ndarray, after: np.ndarray, k: int,
                 draws: np.ndarray, rng: np.random.Generator):
    """compare's interval and exclusion of 0 for each replication, by its own rule: the
    sign-flip test with the t interval widened to 0 when the test keeps 0 (under 30 tasks or 30
    changed), the paired percentile bootstrap otherwise, the arms' MOVER when every task changed
    by the same amount."""
    from whileai_core.stats.intervals import task_interval
    from whileai_core.stats.paired import mover_difference

    reps, n_tasks = d.shape
    delta = d.mean(axis=1)
    lo, hi = (np.array(v, copy=True) for v in percentile(draws))   # never write into draws
    changed = np.count_nonzero(d, axis=1)
    flip = (n_tasks < SIGN_FLIP_BELOW) | (changed < SIGN_FLIP_BELOW)
    if flip.any():
        p = sign_flip_pvalue(d[flip], seed=int(rng.integers(1 << 31)), n_resamples=2000)[0]
        sd = d[flip].std(axis=1, ddof=1)
        half = stdtrit(n_tasks - 1, (1 + LEVEL) / 2) * sd / math.sqrt(n_tasks)
        tlo, thi = delta[flip] - half, delta[flip] + half
        keep0 = p > ALPHA
        lo[flip] = np.where(keep0, np.minimum(tlo, 0.0), tlo)
        hi[flip] = np.where(keep0, np.maximum(thi, 0.0), thi)
    for r in np.flatnonzero(np.ptp(d, axis=1) == 0):
        ib = task_interval(before[r], level=LEVEL, seed=0, n_resamples=1000, cap=n_tasks * k)
        ia = task_interval(after[r], level=LEVEL, seed=0, n_resamples=1000, cap=n_tasks * k)
        lo[r], hi[r] = mover_difference(after[r].mean(), ia.ci, before[r].mean(), ib.ci)
    return lo, hi


def _d_draws(d: np.ndarray, k: int, boot: int, rng: np.random.Generator) -> np.ndarray:
    grid = np.arange(-k, k + 1) / k
    counts = np.stack([np.bincount(np.rint(row * k).astype(np.int64) + k, minlength=2 * k + 1)
                       for row in d])
    return np.sort(boot_means(counts, grid[None, :], d.shape[1], boot, rng)[0], axis=0)


def compare_cell(a: float, b: float, n_tasks: int, k: int, reps: int, boot: int,
                 rng: np.random.Generator, headroom: float = 0.0) -> dict:
    """Share of replications read as moved up / down, ours and the old percentile bootstrap,
    and the coverage and width of each rule's interval of the delta.

    ``headroom``: the after arm's rate is x + headroom (1 - x) (0: no change).
    """
    x = rng.beta(a, b, size=(reps, n_tasks))
    before = rng.binomial(k, x) / k
    after = rng.binomial(k, x + headroom * (1 - x)) / k
    d = after - before
    delta = d.mean(axis=1)
    true = float(headroom * (1 - a / (a + b)))
    draws = _d_draws(d, k, boot, rng)
    old_lo, old_hi = percentile(draws)
    lo, hi = _paired_ours(d, before, after, k, draws, rng)
    if n_tasks < 6:   # compare reports no interval and no verdict under min_paired_tasks (6)
        lo, hi = np.full(reps, -1.0), np.full(reps, 1.0)
    return {"ours": (((lo > 0) & (delta > 0)).mean(), ((hi < 0) & (delta < 0)).mean()),
            "old": ((old_lo > 0).mean(), (old_hi < 0).mean()), "true_delta": true,
            "cover": (((lo <= true + 1e-12) & (true <= hi + 1e-12)).mean(),
                      ((old_lo <= true + 1e-12) & (true <= old_hi + 1e-12)).mean()),
            "width": (float((hi - lo).mean()), float((old_hi - old_lo).mean()))}


# --- C. teacher_clears --------------------------------------------------------------------------

def teacher_cell(a: float, b: float, n_tasks: int, k: int, gap: float, reps: int, boot: int,
                 rng: np.random.Generator, effect: float = 0.05) -> dict:
    """Clear rates: ours (paired), the old non-overlap rule, and a paired t test."""
    m = a / (a + b)
    x = rng.beta(a, b, size=(reps, n_tasks))
    xt = np.clip(x + gap * (1 - x) / (1 - m), 0, 1)           # mean gap = gap
    s = rng.binomial(k, x) / k
    t = rng.binomial(k, xt) / k
    d = t - s
    delta = d.mean(axis=1)
    lo, _ = _paired_ours(d, s, t, k, _d_draws(d, k, boot, rng), rng)
    ours_clear = (lo > 0) & (delta >= effect)
    # old: both percentile intervals, no overlap (per arm bootstrap of c/k)
    tables = (np.arange(k + 1) / k)[None, :]
    arm = []
    for vals in (s, t):
        cnt = np.stack([np.bincount(np.rint(row * k).astype(np.int64), minlength=k + 1)
                        for row in vals])
        arm.append(percentile(np.sort(boot_means(cnt, tables, n_tasks, boot, rng)[0], axis=0)))
    old_clear = (arm[1][0] > arm[0][1]) & (delta >= effect)
    sd = d.std(axis=1, ddof=1)
    tstat = np.divide(delta * math.sqrt(n_tasks), sd, out=np.zeros(reps), where=sd > 0)
    t_clear = (2 * stdtr(n_tasks - 1, -np.abs(tstat)) <= ALPHA) & (delta >= effect) & (sd > 0)
    return {"ours": ours_clear.mean(), "old overlap": old_clear.mean(), "paired t": t_clear.mean()}


# --- D. noise band ------------------------------------------------------------------------------

def noise_cell(runs: int, reps: int, rng: np.random.Generator) -> dict:
    scores = rng.normal(0.0, 1.0, size=(reps, runs))
    fresh = rng.normal(0.0, 1.0, size=(reps, 2))
    s = scores.std(axis=1, ddof=1)
    diff = np.abs(fresh[:, 0] - fresh[:, 1])
    band = stdtrit(runs - 1, (1 + LEVEL) / 2) * math.sqrt(2) * s
    return {"t band": float((diff > band).mean()), "2 x run_std": float((diff > 2 * s).mean())}


# --- E. many behaviours -------------------------------------------------------------------------

def many_cell(reps: int, rng: np.random.Generator, groups: int = 10, real: int = 0,
              n_tasks: int = 30, k: int = 4, lift: float = 0.3) -> dict:
    """Any false claim (FWER) and false share among claims (FDR) over ``groups`` categories,
    ``real`` of which truly gain ``lift`` of their headroom; calls compare_many itself."""
    fwer = {"uncorrected": 0, "bh": 0, "holm": 0}
    fdr = {"uncorrected": 0.0, "bh": 0.0, "holm": 0.0}
    for _ in range(reps):
        before, after = [], []
        for g in range(groups):
            x = rng.beta(1, 1, n_tasks)
            up = lift if g < real else 0.0
            for name, p in (("b", x), ("a", x + up * (1 - x))):
                c = rng.binomial(k, p)
                rows = [{"task_id": f"g{g}t{i}", "reward": float(j < ci), "category": f"g{g}"}
                        for i, ci in enumerate(c) for j in range(k)]
                (before if name == "b" else after).extend(rows)
        res = compare_many(before, after, by="category", n_resamples=1000)
        for rule in fwer:
            claims = [b.name for b in res.behaviours if (
                b.verdict in ("moved", "moved_the_wrong_way") if rule == "uncorrected"
                else b.survives_bh if rule == "bh" else b.survives_holm)]
            false = [c for c in claims if int(c[1:]) >= real]
            fwer[rule] += bool(false)
            fdr[rule] += len(false) / len(claims) if claims else 0.0
    return {rule: (fwer[rule] / reps, fdr[rule] / reps) for rule in fwer}


# --- the tables ---------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a small grid (about a minute)")
    parser.add_argument("--only", default="ABCDE", help="sections to run, e.g. BC (default all)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    tasks = (5, 10, 30, 100) if args.quick else TASKS
    reps, boot = args.reps, args.boot
    mc = 100 * math.sqrt(0.95 * 0.05 / reps)
    print(f"stats study: {reps} replications per cell, {boot} bootstrap resamples, seed "
          f"{args.seed}; Monte-Carlo sd of a 95% coverage: {mc:.1f} points")
    t0 = time.perf_counter()

    if "A" in args.only:
        section_a(tasks, reps, boot, rng)
    if "B" in args.only:
        section_b(reps, boot, rng)
    if "C" in args.only:
        section_c(reps, boot, rng)
    if "D" in args.only:
        section_d(reps, rng)
    if "E" in args.only:
        section_e(reps, rng)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")


def section_a(tasks, reps, boot, rng) -> None:
    print("\n## A. Coverage of the 95% interval (%), mean width, zero-width share")
    print("| shape | tasks | k | stat | ours | width | percentile (old) | width | zero-width "
          "old | t | BCa |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for shape, (a, b) in {**SHAPES, **STRESS}.items():
        for n in tasks:
            for k in ROLLOUTS:
                res = coverage_cell(a, b, n, k, reps, boot, rng)
                for i, stat in enumerate(STATS if k > 1 else STATS[:1]):
                    o, p, t, z = res["ours"][i], res["percentile"][i], res["t"][i], res["bca"][i]
                    assert o[2] == 0, f"zero-width interval from ours in {shape} {n} {k} {stat}"
                    print(f"| {shape} | {n} | {k} | {stat} | {100 * o[0]:.1f} | {o[1]:.3f} | "
                          f"{100 * p[0]:.1f} | {p[1]:.3f} | {100 * p[2]:.0f}% | "
                          f"{100 * t[0]:.1f} | {100 * z[0]:.1f} |", flush=True)



def section_b(reps, boot, rng) -> None:
    print("\n## B. compare: 'moved' per direction under no change (%), and power; B2: coverage "
          "(%) and width of the delta's interval, under no change and under the gain")
    print("| shape | tasks | k | ours up | ours down | old up | old down | power ours | "
          "power old | true delta | cover ours (null / gain) | cover old | width ours (gain) | "
          "width old |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for shape, (a, b) in SHAPES.items():
        for n in (5, 10, 20, 30, 100):
            for k in ROLLOUTS:
                null = compare_cell(a, b, n, k, reps, boot, rng)
                alt = compare_cell(a, b, n, k, reps, boot, rng, headroom=0.3)
                print(f"| {shape} | {n} | {k} | {100 * null['ours'][0]:.1f} | "
                      f"{100 * null['ours'][1]:.1f} | {100 * null['old'][0]:.1f} | "
                      f"{100 * null['old'][1]:.1f} | {100 * alt['ours'][0]:.0f} | "
                      f"{100 * alt['old'][0]:.0f} | {alt['true_delta']:.3f} | "
                      f"{100 * null['cover'][0]:.1f} / {100 * alt['cover'][0]:.1f} | "
                      f"{100 * null['cover'][1]:.1f} / {100 * alt['cover'][1]:.1f} | "
                      f"{alt['width'][0]:.3f} | {alt['width'][1]:.3f} |", flush=True)


def section_c(reps, boot, rng) -> None:
    print("\n## C. teacher_clears on shared tasks (k = 4): clear rate (%)")
    print("| shape | tasks | gap | ours (paired) | old (no overlap) | paired t |")
    print("|---|---|---|---|---|---|")
    for shape, (a, b) in (("uniform", SHAPES["uniform"]), ("hard", SHAPES["hard"])):
        for n, gap in ((30, 0.0), (30, 0.2), (100, 0.0), (100, 0.1)):
            res = teacher_cell(a, b, n, 4, gap, reps, boot, rng)
            print(f"| {shape} | {n} | {gap:.2f} | {100 * res['ours']:.1f} | "
                  f"{100 * res['old overlap']:.1f} | {100 * res['paired t']:.1f} |", flush=True)



def section_d(reps, rng) -> None:
    print("\n## D. noise band: pure-noise differences of two runs that pass it (%)")
    print("| re-runs | t band (ours) | 2 x run_std (old) |")
    print("|---|---|---|")
    for runs in (2, 3, 5, 10):
        res = noise_cell(runs, max(reps, 20_000), rng)
        print(f"| {runs} | {100 * res['t band']:.1f} | {100 * res['2 x run_std']:.1f} |")



def section_e(reps, rng) -> None:
    print("\n## E. compare_many, 10 categories x 30 tasks: FWER / FDR (%)")
    print("| true effects | uncorrected | Benjamini-Hochberg | Holm |")
    print("|---|---|---|---|")
    many_reps = max(100, reps // 10)
    for real in (0, 3):
        res = many_cell(many_reps, rng, real=real)
        print(f"| {real} of 10 | " + " | ".join(
            f"{100 * res[r][0]:.1f} / {100 * res[r][1]:.1f}" for r in ("uncorrected", "bh", "holm"))
            + " |", flush=True)
    print(f"\n(E uses {many_reps} replications)")


if __name__ == "__main__":
    main()
