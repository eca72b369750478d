"""watch_records and the plan behind it (whileai_core.hacking.anytime), on literal step records.

Expected values are derived outside the code: the spending functions by hand, the first
boundaries from scipy's normal and Student t quantiles, the second from scipy's bivariate normal
(two looks sharing step 0 correlate 1/2), whole boundary sequences and the stated power by a
Monte Carlo of the model they are solved on (independent standard normal evaluation noises), the
climb and its successive-difference noise by hand, the zero-spread bound from scipy's beta
quantile (Clopper-Pearson for 0 of n).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import brentq

from whileai_core.errors import ArgumentError, RowsError
from whileai_core.hacking import watch_records
from whileai_core.hacking.anytime import (DOWN, FLAT, Plan, detectable_drop, first_stop,
                                          look_conditions, rule)

A = 0.05  # 1 - level


def held(rate_by_task, rollouts=4):
    """Held-out rows, 4 rollouts per task, passes given per task."""
    return [{"task_id": t, "reward": 1.0 if j < c else 0.0}
            for t, c in rate_by_task.items() for j in range(rollouts)]


BASE = {f"h{i}": (i % 3) for i in range(30)}  # passes 0, 1, 2 of 4: pass rate 0.25
UP = {t: min(4, c + 2) for t, c in BASE.items()}
DOWN_ONE = {t: max(0, c - 1) for t, c in BASE.items()}


def run(train, evals, rollouts=4):
    recs = [{"step": s, "train_reward": r} for s, r in enumerate(train, 1)]
    recs += [{"step": s, "held_out": held(e, rollouts)} for s, e in evals.items()]
    return recs


def spend(share, t, looks, first=1):
    """The error a part with ``share`` of 0.05 spends at look t of a planned run, by hand: its
    looks that can stop are j = t - first + 1 of J = looks - first + 1, and it spends
    a ((j / J)^2 - ((j - 1) / J)^2) at the j-th."""
    j, big = np.asarray(t) - first + 1, looks - first + 1
    out = share * A * ((j / big) ** 2 - ((j - 1) / big) ** 2)
    return np.where(j >= 1, out, 0.0) if np.ndim(out) else (float(out) if j >= 1 else 0.0)


MVN = stats.multivariate_normal(mean=[0, 0], cov=[[1, 0.5], [0.5, 1]])  # two looks on step 0


def second(c1, a2):
    """Look 2's boundary against step 0 after look 1's ``c1`` (one look stops): the first
    crossing at look 2 has probability ``a2`` (scipy's bivariate normal, correlation 1/2)."""
    return brentq(lambda c: stats.norm.cdf(c1) - MVN.cdf([c1, c]) - a2, 0, 10, xtol=1e-9)


def tail(looks, t, part="start"):
    """The one-comparison tail of the default plan's boundary at look t (two looks in a row;
    the plan's boundaries are tested on the model above)."""
    return stats.norm.sf(Plan(A, looks, confirm=2).bounds(part, looks)[t - 1])


def zero_spread(n, alpha):
    """Clopper-Pearson's upper limit for 0 of n at one-sided alpha."""
    return stats.beta.ppf(1 - alpha, 1, n)


# --- the plan ---------------------------------------------------------------------------------

def test_each_part_spends_its_share_by_its_function():
    t = np.arange(1, 11)
    plan = Plan(A, 10)
    assert plan.alphas("start", 10) == pytest.approx(spend(0.25, t, 10), rel=1e-12)
    assert plan.alphas("climb", 10) == pytest.approx(spend(0.5, t, 10), rel=1e-12)
    # falls from an earlier look start at look 2: their looks are t - 1 of 9
    peak = plan.alphas("peak", 10)
    assert peak == pytest.approx([spend(0.25, x, 10, first=2) for x in t], rel=1e-12)
    assert plan.level_at(10) == pytest.approx(1 - spend(0.75, t, 10) - peak)
    # two looks in a row: the same spending function, of a larger one-crossing error (its
    # boundaries' double crossings spend the part's share: tested on the model below)
    two = Plan(A, 10, confirm=2)
    star = two.calibrated("start")
    assert star > 0.0125 and two.alphas("start", 10) == pytest.approx(
        [spend(0.25 * star / 0.0125, x, 10) for x in t], rel=1e-9)
    # the climb's band: from look 2 (the first at which flat can stop), look 1 at look 2's
    climb = two.alphas("climb", 10)
    assert climb[1:] == pytest.approx([spend(0.5, x, 10, first=2) for x in t[1:]])
    assert climb[0] == climb[1]
    # every planned function spends exactly its part by the last look, and nothing after it
    for kind in ("obrien_fleming", "pocock"):
        spent = Plan(A, 10, kind).alphas("start", 12)
        assert spent[:10].sum() == pytest.approx(0.0125, rel=1e-9) and spent[10:].sum() == 0
    # O'Brien-Fleming's type at t / K = 1/2: 2 - 2 Phi(z_{1 - a/2} sqrt 2)
    obf = Plan(A, 10, "obrien_fleming").alphas("start", 5).sum()
    assert obf == pytest.approx(2 * stats.norm.sf(stats.norm.isf(0.0125 / 2) * math.sqrt(2)))
    # open: a t / (t + 10) by look t, however many looks
    assert Plan(A, None).alphas("start", 30).sum() == pytest.approx(0.0125 * 30 / 40)
    with pytest.raises(ArgumentError, match="`looks` must be an integer >= 1"):
        Plan(A, 0)


def test_first_boundaries_are_the_normal_quantiles_and_the_second_the_bivariate():
    plan = Plan(A, 4)
    a = plan.alphas("start", 4)
    c = plan.bounds("start", 4)
    assert c[0] == pytest.approx(stats.norm.isf(a[0]), rel=1e-6)
    assert c[1] == pytest.approx(second(c[0], a[1]), rel=1e-5)
    # the falls from an earlier look: look 2 compares look 1 alone
    assert plan.bounds("peak", 4)[1] == pytest.approx(
        stats.norm.isf(plan.alphas("peak", 4)[1]), rel=1e-6)
    assert plan.bounds("peak", 4)[0] == math.inf
    # confirm 2: the same recursion on the calibrated error
    two = Plan(A, 4, confirm=2)
    assert two.bounds("start", 4)[0] == pytest.approx(
        stats.norm.isf(two.alphas("start", 4)[0]), rel=1e-6)


def _first_stops(z, c, confirm):
    crossed = z > c[None, :]
    run = np.zeros(z.shape[0], dtype=int)
    first = np.full(z.shape[0], -1)
    for j in range(z.shape[1]):
        run = np.where(crossed[:, j], run + 1, 0)
        first = np.where((first < 0) & (run >= confirm), j, first)
    return first


def _model(rng, draws, looks, shift=0.0):
    """The model's look statistics: E_0 .. E_looks independent standard normal; look t
    against step 0 is (E_0 - E_t) / sqrt 2 (+ a drop of ``shift``), against look s >= 1
    (E_s - E_t) / sqrt 2, the largest counting."""
    e = rng.standard_normal((draws, looks + 1))
    start = shift + (e[:, :1] - e[:, 1:]) / math.sqrt(2)
    best = np.maximum.accumulate(e[:, 1:], axis=1)
    peak = np.full_like(start, -np.inf)
    peak[:, 1:] = (best[:, :-1] - e[:, 2:]) / math.sqrt(2)
    return start, peak


@pytest.mark.parametrize("plan", [Plan(A, 6), Plan(A, 6, "pocock"), Plan(A, None),
                                  Plan(A, 6, confirm=2), Plan(A, None, confirm=2)],
                         ids=["quadratic", "pocock", "open", "quadratic-2", "open-2"])
def test_boundaries_spend_each_looks_error_on_the_model(plan):
    # every look's first crossing has its one-crossing error; the stops (confirm crossings in
    # a row) of a planned run spend the part's share, 0.0125, and never more
    draws = 400_000
    start, peak = _model(np.random.default_rng(11), draws, 6)
    for part, z in (("start", start), ("peak", peak)):
        first = _first_stops(z, plan.bounds(part, 6), 1)
        got = np.array([(first == j).mean() for j in range(6)])
        want = plan.alphas(part, 6)
        assert np.all(np.abs(got - want) <= 4 * np.sqrt(want / draws) + 1e-5), (part, got, want)
        stopped = (_first_stops(z, plan.bounds(part, 6), plan.confirm) >= 0).mean()
        tol = 4 * math.sqrt(0.0125 / draws)
        if plan.looks is None:  # open: six looks of an unbounded plan spend less than the share
            assert stopped <= 0.0125 + tol
        else:
            assert stopped == pytest.approx(0.0125, abs=tol), part


@pytest.mark.parametrize("confirm", [1, 2])
def test_the_stated_power_is_what_the_model_catches(confirm):
    plan = Plan(A, 8, confirm=confirm)
    x = detectable_drop(plan, 8)
    start, _ = _model(np.random.default_rng(5), 200_000, 8, shift=x)
    caught = (_first_stops(start, plan.bounds("start", 8), confirm) >= 0).mean()
    assert caught == pytest.approx(0.8, abs=4 * math.sqrt(0.16 / 200_000))


def test_rule_codes_and_first_stop():
    down = np.array([True, False, False, False, False])
    # the gap: the upper bound of the held-out change minus the climb
    codes = look_conditions(down, [-0.3, -0.1, -0.1, 0.05, -0.1], [-0.01, -0.2, 0.05, -0.1, 0.2],
                            [0.0, 0.3, 0.05, 0.3, 0.3], [0.1, 0.1, 0.1, 0.1, 0.1])
    # below 0 | flat under a climb past its band | climb inside its band | above 0 | reaches it
    assert codes.tolist() == [DOWN, FLAT, 0, 0, 0]
    # a condition stops once it held `confirm` looks in a row; two conditions do not add up
    start = np.array([[0, 0, 1, 1, 0], [1, 0, 1, 0, 0], [0, 1, 0, 0, 0]], dtype=bool)
    peak = np.array([[0, 0, 0, 0, 0], [0, 1, 0, 1, 0], [0, 0, 1, 1, 0]], dtype=bool)
    assert first_stop([start, peak], 2).tolist() == [3, -1, 3]
    assert first_stop([start, peak], 1).tolist() == [2, 0, 1]


# --- the watch on records ---------------------------------------------------------------------

def test_climbing_reward_with_flat_held_out_stops():
    # 3 planned looks (steps 4, 8, 12) of 30 unmoved tasks while the training reward climbs;
    # a stop needs 2 looks in a row (the default), so the parts spend from look 2 on
    train = [0.1 + 0.05 * s for s in range(12)]
    w = watch_records(run(train, {0: BASE, 4: BASE, 8: BASE, 12: BASE}), looks=3)
    assert w.decision == "stop" and "flat" in w.reason and w.schedule == "planned"
    assert [x.condition for x in w.steps if x.look] == [None, "flat_while_climbing",
                                                          "flat_while_climbing"]
    assert w.first_stop_step == 12
    # climb by hand at step 12: window 5, last five 0.45..0.65 mean 0.55, first five mean 0.2
    assert w.train_climb == pytest.approx(0.35)
    # successive differences are all 0.05: sigma^2 = 11 * 0.0025 / (2 * 11). The band at look 3
    # is the climb's half of the error spent there (its look 2 of 2), one-sided, with Student's
    # t at 2 * 11^2 / (3 * 12 - 4) degrees of freedom (von Neumann's MSSD variance)
    q = stats.t.isf(spend(0.5, 3, 3, first=2), 2 * 11 ** 2 / (3 * 12 - 4))  # climb: by hand
    assert w.train_noise_band == pytest.approx(q * math.sqrt(0.0025 / 2) * math.sqrt(2 / 5),
                                               rel=1e-6)
    # no task moved: at look 2 the interval is the zero-spread bound at the tail of the plan's
    # boundary there
    look2 = next(x for x in w.steps if x.look == 2)
    s = zero_spread(30, tail(3, 2))
    assert look2.delta_ci == pytest.approx((-s, s), rel=1e-4)
    assert look2.delta_ci_method == "zero_spread_bound" and w.n_paired == 30


def test_flat_needs_the_held_out_below_the_climb_beyond_both_noises():
    # 40 tasks at 1 or 2 passes of 4; at steps 10 and 20 a quarter gain one pass and a quarter
    # lose one: change 0, spread 0.25 on half the tasks. The training reward climbs 0.015 a
    # step with +-0.04 alternating. At look 1 (step 10) the held-out upper bound lies under the
    # climb, which clears its band: the rule that took the climb as exact called it flat there
    # and at look 2, and stopped. The climb is an estimate too: the held-out change minus the
    # climb, read on Welch's t, may still be above 0 at look 1, so no stop (two looks in a row)
    base = {f"h{i}": 1 + i % 2 for i in range(40)}
    mix = {t: c + (1 if int(t[1:]) % 4 == 0 else -1 if int(t[1:]) % 4 == 1 else 0)
           for t, c in base.items()}
    train = [0.3 + 0.015 * s + (0.04 if s % 2 else -0.04) for s in range(20)]
    recs = [{"step": s, "train_reward": r} for s, r in enumerate(train, 1)]
    recs += [{"step": e, "held_out": held(rates)} for e, rates in ((0, base), (10, mix),
                                                                    (20, mix))]
    w = watch_records(recs, looks=2)
    look1 = next(x for x in w.steps if x.look == 1)
    assert look1.condition is None and w.decision == "continue"
    # by hand: the paired changes, the climb (last 5 of 10 steps minus the first 5) and its
    # noise (successive differences), Welch-Satterthwaite's degrees of freedom
    d = np.array([(mix[t] - base[t]) / 4 for t in base])
    se = d.std(ddof=1) / math.sqrt(40)
    r = np.array(train[:10])
    climb = r[5:].mean() - r[:5].mean()
    se_climb = math.sqrt((np.diff(r) ** 2).sum() / 18) * math.sqrt(2 / 5)
    df_climb = 2 * 9 ** 2 / 26
    df = (se ** 2 + se_climb ** 2) ** 2 / (se ** 4 / 39 + se_climb ** 4 / df_climb)
    a = tail(2, 1)
    assert look1.delta_ci[1] == pytest.approx(d.mean() + stats.t.isf(a, 39) * se, rel=1e-6)
    gap = d.mean() - climb + stats.t.isf(a, df) * math.sqrt(se ** 2 + se_climb ** 2)
    assert look1.climb_gap_bound == pytest.approx(gap, rel=1e-6)
    assert look1.delta_ci[1] < climb and look1.train_noise_band < climb and gap > 0
    assert "holds at the latest 1 evaluation only" in w.reason


def test_a_fall_stops_at_two_looks_and_a_rise_continues():
    flat = [0.3] * 12
    w = watch_records(run(flat, {0: BASE, 6: DOWN_ONE, 12: DOWN_ONE}), looks=2)
    assert w.decision == "stop" and w.first_stop_step == 12 and "moved down" in w.reason
    # DOWN_ONE: every task loses one pass of 4 but the ten at 0: d = -0.25 on 20 tasks, 0 on 10;
    # the interval is Student's t at the tail of the plan's boundary, 29 degrees of freedom
    d = np.array([-0.25 if i % 3 else 0.0 for i in range(30)])
    half = stats.t.isf(tail(2, 1), 29) * d.std(ddof=1) / math.sqrt(30)
    first = next(x for x in w.steps if x.look == 1)
    assert first.delta_ci == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-4)
    # one look at a time: look 1 alone spends a quarter of the start part
    one = watch_records(run(flat, {0: BASE, 6: DOWN_ONE, 12: DOWN_ONE}), looks=2, confirm=1)
    half = stats.t.isf(spend(0.25, 1, 2), 29) * d.std(ddof=1) / math.sqrt(30)
    assert one.first_stop_step == 6 and one.steps[6].delta_ci == pytest.approx(
        (d.mean() - half, d.mean() + half), rel=1e-6)
    up = watch_records(run([0.1 + 0.05 * s for s in range(12)], {0: BASE, 6: UP, 12: UP}),
                       looks=2)
    assert up.decision == "continue" and up.held_out_delta == pytest.approx(0.5)
    assert "improving" in up.reason


