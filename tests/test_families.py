"""Tasks in families (``cluster=``): the interval resamples families, then the tasks within them;
its width against the closed form, its coverage by a small run of bench/family_study.py, and
cluster on pass_at, compare, holdout_size, noise_floor and the route."""

from __future__ import annotations

import importlib.util
import math
import random
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from whileai_core import (ArgumentError, RowsError, compare, holdout_size, noise_floor, pass_at,
                          route)
from whileai_core.defaults import CLUSTER_MIN_FAMILIES
from whileai_core.stats.clustered import Families, cluster_interval

SPEC = importlib.util.spec_from_file_location(
    "family_study", Path(__file__).resolve().parents[1] / "bench" / "family_study.py")
study = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(study)


def family_rows(n_fam=10, per=10, k=4, shift=0, seed=0):
    """Each family's tasks share one pass count: family f passes (f + shift) % 5 of 4 rollouts,
    so the pass rate is set by the family (0, .25, .5, .75, 1 twice over across 10 families)."""
    rows = []
    for f in range(n_fam):
        c = (f + shift) % 5
        for t in range(per):
            rows += [{"task_id": f"f{f}-t{t}", "family": f"fam{f}", "reward": float(j < c),
                      "model": "m"} for j in range(k)]
    return rows


def test_a_family_set_pass_rate_gives_an_interval_at_least_1_5x_wider():
    rows = family_rows()
    by_task = pass_at(rows).ci
    by_family = pass_at(rows, cluster="family")
    assert by_family.cluster == "family" and by_family.n_families == 10
    assert by_family.pass_at_1 == pass_at(rows).pass_at_1 == 0.5   # the same point estimate
    ratio = (by_family.ci[1] - by_family.ci[0]) / (by_task[1] - by_task[0])
    assert ratio >= 1.5, ratio
    assert by_family.ci_method == "family_effective_n"


def test_the_interval_is_mean_plus_minus_t_times_the_cr1_standard_error():
    # equal family sizes: resampling whole families has variance var0(family means)/C; times
    # C/(C-1) it is var1(family means)/C, the CR1 (inspect) clustered variance
    rng = np.random.default_rng(3)
    values = rng.uniform(0, 1, 60)
    codes = np.repeat(np.arange(12), 5)
    fam = Families("family", codes, [str(i) for i in range(12)])
    means = values.reshape(12, 5).mean(axis=1)
    se = means.std(ddof=1) / math.sqrt(12)
    got = cluster_interval(values, fam, level=0.95, seed=0, n_resamples=20_000)
    assert got.se == pytest.approx(se, rel=0.03)          # MC error of an sd from 20,000 draws
    q = sps.t.ppf(0.975, 11)
    assert got.ci == pytest.approx((values.mean() - q * got.se, values.mean() + q * got.se))
    assert got.p_value == pytest.approx(2 * sps.t.sf(values.mean() / got.se, 11))
    assert got.note is None


def test_few_families_say_the_interval_is_unreliable():
    rows = family_rows(n_fam=4)
    got = pass_at(rows, cluster="family")
    assert got.n_families == 4 and f"fewer than {CLUSTER_MIN_FAMILIES} families" in got.note
    one = pass_at(family_rows(n_fam=1), cluster="family")
    assert one.ci is None and "needs at least 2 families" in one.note


def test_the_family_field_must_be_on_every_row_and_constant_within_a_task():
    rows = family_rows()
    rows[5] = {k: v for k, v in rows[5].items() if k != "family"}
    with pytest.raises(RowsError, match="1 of 400 rows carry no `family`.*task_id, family"):
        pass_at(rows, cluster="family")
    rows = family_rows()
    rows[1]["family"] = "elsewhere"
    with pytest.raises(RowsError, match="`family` changes within task 'f0-t0'"):
        pass_at(rows, cluster="family")
    with pytest.raises(ArgumentError, match="already resamples tasks"):
        pass_at(family_rows(), cluster="task_id")


def test_compare_with_families_resamples_them_for_the_difference():
    before = family_rows()
    after = family_rows(shift=1)           # every family moves by one pass (4 -> 0 wraps round)
    plain = compare(before, after)
    clustered = compare(before, after, cluster="family")
    assert clustered.delta == plain.delta and clustered.n_families == 10
    assert clustered.ci_method == "family_bootstrap_t"
    # per family the change is +0.25 (8 families) or -1.0 (2): by hand, its mean and CR1 se
    d = np.array([0.25 if (f % 5) != 4 else -1.0 for f in range(10)])
    assert clustered.delta == pytest.approx(d.mean())
    assert clustered.p_value == pytest.approx(
        2 * sps.t.sf(abs(d.mean()) / (d.std(ddof=1) / math.sqrt(10)), 9), rel=0.1)


