"""Paired verdicts at any size: the sign-flip test against brute-force enumeration and
scipy's exact McNemar, the interval that agrees with it, ties at the noise band, the MDE at any level,
the noise band's false-pass rate, the predicted run_std, training seeds, and compare_many."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from whileai_core import ArgumentError, compare, compare_many, noise_floor
from whileai_core.stats import adjust_bh, adjust_holm
from whileai_core.stats.compare import compare as core_compare
from whileai_core.stats.paired import sign_flip, sign_flip_pvalue


def rows_from(counts, prefix="t", **extra):
    return [{"task_id": f"{prefix}{i}", "reward": 1.0 if j < c else 0.0, **extra}
            for i, (n, c) in enumerate(counts) for j in range(n)]


def brute_p(d, shift=0.0):
    """Two-sided sign-flip p of mean(d - shift) = 0, by listing all 2^n sign patterns."""
    x = np.asarray(d, dtype=float) - shift
    obs = abs(x.sum())
    pats = np.array(list(itertools.product((-1.0, 1.0), repeat=len(x))))
    return float(np.mean(np.abs(pats @ x) >= obs - 1e-9 * max(1.0, obs)))


def hall_by_hand(d, level=0.95):
    """Hall's skewness-corrected t interval and its test's p-value for mean(d) = 0, from the
    paper's formulas with scipy's pieces (Hall 1992, JRSS-B 54:221): T = sqrt(n)(m - mu)/s,
    g(T) = T + aT^2 + a^2 T^3/3 + b, a = G1/(3 sqrt n), b = G1/(6 sqrt n), G1 the adjusted sample
    skewness; the interval is {mu : |g(T)| <= t_{n-1}}, the p-value the t tail of |g(T(0))|."""
    d = np.asarray(d, dtype=float)
    n, m, se = len(d), d.mean(), d.std(ddof=1) / math.sqrt(len(d))
    g1 = sps.skew(d, bias=False)
    a, b = g1 / (3 * math.sqrt(n)), g1 / (6 * math.sqrt(n))
    q = sps.t.ppf(0.5 + level / 2, n - 1)

    def inverse(y):
        return y - b if abs(a) < 1e-12 else (np.cbrt(1 + 3 * a * (y - b)) - 1) / a

    t = m / se
    p = 2 * sps.t.sf(abs(t + a * t * t + a * a * t ** 3 / 3 + b), n - 1)
    return (min(m - se * inverse(q), m), max(m - se * inverse(-q), m)), float(p)


# --- the sign-flip test -----------------------------------------------------------------------

@pytest.mark.parametrize("d", [
    [0.25, 0.5, 0.0, 0.5, 0.75, -0.25, 0.5, 0.25],
    [1.0, 1.0, 0.0, -1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0],
    [0.3, -0.1, 0.2, 0.2, 0.4, -0.3, 0.1, 0.0, 0.5, 0.1, 0.2, -0.2],
])
def test_sign_flip_p_matches_enumeration_and_the_interval_agrees_with_it(d):
    p, exact = sign_flip_pvalue(np.array(d), seed=0, n_resamples=10_000)
    assert exact and p == pytest.approx(brute_p(d))
    res = sign_flip(np.array(d), level=0.95, seed=0, n_resamples=10_000)
    # Hall's skew-corrected t interval on d (by hand), widened to hold 0 when the exact test
    # keeps 0; the p-value the exact test's, raised to the t test's when that keeps 0
    (lo, hi), p_t = hall_by_hand(d)
    if p > 0.05:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    assert res.ci == pytest.approx((lo, hi)) and res.method == "t_sign_flip_exact"
    assert res.p_value == pytest.approx(p if p_t <= 0.05 else max(p, p_t))
    assert (res.ci[0] > 0 or res.ci[1] < 0) == (res.p_value <= 0.05)


def test_monte_carlo_sign_flip_is_close_to_exact():
    d = np.random.default_rng(4).normal(0.15, 0.5, size=18)     # 2^18 > 65,536: Monte Carlo
    p, exact = sign_flip_pvalue(d, seed=0, n_resamples=10_000)
    truth = brute_p(d)
    assert not exact
    assert abs(p - truth) <= 4 * math.sqrt(truth * (1 - truth) / 10_000) + 1e-4


def test_exact_mcnemar_on_zero_one_tasks():
    # 20 tasks at one rollout: 4 go 0 -> 1, none 1 -> 0, 16 unchanged. Exact McNemar (binomial
    # test on the 4 discordant tasks): p = 0.125. The percentile bootstrap said "moved".
    before = rows_from([(1, 0)] * 4 + [(1, 1)] * 8 + [(1, 0)] * 8)
    after = rows_from([(1, 1)] * 4 + [(1, 1)] * 8 + [(1, 0)] * 8)
    c = compare(before, after)
    assert c.p_value == pytest.approx(sps.binomtest(4, 4).pvalue)
    assert c.verdict == "no_detectable_change" and "McNemar" in c.note
    # 3 tasks each 0/1 -> 1/1: no test on 3 tasks can call it (2/2^3 = 0.25)
    tiny = compare(rows_from([(1, 0)] * 3), rows_from([(1, 1)] * 3))
    assert tiny.verdict == "insufficient_data" and tiny.ci is None and tiny.delta == 1.0


# --- the noise band ---------------------------------------------------------------------------

def test_a_tie_at_the_noise_band_does_not_depend_on_rounding():
    # the same true change of 0.1 at two base rates: 0.4 - 0.3 = 0.10000000000000003 and
    # 0.3 - 0.2 = 0.09999999999999998 in floats; with a band of exactly 0.1 both are ties, and a
    # tie is inside the band (before 0.2 one read "moved", the other "within_noise")
    assert 0.4 - 0.3 > 0.1 > 0.3 - 0.2
    runs = 3
    run_std = 0.1 / (sps.t.ppf(0.975, runs - 1) * math.sqrt(2))
    verdicts = set()
    for base in (2, 3):                               # 10 rollouts: base/10 -> (base+1)/10
        before = rows_from([(10, base)] * 40)
        after = rows_from([(10, base + 1)] * 40)
        c = compare(before, after, run_std=run_std, noise_runs=runs)
        assert c.noise_band == pytest.approx(0.1)
        verdicts.add(c.verdict)
    assert verdicts == {"within_noise"}


@pytest.mark.parametrize("runs", [2, 3, 5])
def test_noise_band_lets_one_pure_noise_difference_in_twenty_through(runs):
    # R re-runs of an eval with normal run scores give run_std; two fresh runs differ by more
    # than the band with probability 1 - level. 2 x run_std let ~1 in 5 through at 3 runs.
    rng = np.random.default_rng(runs)
    reps = 4000
    scores = rng.normal(0.5, 0.02, size=(reps, runs))
    fresh = rng.normal(0.5, 0.02, size=(reps, 2))
    bands = np.array([noise_floor(*row).band for row in scores[:200]])
    s = scores.std(axis=1, ddof=1)
    band = sps.t.ppf(0.975, runs - 1) * math.sqrt(2) * s
    assert bands == pytest.approx(band[:200])
    rate = float(np.mean(np.abs(fresh[:, 0] - fresh[:, 1]) > band))
    assert abs(rate - 0.05) <= 3 * math.sqrt(0.05 * 0.95 / reps)
    assert np.mean(np.abs(fresh[:, 0] - fresh[:, 1]) > 2 * s) > 0.1     # the old band


def test_predicted_run_std_is_unbiased_with_single_rollout_tasks():
    # 200 tasks, half with 1 rollout and half with 4: the sd of the run score over many re-runs
    # is what predicted_run_std must match (before 0.2 the one-rollout tasks were left out of
    # the sum but kept in C, so the prediction came out about 0.6x the truth here)
    rng = np.random.default_rng(8)
    p = rng.beta(2, 2, 200)
    n = np.where(np.arange(200) < 100, 1, 4)
    runs = rng.binomial(n, p, size=(3000, 200)) / n
    truth = runs.mean(axis=1).std(ddof=1)
    preds = []
    for c1, c2 in zip(rng.binomial(n, p, size=(60, 200)), rng.binomial(n, p, size=(60, 200))):
        runs = [[{"task_id": f"t{i}", "reward": 1.0 if j < ci else 0.0}
                 for i, (ni, ci) in enumerate(zip(n, c)) for j in range(ni)] for c in (c1, c2)]
        preds.append(noise_floor(*runs).predicted_run_std ** 2)
    # the pooled s_i^2 is unbiased for the variance, so its mean matches the truth's square
    assert math.sqrt(np.mean(preds)) == pytest.approx(truth, rel=0.06)


def test_noise_band_when_re_runs_with_one_rollout_per_task_tie():
    # 50 tasks x 1 rollout, 10% easy (0.95) among hard (0.02): no run alone can estimate a task's
    # variance, so two tied re-runs gave a band of 0 and 21% of pure-noise differences passed
    # (bench/stats_study.py table D2). Each task's variance now comes from its rollouts pooled
    # over the re-runs: at most 5% may pass, plus 3 binomial sd of the replications.
    rng = np.random.default_rng(21)
    p = np.where(rng.random(50) < 0.1, 0.95, 0.02)
    reps, through, ties = 300, 0, 0

    def run():
        passed = rng.random(50) < p
        return [{"task_id": f"t{i}", "reward": float(passed[i])} for i in range(50)], \
            float(passed.mean())

    for _ in range(reps):
        (r1, s1), (r2, s2), (_, s3), (_, s4) = run(), run(), run(), run()
        nf = noise_floor(r1, r2)
        ties += s1 == s2
        if s1 == s2 and any(a["reward"] != b["reward"] for a, b in zip(r1, r2)):
            assert nf.band > 0 and "within-task prediction" in nf.note
        through += abs(s3 - s4) > nf.band
    assert ties > 0.1 * reps                                      # ties are common here
    assert through / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


# --- the MDE and the equivalence verdict --------------------------------------------------------

def test_mde_follows_the_level():
    # continuous per-task rewards on 1,000 tasks (a smooth bootstrap): the MDE at level L is
    # (z_{(1+L)/2} + z_0.8) SE, so the 90% / 95% ratio is fixed (before 0.2 it was 1)
    rng = np.random.default_rng(5)
    x = rng.random(1000)
    before = [{"task_id": f"t{i}", "reward": float(v)} for i, v in enumerate(x)]
    after = [{"task_id": f"t{i}", "reward": float(v + rng.normal(0.02, 0.2))}
             for i, v in enumerate(x)]
    m95 = compare(before, after, metric="reward").mde
    m90 = compare(before, after, metric="reward", level=0.9).mde
    z = sps.norm.ppf
    assert m90 / m95 == pytest.approx((z(0.95) + z(0.8)) / (z(0.975) + z(0.8)), rel=0.03)


def test_flat_is_an_equivalence_statement():
    rng = np.random.default_rng(6)
    base = rng.integers(0, 5, 2000)
    noise = rng.integers(-1, 2, 2000)
    before = rows_from([(4, int(c)) for c in base])
    after = rows_from([(4, int(np.clip(c + e, 0, 4))) for c, e in zip(base, noise)])
    c = compare(before, after)
    assert -0.05 <= c.ci[0] <= 0 <= c.ci[1] <= 0.05 and c.verdict == "flat"
    # a tighter margin than the interval: the same data is no detectable change
    assert compare(before, after, effect=0.005).verdict == "no_detectable_change"
    with pytest.raises(ArgumentError, match="`effect`.* must be"):
        compare(before, after, effect=-0.05)
    with pytest.raises(ArgumentError, match="`noise_runs`.* must be"):
        compare(before, after, run_std=0.01, noise_runs=1)


# --- training seeds ---------------------------------------------------------------------------

def seeded_runs(rng, p_task, seed_sd, n_runs, rollouts=4):
    """Runs of one arm: each training seed shifts every task's rate by one draw of seed_sd."""
    out = []
    for _ in range(n_runs):
        p = np.clip(p_task + rng.normal(0, seed_sd), 0, 1)
        c = rng.binomial(rollouts, p)
        out.append(rows_from([(rollouts, int(ci)) for ci in c]))
    return out


