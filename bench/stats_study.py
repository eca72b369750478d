"""Coverage and error-rate study of the library's intervals and verdicts.

    .venv/bin/python bench/stats_study.py [--reps 2000] [--boot 1000] [--seed 0] [--only ASBCDE]

Simulates graded evals and measures, with numpy vectorised over replications:

A. coverage (and on which side it misses), mean width and zero-width share of the 95% interval
   of pass@1, pass@4, pass^4, pass@8 and pass^8 from 16 rollouts per task, at 10, 20, 29, 30,
   31, 50 and 100 tasks, in the shapes of the independent audit: ``uniform`` (task pass rates
   x ~ U(0, 1)), ``p=0.3`` (every task at 0.3), ``needle`` (a tenth of the tasks at 0.95 among
   tasks at 0.02); and of the mean reward in two graded shapes: ``continuous`` (each task's
   reward the mean of 4 rollouts, Beta-distributed around a task mean from Beta(2, 2)) and
   ``skewed`` (rewards outside [0, 1]: Exp(1) - 0.5 per task). Columns: the library's rule
   (``ours``, built from its own vectorised functions), the rule of 0.2 (``old``: the
   effective-n interval under 30 tasks, the percentile bootstrap from 30), and the t interval;
S. the seam: coverage at 29, 30 and 31 tasks and the width at 30 over the width at 29;
A2. the shapes of the 0.2 study (hard, easy, bimodal, very hard: Beta difficulty; 1, 4 and 16
   rollouts, k = the rollouts), ours against the t interval, to show nothing got worse;
K. the candidate rules on the hardest cells: t, percentile bootstrap, bootstrap-t, logit-t, the
   effective n without a cap, Hall's interval alone, and ours (up to 1,000 replications);
L. the third pass (up to 1,000 replications): Beta(0.3, 3) and Beta(5, 1) difficulty, uniform
   and Beta(2, 2), ordinary 2% and 97% rates, ragged 8-16 rollouts at 8 and 11 tasks; ours
   against the previous rule (the effective n floored at 0 of C tasks, Hall's t without the
   betting switch), the betting interval alone and the t interval, with ours' width over the
   narrowest rule that covers >= 93% in the cell;
B. ``compare`` under no change: "moved" per direction, for ours (the sign-flip test with the t
   interval at every n), the old rule (sign-flip under 30 tasks, the paired percentile bootstrap
   from 30) and the paired t test; and power at a true change, on pass rates and on graded
   rewards (30, 31 and 40 tasks are where the old rule was liberal);
C. ``teacher_clears`` on shared tasks: false-clear rate at no gap and power at a gap;
D. the noise band: pure-noise differences that pass it (normal run scores; one rollout per task
   with two re-runs that may tie; a run_std given without its number of runs);
E. ``compare_many`` on 10 categories: family-wise error and false discovery rate.

Monte-Carlo error of a coverage near 95% over R replications is sqrt(.95 x .05 / R): 0.5 points
at R = 2,000. tests/test_stats_study.py runs small cells of this file with tolerances from R.
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.special import comb, stdtr, stdtrit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from whileai_core.stats.many import compare_many  # noqa: E402
from whileai_core.defaults import FLOOR_BELOW_CARRIERS  # noqa: E402
from whileai_core.stats.intervals import (agresti_coull, betting, carriers,  # noqa: E402
                                          effective_n, hall_interval, mid_p, moments,
                                          pass_k_bounds, takes_betting)
from whileai_core.stats.paired import sign_flip_pvalue  # noqa: E402

LEVEL = 0.95
ALPHA = 1 - LEVEL
ROLLOUTS = 16
TASKS = (10, 20, 29, 30, 31, 50, 100)
STATS = ("pass@1", "pass@4", "pass^4", "pass@8", "pass^8")


# --- shapes and truths -------------------------------------------------------------------------

def _needle(rng, size):
    return np.where(rng.random(size) < 0.1, 0.95, 0.02)


PASS_SHAPES = {   # per-task pass rates x
    "uniform": lambda rng, size: rng.random(size),
    "p=0.3": lambda rng, size: np.full(size, 0.3),
    "needle": _needle,
}
BETA_SHAPES = {"hard": (0.5, 2.0), "easy": (2.0, 0.5), "bimodal": (0.3, 0.3),
               "very hard": (0.3, 2.0)}


def _continuous(rng, size, mu=None):
    """Each task's mean of 4 rollout rewards, each Beta(4 mu, 4 (1 - mu)), mu ~ Beta(2, 2)."""
    mu = rng.beta(2.0, 2.0, size) if mu is None else mu
    return rng.beta(4 * mu[..., None], 4 * (1 - mu[..., None]), size + (4,)).mean(axis=-1)


REWARD_SHAPES = {   # per-task mean rewards, and the population mean
    "continuous": (_continuous, 0.5),
    "skewed": (lambda rng, size: rng.exponential(1.0, size) - 0.5, 0.5),
}


def stat_of(stat: str, x):
    """The population value of ``stat`` for per-task pass rates x (pass@k = 1 - (1-x)^k)."""
    if stat == "pass@1":
        return x
    k = k_of(stat)
    return x ** k if stat.startswith("pass^") else 1 - (1 - x) ** k


def truth(shape: str, stat: str) -> float:
    if shape == "p=0.3":
        return float(stat_of(stat, 0.3))
    if shape == "needle":
        return float(0.1 * stat_of(stat, 0.95) + 0.9 * stat_of(stat, 0.02))
    if shape == "uniform":   # E[x^k] = 1/(k+1) for x ~ U(0, 1)
        k = k_of(stat)
        return 0.5 if stat == "pass@1" else (1 / (k + 1) if "^" in stat else 1 - 1 / (k + 1))
    a, b = BETA_SHAPES[shape]
    k = k_of(stat)
    j = np.arange(k)
    if stat == "pass@1":
        return a / (a + b)
    if "^" in stat:
        return float(np.prod((a + j) / (a + b + j)))
    return 1.0 - float(np.prod((b + j) / (a + b + j)))


