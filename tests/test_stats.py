"""Statistics against values computed independently: exact enumeration, math.comb, scipy."""

from __future__ import annotations

import itertools
import math
import statistics
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps

from whileai_core import ArgumentError, compare, holdout_size, noise_floor, pass_at
from whileai_core.bootstrap import percentile_interval, task_bootstrap
from whileai_core.stats import pass_at_k_per_task, pass_pow_k_per_task


def rows_from(counts, prefix="t", model=None):
    """counts: list of (n_rollouts, n_passes) per task."""
    out = []
    for i, (n, c) in enumerate(counts):
        out += [{"task_id": f"{prefix}{i}", "reward": 1.0 if j < c else 0.0, "model": model}
                for j in range(n)]
    return out


def exact_percentiles(values, level=0.95):
    """Inverse-CDF percentiles of the exact task-bootstrap distribution, by enumerating all C^C
    equally likely index tuples. Also returns the smallest distance of the CDF at any atom from
    the two tail probabilities (a Monte-Carlo estimate can only miss an endpoint near one)."""
    c = len(values)
    means = [Fraction(sum(values[i] for i in idx)) / c
             for idx in itertools.product(range(c), repeat=c)]
    atoms = sorted(set(means))
    total = len(means)
    cdf, acc = [], 0
    for a in atoms:
        acc += sum(1 for m in means if m == a)
        cdf.append(Fraction(acc, total))
    tail = (1 - level) / 2
    lo = next(a for a, f in zip(atoms, cdf) if f >= tail)
    hi = next(a for a, f in zip(atoms, cdf) if f >= 1 - tail)
    margin = min(min(abs(float(f) - tail), abs(float(f) - (1 - tail))) for f in cdf)
    return float(lo), float(hi), margin


@pytest.mark.parametrize("counts", [
    [(4, 0), (4, 1), (4, 3), (4, 4)],           # 4 distinct values: the index path
    [(4, 2), (4, 4), (4, 3), (4, 3)],           # a repeated value
    [(4, 3), (4, 3), (4, 0)],                   # 3 tasks
    [(4, 4), (4, 1), (4, 1), (4, 1), (4, 4)],   # 5 tasks, 2 values: the multinomial path
])
def test_task_bootstrap_equals_exact_enumeration(counts):
    # the percentile task bootstrap itself (the interval pass_at uses from 30 tasks)
    values = [Fraction(c, n) for n, c in counts]
    lo, hi, margin = exact_percentiles(values)
    # The exact CDF must sit away from 2.5%/97.5% for a 10,000-draw estimate to match it: the MC
    # sd of a CDF value near there is ~0.0015, and these examples keep >= 0.0054 (3.5 sd) away.
    assert margin > 0.005
    draws = task_bootstrap(np.array([float(v) for v in values]), 10_000, 0)
    assert percentile_interval(draws, 0.95) == pytest.approx((lo, hi), abs=1e-12)
    assert pass_at(rows_from(counts)).pass_at_1 == pytest.approx(float(sum(values) / len(values)))


def test_bootstrap_sd_matches_clustered_standard_error():
    # Miller 2024 App. A without the C/(C-1) factor is the SD of the exact task bootstrap
    # (stats.md sec. 1.2): sqrt(sum (p_c - mean)^2) / C.
    rng = np.random.default_rng(7)
    counts = [(4, int(c)) for c in rng.integers(0, 5, size=60)]
    p = np.array([c / n for n, c in counts])
    expected_se = math.sqrt(((p - p.mean()) ** 2).sum()) / len(p)
    draws = task_bootstrap(p, 40_000, seed=3)
    assert draws.std() == pytest.approx(expected_se, rel=0.02)
    # and the index path (continuous values) agrees too
    q = rng.random(60)
    draws = task_bootstrap(q, 40_000, seed=3)
    assert draws.std() == pytest.approx(math.sqrt(((q - q.mean()) ** 2).sum()) / 60, rel=0.02)