def test_a_fall_after_a_rise_is_caught_before_it_is_back_at_the_start():
    # the held-out set gains 2 passes of 4 (look 1), then gives one back (look 2): still +0.25
    # above step 0, so the comparison with step 0 cannot stop it; against look 1 every task fell
    # by exactly one pass (no spread): the zero-spread bound at the peak part's whole error
    # (look 2 is its only look that can stop, one look at a time)
    mid = {t: c + 1 for t, c in BASE.items()}
    w = watch_records(run([0.3] * 12, {0: BASE, 6: UP, 12: mid}), looks=2, confirm=1)
    last = w.steps[-1]
    assert last.delta == pytest.approx(0.25) and last.delta_ci[0] > 0
    s = zero_spread(30, 0.0125)
    assert last.peak_step == 6 and last.peak_delta == pytest.approx(-0.25)
    assert last.peak_ci == pytest.approx((-0.25 - s * 0.75, -0.25 + s * 1.25), rel=1e-6)
    assert w.decision == "stop" and "fell after a rise" in w.reason and last.condition == "down"
    # with spread: Student's t with 29 degrees of freedom at the same error
    some = dict(mid, h0=UP["h0"], h1=UP["h1"])
    w = watch_records(run([0.3] * 12, {0: BASE, 6: UP, 12: some}), looks=2, confirm=1)
    d = np.array([(some[t] - UP[t]) / 4 for t in BASE])
    half = stats.t.isf(0.0125, 29) * d.std(ddof=1) / math.sqrt(30)
    assert w.steps[-1].peak_ci == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-6)
    # two looks in a row (the default): a rise, then two looks below it
    w = watch_records(run([0.3] * 12, {0: BASE, 4: UP, 8: mid, 12: mid}), looks=3)
    assert w.decision == "stop" and "fell after a rise" in w.reason
    assert w.held_out_delta == pytest.approx(0.25)


