"""Small runs of the coverage and error-rate study (bench/stats_study.py), as tests.

Every bound is a binomial tolerance from the number of replications R: a rate whose true value
is p is observed within 3 sqrt(p (1 - p) / R) of p with probability 0.997. The promise is then
checked at its edges: coverage in [93%, 97.5%] widened by 3 sd, false "moved" <= 2.5% + 3 sd
per direction. The same cells under the rule of 0.2 are checked to fail, so the tests can tell.
The coverage numbers themselves live in docs/statistics-study.md.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from whileai_core import mean_reward, pass_at

SPEC = importlib.util.spec_from_file_location(
    "stats_study", Path(__file__).resolve().parents[1] / "bench" / "stats_study.py")
study = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(study)

R = 800          # replications per cell
BOOT = 300       # bootstrap resamples per replication (the 0.2 rule's interval)


def sd(p: float, reps: int = R) -> float:
    return math.sqrt(p * (1 - p) / reps)


def rows_of(c_row, k):
    return [{"task_id": f"t{i}", "reward": float(j < ci)} for i, ci in enumerate(c_row)
            for j in range(k)]


def test_the_study_measures_the_librarys_own_intervals():
    # one replication's intervals from the study's vectorised rule equal pass_at's on those rows
    rng = np.random.default_rng(1)
    for n_tasks, k in ((6, 4), (12, 4), (31, 16), (8, 1), (40, 8)):
        c = rng.binomial(k, rng.beta(0.5, 2, size=(2, n_tasks)))
        pass1 = study.ours_share(c / k, k)
        for r in range(2):
            res = pass_at(rows_of(c[r], k))
            assert res.ci == pytest.approx((pass1[0][r], pass1[1][r]), abs=1e-12)
            if k > 1:
                for power, got in ((False, res.pass_at_k_ci), (True, res.pass_pow_k_ci)):
                    values = study.table(f"pass{'^' if power else '@'}{k}", k)[c]
                    lo, hi = study.ours_pass_k(values, k, power, pass1)
                    assert got == pytest.approx((lo[r], hi[r]), abs=1e-12)
    values = rng.exponential(1.0, size=(3, 15)) - 0.5
    lo, hi = study.ours_reward(values)
    for r in range(3):
        got = mean_reward([{"task_id": f"t{i}", "reward": float(v)}
                           for i, v in enumerate(values[r])]).ci
        assert got == pytest.approx((lo[r], hi[r]), abs=1e-12)


def _cell(shape, n, stat, rng):
    sample = study._sampler(lambda r, size: study.PASS_SHAPES[shape](r, size),
                            {s: study.truth(shape, s) for s in study.STATS})
    return study.pass_cell(sample, (n,), R, BOOT, rng)[n][stat]


@pytest.mark.parametrize("shape, n, stat", [
    ("p=0.3", 30, "pass^8"),     # 0.2: 65%, the mean rests on tasks a sample rarely holds
    ("p=0.3", 31, "pass^4"),     # 0.2: 86%
    ("p=0.3", 30, "pass@8"),     # 0.2: 87%
    ("uniform", 30, "pass@8"),   # 0.2: 88.5%, the seam's low side
])
def test_coverage_where_the_old_rule_failed(shape, n, stat):
    res = _cell(shape, n, stat, np.random.default_rng(7))
    ours = 1 - res["ours"][0] - res["ours"][1]
    old = 1 - res["old"][0] - res["old"][1]
    assert res["ours"][3] == 0                                   # never a zero-width interval
    assert 0.93 - 3 * sd(0.93) <= ours <= 0.975 + 3 * sd(0.975)
    assert old < 0.93 - 3 * sd(0.93)                             # the test can tell


def test_the_seam_is_gone():
    # the same draws at 29 and 30 tasks: the width shrinks by about sqrt(29/30), and coverage
    # does not jump (the 0.2 rule: 0.07-0.68 of the width, 98-100% then 65-93%)
    sample = study._sampler(lambda r, size: study.PASS_SHAPES["uniform"](r, size),
                            {s: study.truth("uniform", s) for s in study.STATS})
    res = study.pass_cell(sample, (29, 30), 400, BOOT, np.random.default_rng(8))
    for stat in study.STATS:
        ratio = res[30][stat]["ours"][2] / res[29][stat]["ours"][2]
        old = res[30][stat]["old"][2] / res[29][stat]["old"][2]
        assert 0.9 <= ratio <= 1.0
        if stat != "pass@1":
            assert old < 0.8


@pytest.mark.parametrize("n", [30, 40])
def test_compare_on_graded_rewards_holds_its_level_per_direction(n):
    reps = 3000
    res = study.compare_reward_cell(n, reps, BOOT, np.random.default_rng(n), flips=1000)
    up, down = res["ours"]
    assert up <= 0.025 + 3 * sd(0.025, reps) and down <= 0.025 + 3 * sd(0.025, reps)


def test_compare_power_is_the_paired_t_tests():
    reps = 1500
    res = study.compare_reward_cell(20, reps, BOOT, np.random.default_rng(3), flips=1000,
                                    shift=0.1)
    assert res["ours"][0] >= res["t"][0] - 0.03 - 3 * sd(0.5, reps)


@pytest.mark.parametrize("shape, n_tasks, k", [("uniform", 10, 4), ("hard", 20, 4),
                                               ("bimodal", 10, 16)])
def test_compare_on_pass_rates_holds_its_level_per_direction(shape, n_tasks, k):
    a, b = {"uniform": (1.0, 1.0), "hard": (0.5, 2.0), "bimodal": (0.3, 0.3)}[shape]
    res = study.compare_pass_cell(a, b, n_tasks, k, R, BOOT, np.random.default_rng(11), 1000)
    up, down = res["ours"]
    assert up <= 0.025 + 3 * sd(0.025) and down <= 0.025 + 3 * sd(0.025)


def test_teacher_power_matches_the_paired_test_at_its_false_clear_rate():
    a, b = 1.0, 1.0
    rng = np.random.default_rng(13)
    null = study.teacher_cell(a, b, 100, 4, 0.0, R, rng, 1000)
    alt = study.teacher_cell(a, b, 100, 4, 0.1, R, rng, 1000)
    assert null["ours"] <= 0.025 + 3 * sd(0.025)
    assert alt["ours"] >= alt["paired t"] - 3 * math.sqrt(2) * sd(0.85)


@pytest.mark.parametrize("runs", [2, 3, 10])
def test_noise_band_false_pass_rate(runs):
    reps = 20_000
    res = study.noise_cell(runs, reps, np.random.default_rng(runs))
    assert abs(res["t band"] - 0.05) <= 3 * sd(0.05, reps)
    assert res["2 x run_std"] > 0.15