def k_of(stat: str) -> int:
    """The k of "pass@k" / "pass^k"."""
    return int(stat.replace("^", "@").split("@")[1])


def table(stat: str, n: int) -> np.ndarray:
    """Per-task value of ``stat`` for c = 0..n passes of n rollouts (Chen et al.; tau-bench)."""
    return per_task(stat, np.arange(n + 1), n)


def per_task(stat: str, c, n):
    """Per-task value of ``stat`` for c passes of n rollouts (arrays of either, or both)."""
    if stat == "pass@1":
        return c / n
    k = k_of(stat)
    if "^" in stat:
        return comb(c, k) / comb(n, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


# --- the rules, vectorised over replications (values: (R, C)) ---------------------------------

def ours_share(values: np.ndarray, rollouts: int):
    """pass@1 by the library's rule: one 0/1 outcome per task -> mid-p / Agresti-Coull over
    tasks; several -> Agresti-Coull on the effective n, at most the rollouts."""
    r, c = values.shape
    if rollouts == 1:
        x = values.sum(axis=1)
        return mid_p(x, c, LEVEL) if c < 10 else agresti_coull(x, c, LEVEL)
    m, sd, _, _ = moments(values)
    return effective_n(m, sd / math.sqrt(c), c, c * rollouts, LEVEL,
                       floor=carriers(values) < FLOOR_BELOW_CARRIERS)


def with_betting(values: np.ndarray, lo, hi):
    """The betting interval on the replications the rule gives it (few tasks carry the mean)."""
    use = takes_betting(values)
    lo, hi = np.array(lo, dtype=np.float64), np.array(hi, dtype=np.float64)
    if use.any():
        lo[use], hi[use] = betting(values[use], LEVEL)
    return lo, hi


def ours_pass_k(values: np.ndarray, k: int, power: bool, pass1):
    """pass@k / pass^k by the library's rule: Hall's interval (the binomial one over tasks when
    every per-task value is 0 or 1) held to pass@1's bounds."""
    c = values.shape[1]
    m, sd, skew, _ = moments(values)
    lo, hi = hall_interval(m, sd, skew, c, LEVEL)
    binary = np.all((values == 0) | (values == 1), axis=1)
    flat = np.ptp(values, axis=1) == 0
    if binary.any() or flat.any():
        x = values.sum(axis=1)
        bl, bh = mid_p(x, c, LEVEL) if c < 10 else agresti_coull(x, c, LEVEL)
        al, ah = agresti_coull(x, c, LEVEL)
        lo = np.where(binary, bl, np.where(flat, al, lo))
        hi = np.where(binary, bh, np.where(flat, ah, hi))
    bet_lo, bet_hi = with_betting(values, lo, hi)
    lo, hi = np.where(binary, lo, bet_lo), np.where(binary, hi, bet_hi)
    return pass_k_bounds(lo, hi, m, flat, pass1[0], pass1[1], k, power)


def ours_reward(values: np.ndarray):
    """Graded rewards: Hall's interval, clipped to [0, 1] when every value lies in it; no
    interval (nan) when every task has the same mean reward."""
    c = values.shape[1]
    m, sd, skew, _ = moments(values)
    lo, hi = hall_interval(m, sd, skew, c, LEVEL)
    unit = np.all((values >= 0) & (values <= 1), axis=1)
    lo, hi = np.where(unit, np.clip(lo, 0, 1), lo), np.where(unit, np.clip(hi, 0, 1), hi)
    lo, hi = with_betting(values, lo, hi)
    flat = np.ptp(values, axis=1) == 0
    return np.where(flat, np.nan, lo), np.where(flat, np.nan, hi)


def old_rule(values: np.ndarray, cap, boot_lo, boot_hi, bounded: bool = True):
    """The rule of 0.2: 0/1 values -> mid-p / Agresti-Coull; under 30 tasks the effective n
    capped by the rollouts (pass@1) or the tasks (pass@k, pass^k, rewards in [0, 1]), the t
    interval for rewards outside [0, 1]; from 30 tasks the percentile bootstrap (the effective
    n when it has zero width)."""
    r, c = values.shape
    m, sd, _, _ = moments(values)
    np.seterr(invalid="ignore")   # the 0.2 rule's n_eff is inf on flat samples; masked below
    binary = np.all((values == 0) | (values == 1), axis=1)
    x = values.sum(axis=1)
    bl, bh = mid_p(x, c, LEVEL) if c < 10 else agresti_coull(x, c, LEVEL)
    if bounded:
        old_cap = c if cap is None else cap
        z2 = (1.959963984540054 / stdtrit(c - 1, 0.975)) ** 2
        n_eff = np.minimum(np.divide(m * (1 - m), (sd / math.sqrt(c)) ** 2,
                                     out=np.full(r, np.inf), where=sd > 0), old_cap)
        el, eh = agresti_coull(m * n_eff * z2, n_eff * z2, LEVEL)
    else:
        half = stdtrit(c - 1, 0.975) * sd / math.sqrt(c)
        el, eh = m - half, m + half
    if c >= 30:
        zero = boot_hi - boot_lo <= 0
        el, eh = np.where(zero, el, boot_lo), np.where(zero, eh, boot_hi)
    if not bounded:
        return el, eh
    return np.where(binary, bl, el), np.where(binary, bh, eh)


def t_interval(values: np.ndarray):
    c = values.shape[1]
    m, sd, _, _ = moments(values)
    half = stdtrit(c - 1, 0.975) * sd / math.sqrt(c)
    return m - half, m + half


# --- the percentile bootstrap (the old rule from 30 tasks) -------------------------------------

def boot_counts(counts: np.ndarray, tables: np.ndarray, n_tasks: int, boot: int,
                rng: np.random.Generator) -> np.ndarray:
    """Task-bootstrap means (S, B, R) of each per-task table from multinomial count draws
    (conditional binomials, so numpy vectorises over (B, R)). ``counts`` (R, V)."""
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


def boot_values(values: np.ndarray, boot: int, rng: np.random.Generator) -> np.ndarray:
    """Task-bootstrap means (B, R) of continuous per-task values (index draws, shared by the
    replications of one call)."""
    r, c = values.shape
    out = np.empty((boot, r))
    step = max(1, 4_000_000 // (r * c))
    for start in range(0, boot, step):
        stop = min(boot, start + step)
        idx = rng.integers(0, c, size=(stop - start, c))
        out[start:stop] = values[:, idx].mean(axis=-1).T
    return out


def percentile(draws: np.ndarray):
    """Inverse-CDF 2.5% and 97.5% points along axis -2 (the library's definition)."""
    s = np.sort(draws, axis=-2)
    b = s.shape[-2]
    return s[..., int(math.ceil(0.025 * b)) - 1, :], s[..., int(math.ceil(0.975 * b)) - 1, :]


# --- A. one rate -------------------------------------------------------------------------------

def _score(acc: dict, name: str, lo, hi, tru: float) -> None:
    refused = ~(np.isfinite(lo) & np.isfinite(hi))
    lo, hi = np.where(refused, -np.inf, lo), np.where(refused, np.inf, hi)
    width = np.where(refused, 0, hi - lo)
    row = np.array([(lo > tru + 1e-15).sum(), (hi < tru - 1e-15).sum(), width.sum(),
                    (hi - lo <= 0).sum(), refused.sum()], dtype=float)
    acc[name] = acc.get(name, 0) + row
    acc.setdefault("_widths", {}).setdefault(name, []).append(width)


def _finish(acc: dict, reps: int) -> dict:
    widths = {k: np.concatenate(v) for k, v in acc.pop("_widths", {}).items()}
    out = {k: v / reps for k, v in acc.items()}
    out["_widths"] = widths
    return out


def pass_cell(sample, ns, reps: int, boot: int, rng, stats=STATS, rollouts: int = ROLLOUTS,
              chunk: int = 500) -> dict:
    """{n: {stat: {method: [low misses, high misses, width sum, zero-width, refused] / reps}}}
    for each number of tasks in ``ns``, all from the same draws (the first n tasks of each):
    common random numbers, so the width at 30 over the width at 29 is read without noise."""
    tables = np.stack([table(s, rollouts) for s in stats])
    acc: dict = {n: {s: {} for s in stats} for n in ns}
    for start in range(0, reps, chunk):
        r = min(chunk, reps - start)
        c_all = rng.binomial(rollouts, sample(rng, (r, max(ns))))
        for n_tasks in ns:
            c = c_all[:, :n_tasks]
            counts = np.stack([np.bincount(row, minlength=rollouts + 1) for row in c])
            blo, bhi = percentile(boot_counts(counts, tables, n_tasks, boot, rng)) \
                if n_tasks >= 30 else (None, None)
            pass1 = ours_share(c / rollouts, rollouts)
            for i, stat in enumerate(stats):
                values, tru = tables[i][c], sample.truths[stat]
                if stat == "pass@1":
                    lo, hi = pass1
                else:
                    lo, hi = ours_pass_k(values, k_of(stat), "^" in stat, pass1)
                cell = acc[n_tasks][stat]
                _score(cell, "ours", lo, hi, tru)
                cap = n_tasks * rollouts if stat == "pass@1" else None
                olo, ohi = old_rule(values, cap, None if blo is None else blo[i],
                                    None if bhi is None else bhi[i])
                _score(cell, "old", olo, ohi, tru)
                _score(cell, "t", *t_interval(values), tru)
    return {n: {s: _finish(d, reps) for s, d in by.items()} for n, by in acc.items()}


def reward_cell(sample, tru: float, ns, reps: int, boot: int, rng, chunk: int = 250) -> dict:
    acc: dict = {n: {} for n in ns}
    for start in range(0, reps, chunk):
        r = min(chunk, reps - start)
        v_all = sample(rng, (r, max(ns)))
        for n_tasks in ns:
            values = v_all[:, :n_tasks]
            bounded = bool(np.all((values >= 0) & (values <= 1)))
            blo, bhi = percentile(boot_values(values, boot, rng)) if n_tasks >= 30 \
                else (None, None)
            _score(acc[n_tasks], "ours", *ours_reward(values), tru)
            _score(acc[n_tasks], "old", *old_rule(values, None, blo, bhi, bounded=bounded), tru)
            _score(acc[n_tasks], "t", *t_interval(values), tru)
    return {n: {"mean": _finish(d, reps)} for n, d in acc.items()}


def _sampler(fn, shape_truths):
    fn.truths = shape_truths
    return fn


def section_a(reps: int, boot: int, rng) -> dict:
    print("\n## A. Coverage of the 95% interval (%) [misses below | above], width, ours/t width")
    print("| shape | tasks | stat | ours | misses lo/hi | width | ours/t | old (0.2) | t |")
    print("|---|---|---|---|---|---|---|---|---|")
    results = {}
    cells = [(name, _sampler(lambda rng, size, f=f: f(rng, size),
                             {s: truth(name, s) for s in STATS}), "pass")
             for name, f in PASS_SHAPES.items()]
    cells += [(name, f, tru) for name, (f, tru) in REWARD_SHAPES.items()]
    groups = [(n,) for n in TASKS if n not in (29, 30, 31)]
    groups.insert(2, (29, 30, 31))
    for name, sample, kind in cells:
        for ns in groups:
            if kind == "pass":
                res = pass_cell(sample, ns, reps, boot, rng)
            else:
                res = reward_cell(sample, kind, ns, reps, boot, rng)
            for n, stat, by in ((n, stat, by) for n in ns for stat, by in res[n].items()):
                results[(name, stat, n)] = by
                if n not in (29, 30):
                    by.pop("_widths", None)
                o, old, t = by["ours"], by["old"], by["t"]
                assert o[3] == 0, f"zero-width interval from ours: {name} {n} {stat}"
                ratio = o[2] / t[2] if t[2] > 0 else float("nan")
                print(f"| {name} | {n} | {stat} | {100 * (1 - o[0] - o[1]):.1f} | "
                      f"{100 * o[0]:.1f} / {100 * o[1]:.1f} | {o[2]:.4g} | {ratio:.2f} | "
                      f"{100 * (1 - old[0] - old[1]):.1f} | {100 * (1 - t[0] - t[1]):.1f} |"
                      + (f" refused {100 * o[4]:.1f}%" if o[4] else ""), flush=True)
    return results


def section_s(results: dict) -> None:
    print("\n## S. The seam: coverage (%) at 29 / 30 / 31 tasks and width(30) / width(29) "
          "(the same draws at 29, 30 and 31 tasks; sqrt(29/30) = 0.983): the mean width at 30 "
          "over the mean at 29, and the median of each draw's own ratio")
    print("| shape | stat | ours 29 / 30 / 31 | ours w30/w29 (median) | old 29 / 30 / 31 | "
          "old w30/w29 (median) |")
    print("|---|---|---|---|---|---|")
    for (name, stat, n), _ in results.items():
        if n != 29:
            continue
        row = [results[(name, stat, m)] for m in (29, 30, 31)]
        cov = {k: " / ".join(f"{100 * (1 - r[k][0] - r[k][1]):.1f}" for r in row)
               for k in ("ours", "old")}
        ratio = {}
        for k in ("ours", "old"):
            w29, w30 = row[0]["_widths"][k], row[1]["_widths"][k]
            ok = w29 > 0
            ratio[k] = (f"{row[1][k][2] / row[0][k][2]:.3f} "
                        f"({float(np.median(w30[ok] / w29[ok])):.3f})")
        print(f"| {name} | {stat} | {cov['ours']} | {ratio['ours']} | {cov['old']} | "
              f"{ratio['old']} |")


def section_a2(reps: int, boot: int, rng) -> None:
    print("\n## A2. The 0.2 study's shapes: coverage (%) of ours / t, and ours/t width")
    print("| shape | tasks | k | pass@1 | pass@k | pass^k |")
    print("|---|---|---|---|---|---|")
    for name, (a, b) in BETA_SHAPES.items():
        for n in (10, 30, 100):
            for k in (1, 4, 16):
                stats = ("pass@1",) if k == 1 else ("pass@1", f"pass@{k}", f"pass^{k}")
                truths = {s: _beta_truth(a, b, s) for s in stats}
                res = pass_cell(_sampler(lambda rng, size, a=a, b=b: rng.beta(a, b, size), truths),
                                (n,), reps, boot, rng, stats=stats, rollouts=k)[n]
                cells = []
                for s in ("pass@1", f"pass@{k}", f"pass^{k}"):
                    if s not in res:
                        cells.append("")
                        continue
                    o, t = res[s]["ours"], res[s]["t"]
                    cells.append(f"{100 * (1 - o[0] - o[1]):.1f} / {100 * (1 - t[0] - t[1]):.1f}"
                                 f" ({o[2] / t[2] if t[2] > 0 else float('nan'):.2f}x)")
                print(f"| {name} | {n} | {k} | " + " | ".join(cells) + " |", flush=True)


def _beta_truth(a: float, b: float, stat: str) -> float:
    if stat == "pass@1":
        return a / (a + b)
    k = k_of(stat)
    j = np.arange(k)
    if "^" in stat:
        return float(np.prod((a + j) / (a + b + j)))
    return 1.0 - float(np.prod((b + j) / (a + b + j)))


# --- K. the candidate rules, on the hardest cells ---------------------------------------------

def bootstrap_t(values: np.ndarray, boot: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Studentized (bootstrap-t) interval, index draws shared by the replications of a call."""
    r, c = values.shape
    m, sd, _, _ = moments(values)
    tstar = np.empty((boot, r))
    step = max(1, 4_000_000 // (r * c))
    for start in range(0, boot, step):
        stop = min(boot, start + step)
        x = values[:, rng.integers(0, c, size=(stop - start, c))]      # (R, b, C)
        mb, sb = x.mean(axis=-1), x.std(axis=-1, ddof=1) / math.sqrt(c)
        with np.errstate(divide="ignore", invalid="ignore"):
            tstar[start:stop] = ((mb - m[:, None]) / sb).T
    tstar = np.where(np.isfinite(tstar), tstar, np.nan)
    with warnings.catch_warnings():   # a flat sample has no finite t*: no interval, a miss
        warnings.simplefilter("ignore", RuntimeWarning)
        lo_q, hi_q = np.nanquantile(tstar, [0.025, 0.975], axis=0)
    se = sd / math.sqrt(c)
    return m - hi_q * se, m - lo_q * se


def candidates(values: np.ndarray, boot: int, rng, ours) -> dict:
    c = values.shape[1]
    m, sd, skew, _ = moments(values)
    se = sd / math.sqrt(c)
    q = stdtrit(c - 1, 0.975)
    out = {"t": t_interval(values), "percentile": percentile(boot_values(values, boot, rng)),
           "bootstrap-t": bootstrap_t(values, boot, rng),
           "Hall": hall_interval(m, sd, skew, c, LEVEL), "ours": ours}
    if np.all((values >= 0) & (values <= 1)):   # the two [0, 1] scales
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            logit, half = np.log(m / (1 - m)), q * se / (m * (1 - m))
            out["logit-t"] = (1 / (1 + np.exp(-(logit - half))), 1 / (1 + np.exp(-(logit + half))))
            out["effective n"] = effective_n(m, se, c, None, LEVEL)
    return out


def section_k(reps: int, boot: int, rng) -> None:
    print("\n## K. Candidate rules on the hardest cells: coverage (%) / mean width over the t "
          "interval's (16 rollouts; logit-t has no interval at a mean of 0 or 1, counted as a miss; "
          "logit-t and the effective n need values in [0, 1])")
    names = ("t", "percentile", "bootstrap-t", "logit-t", "effective n", "Hall", "ours")
    print("| shape | tasks | stat | " + " | ".join(names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    cells = [("uniform", 10, "pass^8"), ("uniform", 20, "pass^8"), ("uniform", 30, "pass@8"),
             ("p=0.3", 30, "pass^4"), ("p=0.3", 30, "pass^8"), ("needle", 50, "pass@1"),
             ("needle", 100, "pass^4"), ("skewed", 10, "mean"), ("skewed", 20, "mean")]
    for shape, n, stat in cells:
        acc: dict = {}
        for start in range(0, reps, 250):
            r = min(250, reps - start)
            if stat == "mean":
                values = REWARD_SHAPES[shape][0](rng, (r, n))
                tru = REWARD_SHAPES[shape][1]
                ours = ours_reward(values)
            else:
                c = rng.binomial(ROLLOUTS, PASS_SHAPES[shape](rng, (r, n)))
                values, tru = table(stat, ROLLOUTS)[c], truth(shape, stat)
                pass1 = ours_share(c / ROLLOUTS, ROLLOUTS)
                ours = pass1 if stat == "pass@1" else ours_pass_k(values, k_of(stat),
                                                                  "^" in stat, pass1)
            for name, (lo, hi) in candidates(values, boot, rng, ours).items():
                _score(acc, name, lo, hi, tru)
        res = _finish(acc, reps)
        tw = res["t"][2]
        print(f"| {shape} | {n} | {stat} | " + " | ".join(
            f"{100 * (1 - res[k][0] - res[k][1]):.1f} / {res[k][2] / tw:.2f}" if k in res
            else "n/a" for k in names) + " |", flush=True)


# --- B. compare ---------------------------------------------------------------------------------

def paired_rules(d: np.ndarray, boot_lo, boot_hi, rng, flips: int):
    """Per replication, does each rule call a change up / down? ours: sign-flip p <= alpha and
    the t interval excluding 0 (and not every task changed alike); old: the same under 30 tasks,
    the paired percentile bootstrap from 30; t: the paired t test."""
    reps, n = d.shape
    delta = d.mean(axis=1)
    m, sd, _, _ = moments(d)
    q = stdtrit(n - 1, 0.975)
    tlo, thi = m - q * sd / math.sqrt(n), m + q * sd / math.sqrt(n)
    p_flip = sign_flip_pvalue(d, seed=int(rng.integers(1 << 31)), n_resamples=flips)[0]
    spread = np.ptp(d, axis=1) > 0
    ours_up = spread & (p_flip <= ALPHA) & (tlo > 0)
    ours_down = spread & (p_flip <= ALPHA) & (thi < 0)
    tstat = np.divide(m * math.sqrt(n), sd, out=np.zeros(reps), where=sd > 0)
    t_sig = (2 * stdtr(n - 1, -np.abs(tstat)) <= ALPHA) & (sd > 0)
    if n >= 30 and boot_lo is not None:
        old_up, old_down = boot_lo > 0, boot_hi < 0
    else:
        old_up = (p_flip <= ALPHA) & (tlo > 0) & spread
        old_down = (p_flip <= ALPHA) & (thi < 0) & spread
    return {"ours": (ours_up, ours_down), "old": (old_up, old_down),
            "t": (t_sig & (delta > 0), t_sig & (delta < 0))}


def compare_pass_cell(a: float, b: float, n: int, k: int, reps: int, boot: int, rng,
                      flips: int, headroom: float = 0.0) -> dict:
    x = rng.beta(a, b, size=(reps, n))
    before = rng.binomial(k, x) / k
    after = rng.binomial(k, x + headroom * (1 - x)) / k
    d = after - before
    blo = bhi = None
    if n >= 30:
        grid = (np.arange(-k, k + 1) / k)[None, :]
        counts = np.stack([np.bincount(np.rint(row * k).astype(np.int64) + k,
                                       minlength=2 * k + 1) for row in d])
        blo, bhi = percentile(boot_counts(counts, grid, n, boot, rng)[0])
    rules = paired_rules(d, blo, bhi, rng, flips)
    return {name: (float(up.mean()), float(down.mean())) for name, (up, down) in rules.items()}


def compare_reward_cell(n: int, reps: int, boot: int, rng, flips: int, shift: float = 0.0):
    mu = rng.beta(2.0, 2.0, size=(reps, n))
    before = _continuous(rng, (reps, n), mu)
    after = _continuous(rng, (reps, n), np.clip(mu + shift * (1 - mu), 0, 1))
    d = after - before
    blo = bhi = None
    if n >= 30:
        blo, bhi = percentile(boot_values(d, boot, rng))
    rules = paired_rules(d, blo, bhi, rng, flips)
    return {name: (float(up.mean()), float(down.mean())) for name, (up, down) in rules.items()}


def section_b(reps: int, boot: int, rng, flips: int, null_reps: int, only=("B1", "B2")) -> None:
    if "B1" in only:
        section_b1(reps, boot, rng, flips)
    if "B2" in only:
        section_b2(reps, boot, rng, flips, null_reps)


def section_b1(reps: int, boot: int, rng, flips: int) -> None:
    print("\n## B1. compare on pass rates: 'moved' up / down under no change (%), and power (%) "
          "when every task gains 30% of its headroom")
    print("| shape | tasks | k | ours up / down | old up / down | paired t up / down | "
          "power ours | power old | power t |")
    print("|---|---|---|---|---|---|---|---|---|")
    shapes = {"uniform": (1.0, 1.0), "hard": (0.5, 2.0), "easy": (2.0, 0.5),
              "bimodal": (0.3, 0.3)}
    for name, (a, b) in shapes.items():
        for n in (10, 20, 30, 100):
            for k in (1, 4, 16):
                null = compare_pass_cell(a, b, n, k, reps, boot, rng, flips)
                alt = compare_pass_cell(a, b, n, k, reps, boot, rng, flips, headroom=0.3)
                print(f"| {name} | {n} | {k} | " + " | ".join(
                    f"{100 * null[r][0]:.1f} / {100 * null[r][1]:.1f}" for r in ("ours", "old", "t"))
                    + " | " + " | ".join(f"{100 * alt[r][0]:.0f}" for r in ("ours", "old", "t"))
                    + " |", flush=True)



def section_b2(reps: int, boot: int, rng, flips: int, null_reps: int) -> None:
    print(f"\n## B2. compare on graded rewards (the continuous shape): 'moved' up / down under no "
          f"change (%, {null_reps} replications), and power (%, {reps}) when every task gains "
          f"10% / 20% of its headroom")
    print("| tasks | ours up / down | old up / down | paired t up / down | power ours (10% / 20%)"
          " | power old | power t |")
    print("|---|---|---|---|---|---|---|")
    for n in (10, 20, 29, 30, 31, 40, 100):
        null = compare_reward_cell(n, null_reps, boot, rng, flips)
        alts = [compare_reward_cell(n, reps, boot, rng, flips, shift=s) for s in (0.1, 0.2)]
        print(f"| {n} | " + " | ".join(
            f"{100 * null[r][0]:.1f} / {100 * null[r][1]:.1f}" for r in ("ours", "old", "t"))
            + " | " + " | ".join(" / ".join(f"{100 * alt[r][0]:.1f}" for alt in alts)
                                 for r in ("ours", "old", "t")) + " |", flush=True)


# --- C. teacher_clears ----------------------------------------------------------------------------

def teacher_cell(a: float, b: float, n: int, k: int, gap: float, reps: int, rng, flips: int,
                 effect: float = 0.05) -> dict:
    """Clear rates: ours (the paired interval above 0 and gap >= effect), a paired t test."""
    m = a / (a + b)
    x = rng.beta(a, b, size=(reps, n))
    xt = np.clip(x + gap * (1 - x) / (1 - m), 0, 1)
    d = rng.binomial(k, xt) / k - rng.binomial(k, x) / k
    delta = d.mean(axis=1)
    rules = paired_rules(d, None, None, rng, flips)
    return {"ours": float((rules["ours"][0] & (delta >= effect)).mean()),
            "paired t": float((rules["t"][0] & (delta >= effect)).mean())}


def section_c(reps: int, rng, flips: int) -> None:
    print("\n## C. teacher_clears on shared tasks (k = 4): clear rate (%)")
    print("| shape | tasks | gap | ours (paired) | paired t |")
    print("|---|---|---|---|---|")
    for name, (a, b) in (("uniform", (1.0, 1.0)), ("hard", (0.5, 2.0))):
        for n, gap in ((30, 0.0), (30, 0.2), (100, 0.0), (100, 0.1)):
            res = teacher_cell(a, b, n, 4, gap, reps, rng, flips)
            print(f"| {name} | {n} | {gap:.2f} | {100 * res['ours']:.1f} | "
                  f"{100 * res['paired t']:.1f} |", flush=True)


# --- D. noise band ------------------------------------------------------------------------------

def noise_cell(runs: int, reps: int, rng) -> dict:
    scores = rng.normal(0.0, 1.0, size=(reps, runs))
    fresh = rng.normal(0.0, 1.0, size=(reps, 2))
    s = scores.std(axis=1, ddof=1)
    diff = np.abs(fresh[:, 0] - fresh[:, 1])
    band = stdtrit(runs - 1, 0.975) * math.sqrt(2) * s
    return {"t band": float((diff > band).mean()), "2 x run_std": float((diff > 2 * s).mean())}


def tied_cell(n_tasks: int, rollouts: int, reps: int, rng, shape: str) -> dict:
    """Two re-runs give the band (noise_floor on their rows), two fresh runs are compared with
    it: the share of pure-noise differences that pass, with the band of 0.2 (the within-task
    prediction from each run's own rollouts) and of 0.3 (pooled over the re-runs)."""
    from whileai_core import noise_floor
    from whileai_core.stats.noise import noise_band

    x = PASS_SHAPES[shape](rng, (n_tasks,))
    passed = 0
    old_passed = 0
    ties = 0
    for _ in range(reps):
        outs = rng.random((4, n_tasks, rollouts)) < x[None, :, None]
        rows = [[{"task_id": f"t{i}", "reward": float(o[i, j])} for i in range(n_tasks)
                 for j in range(rollouts)] for o in outs[:2]]
        nf = noise_floor(*rows)
        scores = outs.mean(axis=(1, 2))
        diff = abs(scores[2] - scores[3])
        passed += diff > nf.band
        tied = scores[0] == scores[1]
        ties += tied
        if tied:   # 0.2: the prediction from each run's own tasks with 2+ rollouts, else 0
            c = outs[:2].sum(axis=2)
            ok = rollouts >= 2
            pred = 0.0
            if ok:
                p = c / rollouts
                s2 = rollouts / (rollouts - 1) * p * (1 - p)
                pred = float(np.mean([math.sqrt((s / rollouts).sum()) / n_tasks for s in s2]))
            old_band = noise_band(pred, 2)
        else:
            old_band = nf.band
        old_passed += diff > old_band
    return {"ours": passed / reps, "old": old_passed / reps, "ties": ties / reps}


def section_d(reps: int, rng) -> None:
    print("\n## D. noise band: pure-noise differences of two runs that pass it (%)")
    print("| re-runs | t band (ours) | 2 x run_std (0.1) |")
    print("|---|---|---|")
    for runs in (2, 3, 5, 10):
        res = noise_cell(runs, max(reps, 20_000), rng)
        print(f"| {runs} | {100 * res['t band']:.1f} | {100 * res['2 x run_std']:.1f} |")
    print("\nD2. two re-runs that may tie (run_std 0): tasks x rollouts, shape: passed (%)")
    print("| tasks x rollouts | shape | re-runs tied | ours | 0.2 |")
    print("|---|---|---|---|---|")
    for n_tasks, rollouts, shape in ((50, 1, "needle"), (50, 1, "uniform"), (50, 4, "needle"),
                                     (20, 1, "uniform")):
        res = tied_cell(n_tasks, rollouts, min(reps, 1000), rng, shape)
        print(f"| {n_tasks} x {rollouts} | {shape} | {100 * res['ties']:.1f} | "
              f"{100 * res['ours']:.1f} | {100 * res['old']:.1f} |", flush=True)
    print("\nD3. run_std from 2 runs passed as a number, without its count (%): read as from 2 "
          "runs (ours) and as from 3 (0.2)")
    reps2 = max(reps, 20_000)
    scores = rng.normal(0.0, 1.0, size=(reps2, 2))
    fresh = rng.normal(0.0, 1.0, size=(reps2, 2))
    s = scores.std(axis=1, ddof=1)
    diff = np.abs(fresh[:, 0] - fresh[:, 1])
    for label, runs in (("ours (2)", 2), ("0.2 (3)", 3)):
        band = stdtrit(runs - 1, 0.975) * math.sqrt(2) * s
        print(f"- {label}: {100 * float((diff > band).mean()):.1f}")


# --- E. many behaviours -------------------------------------------------------------------------

def many_cell(reps: int, rng, groups: int = 10, real: int = 0, n_tasks: int = 30, k: int = 4,
              lift: float = 0.3) -> dict:
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


def section_e(reps: int, rng) -> None:
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


# --- L. the third pass: skewed difficulty, sparse pass^k, ordinary low rates, ragged rollouts ----

def _logit_normal(mean: float, sd: float):
    """Task pass rates logistic(mu + sd z), mu set so the population mean is ``mean``; returns
    (sampler, truth function of a stat)."""
    from scipy.special import expit

    z = np.random.default_rng(12345).normal(size=2_000_000)
    lo, hi = -15.0, 15.0
    for _ in range(60):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if expit(mid + sd * z).mean() < mean else (lo, mid)
    x = expit(mid + sd * z)
    return (lambda rng, size: expit(mid + sd * rng.normal(size=size)),
            lambda stat: float(np.mean(stat_of(stat, x))))


def _beta(a: float, b: float):
    return (lambda rng, size: rng.beta(a, b, size), lambda stat: _beta_truth(a, b, stat))


L_SHAPES = {"Beta(0.3,3)": _beta(0.3, 3.0), "Beta(5,1)": _beta(5.0, 1.0),
            "Beta(1,1)": _beta(1.0, 1.0), "Beta(2,2)": _beta(2.0, 2.0),
            "2% (logit sd 1)": _logit_normal(0.02, 1.0),
            "2% (logit sd 2)": _logit_normal(0.02, 2.0),
            "97% (logit sd 1)": _logit_normal(0.97, 1.0)}
L_STATS = ("pass@1", "pass@4", "pass^4", "pass@8", "pass^8")


def _floored(m, se, c, cap):
    """The previous rule's pass@1: the effective n with the 0-of-C-tasks bound held under every
    interval (the floor this section's rule dropped)."""
    lo, hi = effective_n(m, se, c, cap, LEVEL)
    z2 = (1.959963984540054 / stdtrit(c - 1, 0.975)) ** 2
    _, none_hi = agresti_coull(0.0, c * z2, LEVEL)
    return np.minimum(lo, 1.0 - none_hi), np.maximum(hi, none_hi)


def l_cell(sample, truth_of, n_tasks: int, reps: int, rng, rollouts=(16, 16), chunk: int = 500):
    """{stat: {rule: [low misses, high misses, width sum, zero-width, refused] / reps}}: ours,
    the previous rule (floored effective n, Hall's t without the betting switch), the betting
    interval alone and the t interval, on the same draws; ``no switch``: ours without the floor
    or the betting interval where few tasks carry the mean. ``rollouts``: each task's number of
    rollouts drawn uniformly from this range (ragged when the ends differ)."""
    acc: dict = {s: {} for s in L_STATS}
    for start in range(0, reps, chunk):
        r = min(chunk, reps - start)
        n = rng.integers(rollouts[0], rollouts[1] + 1, size=(r, n_tasks))
        c = rng.binomial(n, sample(rng, (r, n_tasks)))
        v1 = c / n
        m1, sd1, _, _ = moments(v1)
        se1 = sd1 / math.sqrt(n_tasks)
        cap = n.sum(axis=1).astype(float)
        pass1 = effective_n(m1, se1, n_tasks, cap, LEVEL,
                            floor=carriers(v1) < FLOOR_BELOW_CARRIERS)
        bare1 = effective_n(m1, se1, n_tasks, cap, LEVEL)
        prev1 = _floored(m1, se1, n_tasks, cap)
        for stat in L_STATS:
            values, tru = per_task(stat, c, n), truth_of(stat)
            if stat == "pass@1":
                ours, prev, bare = pass1, prev1, bare1
            else:
                k, power = k_of(stat), "^" in stat
                ours = ours_pass_k(values, k, power, pass1)
                m, sd, skew, _ = moments(values)
                hlo, hhi = hall_interval(m, sd, skew, n_tasks, LEVEL)
                flat = np.ptp(values, axis=1) == 0
                alo, ahi = agresti_coull(m * n_tasks, n_tasks, LEVEL)
                prev = pass_k_bounds(np.where(flat, alo, hlo), np.where(flat, ahi, hhi), m, flat,
                                     prev1[0], prev1[1], k, power)
                bare = pass_k_bounds(np.where(flat, alo, hlo), np.where(flat, ahi, hhi), m, flat,
                                     bare1[0], bare1[1], k, power)
            spread = np.ptp(values, axis=1) > 0
            blo, bhi = betting(values, LEVEL)
            z_lo, z_hi = agresti_coull(values.sum(axis=1), n_tasks, LEVEL)   # no spread at all
            for name, (lo, hi) in (("ours", ours), ("previous", prev), ("no switch", bare),
                                   ("betting", (np.where(spread, blo, z_lo),
                                                np.where(spread, bhi, z_hi))),
                                   ("t", t_interval(values))):
                _score(acc[stat], name, lo, hi, tru)
    return {s: _finish(d, reps) for s, d in acc.items()}


def _wilson(p: float, n: int) -> str:
    z = 1.959963984540054
    mid, half = (p + z * z / (2 * n)) / (1 + z * z / n), \
        z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return f"[{100 * (mid - half):.1f}, {100 * (mid + half):.1f}]"


def section_l(reps: int, rng) -> None:
    print("\n## L. The third pass: coverage (%) of ours with its Wilson interval, width, and "
          "ours' width over the best valid rule's (the narrowest covering >= 93% of: ours, the "
          "previous rule, ours without the switch, the betting interval, the t interval); "
          "each other rule's coverage (%) and width; 16 rollouts a task, or 8-16 where ragged")
    rules = ("ours", "previous", "no switch", "betting", "t")
    print("| shape | tasks | stat | ours [95% CI] | width | / best (which) | previous | no switch "
          "| betting | t |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    cells = [(name, n, (16, 16)) for name in L_SHAPES for n in (10, 20, 30, 50, 100)]
    cells += [("Beta(0.3,3)", 300, (16, 16))]
    cells += [(f"{name}, ragged", n, (8, 16)) for name in ("Beta(1,1)", "Beta(0.3,3)")
              for n in (8, 11)]
    under = dict.fromkeys(rules, 0)
    wide = dict.fromkeys(rules, 0)
    total = 0
    for name, n, rollouts in cells:
        sample, truth_of = L_SHAPES[name.removesuffix(", ragged")]
        res = l_cell(sample, truth_of, n, reps, rng, rollouts)
        for stat, by in res.items():
            cov = {k: 1 - by[k][0] - by[k][1] for k in rules}
            valid = [k for k in rules if cov[k] >= 0.93]
            best = min(valid, key=lambda k: by[k][2]) if valid else None
            total += 1
            for k in rules:
                under[k] += cov[k] < 0.93
                wide[k] += bool(best) and cov[k] >= 0.93 and by[k][2] > 1.5 * by[best][2]
            ratio = f"{by['ours'][2] / by[best][2]:.2f} ({best})" if best else "none valid"
            print(f"| {name} | {n} | {stat} | {100 * cov['ours']:.1f} "
                  f"{_wilson(cov['ours'], reps)} | {by['ours'][2]:.4g} | {ratio} | "
                  + " | ".join(f"{100 * cov[k]:.1f} ({by[k][2]:.3g})" for k in rules[1:])
                  + " |", flush=True)
    print(f"\nOf {total} cells: under 93% / valid but over 1.5x the best valid width: "
          + "; ".join(f"{k} {under[k]} / {wide[k]}" for k in rules))
    print("\nUnbounded rewards with a lognormal tail (each task's mean reward exp(sigma z)): "
          "coverage (%) / mean width of ours (Hall's t), the bootstrap-t and the t interval")
    print("| sigma | tasks | ours | bootstrap-t | t |")
    print("|---|---|---|---|---|")
    for sigma in (0.75, 1.0, 1.25):
        tru = math.exp(sigma * sigma / 2.0)
        for n in (10, 20, 30, 50, 100):
            acc: dict = {}
            values = rng.lognormal(0.0, sigma, (reps, n))
            for name, (lo, hi) in (("ours", ours_reward(values)),
                                   ("bootstrap-t", bootstrap_t(values, 500, rng)),
                                   ("t", t_interval(values))):
                _score(acc, name, lo, hi, tru)
            res = _finish(acc, reps)
            print(f"| {sigma:g} | {n} | " + " | ".join(
                f"{100 * (1 - res[k][0] - res[k][1]):.1f} / {res[k][2]:.3g}"
                for k in ("ours", "bootstrap-t", "t")) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--boot", type=int, default=1000, help="bootstrap resamples (old rule)")
    parser.add_argument("--flips", type=int, default=2000, help="random sign patterns (MC test)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--null-reps", type=int, default=4000,
                        help="replications of B2's no-change cells (a rate near 2.5%%)")
    parser.add_argument("--only", default="A,A2,K,L,B,C,D,E",
                        help="sections to run, comma-separated (A includes S), e.g. A or B,C")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    mc = 100 * math.sqrt(0.95 * 0.05 / args.reps)
    print(f"stats study {datetime.date.today()}: {args.reps} replications per cell, {args.boot} "
          f"bootstrap resamples, {args.flips} sign patterns, seed {args.seed}; Monte-Carlo sd of "
          f"a 95% coverage: {mc:.1f} points")
    t0 = time.perf_counter()
    only = set(args.only.split(","))
    if "A" in only:
        results = section_a(args.reps, args.boot, rng)
        section_s(results)
    if "A2" in only:
        section_a2(args.reps, args.boot, rng)
    if "K" in only:
        section_k(min(args.reps, 1000), min(args.boot, 500), rng)
    if "L" in only:
        section_l(min(args.reps, 1000), rng)
    if only & {"B", "B1", "B2"}:
        parts = ("B1", "B2") if "B" in only else tuple(only & {"B1", "B2"})
        section_b(args.reps, args.boot, rng, args.flips, args.null_reps, parts)
    if "C" in only:
        section_c(args.reps, rng, args.flips)
    if "D" in only:
        section_d(args.reps, rng)
    if "E" in only:
        section_e(args.reps, rng)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