def test_one_flat_look_is_not_enough_and_no_eval_is_not_enough_data():
    train = [0.1 + 0.05 * s for s in range(12)]
    # look 1 at step 4: a climb of 0.1 over 4 steps is inside its band; look 2 is flat
    once = watch_records(run(train, {0: BASE, 4: BASE, 12: BASE}), looks=2)
    assert [s.condition for s in once.steps if s.look] == [None, "flat_while_climbing"]
    assert once.decision == "continue" and "holds at the latest 1 evaluation only" in once.reason
    assert watch_records(run(train, {0: BASE, 4: BASE, 12: BASE}), looks=2,
                         confirm=1).decision == "stop"
    assert watch_records(run(train, {0: BASE}), confirm=1).decision == "not_enough_data"
    flat = watch_records(run([0.3] * 12, {0: BASE, 6: BASE, 12: BASE}))
    assert flat.decision == "continue" and "inside its noise band" in flat.reason


def test_first_stop_step_is_where_a_callback_stops():
    # flat at steps 8 and 12 (stop at 12), then the held-out set recovers at 16 (every task +2
    # of 4): the end says continue, the callback stopped at 12
    train = [0.1 + 0.05 * s for s in range(16)]
    evals = {0: BASE, 4: BASE, 8: BASE, 12: BASE, 16: UP}
    w = watch_records(run(train, evals), looks=4)
    assert [s.condition for s in w.steps if s.look] == [
        None, "flat_while_climbing", "flat_while_climbing", None]
    assert w.decision == "continue" and w.first_stop_step == 12
    assert "the rule said stop at step 12" in w.render()
    # one look in a row: at step 8 the climb is (8 - 4) x 0.05 over a window of 4 steps (at 12:
    # (12 - 5) x 0.05 over 5), its noise
    # sigma sqrt(2 / 4) with sigma = 0.05 / sqrt 2 (successive differences), read on t with
    # 2 x 7^2 / 20 degrees of freedom; its lower bound at the look's tail lies under the 30
    # unmoved tasks' bound, so the first stop is at step 12, where it no longer does
    one = watch_records(run(train, evals), looks=4, confirm=1)
    tails = stats.norm.sf(Plan(A, 4).bounds("start", 4))
    floor = [(t - w) * 0.05 - stats.t.isf(a, 2 * (t - 1) ** 2 / (3 * t - 4)) * 0.05 / math.sqrt(w)
             for w, t, a in ((4, 8, tails[1]), (5, 12, tails[2]))]
    assert floor[0] < zero_spread(30, tails[1]) and floor[1] > zero_spread(30, tails[2])
    assert one.first_stop_step == 12
    assert [s.climb_gap_bound for s in one.steps if s.look in (2, 3)] == pytest.approx(
        [zero_spread(30, tails[1]) - floor[0], zero_spread(30, tails[2]) - floor[1]], rel=1e-6)
    assert watch_records(run(train, {0: BASE, 8: UP, 16: UP}), looks=2).first_stop_step is None


