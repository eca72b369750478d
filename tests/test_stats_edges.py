"""The edges an independent audit found, each against a value computed outside the code (scipy,
exact enumeration, hand arithmetic): intervals inside their statistic's range, rising with the
passes, finite or refused for any finite input, carrying their n; verdicts and p-values no
stronger than their intervals; the noise band and holdout_size's stated assumptions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from whileai_core import compare, holdout_size, mean_reward, pass_at, teacher_clears
from whileai_core.errors import ArgumentError
from whileai_core.judge import cohen_kappa, kappa_interval, kappa_with_interval
from whileai_core.stats.intervals import task_interval
from whileai_core.stats.paired import paired_interval

from test_stats_paired import brute_p, hall_by_hand

Z = sps.norm.ppf(0.975)


def rows_from(counts, prefix="t"):
    """counts: list of (n_rollouts, n_passes) per task."""
    return [{"task_id": f"{prefix}{i}", "reward": 1.0 if j < c else 0.0}
            for i, (n, c) in enumerate(counts) for j in range(n)]


def rewards(values, prefix="t"):
    return [{"task_id": f"{prefix}{i}", "reward": float(v)} for i, v in enumerate(values)]


def agresti_coull(x, n, z=Z):
    nt = n + z * z
    p = (x + z * z / 2) / nt
    h = z * math.sqrt(p * (1 - p) / nt)
    return max(0.0, p - h), min(1.0, p + h)


# --- intervals inside their range --------------------------------------------------------------

def test_a_difference_of_rates_stays_within_minus_one_and_one():
    # 6 tasks, one rollout each: 0 of 6 pass before, 5 of 6 after. The paired t interval on
    # d = (1, 1, 1, 1, 1, 0) is (0.404, 1.262) (scipy); the exact test (McNemar: 5 of 5 discordant
    # tasks one way, p = 2/32) cannot reject, so the interval is widened to 0, and a difference of
    # two rates cannot pass 1: (0, 1). The audit saw (0.000, 1.262).
    d = [1, 1, 1, 1, 1, 0]
    lo, hi = sps.t.interval(0.95, 5, loc=np.mean(d), scale=sps.sem(d))
    assert hi == pytest.approx(1.262, abs=1e-3) and lo > 0
    c = compare(rows_from([(1, 0)] * 6), rows_from([(1, v) for v in d]))
    assert c.p_value == pytest.approx(sps.binomtest(5, 5).pvalue) == pytest.approx(2 / 32)
    assert c.ci == (0.0, 1.0) and c.verdict == "no_detectable_change"


def test_the_kappa_interval_stays_within_minus_one_and_one():
    # 20 items: the labels pass 19, the judge passes 19, and they disagree on 2 (p_o = 0.9,
    # chance agreement p_e = 0.95^2 + 0.05^2 = 0.905). Wilson's lower bound of p_o (scipy) carried
    # through kappa = (p_o - p_e)/(1 - p_e) is below -1; kappa itself never is.
    labels = [True] * 19 + [False]
    grades = [True] * 18 + [False, True]
    p_e = 0.95 ** 2 + 0.05 ** 2
    assert cohen_kappa(labels, grades) == pytest.approx((0.9 - p_e) / (1 - p_e))
    po_lo = sps.binomtest(18, 20).proportion_ci(0.95, method="wilson").low
    assert (po_lo - p_e) / (1 - p_e) < -1
    ci = kappa_interval(labels, grades)
    assert ci[0] == -1.0 and -1.0 <= ci[1] <= 1.0
    typed = kappa_with_interval(labels, grades)
    assert typed.ci == ci and typed.n == 20 and typed.kappa == pytest.approx(-0.0526, abs=1e-4)


@settings(max_examples=60, deadline=None)
@given(counts=st.lists(st.integers(0, 8), min_size=3, max_size=40), k=st.sampled_from([2, 4, 8]))
def test_every_interval_is_in_range_holds_its_estimate_and_has_a_width(counts, k):
    r = pass_at(rows_from([(k, min(c, k)) for c in counts]))
    for value, ci in ((r.pass_at_1, r.ci), (r.pass_at_k, r.pass_at_k_ci),
                      (r.pass_pow_k, r.pass_pow_k_ci)):
        assert 0.0 <= ci[0] <= value <= ci[1] <= 1.0 and ci[1] > ci[0]


# --- rising with the passes --------------------------------------------------------------------

def test_the_first_passes_never_narrow_what_no_pass_allowed():
    # 30 tasks x 4 rollouts, passes added one at a time, each to the next task. 0 passes: every
    # outcome the same, so nothing says how alike a task's rollouts are: the 30 tasks are the
    # n, t-scaled (z/t_29)^2, and Agresti-Coull at 0 of that (where 2% of tasks always pass and
    # the rest never, 60 tasks see none a quarter of the time, and the 240 rollouts' n covered
    # 71%). 1 or 2 passes: fewer than 3 tasks carry the mean, nearly no pass says as little as
    # none, and that bound holds the upper end (an audit found the effective n alone at 1 pass
    # read [0, 0.025]). From 3 carriers the effective n stands alone and the upper end falls:
    # no rule both rises with every pass and is valid at none without holding 0.135 under every
    # interval, 2.3-5.8x wider than needed at ordinary rates (docs/statistics-study.md, table L)
    zero = pass_at(rows_from([(4, 0)] * 30))
    n_adj = 30 * (Z / sps.t.ppf(0.975, 29)) ** 2
    nt = n_adj + Z * Z
    upper = (Z * Z / 2) / nt + Z * math.sqrt((Z * Z / 2) / nt * (1 - (Z * Z / 2) / nt) / nt)
    assert zero.ci == pytest.approx((0.0, upper), abs=1e-12)
    prev = None
    for passes in range(0, 46):
        counts = [(4, passes // 30 + (1 if i < passes % 30 else 0)) for i in range(30)]
        r = pass_at(rows_from(counts))
        assert r.ci_method == "effective_n"
        if passes <= 2:
            assert r.ci[1] == pytest.approx(upper, abs=1e-12)
        elif passes == 3:
            assert r.ci[1] < upper   # the bound lets go: three tasks at 1 of 4 say how alike
        else:
            assert r.ci[0] >= prev[0] - 1e-12 and r.ci[1] >= prev[1] - 1e-12
        prev = r.ci


def _capital(values, m, level=0.95, cap=0.5):
    """The betting capital at m by the definition, one task at a time (Waudby-Smith & Ramdas
    2023, hedged, predictable plug-in stakes), the tasks in the order betting() takes them."""
    x = np.sort(np.asarray(values, dtype=float))[np.random.default_rng(0).permutation(len(values))]
    n, alpha = len(x), 1 - level
    up = down = 1.0
    total, squares = 0.5, 0.25   # the running mean's and variance's starting points
    for t, xt in enumerate(x, start=1):
        var_before = squares / t
        stake = math.sqrt(2 * math.log(2 / alpha) / (n * var_before))
        up *= 1 + min(stake, cap / m) * (xt - m)
        down *= 1 - min(stake, cap / (1 - m)) * (xt - m)
        total += xt
        squares += (xt - total / (t + 1)) ** 2
    return (up + down) / 2


def test_a_pass_pow_k_one_task_carries_takes_the_betting_interval():
    # every task at 3 to 7 passes of 16, one task at 8: pass^8 is C(8,8)/C(16,8) on that task
    # and 0 elsewhere. Hall's interval (by root-finding) ends near 1e-4, where pass^8 of a
    # benchmark whose next tasks include a few easy ones may lie far above: one task carries
    # the mean, and the interval is the betting one, valid for any tasks on [0, 1]. Its ends are
    # where the capital, computed here by its definition, crosses 1/alpha = 20
    from test_stats_intervals import hall_by_hand

    counts = [3, 4, 5, 6, 7] * 6
    counts[0] = 8
    r = pass_at(rows_from([(16, c) for c in counts]), k=8)
    values = np.array([math.comb(c, 8) / math.comb(16, 8) for c in counts])
    assert r.pass_pow_k_ci_method == "betting"
    lo, hi = r.pass_pow_k_ci
    assert hi > 100 * hall_by_hand(values)[1]
    assert _capital(values, 1e-12) < 20   # 0 is inside, so the lower end is Jensen's L^8, held
    assert lo == pytest.approx(min(r.ci[0] ** 8, r.pass_pow_k), abs=1e-18)   # to the estimate
    assert _capital(values, hi) >= 20 > _capital(values, hi * (1 - 1e-6))
    assert hi <= r.ci[1]                                    # pass^8 <= pass@1 <= its upper end


def test_pass_pow_k_of_alike_tasks_reaches_what_pass_one_allows():
    # every task at 8 to 11 passes of 16: pass^8 is nonzero on every task, the mean carried by
    # more than 5 of them, so Hall's interval (by root-finding), which ends below (pass@1's
    # upper end)^8: if the tasks are alike their pass^8 is (pass@1)^8, so the interval reaches it
    from test_stats_intervals import hall_by_hand

    counts = [8, 9, 10, 11, 10, 9] * 5
    r = pass_at(rows_from([(16, c) for c in counts]), k=8)
    values = np.array([math.comb(c, 8) / math.comb(16, 8) for c in counts])
    assert r.pass_pow_k_ci_method == "hall_t"
    h_lo, h_hi = hall_by_hand(values)
    up = r.ci[1]
    assert h_hi < up ** 8
    # the lower end is Hall's or L^8 (Jensen), whichever is higher, but never above the estimate
    lower = min(max(h_lo, r.ci[0] ** 8, 0.0), r.pass_pow_k)
    assert r.pass_pow_k_ci == pytest.approx((lower, up ** 8), abs=1e-15)


def test_pass_k_with_no_spread_takes_the_binomial_interval_over_tasks():
    # every task passes 5 of 16: no spread anywhere, which says nothing about the spread between
    # tasks. pass@1's interval is the binomial one over the 480 rollouts, t-scaled (hand
    # arithmetic). pass^8 is 0 on every task: the binomial interval over the 30 tasks,
    # Agresti-Coull at 0 of 30, within pass^8 <= pass@1 <= U. pass@8 is 1 - C(11,8)/C(16,8) on
    # every task: Agresti-Coull at that share of 30, ending at 1 - (1 - U)^8 (Jensen:
    # pass@8 <= 1 - (1 - pass@1)^8 for any tasks), and held to hold the estimate
    r = pass_at(rows_from([(16, 5)] * 30), k=8)
    n_adj = 480 * (Z / sps.t.ppf(0.975, 29)) ** 2
    low, up = agresti_coull(5 / 16 * n_adj, n_adj)
    assert r.ci == pytest.approx((low, up), abs=1e-12)
    assert r.pass_pow_k == 0.0
    assert r.pass_pow_k_ci == pytest.approx((0.0, min(agresti_coull(0, 30)[1], up)), abs=1e-12)
    est = 1 - math.comb(11, 8) / math.comb(16, 8)
    assert r.pass_at_k == pytest.approx(est)
    ac_lo, ac_hi = agresti_coull(est * 30, 30)
    assert r.pass_at_k_ci == pytest.approx((max(ac_lo, low), max(min(ac_hi, 1 - (1 - up) ** 8),
                                                                 est)), abs=1e-12)


# --- finite or refused ---------------------------------------------------------------------------

def test_rewards_near_the_float_limit_give_a_finite_interval():
    # the same rewards scaled by 1e200: the interval is the small one scaled (before: (-inf, inf))
    base = [0.3, 1.2, 0.7, 2.5, 0.1, 0.9, 1.7, 0.4, 3.1, 0.8, 0.2, 1.1]
    small = mean_reward(rewards(base)).ci
    big = mean_reward(rewards([v * 1e200 for v in base])).ci
    assert all(math.isfinite(b) for b in big)
    assert big == pytest.approx((small[0] * 1e200, small[1] * 1e200), rel=1e-9)


def test_opposite_rewards_at_the_float_limit_are_refused_with_the_reason():
    # 1e308 before and -1e308 after on 10 tasks: the difference, -2e308, is not a float. The
    # audit saw (nan, nan) with p = 0.0 and a verdict
    c = compare(rewards([1e308] * 10), rewards([-1e308] * 10), metric="reward")
    assert c.verdict == "insufficient_data" and c.ci is None and c.p_value is None
    assert "float" in c.note
    spread = compare(rewards([1e308, 9e307] * 5), rewards([-1e308, -9e307] * 5), metric="reward")
    assert spread.ci is None and spread.p_value is None and "float" in spread.note


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.floats(-1e308, 1e308, allow_nan=False), min_size=3, max_size=30))
def test_any_finite_rewards_give_a_finite_interval_or_a_reason(values):
    iv = task_interval(np.array(values), level=0.95)
    if iv.ci is None:
        assert iv.note
    else:
        assert all(math.isfinite(b) for b in iv.ci) and iv.ci[0] <= iv.ci[1]
    assert iv.n == len(values)


# --- verdicts and p-values no stronger than their intervals -----------------------------------

def test_a_change_every_task_shares_reads_the_unpaired_interval_and_says_so():
    # 10 tasks, each from 1 of 4 to 2 of 4: the paired spread is 0. The audit saw p = 0.0020
    # (2/2^10) beside the interval (-0.051, +0.495) and `no_detectable_change`. Now the interval
    # is the unpaired one (MOVER, by hand from the two arms' intervals), its p-value is where
    # that interval at level 1 - p reaches 0, and the verdict reads the interval
    before, after = rows_from([(4, 1)] * 10), rows_from([(4, 2)] * 10)
    c = compare(before, after)
    assert c.ci_method == "mover_unpaired" and "same amount" in c.note and "MOVER" in c.note

    def mover(level):
        b, a = pass_at(before, level=level).ci, pass_at(after, level=level).ci
        return (0.25 - math.sqrt((0.5 - a[0]) ** 2 + (b[1] - 0.25) ** 2),
                0.25 + math.sqrt((a[1] - 0.5) ** 2 + (0.25 - b[0]) ** 2))

    assert c.ci == pytest.approx(mover(0.95), abs=1e-12)
    assert mover(1 - c.p_value)[0] == pytest.approx(0.0, abs=1e-5)
    assert (c.verdict == "moved") == (c.ci[0] > 0) == (c.p_value <= 0.05)
    # no task changed at all: the unpaired interval holds 0 at every level, p = 1
    same = compare(before, rows_from([(4, 1)] * 10))
    assert same.p_value == 1.0 and same.verdict in ("flat", "no_detectable_change")



def test_a_shared_change_with_float_rounding_is_still_a_shared_change():
    # graded rewards written to 3 decimals, every reply 0.05 better after: each task's difference
    # is 0.05 up to the last bits of a float (0.123 + 0.05 - 0.123 != 0.05), which is no spread.
    # The paired t interval on that rounding was [+0.050, +0.050] (zero width) with p = 1e-4;
    # it must read as the exact shared change does: the unpaired (MOVER) interval, said so
    before = [{"task_id": f"t{i}", "reward": round(0.1 + 0.013 * i + 0.1 * j, 3)}
              for i in range(20) for j in range(4)]
    after = [{**r, "reward": r["reward"] + 0.05} for r in before]
    d = np.array([np.mean([r["reward"] for r in after[4 * i:4 * i + 4]])
                  - np.mean([r["reward"] for r in before[4 * i:4 * i + 4]]) for i in range(20)])
    assert np.ptp(d) > 0  # the rounding is there: the rows are not an exact shared change
    c = compare(before, after, metric="reward")
    assert c.ci_method == "mover_unpaired" and "same amount" in c.note
    # MOVER on the two arms' own intervals (Zou & Donner 2008), by hand
    b, a = mean_reward(before).ci, mean_reward(after).ci
    mb, ma = mean_reward(before).value, mean_reward(after).value
    lo = (ma - mb) - math.sqrt((ma - a[0]) ** 2 + (b[1] - mb) ** 2)
    hi = (ma - mb) + math.sqrt((a[1] - ma) ** 2 + (mb - b[0]) ** 2)
    assert c.ci == pytest.approx((lo, hi), abs=1e-9)
    assert c.ci[1] - c.ci[0] > 0.05

def test_the_same_rewards_in_another_order_did_not_change():
    # one run's graded rewards written again in reverse order: no task changed, but each task's
    # mean sums its rewards in another order and moves in its last bits, so the per-task
    # differences are ~1e-17 and unequal. They are no spread: the answer is the one for the rows
    # in their own order (no paired task changed, the unpaired interval), not a paired interval
    # of width ~1e-16 around the rounding
    rng = np.random.default_rng(3)
    rows = [{"task_id": f"t{i}", "reward": round(float(rng.uniform()), 3)}
            for i in range(24) for _ in range(4)]
    means = [[sum(r["reward"] for r in rr if r["task_id"] == f"t{i}") / 4 for i in range(24)]
             for rr in (rows, rows[::-1])]
    assert np.ptp(np.subtract(*means)) > 0   # the rounding is there
    c, same = compare(rows, rows[::-1], metric="reward"), compare(rows, rows, metric="reward")
    assert same.ci_method == "mover_unpaired" and "no paired task changed" in same.note
    assert c.ci_method == "mover_unpaired" and "no paired task changed" in c.note
    assert c.ci == pytest.approx(same.ci, abs=1e-12) and c.verdict == same.verdict
    assert c.ci[1] - c.ci[0] > 0.1

def test_the_default_effect_on_a_0_100_reward_is_in_its_units():
    # the default effect, 0.05, is 5 points of pass@1; compared on the mean of a 0-100 grade it
    # is read as 5 grade points (0.05 of the scale's span, 100), and said so. Rescaling the
    # rewards to [0, 1] must not change any reading: the same verdict, and the smallest
    # detectable effect and the effect 100 times the [0, 1] ones (like with like)
    rng = np.random.default_rng(1)
    grades = rng.integers(0, 101, (12, 2)).astype(float)
    moved = np.clip(grades + rng.integers(-30, 31, (12, 1)), 0, 100)

    def rows(g, over=1.0):
        return [{"task_id": f"t{i}", "reward": float(v) / over} for i in range(12) for v in g[i]]

    c100 = compare(rows(grades), rows(moved), metric="reward")
    c1 = compare(rows(grades, 100), rows(moved, 100), metric="reward")
    assert c100.effect == pytest.approx(5.0) and c1.effect == 0.05
    assert "read as 0.05 of the span 100: 5 reward units" in c100.note
    assert "pass-rate units" not in c1.note
    assert c100.verdict == c1.verdict == "no_detectable_change"
    assert c100.mde == pytest.approx(100 * c1.mde, rel=1e-9)
    # the smallest detectable effect from the interval's width (z's from scipy) is past 5 points
    z = sps.norm.ppf(0.975)
    assert c100.mde == pytest.approx((z + sps.norm.ppf(0.8)) * (c100.ci[1] - c100.ci[0]) / (2 * z))
    assert f"detects only effects >= {c100.mde:.3f} (effect of interest 5)" in c100.note
    # every task moved by at most one grade point: the interval lies inside +-5, so flat (the
    # equivalence statement), which 0.05 grade points could never give
    small = np.clip(grades + rng.integers(-1, 2, (12, 1)), 0, 100)
    flat = compare(rows(grades), rows(small), metric="reward")
    assert -5 < flat.ci[0] and flat.ci[1] < 5 and flat.verdict == "flat"
    # given, the effect is in the compared metric's units, with no note
    two = compare(rows(grades), rows(small), metric="reward", effect=2)
    assert two.effect == 2.0 and "pass-rate units" not in (two.note or "")
    with pytest.raises(ArgumentError, match="`effect` must be below 1 when pass rates"):
        compare(rows(grades, 100), rows(small, 100), effect=2)

def test_one_rollout_per_task_says_once_what_cannot_be_read():
    # 50 tasks, one rollout each, 25 pass: pass@1 is 25/50; the per-task "histogram" would be
    # the 0/1 outcomes themselves (0: 25, 1: 25), which is no band. Said once, in the note, on
    # the library's answer and on the pass-at command's (RateReport), also when k=4 is asked
    from whileai_core.stats.report import RateReport
    from whileai_core.rows import load_rows
    from whileai_core.tables import TaskTable

    rows = [{"task_id": f"t{i}", "reward": float(i % 2)} for i in range(50)]
    for k in (None, 4):
        p = pass_at(rows, k=k)
        assert p.pass_at_1 == 0.5 and p.single_rollout and p.pass_at_k is None
        for text in (p.render(), RateReport.of_pass(p, TaskTable.of(load_rows(rows))).render()):
            assert text.count("cannot be read") == 1 and "pass@k or pass^k for k > 1" in text
            assert "tasks by pass" not in text and "not computed" not in text
    assert pass_at(rows, k=4).k_not_computed is not None   # the field still says why
    # tasks with 4 rollouts beside single ones: the band is read where it can be, as before
    mixed = rows + [{"task_id": "t0", "reward": 1.0}] * 3
    assert "tasks by pass" in pass_at(mixed).render() and not pass_at(mixed).single_rollout

def test_bootstrap_free_p_values_are_never_zero():
    # 40 tasks, every one better after: no random sign pattern of 10,000 reaches the observed
    # sum, so p = (0 + 1)/(10,000 + 1) (Phipson & Smyth 2010), never 0.0 as the bootstrap gave
    d = np.linspace(0.05, 0.5, 40)
    pi = paired_interval(d, level=0.95, seed=0, n_resamples=10_000)
    assert pi.p_value == pytest.approx(1 / 10_001) and pi.n == 40
    teacher = rows_from([(4, 4)] * 40)
    student = rows_from([(4, c % 3) for c in range(40)])
    assert teacher_clears(teacher, student).p_value > 0


@settings(max_examples=80, deadline=None)
@given(d=st.lists(st.floats(-1, 1, allow_nan=False), min_size=6, max_size=40))
def test_the_p_value_agrees_with_the_interval(d):
    # p <= 0.05 exactly when the interval excludes 0 (the audit: 0.3-1.0% of null comparisons
    # under 30 tasks gave p <= .05 with an interval holding 0, and compare_many corrected them)
    pi = paired_interval(np.array(d), level=0.95, seed=0, n_resamples=2000)
    if pi.ci is None:
        assert pi.p_value is None and pi.note
        return
    excludes = pi.ci[0] > 0 or pi.ci[1] < 0
    assert excludes == (pi.p_value <= 0.05)


def test_the_p_value_is_the_exact_tests_when_both_reject():
    # 8 tasks: 7 better by 0.25-0.5, one worse by 0.05: both tests reject (the skew-corrected t
    # by hand, p = 0.042), and p is the exact sign-flip p by enumeration
    d = [0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.5, -0.05]
    pi = paired_interval(np.array(d), level=0.95, seed=0, n_resamples=10_000)
    assert hall_by_hand(d)[1] < 0.05
    assert pi.p_value == pytest.approx(brute_p(d)) and pi.method == "t_sign_flip_exact"


# --- the noise band and the holdout's assumptions -------------------------------------------

def test_holdout_size_states_the_arm_correlation_it_assumes():
    # no pilot: pass rates uniform (Var 1/12, E[x(1-x)] = 1/6), rho 0.8 assumed. At rho 0.5 the
    # bracket is 2 (1/12)(0.5) + 2 (1/6)/4 (Miller 2024 Eq. 9, by hand), and the planned n has
    # power Phi(sqrt(n) 0.05 / sqrt(bracket) - z_0.975) (scipy)
    r = holdout_size()
    assert r.rho == 0.8 and r.rho_from == "assumed"
    z2 = (Z + sps.norm.ppf(0.8)) ** 2
    bracket = 2 * (1 / 12) * 0.5 + 2 * (1 / 6) / 4
    assert r.n_tasks_if_rho["0.5"] == math.ceil(z2 * bracket / 0.05 ** 2)
    power = sps.norm.cdf(math.sqrt(r.n_tasks) * 0.05 / math.sqrt(bracket) - Z)
    assert r.power_if_rho["0.5"] == pytest.approx(power) and power < 0.7
    assert "assumed" in r.render()
    # a paired pilot measures it: the correlation of the two arms' per-task rates (numpy)
    before = rows_from([(4, c) for c in (0, 1, 2, 3, 4, 1, 2, 0, 3, 4)])
    after = rows_from([(4, c) for c in (1, 1, 3, 3, 4, 2, 2, 1, 4, 4)])
    pilot = holdout_size(before=before, after=after)
    pb = np.array([0, 1, 2, 3, 4, 1, 2, 0, 3, 4]) / 4
    pa = np.array([1, 1, 3, 3, 4, 2, 2, 1, 4, 4]) / 4
    assert pilot.rho_from == "pilot" and pilot.rho == pytest.approx(np.corrcoef(pb, pa)[0, 1])
    assert pilot.n_tasks_if_rho is None


def test_the_watch_steps_delta_carries_its_paired_count():
    from whileai_core.hacking import watch_records

    base = rows_from([(4, c % 4) for c in range(12)], prefix="h")
    later = rows_from([(4, (c + 1) % 4) for c in range(12)], prefix="h")[:-4]   # 11 tasks
    recs = [{"step": s, "train_reward": 0.1 * s} for s in range(1, 7)]
    recs += [{"step": 0, "held_out": base}, {"step": 6, "held_out": later}]
    step = next(s for s in watch_records(recs).steps if s.delta is not None)
    assert step.n_paired == 11 and step.delta_ci is not None
    assert "(n=11 paired," in step.render()


def test_a_tied_noise_floor_names_the_sd_its_band_rests_on():
    """Two runs that score the same: run_std is 0, the band rests on the within-task prediction,
    and the text says so (found from outside: it printed "x sqrt(2) x run_std" beside run_std 0
    and a band of 0.78)."""
    import math

    from scipy import stats as st

    from whileai_core.stats.noise import noise_floor

    run = [{"task_id": f"t{t}", "reward": float(k < 2)} for t in range(10) for k in range(4)]
    floor = noise_floor(run, [dict(r) for r in run])
    assert floor.run_std == 0.0 and floor.predicted_run_std > 0
    assert floor.band == pytest.approx(
        st.t.ppf(0.975, 1) * math.sqrt(2) * floor.predicted_run_std)
    line = floor.render().splitlines()[1]
    assert "x sqrt(2) x the predicted run_std" in line and "as the runs tied" in line


def test_a_run_std_of_0_given_to_compare_is_read_as_the_tied_runs_rule():
    """compare(run_std=0.0) from tied re-runs made a band of 0, calling every difference a
    change: the band rests on the run_std the baseline's rollouts predict, by hand
    sqrt(sum_i s_i^2/n_i)/C with s_i^2 = n_i/(n_i-1) p_i(1-p_i), and the note says so."""
    import math

    from scipy import stats as st

    counts = [(4, c % 5) for c in range(40)]
    before, after = rows_from(counts), rows_from([(4, min(4, c % 5 + 1)) for c in range(40)])
    s2 = [n / (n - 1) * (c / n) * (1 - c / n) for n, c in counts]
    predicted = math.sqrt(sum(v / 4 for v in s2)) / 40
    result = compare(before, after, run_std=0.0, noise_runs=3)
    assert result.noise_band == pytest.approx(st.t.ppf(0.975, 2) * math.sqrt(2) * predicted)
    assert "run_std 0 (the re-runs tied) is no evidence of no noise" in result.note
    # a run_std above 0 is read as given
    assert compare(before, after, run_std=0.01, noise_runs=3).noise_band == pytest.approx(
        st.t.ppf(0.975, 2) * math.sqrt(2) * 0.01)


def test_a_needle_of_tasks_that_always_pass_is_covered_when_none_is_drawn():
    """2% of tasks always pass, the rest never: 60 tasks draw none of them 0.98^60 = 30% of the
    time, and with every outcome 0 the old floor (the 240 rollouts as the n) read [0, 0.020],
    which misses 0.02 (coverage 71% over 300 draws). Simulated from the definition."""
    rng = np.random.default_rng(0)
    q, reps, covered = 0.02, 300, 0
    for r in range(reps):
        always = rng.random(60) < q
        rows = [{"task_id": f"t{t}", "reward": float(always[t])}
                for t in range(60) for _ in range(4)]
        lo, hi = pass_at(rows, seed=r).ci
        covered += lo <= q <= hi
    assert covered / reps >= 0.93