def test_holdout_size_multiplies_by_the_pilots_design_effect():
    before, after = family_rows(), family_rows(shift=1)
    plain = holdout_size(0.05, before=before, after=after)
    sized = holdout_size(0.05, before=before, after=after, cluster="family")
    # Miller's clustered variance over the independent one, on the per-task differences: every
    # task in a family has the same difference, so the sum of deviations per family is 10x one
    d = np.repeat([0.25 if (f % 5) != 4 else -1.0 for f in range(10)], 10)
    dev = d - d.mean()
    deff = sum(dev[i * 10:(i + 1) * 10].sum() ** 2 for i in range(10)) / (dev ** 2).sum()
    assert deff == pytest.approx(10.0)
    assert sized.design_effect == pytest.approx(deff)
    assert sized.n_tasks >= plain.n_tasks * 9.9 and sized.family_size == 10.0
    assert sized.n_families == math.ceil(sized.n_tasks / 10)
    with pytest.raises(ArgumentError, match="needs pilot rows"):
        holdout_size(0.05, cluster="family")


def test_noise_floor_rebuilds_the_run_to_run_spread_per_family():
    rng = random.Random(1)
    runs = []
    for _ in range(3):   # one shared shock per family and run: noise moves whole families
        shock = [rng.choice([0, 1]) for _ in range(6)]
        runs.append([{"task_id": f"t{t}", "family": f"f{t // 5}", "reward": float(shock[t // 5])}
                     for t in range(30)])
    nf = noise_floor(*runs, cluster="family")
    v = np.array([[float(r["reward"]) for r in run] for run in runs])      # runs x tasks
    by_task = math.sqrt(v.var(axis=0, ddof=1).sum()) / 30
    fam = v.reshape(3, 6, 5).sum(axis=2)
    by_family = math.sqrt(fam.var(axis=0, ddof=1).sum()) / 30
    assert nf.run_std_by_task == pytest.approx(by_task)
    assert nf.run_std_by_family == pytest.approx(by_family)
    assert by_family > 1.5 * by_task and "moves whole families" in nf.note


def test_the_route_reads_its_intervals_over_families():
    rows = family_rows()
    result = route(rows, model="m", cluster="family")
    assert result.cluster == "family"
    assert result.answers[2].evidence["pass_at_1"]["ci_method"] == "family_effective_n"


def test_coverage_from_ten_families():
    """A small run of the study: the pass rate set by the family, 10 families of 10 tasks.
    Tolerance: 3 sd of a coverage near 95% over R replications."""
    reps = 300
    sd = math.sqrt(0.95 * 0.05 / reps)
    sd_f, sd_t = study.SHAPES["family sets p"]
    rng = np.random.default_rng(11)
    target = study.truth(sd_f, sd_t, rng)
    res = study.cell("family sets p", 10, 10, 4, sd_f, sd_t, reps, 400, rng, target)
    assert 0.93 - 3 * sd <= res["ours"][0] <= 0.97 + 3 * sd
    assert res["tasks only"][0] < 0.80          # the test can tell: ignoring families fails


# --- the clustered interval on the rule's pieces (effective n, Hall, pass@k bounds) ----------

def _by_hand_se(values, codes, n_fam):
    """CR1 standard error of the mean for equal family sizes: sd(family means) / sqrt(C)."""
    means = values.reshape(n_fam, -1).mean(axis=1)
    return means, means.std(ddof=1) / math.sqrt(n_fam)


def test_a_share_over_families_is_agresti_coull_on_the_effective_n_by_hand():
    rng = np.random.default_rng(5)
    n_fam, per, k = 12, 5, 8
    passes = rng.binomial(k, np.repeat(rng.uniform(0.05, 0.6, n_fam), per))
    values = passes / k
    fam = Families("family", np.repeat(np.arange(n_fam), per), [str(i) for i in range(n_fam)])
    got = cluster_interval(values, fam, level=0.95, seed=0, n_resamples=4000,
                           cap=float(k * values.shape[0]))
    assert got.method == "family_effective_n"
    # Korn & Graubard by hand on the interval's own SE: n_eff = m(1-m)/SE^2, times (z/t_{C-1})^2,
    # then Agresti-Coull (add z^2/2 passes and fails, Wald)
    m, z, t = values.mean(), sps.norm.ppf(0.975), sps.t.ppf(0.975, n_fam - 1)
    n_adj = min(m * (1 - m) / got.se ** 2, k * values.shape[0]) * (z / t) ** 2
    p_t = (m * n_adj + z * z / 2) / (n_adj + z * z)
    half = z * math.sqrt(p_t * (1 - p_t) / (n_adj + z * z))
    assert got.ci == pytest.approx((p_t - half, p_t + half), abs=1e-9)
    assert got.p_value is None                  # only the t of a difference gives a p-value


def test_graded_values_over_families_take_halls_interval_solved_by_root_finding():
    from scipy.optimize import brentq

    rng = np.random.default_rng(8)
    n_fam, per = 15, 4
    values = np.clip(rng.exponential(0.05, n_fam * per)
                     + np.repeat(rng.exponential(0.2, n_fam), per), 0, 1)
    fam = Families("family", np.repeat(np.arange(n_fam), per), [str(i) for i in range(n_fam)])
    got = cluster_interval(values, fam, level=0.95, seed=0, n_resamples=4000, skew=True)
    assert got.method == "family_hall_t"
    means, _ = _by_hand_se(values, None, n_fam)
    gamma = sps.skew(means, bias=False)           # G1 of the family means
    assert gamma > 0.5                            # right-skewed: the case Hall's correction is for
    a, b, q = gamma / (3 * math.sqrt(n_fam)), gamma / (6 * math.sqrt(n_fam)), sps.t.ppf(0.975,
                                                                                         n_fam - 1)

    def g(t_stat):
        return t_stat + a * t_stat ** 2 + a * a * t_stat ** 3 / 3 + b

    # {mu : -q <= g(T(mu)) <= q}, T(mu) = (m - mu)/SE; g increases, so solve g(T) = +-q for T
    t_hi, t_lo = brentq(lambda x: g(x) - q, -50, 50), brentq(lambda x: g(x) + q, -50, 50)
    m = values.mean()
    assert got.ci == pytest.approx((m - got.se * t_hi, m - got.se * t_lo), abs=1e-9)
    assert got.ci[1] - m > m - got.ci[0]          # reaches further above the mean than below


def test_pass_k_over_families_stays_within_what_pass_1s_clustered_interval_implies():
    rng = np.random.default_rng(2)
    rows = []
    for f in range(12):
        base = rng.uniform(-3.0, 1.0)
        for t in range(6):
            p = 1 / (1 + math.exp(-(base + rng.normal(0, 0.5))))
            rows += [{"task_id": f"f{f}t{t}", "family": f"F{f}", "reward": float(rng.random() < p),
                      "model": "m"} for _ in range(16)]
    got = pass_at(rows, k=8, cluster="family")
    lo, hi = got.ci
    assert got.pass_at_k_ci_method == got.pass_pow_k_ci_method == "family_hall_t"
    # Jensen, for any mix of tasks: L^k <= pass^k <= U and L <= pass@k <= 1 - (1 - U)^k
    assert got.pass_pow_k_ci[0] >= lo ** 8 - 1e-12 and got.pass_pow_k_ci[1] <= hi + 1e-12
    assert got.pass_at_k_ci[0] >= lo - 1e-12 and got.pass_at_k_ci[1] <= 1 - (1 - hi) ** 8 + 1e-12
    assert got.pass_pow_k_ci[1] > got.pass_pow_k_ci[0]


def test_no_spread_between_families_keeps_a_width_from_the_families_means():
    rows = [{"task_id": f"f{f}t{t}", "family": f"F{f}", "reward": 0.0, "model": "m"}
            for f in range(12) for t in range(5) for _ in range(4)]
    got = pass_at(rows, cluster="family")
    # no pass anywhere: nothing says how alike a family's rollouts are, so the effective n is
    # the 12 families, scaled by (z/t_11)^2, Agresti-Coull at 0 passes (by hand)
    z, t = sps.norm.ppf(0.975), sps.t.ppf(0.975, 11)
    n_adj = 12 * (z / t) ** 2
    p_t = (z * z / 2) / (n_adj + z * z)
    upper = p_t + z * math.sqrt(p_t * (1 - p_t) / (n_adj + z * z))
    assert got.ci == pytest.approx((0.0, upper), abs=1e-9) and upper > 0
    assert "the rule over the 12 families' means" in got.note


def test_rewards_near_the_float_limit_give_a_finite_clustered_interval():
    rows = [{"task_id": f"f{f}t{t}", "family": f"F{f}", "model": "m",
             "reward": 1e308 * (((f * 7 + t * 3 + j) % 10) / 10)}
            for f in range(12) for t in range(5) for j in range(4)]
    from whileai_core import mean_reward

    got = mean_reward(rows, cluster="family")
    assert math.isfinite(got.value) and all(map(math.isfinite, got.ci))
    assert got.ci[0] <= got.value <= got.ci[1]


def test_a_change_every_task_shares_reads_the_clustered_arms_mover_interval():
    before = family_rows()
    after = [dict(r, reward=r["reward"] * 0.5 + 0.25) for r in before]
    before = [dict(r, reward=r["reward"] * 0.5) for r in before]
    got = compare(before, after, cluster="family")
    assert got.ci_method == "mover_unpaired" and "paired spread is 0" in got.note
    assert got.ci[0] > 0 and 0 < got.p_value <= 0.05


def test_holdout_alternatives_for_rho_carry_the_design_effect():
    one = family_rows()
    plain = holdout_size(0.05, before=one)
    sized = holdout_size(0.05, before=one, cluster="family")
    assert sized.rho_from == "assumed" and sized.design_effect > 1
    deff = sized.design_effect
    for r, n in plain.n_tasks_if_rho.items():   # n = ceil(x), so deff x lies in (deff (n-1), deff n]
        assert deff * (n - 1) < sized.n_tasks_if_rho[r] <= math.ceil(deff * n)