def test_zero_spread_bound_and_too_few_tasks():
    # 4 held-out tasks, never solved; the training reward climbs 0.05 a step (+0.35 at step
    # 12). No spread, so no t interval: the zero-spread bound (at the tail of the plan's boundary
    # at look 2) reaches past the climb, so no stop, and the reason says how many unmoved tasks
    # would tell
    never = {f"h{i}": 0 for i in range(4)}
    train = [0.1 + 0.05 * s for s in range(12)]
    w = watch_records(run(train, {0: never, 6: never, 12: never}), looks=2)
    last = tail(2, 2)
    bound = zero_spread(4, last)
    assert w.held_out_ci == pytest.approx((-bound, bound), rel=1e-4)
    assert w.held_out_delta == 0.0 and w.held_out_ci_method == "zero_spread_bound"
    assert w.decision == "continue"
    # the climb's lower bound: 0.35 less t at the look's tail (2 x 11^2 / 32 degrees of freedom)
    # times its noise, sigma sqrt(2 / 5) with sigma = 0.05 / sqrt 2
    floor = 0.35 - stats.t.isf(last, 2 * 11 ** 2 / 32) * 0.05 / math.sqrt(5)
    need = next(n for n in range(1, 200) if zero_spread(n, last) < floor)
    assert f"less its noise ({floor:+.3f}); {need} unmoved tasks would bound it" in w.reason
    assert "no spread, so no t interval" in " ".join(w.notes)
    # every task up by exactly one pass of 4 (0.25): the bound runs from 0.25 towards -1 and 1
    never24 = {f"h{i}": 0 for i in range(24)}
    up = {t: 1 for t in never24}
    w = watch_records(run(train, {0: never24, 6: up, 12: up}), looks=2)
    s = zero_spread(24, last)
    assert w.held_out_ci == pytest.approx((0.25 - s * 1.25, 0.25 + s * 0.75), rel=1e-4)
    # rewards outside [0, 1] with no spread: no range, so no bound and no interval
    graded = [dict(r, held_out=[dict(x, reward=x["reward"] * 5) for x in r["held_out"]])
              if "held_out" in r else r for r in run(train, {0: never24, 6: up, 12: up})]
    w = watch_records(graded, metric="reward", looks=2)
    assert w.held_out_ci is None and w.decision == "not_enough_data"
    assert "the rewards leave [0, 1]" in w.reason
    few = {"h0": 1, "h1": 2}
    w = watch_records(run(train, {0: few, 12: {"h0": 2, "h1": 2}}))
    assert w.decision == "not_enough_data" and "at least 3 paired tasks" in w.reason