def test_pass_at_k_matches_math_comb():
    assert pass_at_k_per_task(np.array([10]), np.array([3]), 5)[0] == pytest.approx(11 / 12)
    rng = np.random.default_rng(0)
    n = rng.integers(5, 40, size=200)
    c = np.array([rng.integers(0, ni + 1) for ni in n])
    for k in (1, 2, 5):
        got_at = pass_at_k_per_task(n, c, k)
        got_pow = pass_pow_k_per_task(n, c, k)
        for ni, ci, a, p in zip(n.tolist(), c.tolist(), got_at, got_pow):
            assert a == pytest.approx(1 - math.comb(ni - ci, k) / math.comb(ni, k), abs=1e-12)
            assert p == pytest.approx(math.comb(ci, k) / math.comb(ni, k), abs=1e-12)
    # large n: stats.md sec. 4 gives exact 0.99999999999988 for (200, 37, 100)
    assert pass_at_k_per_task(np.array([200]), np.array([37]), 100)[0] == pytest.approx(
        0.99999999999988, abs=1e-13)


def test_pass_at_reports_k_and_notes():
    rows = rows_from([(4, 1), (4, 2), (4, 4), (4, 0)])
    result = pass_at(rows, k=2)
    # hand: per task 1 - C(n-c,2)/C(4,2) = 1-3/6, 1-1/6, 1, 0 -> mean 0.5833
    assert result.pass_at_k == pytest.approx((0.5 + 5 / 6 + 1 + 0) / 4)
    # pass^2 = C(c,2)/C(4,2): 0, 1/6, 1, 0
    assert result.pass_pow_k == pytest.approx((0 + 1 / 6 + 1 + 0) / 4)
    assert result.pass_at_k_ci95 is not None and result.n_rows == 16 and result.k == 2
    assert pass_at(rows).k == 4                      # default k = min rollouts
    short = pass_at(rows_from([(4, 1), (2, 1), (4, 4)]), k=4)
    assert short.pass_at_k is None
    assert "1 of 3 tasks have fewer (2 rollouts each)" in short.k_not_computed
    tiny = pass_at(rows_from([(4, 1), (4, 2)]))
    assert tiny.ci95 is None and "fewer than 3 tasks" in tiny.note


def test_pass_at_is_seeded_and_task_weighted():
    rows = rows_from([(1, 1), (9, 0), (4, 2), (4, 3)])
    a, b = pass_at(rows, seed=5), pass_at(rows, seed=5)
    assert a.ci95 == b.ci95
    assert a.pass_at_1 == pytest.approx((1 + 0 + 0.5 + 0.75) / 4)   # not 6/18 pooled


def test_compare_identical_runs():
    # 7 tasks, no task changed: the paired spread is 0, so the interval is the unpaired MOVER of
    # the arms' intervals; it contains 0 but reaches past +-0.05: no detectable change, not flat
    rows = rows_from([(4, c) for c in (0, 1, 2, 3, 4, 2, 1)])
    result = compare(rows, rows)
    assert result.delta == 0 and result.n_paired == 7 and result.n_only_before == 0
    lo, hi = result.mean_before_ci
    half = math.hypot(result.mean_before - lo, hi - result.mean_before)
    assert result.ci == pytest.approx((-half, half)) and result.ci_method == "mover_unpaired"
    assert result.ci[1] > 0.05 and result.verdict == "no_detectable_change"
    # 400 tasks, identical: the interval is inside +-0.05, an equivalence statement: flat
    big = rows_from([(4, c) for c in np.random.default_rng(2).integers(0, 5, 400)])
    assert compare(big, big).ci[1] < 0.05 and compare(big, big).verdict == "flat"


def test_compare_matches_scipy_paired_bootstrap():
    rng = np.random.default_rng(11)
    base = rng.integers(0, 5, size=300)
    lift = np.clip(base + rng.integers(-1, 3, size=300), 0, 4)
    before = rows_from([(4, int(c)) for c in base])
    after = rows_from([(4, int(c)) for c in lift])
    result = compare(before, after)
    pb, pa = base / 4, lift / 4
    ref = sps.bootstrap((pb, pa), lambda x, y, axis=-1: np.mean(y - x, axis=axis), paired=True,
                        n_resamples=10_000, method="percentile", random_state=1,
                        vectorized=True).confidence_interval
    assert result.delta == pytest.approx(float((pa - pb).mean()))
    # two independent Monte-Carlo estimates of the same percentiles: agree within MC error
    assert result.ci95[0] == pytest.approx(ref.low, abs=0.01)
    assert result.ci95[1] == pytest.approx(ref.high, abs=0.01)
    assert result.verdict == "moved"