def test_seed_variance_by_hand():
    rng = np.random.default_rng(9)
    p = rng.beta(2, 2, 40)
    before, after = seeded_runs(rng, p, 0.05, 3), seeded_runs(rng, p, 0.05, 3)
    c = compare(before, after)
    vb = np.array([[sum(r["reward"] for r in run if r["task_id"] == f"t{i}") / 4
                    for i in range(40)] for run in before])
    va = np.array([[sum(r["reward"] for r in run if r["task_id"] == f"t{i}") / 4
                    for i in range(40)] for run in after])
    d = va.mean(0) - vb.mean(0)
    terms = [(d.var(ddof=1) / 40, 39), (vb.mean(1).var(ddof=1) / 3, 2),
             (va.mean(1).var(ddof=1) / 3, 2)]
    se2 = sum(v for v, _ in terms)
    df = se2 ** 2 / sum(v ** 2 / k for v, k in terms)       # Welch-Satterthwaite
    half = sps.t.ppf(0.975, df) * math.sqrt(se2)
    assert c.ci_method == "seeds_welch_t" and c.seed_variance == "measured"
    assert c.ci == pytest.approx((d.mean() - half, d.mean() + half))
    assert (c.n_runs_before, c.n_runs_after) == (3, 3)


def test_one_seed_per_arm_says_seed_variance_is_unmeasured():
    # seed effects (sd 0.08 on every task) and no true change: one run per arm reads the seed
    # draw as the method's effect far more often than 5%; three per arm holds near 5%
    rng = np.random.default_rng(10)
    reps, moved_one, moved_three = 60, 0, 0
    for _ in range(reps):
        p = rng.beta(2, 2, 60)
        b, a = seeded_runs(rng, p, 0.08, 3), seeded_runs(rng, p, 0.08, 3)
        one = core_compare(b[0], a[0], n_resamples=1000)  # the core's: fewer resamples
        moved_one += one.verdict in ("moved", "moved_the_wrong_way")
        if one.verdict == "moved":
            assert "seed variance is unmeasured" in one.note
        assert one.seed_variance == "unmeasured"
        moved_three += compare(b, a).verdict in ("moved", "moved_the_wrong_way")
    assert moved_one / reps > 0.3
    assert moved_three / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


