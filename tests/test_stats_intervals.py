"""The interval rule at every n: each interval against an outside computation (scipy, the formula
by hand, a root-finder on Hall's transformation), exact binomial coverage of the 0/1 rule, no
zero-width interval from a finite sample, no seam at 30 tasks, intervals inside the statistic's
range and rising with the passes, one number per question across tools, and interval keys that
say their level."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from scipy.optimize import brentq

from whileai_core import band, compare, field_share, mean_reward, pass_at, teacher_clears
from whileai_core.cli import main

Z = sps.norm.ppf(0.975)


def rows_from(counts, prefix="t"):
    """counts: list of (n_rollouts, n_passes) per task."""
    return [{"task_id": f"{prefix}{i}", "reward": 1.0 if j < c else 0.0}
            for i, (n, c) in enumerate(counts) for j in range(n)]


def binary_rows(x, n, k=1):
    """n tasks at k rollouts: the first x pass every rollout, the rest fail every one."""
    return rows_from([(k, k)] * x + [(k, 0)] * (n - x))


def agresti_coull(x, n, z=Z):
    nt = n + z * z
    p = (x + z * z / 2) / nt
    h = z * math.sqrt(p * (1 - p) / nt)
    return max(0.0, p - h), min(1.0, p + h)


def mid_p(x, n, tail=0.025):
    lo = 0.0 if x == 0 else brentq(
        lambda p: sps.binom.sf(x, n, p) + sps.binom.pmf(x, n, p) / 2 - tail, 1e-12, 1 - 1e-12)
    hi = 1.0 if x == n else brentq(
        lambda p: sps.binom.cdf(x, n, p) - sps.binom.pmf(x, n, p) / 2 - tail, 1e-12, 1 - 1e-12)
    return lo, hi


# --- each interval against an outside computation ------------------------------------------

@pytest.mark.parametrize("x,n", [(0, 12), (3, 12), (12, 12), (7, 40), (1, 30)])
def test_zero_one_values_from_ten_tasks_get_agresti_coull(x, n):
    r = pass_at(binary_rows(x, n))
    assert r.ci_method == "agresti_coull"
    assert r.ci == pytest.approx(agresti_coull(x, n), abs=1e-12)


@pytest.mark.parametrize("x,n", [(0, 3), (2, 5), (5, 5), (4, 9)])
def test_zero_one_values_under_ten_tasks_get_mid_p(x, n):
    r = pass_at(binary_rows(x, n))
    assert r.ci_method == "mid_p"
    assert r.ci == pytest.approx(mid_p(x, n), abs=1e-9)


def hall_by_hand(values, level=0.95):
    """Hall's (1992) interval found with a root-finder on his transformation itself:
    G(T) = T + aT^2 + a^2 T^3/3 + b, a = g/(3 sqrt C), b = g/(6 sqrt C), g the adjusted sample
    skewness G1 (scipy.stats.skew(bias=False)); mu is in the interval when
    |G(sqrt C (m - mu)/s)| <= t_{C-1, (1 + level)/2}, s with C - 1. Independent of the library's
    closed-form cube root."""
    v = np.asarray(values, dtype=float)
    c = v.size
    m, s = v.mean(), v.std(ddof=1)
    g = sps.skew(v, bias=False)
    a, b = g / (3 * math.sqrt(c)), g / (6 * math.sqrt(c))
    q = sps.t.ppf(0.5 + level / 2, c - 1)

    def big_g(t):
        return t + a * t * t + a * a * t ** 3 / 3 + b

    t_hi = brentq(lambda t: big_g(t) - q, -200, 200)
    t_lo = brentq(lambda t: big_g(t) + q, -200, 200)
    return m - s * t_hi / math.sqrt(c), m - s * t_lo / math.sqrt(c)


def test_effective_n_by_hand():
    # 12 tasks x 4 rollouts, rates 0, .25, .5, .75 three times: m = 0.375
    counts = [(4, c) for c in (0, 1, 2, 3)] * 3
    p = np.array([c / 4 for _, c in counts])
    se = p.std(ddof=1) / math.sqrt(12)
    # the effective n from the spread, at most the 48 rollouts behind the mean, t-scaled
    n_adj = min(48, 0.375 * 0.625 / se ** 2) * (Z / sps.t.ppf(0.975, 11)) ** 2
    r = pass_at(rows_from(counts), k=1)
    assert r.ci_method == "effective_n"
    assert r.ci == pytest.approx(agresti_coull(0.375 * n_adj, n_adj), abs=1e-12)
    # every task at 2 of 4: no spread, so the 48 rollouts cap n_eff (the binomial floor), still
    # t-scaled: 12 tasks with no spread leave the spread between tasks unknown
    flat = pass_at(rows_from([(4, 2)] * 12), k=1)
    cap = 48 * (Z / sps.t.ppf(0.975, 11)) ** 2
    assert flat.ci == pytest.approx(agresti_coull(0.5 * cap, cap), abs=1e-12)


@pytest.mark.parametrize("rewards", [
    [3.0, -1.0, 2.5, 0.5, 4.0, 1.0, -0.5, 2.0],                 # roughly symmetric
    [0.1, 0.2, 0.1, 0.3, 5.0, 0.2, 0.1, 0.4, 0.2, 9.0, 0.3],     # a long right tail
])
def test_rewards_outside_zero_one_get_halls_interval(rewards):
    r = mean_reward([{"task_id": f"t{i}", "reward": v} for i, v in enumerate(rewards)])
    assert r.ci_method == "hall_t" and r.ci == pytest.approx(hall_by_hand(rewards), abs=1e-9)
    # right skew: the interval reaches further above the mean than the t interval does
    t_lo, t_hi = sps.t.interval(0.95, len(rewards) - 1, loc=np.mean(rewards),
                                scale=sps.sem(rewards))
    if sps.skew(rewards) > 1:
        assert r.ci[1] > t_hi and r.ci[0] > t_lo


def test_no_seam_at_thirty_tasks():
    # the same rule at 29, 30 and 31 tasks: the 30th task shrinks the interval by about
    # sqrt(29/30) (0.983), not to 0.07-0.68 of its width as the switch to the bootstrap did
    rng = np.random.default_rng(3)
    counts = [(16, int(c)) for c in rng.binomial(16, rng.random(31))]
    by_n = {n: pass_at(rows_from(counts[:n]), k=8) for n in (29, 30, 31)}
    for field in ("ci", "pass_at_k_ci", "pass_pow_k_ci"):
        methods = {n: getattr(r, field + "_method" if field != "ci" else "ci_method")
                   for n, r in by_n.items()}
        assert len(set(methods.values())) == 1
        w = {n: getattr(r, field)[1] - getattr(r, field)[0] for n, r in by_n.items()}
        assert 0.85 < w[30] / w[29] < 1.1 and 0.85 < w[31] / w[30] < 1.1


# --- coverage of the 0/1 rule, exactly (binomial sums, no simulation) ------------------------

@pytest.mark.parametrize("n", [5, 10, 20, 30, 50])
def test_zero_one_rule_exact_coverage(n):
    # For 0/1 per-task values the count of passing tasks is Binomial(n, q): the coverage at q is
    # the binomial mass of the counts whose interval holds q. The documented floors: mid-p
    # >= 93% under 10 tasks, Agresti-Coull >= 92.5% from 10 (defaults.BINARY_EXACT_BELOW).
    bounds = [pass_at(binary_rows(x, n)).ci for x in range(n + 1)]
    lo = np.array([b[0] for b in bounds])
    hi = np.array([b[1] for b in bounds])
    q = np.linspace(0.01, 0.99, 393)
    mass = sps.binom.pmf(np.arange(n + 1)[None, :], n, q[:, None])
    cover = (mass * ((lo[None, :] <= q[:, None]) & (q[:, None] <= hi[None, :]))).sum(axis=1)
    assert cover.min() >= (0.93 if n < 10 else 0.925)


def test_issue_13_zero_width_examples():
    # 30 tasks at 3 of 16 each: pass@16 = 1.0, once with interval (1.0, 1.0)
    r = pass_at(rows_from([(16, 3)] * 30))
    assert r.pass_at_k == 1.0 and r.pass_at_k_ci[0] < 1.0 == r.pass_at_k_ci[1]
    # 10 tasks, a true per-task rate of 0.97: exact coverage 26% before, now the binomial mass
    # of the counts whose interval holds 0.97
    cover = sum(sps.binom.pmf(x, 10, 0.97) for x in range(11)
                if pass_at(binary_rows(x, 10)).ci[0] <= 0.97 <= pass_at(binary_rows(x, 10)).ci[1])
    assert cover >= 0.95


@settings(max_examples=80, deadline=None)
@given(counts=st.lists(st.integers(0, 6), min_size=3, max_size=45),
       k=st.integers(1, 6))
def test_no_zero_width_interval_from_a_finite_sample(counts, k):
    rows = rows_from([(k, min(c, k)) for c in counts])
    r = pass_at(rows)
    for ci in (r.ci, r.pass_at_k_ci, r.pass_pow_k_ci):
        if ci is not None:
            assert ci[1] > ci[0]
    share = field_share([{**row, "flag": row["reward"] > 0} for row in rows], "flag")
    assert share.ci[1] > share.ci[0]


# --- one number per question ---------------------------------------------------------------

@pytest.mark.parametrize("n_tasks", [12, 40, 400])
def test_one_number_per_question(n_tasks, tmp_path, capsys):
    rng = np.random.default_rng(n_tasks)
    before = rows_from([(4, int(c)) for c in rng.integers(0, 5, n_tasks)])
    after = rows_from([(4, int(c)) for c in rng.integers(0, 5, n_tasks)])
    ci = pass_at(before).ci
    assert compare(before, after).mean_before_ci == ci
    assert band(before).pass_at_1.ci == ci
    assert teacher_clears(after, before).student.ci == ci
    path = tmp_path / "before.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in before))
    assert main(["pass-at", str(path), "--json"]) == 0
    assert tuple(json.loads(capsys.readouterr().out)["rate"]["ci"]) == ci
    # continuous rewards (every task distinct: the index path of the bootstrap) agree as well
    scores = [{"task_id": f"t{i}", "reward": float(v)} for i, v in enumerate(rng.random(n_tasks))]
    other = [{"task_id": f"t{i}", "reward": float(v)} for i, v in enumerate(rng.random(n_tasks))]
    assert compare(scores, other, metric="reward").mean_before_ci == mean_reward(scores).ci


# --- interval keys say what they are ---------------------------------------------------------

def test_interval_keys_carry_their_level(tmp_path, capsys):
    rows = rows_from([(4, c) for c in (0, 1, 2, 3, 4, 2, 1, 3, 2, 1, 0, 4)])
    at95, at90 = pass_at(rows), pass_at(rows, level=0.9)
    assert at95.ci95 == at95.ci and at95.level == 0.95
    assert at90.level == 0.9 and at90.ci95 is None and at90.ci[1] - at90.ci[0] < \
        at95.ci[1] - at95.ci[0]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["pass-at", str(path), "--level", "0.9", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["rate"]
    assert data["level"] == 0.9 and data["ci95"] is None and data["ci"] == list(at90.ci)
    c = compare(rows, rows_from([(4, 4)] * 12), level=0.9).to_dict()
    assert c["level"] == 0.9 and c["ci95"] is None and c["ci"] is not None


def test_zero_one_rewards_get_the_pass_rate_interval():
    # 0/1 rewards: each task's mean reward IS its pass rate, so the two intervals must agree
    # (they differed: mean reward capped the effective n at the 12 tasks, pass@1 at 48 rollouts)
    counts = [(4, c) for c in (0, 1, 2, 3)] * 3
    rows = rows_from(counts)
    by_pass, by_reward = pass_at(rows, k=1), mean_reward(rows)
    p = np.array([c / 4 for _, c in counts])
    se = p.std(ddof=1) / math.sqrt(12)
    n_adj = min(48, 0.375 * 0.625 / se ** 2) * (Z / sps.t.ppf(0.975, 11)) ** 2
    assert by_reward.ci_method == by_pass.ci_method == "effective_n"
    assert by_reward.ci == pytest.approx(agresti_coull(0.375 * n_adj, n_adj), abs=1e-12)
    assert by_reward.ci == pytest.approx(by_pass.ci, abs=1e-12)
    # a graded reward has no rollout floor: Hall's interval on the per-task means (the old rule
    # took the binomial interval over the 12 tasks, about twice the t interval's width)
    soft = [dict(r, reward=0.5 * r["reward"] + 0.25) for r in rows]
    r = mean_reward(soft)
    assert r.ci_method == "hall_t"
    assert r.ci == pytest.approx(hall_by_hand(0.5 * p + 0.25), abs=1e-9)
    t_lo, t_hi = sps.t.interval(0.95, 11, loc=np.mean(0.5 * p + 0.25), scale=sps.sem(0.5 * p + 0.25))
    assert r.ci[1] - r.ci[0] <= 1.25 * (t_hi - t_lo)