def test_compare_verdicts():
    low = rows_from([(4, 0)] * 6 + [(4, 1)] * 6)
    high = rows_from([(4, 3)] * 6 + [(4, 4)] * 6)
    assert compare(low, high).verdict == "moved"
    assert compare(high, low).verdict == "moved_the_wrong_way"
    small = rows_from([(4, 1)] * 6 + [(4, 2)] * 6)   # +0.25 on every task: CI excludes 0
    # band t_{2 df} sqrt(2) 0.06 = 0.365 > delta 0.25 (run_std from 3 re-runs)
    c = compare(low, small, run_std=0.06, noise_runs=3)
    assert c.noise_band == pytest.approx(sps.t.ppf(0.975, 2) * math.sqrt(2) * 0.06)
    assert c.ci[0] > 0 and c.verdict == "within_noise" and c.noise_runs == 3
    # from 30 re-runs the same run_std gives t_{29} sqrt(2) 0.06 = 0.174 < 0.25: moved
    assert compare(low, small, run_std=0.06, noise_runs=30).verdict == "moved"
    # without noise_runs the rule reads run_std as from 2 runs (the fewest noise_floor takes, so
    # the band can only come out too wide), and says so: t_{1 df} sqrt(2) 0.06 = 1.08
    assumed = compare(low, small, run_std=0.06)
    assert assumed.noise_runs == 2 and "read as from 2 runs" in assumed.note
    assert assumed.noise_band == pytest.approx(sps.t.ppf(0.975, 1) * math.sqrt(2) * 0.06)
    two = compare(rows_from([(4, 0)] * 2), rows_from([(4, 4)] * 2))
    assert two.verdict == "insufficient_data" and two.ci95 is None
    disjoint = compare(rows_from([(4, 1)] * 5, "a"), rows_from([(4, 1)] * 5, "b"))
    assert disjoint.verdict == "insufficient_data" and disjoint.n_only_after == 5


def test_compare_pairs_by_task_and_counts_unpaired():
    before = rows_from([(4, 1), (4, 2), (4, 3), (4, 4)])
    after = rows_from([(4, 2), (4, 2), (4, 3)]) + [{"task_id": "new", "reward": 1.0}]
    result = compare(before, after)
    assert (result.n_paired, result.n_only_before, result.n_only_after) == (3, 1, 1)
    assert result.delta == pytest.approx(0.25 / 3)


def test_noise_floor_from_scores_and_rows():
    result = noise_floor(0.61, 0.64, 0.58)
    assert result.run_std == pytest.approx(statistics.stdev([0.61, 0.64, 0.58]))
    # a prediction band for the difference of two runs: t_{R-1} x sqrt(2) x run_std
    assert result.band == pytest.approx(sps.t.ppf(0.975, 2) * math.sqrt(2)
                                        * statistics.stdev([0.61, 0.64, 0.58]))
    assert result.n_runs == 3
    runs = [rows_from([(4, 1), (4, 2), (4, 3)]), rows_from([(4, 2), (4, 2), (4, 3)])]
    nf = noise_floor(*runs)
    assert nf.run_scores == pytest.approx([0.5, 7 / 12])
    # predicted: each task's 8 rollouts pooled over the two runs (3/8, 4/8, 6/8 pass), s2 = 8/7
    # p(1-p), 4 rollouts per run: sqrt(sum s2/4)/3
    pooled = [3 / 8, 4 / 8, 6 / 8]
    assert nf.predicted_run_std == pytest.approx(
        math.sqrt(sum(8 / 7 * p * (1 - p) / 4 for p in pooled)) / 3)
    assert "2 runs" in nf.note
    with pytest.raises(ArgumentError, match="at least 2 runs"):
        noise_floor(0.5)