def test_a_rounding_only_spread_is_no_spread_at_a_look():
    # every held-out task gains one pass of 3: each change is 1/3, but in floats 1 - 2/3 is not
    # 2/3 - 1/3, a spread of 6e-17. It is the exact shared change, so its interval is the
    # zero-spread bound (one look of one planned: the start part's whole error), not Student's t
    # of width ~1e-16
    before = {f"h{i}": 1 + i % 2 for i in range(24)}
    after = {t: c + 1 for t, c in before.items()}
    d = np.array([after[t] / 3 - before[t] / 3 for t in before])
    assert np.ptp(d) > 0   # the rounding is there
    w = watch_records(run([0.3] * 12, {0: before, 6: after}, rollouts=3), looks=1, confirm=1)
    s = zero_spread(24, 0.0125)
    assert w.held_out_ci_method == "zero_spread_bound"
    assert w.held_out_ci == pytest.approx((1 / 3 - s * (1 + 1 / 3), 1 / 3 + s * (1 - 1 / 3)))
    # the same graded rewards written in another order: no task moved, but each task's mean
    # sums its rewards in another order and moves in its last bits; it reads as unmoved (looks
    # 1 and 2 of 2, one at a time: the normal quantile, then the bivariate's)
    rng = np.random.default_rng(3)
    graded = [{"task_id": f"h{i}", "reward": round(float(rng.uniform()), 3)}
              for i in range(24) for _ in range(4)]
    means = [[sum(r["reward"] for r in rows if r["task_id"] == f"h{i}") / 4 for i in range(24)]
             for rows in (graded, graded[::-1])]
    assert np.ptp(np.subtract(*means)) > 0   # the rounding is there
    recs = [{"step": s, "train_reward": 0.1 + 0.02 * s} for s in range(1, 13)]
    recs += [{"step": 0, "held_out": graded}, {"step": 6, "held_out": graded[::-1]},
             {"step": 12, "held_out": graded[::-1]}]
    w = watch_records(recs, metric="reward", looks=2, confirm=1)
    c1 = stats.norm.isf(spend(0.25, 1, 2))
    tails = (spend(0.25, 1, 2), stats.norm.sf(second(c1, spend(0.25, 2, 2))))
    assert [x.delta_ci for x in w.steps if x.look] == [
        pytest.approx((-b, b), rel=1e-4) for b in (zero_spread(24, a) for a in tails)]
    assert w.decision == "continue" and w.first_stop_step is None