# --- many behaviours --------------------------------------------------------------------------

def test_bh_and_holm_match_their_definitions():
    p = np.random.default_rng(12).random(15) ** 3
    m = p.size
    order = np.argsort(p)
    for alpha in (0.01, 0.05, 0.2):
        # BH: reject the k smallest, k the largest i with p_(i) <= i alpha / m
        ks = [i + 1 for i in range(m) if p[order[i]] <= (i + 1) * alpha / m]
        bh = set(order[:max(ks)].tolist()) if ks else set()
        assert set(np.flatnonzero(adjust_bh(p) <= alpha).tolist()) == bh
        # Holm: step down while p_(i) <= alpha / (m - i + 1)
        holm = set()
        for i in range(m):
            if p[order[i]] > alpha / (m - i):
                break
            holm.add(int(order[i]))
        assert set(np.flatnonzero(adjust_holm(p) <= alpha).tolist()) == holm


def lifted(rng, lift, n=30):
    """Per-task passes of 4 before, and after each task gains ``lift`` passes give or take one
    (a spread: a change every task shares exactly has no paired test)."""
    base = rng.integers(0, 3, n)
    noise = rng.integers(-1, 2, n) if lift else np.zeros(n, dtype=int)
    return base, np.clip(base + lift + noise, 0, 4)