def test_holdout_size_reproduces_miller_and_the_planning_table():
    # Miller 2024: omega2 = 1/9, delta = 0.03, no within-task noise -> 969 questions.
    z2 = (sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) ** 2
    assert math.ceil(z2 * (1 / 9) / 0.03 ** 2) == 969
    # stats.md sec. 7, row rho = 0.8: 1152, 628, 367, 236, 171, 138 for k = 1..32
    table = holdout_size().table
    assert [table[k] for k in (1, 2, 4, 8, 16, 32)] == [1152, 628, 367, 236, 171, 138]
    assert holdout_size(k=8).n_tasks == 236


def test_holdout_size_from_a_pilot_by_hand():
    before = rows_from([(2, 0), (2, 1), (2, 2), (2, 1)])
    after = rows_from([(2, 1), (2, 1), (2, 2), (2, 2)])
    result = holdout_size(0.1, k=2, before=before, after=after)
    pb, pa = np.array([0, .5, 1, .5]), np.array([.5, .5, 1, 1])
    s2b = np.mean(2 * pb * (1 - pb))             # n/(n-1) p(1-p) with n = 2
    s2a = np.mean(2 * pa * (1 - pa))
    omega2 = max(0.0, np.var(pa - pb, ddof=1) - (s2b / 2 + s2a / 2))
    z2 = (sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) ** 2
    assert result.omega2 == pytest.approx(omega2)
    assert result.n_tasks == math.ceil(z2 * (omega2 + s2b / 2 + s2a / 2) / 0.01)
    assert result.inputs_from == "pilot"


@pytest.mark.parametrize("call, needle", [
    (lambda: pass_at([{"task_id": "a", "reward": 1}], level=1.5), "`level` must be"),
    (lambda: pass_at([{"task_id": "a", "reward": 1}], k=0), "`k` must be a positive integer"),
    (lambda: pass_at([{"task_id": "a", "reward": 1}], seed=-1), "`seed` must be"),
    (lambda: compare([{"task_id": "a", "reward": 1}], [{"task_id": "a", "reward": 1}],
                     run_std=float("nan")), "`run_std` = nan: must be a finite number"),
    (lambda: holdout_size(0), "`effect` = 0: must be at least 1e-06 (1e-06 to 0.999999)"),
    (lambda: holdout_size(power=1.0), "`power` = 1.0: must be at most 0.999999"),
    (lambda: holdout_size(k=0), "`k` = 0: must be at least 1"),
])
def test_argument_errors_name_the_argument_and_fix(call, needle):
    with pytest.raises(ArgumentError) as err:
        call()
    assert needle in str(err.value) and "Fix" in str(err.value)


def test_reward_metric_compares_mean_rewards_by_task():
    from whileai_core import mean_reward
    before = [{"task_id": f"t{i}", "reward": r} for i, r in enumerate([0.2, 0.4, 0.6, 0.8])]
    before += [{"task_id": "t0", "reward": 0.4}]                     # t0 mean 0.3
    after = [{"task_id": f"t{i}", "reward": r} for i, r in enumerate([0.5, 0.5, 0.9, 0.8])]
    c = compare(before, after, metric="reward")
    # hand: per-task deltas 0.2, 0.1, 0.3, 0.0 -> mean 0.15; pass rates (>= 1.0) are all 0
    assert c.delta == pytest.approx(0.15) and c.metric == "reward"
    assert compare(before, after, metric="pass").delta == 0.0
    # continuous rewards and no threshold given: the default reads the mean reward
    auto = compare(before, after)
    assert auto.metric == "reward" and auto.delta == pytest.approx(0.15)
    assert compare(before, after, threshold=0.5).metric == "pass"
    m = mean_reward(before)
    assert m.value == pytest.approx((0.3 + 0.4 + 0.6 + 0.8) / 4) and m.n_tasks == 4
    assert noise_floor(before, after, metric="reward").run_scores == pytest.approx([0.525, 0.675])
    with pytest.raises(ArgumentError, match="`metric` must be"):
        compare(before, after, metric="lcs")