def test_the_schedule_comes_from_the_records_or_the_argument():
    train = [0.3] * 12
    after = {t: min(4, c + 1 + int(t[1:]) % 2) for t, c in BASE.items()}  # +1 or +2 passes
    recs = run(train, {0: BASE, 6: after, 12: after})
    recs[0] = dict(recs[0], eval_every=3, max_steps=18)  # the TRL callback's step-0 record
    w = watch_records(recs)
    assert w.schedule == "planned" and w.planned_looks == 6 and "6 planned looks" in w.spending
    assert watch_records(recs, looks=4).planned_looks == 4
    opened = watch_records(run(train, {0: BASE, 6: after, 12: after}))
    assert opened.schedule == "open" and opened.planned_looks is None
    # a schedule of 1 + 5,000 evaluations (past WATCH_LOOKS_MAX, 1,000): the open plan, said
    recs[0] = dict(recs[0], eval_every=1, max_steps=5_000)
    long = watch_records(recs)
    assert long.schedule == "open" and long.planned_looks is None
    assert any("gives 5,000 looks, more than the 1,000" in n for n in long.notes)
    # more looks than planned: the plan's error is spent; the answer says so
    over = watch_records(run(train, {0: BASE, 4: UP, 8: UP, 12: UP}), looks=2)
    assert any("more than the 2 planned" in n for n in over.notes)
    assert over.steps[-1].look_level == 1.0
    # the power beside the false-alarm rate: the stated drop is the model's 80% drop times the
    # latest look's standard error against step 0
    d = np.array([(after[t] - BASE[t]) / 4 for t in BASE])
    se = d.std(ddof=1) / math.sqrt(30)
    assert w.detectable_drop == pytest.approx(detectable_drop(Plan(A, 6, confirm=2), 6) * se)
    assert w.detectable_by_look == 6 and "is caught by look 6 in 80% of runs" in w.render()
    assert "stopped at most 5% of the time" in w.render()