def test_compare_many_by_category_and_by_checkpoint():
    rng = np.random.default_rng(13)
    before, after = [], []
    for cat, lift in (("refund", 2), ("ship", 0), ("other", 0), ("cancel", 0)):
        base, up = lifted(rng, lift)
        before += rows_from([(4, int(c)) for c in base], prefix=f"{cat}-", category=cat)
        after += rows_from([(4, int(c)) for c in up], prefix=f"{cat}-", category=cat)
    res = compare_many(before, after, by="category")
    by = {b.name: b for b in res.behaviours}
    assert res.n_behaviours == 4 and by["refund"].survives_holm and by["refund"].survives_bh
    assert res.survive_holm == ["refund"]
    # no task changed: no paired spread, so the unpaired interval's p-value, 1 (it never
    # excludes 0), still in the corrected family
    assert by["ship"].delta == 0 and by["ship"].p_value == 1.0 and not by["ship"].survives_bh
    assert res.n_tested == 4
    tested = [b.p_value for b in res.behaviours]
    assert [b.p_holm for b in res.behaviours] == pytest.approx(adjust_holm(np.array(tested)))
    # checkpoints: each compared with before, the best surviving one named, with the caveat
    ckpts = {"step-100": before, "step-200": after}
    many = compare_many(before, ckpts)
    assert many.family == "checkpoint" and many.best == "step-200"
    assert "optimistic" in many.note
    with pytest.raises(ArgumentError, match="`by`"):
        compare_many(before, after)
    with pytest.raises(ArgumentError, match="no row has the field `colour`"):
        compare_many(before, after, by="colour")


def test_the_forest_plot_draws_compare_many():
    pytest.importorskip("matplotlib")
    from whileai_core.pictures import forest_picture

    rng = np.random.default_rng(14)
    before, after = [], []
    for cat, lift in (("refund", 2), ("ship", 0), ("other", 0)):
        base, up = lifted(rng, lift)
        before += rows_from([(4, int(c)) for c in base], prefix=f"{cat}-", category=cat)
        after += rows_from([(4, int(c)) for c in up], prefix=f"{cat}-", category=cat)
    pic = forest_picture(before, after, by="category")
    many = {b.name: b for b in compare_many(before, after, by="category").behaviours}
    for row in pic.rows[1:]:
        assert (row.p_bh, row.survives_bh, row.survives_holm) == (
            many[row.group].p_bh, many[row.group].survives_bh, many[row.group].survives_holm)
    assert "1 survive the Benjamini-Hochberg correction" in pic.note


def test_noise_band_when_re_runs_tie():
    # 50 tasks x 4 rollouts, 10% easy tasks (0.95) among hard ones (0.02): run scores move in
    # steps of 1/200 and two re-runs often score the same, run_std 0. The band of 0 then let
    # 12.8% of pure-noise differences through (independent check). Two re-runs give the band,
    # two fresh runs of the same eval are compared with it: at most 5% may pass, plus 3 binomial
    # sd of the 400 replications.
    rng = np.random.default_rng(13)
    p = np.where(rng.random(50) < 0.1, 0.95, 0.02)

    def run():
        passed = rng.random((50, 4)) < p[:, None]
        return [{"task_id": f"t{i}", "reward": float(passed[i, j])}
                for i in range(50) for j in range(4)], float(passed.mean())

    reps, through = 400, 0
    for _ in range(reps):
        (r1, _), (r2, _), (_, s3), (_, s4) = run(), run(), run(), run()
        nf = noise_floor(r1, r2)
        assert nf.band > 0
        through += abs(s3 - s4) > nf.band
    assert through / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


def test_constant_rewards_outside_zero_one_say_why_there_is_no_interval():
    # 40 tasks, every reward 2.0 before and 2.5 after: no spread anywhere, so no interval; the
    # result said "insufficient_data" with no note and named a method it had not used
    before = [{"task_id": f"t{i}", "reward": 2.0} for i in range(40)]
    after = [{"task_id": f"t{i}", "reward": 2.5} for i in range(40)]
    c = compare(before, after, metric="reward")
    assert c.delta == pytest.approx(0.5)
    assert c.ci is None and c.verdict == "insufficient_data"
    assert c.ci_method is None and c.p_value is None
    assert c.note and "same value" in c.note