def test_watch_record_errors():
    with pytest.raises(RowsError, match="`step` is -1"):
        watch_records([{"step": -1}])
    with pytest.raises(RowsError, match='`train_reward` is "x"'):
        watch_records([{"step": 1, "train_reward": "x"}])
    with pytest.raises(RowsError, match="`eval_every` is 2.5"):
        watch_records([{"step": 0, "eval_every": 2.5}])
    with pytest.raises(ArgumentError, match="`confirm` must be an integer"):
        watch_records([{"step": 1}], confirm=0)
    with pytest.raises(ArgumentError, match="`looks` must be an integer"):
        watch_records([{"step": 1}], looks=0)


def test_watch_from_rows_with_steps(tmp_path):
    from whileai_core.hacking import watch_run

    rows = []
    for step in range(0, 13):
        rows += [{"task_id": f"b{step}", "reward": 0.1 + 0.05 * step, "step": step}] if step else []
        if step in (0, 4, 8, 12):
            rows += [dict(r, step=step, split="eval") for r in held(BASE)]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(__import__("json").dumps(r) + "\n" for r in rows))
    w = watch_run(path, looks=3)
    assert w.decision == "stop" and w.n_evals == 4 and w.train_climb == pytest.approx(0.35)


def test_watch_records_is_the_vectorised_rule():
    # what bench/watch_anytime.py measures (the rule on arrays) is what watch_records decides on
    # records: the same first stop on every simulated run, falls from step 0 and from peaks
    rng = np.random.default_rng(7)
    runs, looks = 12, 6
    shift = np.r_[0.0, 0.8, 0.8, 0.1, -0.3, -0.6, -0.9]          # a rise, then a fall
    diff = rng.normal(-0.85, 1.0, (runs, 1, 40))
    values = rng.binomial(4, 1 / (1 + np.exp(-(diff + shift[None, :, None])))) / 4
    train = 0.3 + rng.normal(0, 0.05, (runs, looks * 5))
    plan = Plan(A, looks, confirm=2)
    _, expected = rule(values, np.ones((runs, looks + 1), dtype=bool), train,
                       np.arange(1, looks + 1) * 5, plan, 5)
    for i in range(runs):
        recs = [{"step": s, "train_reward": float(train[i, s - 1])} for s in range(1, 31)]
        recs += [{"step": j * 5, "held_out": [
            {"task_id": f"h{t}", "reward": 1.0 if r < values[i, j, t] * 4 else 0.0}
            for t in range(40) for r in range(4)]} for j in range(looks + 1)]
        w = watch_records(recs, scan=False, looks=looks)
        got = -1 if w.first_stop_step is None else w.first_stop_step // 5 - 1
        assert got == expected[i], i
    assert (expected >= 0).sum() >= 6


def test_a_prime_rl_run_gives_its_schedule(tmp_path):
    # prime-rl 559b447's orchestrator config: eval.interval (default 100) and max_steps; a run
    # folder without them plans an open schedule
    from whileai_core.hacking.watch_files import prime_rl_schedule
    from whileai_core.safepath import user_path

    (tmp_path / "rollouts").mkdir()
    (tmp_path / "configs").mkdir()
    config = tmp_path / "configs" / "orchestrator.json"
    config.write_text('{"max_steps": 200, "eval": {"interval": 25}}')
    assert prime_rl_schedule(user_path(tmp_path)) == {"eval_every": 25, "max_steps": 200}
    config.write_text('{"max_steps": 200, "eval": {}}')
    assert prime_rl_schedule(user_path(tmp_path)) == {"eval_every": 100, "max_steps": 200}
    config.write_text('{"eval": {"interval": 25}}')
    assert prime_rl_schedule(user_path(tmp_path)) == {}
