"""A small run of the coverage and error-rate study (bench/stats_study.py), as a test.

Every bound is a binomial tolerance from the number of replications R: a rate whose true value
is p is observed within 3 sqrt(p (1 - p) / R) of p with probability 0.997. The promise is then
checked at its edge: coverage >= 93% - 3 sd, false "moved" <= 3% + 3 sd per direction. The same
cells under the old rule (the percentile bootstrap) are checked to fail, so the test can tell.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from whileai_core import pass_at

SPEC = importlib.util.spec_from_file_location(
    "stats_study", Path(__file__).resolve().parents[1] / "bench" / "stats_study.py")
study = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(study)

R = 800          # replications per cell
BOOT = 400       # bootstrap resamples per replication (the old rule's interval)


def sd(p: float, reps: int = R) -> float:
    return math.sqrt(p * (1 - p) / reps)


def test_the_study_measures_the_librarys_own_intervals():
    # one replication's intervals from the study's vectorised rule equal pass_at's on those rows
    rng = np.random.default_rng(1)
    for n_tasks, k in ((6, 4), (12, 4), (20, 16), (8, 1)):
        c = rng.binomial(k, rng.beta(0.5, 2, size=(1, n_tasks)))
        values = study.per_task_tables(k)[:, c]
        lo, hi = study.ours(values, n_tasks, [n_tasks * k, None, None], (None, None))
        rows = [{"task_id": f"t{i}", "reward": float(j < ci)}
                for i, ci in enumerate(c[0]) for j in range(k)]
        r = pass_at(rows)
        got = [r.ci] + ([r.pass_at_k_ci, r.pass_pow_k_ci] if k > 1 else [])
        for i, ci in enumerate(got):
            assert ci == pytest.approx((lo[i, 0], hi[i, 0]), abs=1e-9)


@pytest.mark.parametrize("shape, n_tasks, k, old_fails", [
    ("hard", 10, 1, True), ("hard", 10, 16, True), ("uniform", 10, 4, True),
    ("bimodal", 20, 4, False), ("easy", 20, 16, True),
])
def test_coverage_from_ten_tasks(shape, n_tasks, k, old_fails):
    a, b = study.SHAPES[shape]
    res = study.coverage_cell(a, b, n_tasks, k, R, BOOT, np.random.default_rng(7))
    cover, width, zero = res["ours"].T
    assert np.all(zero == 0)                                   # never a zero-width interval
    assert np.all(cover[: 3 if k > 1 else 1] >= 0.93 - 3 * sd(0.93))
    assert cover[0] <= 0.97 + 3 * sd(0.97)                      # pass@1 is not wastefully wide
    if old_fails:                                               # the test can tell: the old
        assert res["percentile"][:, 0].min() < 0.93 - 3 * sd(0.93)   # rule fails this cell


@pytest.mark.parametrize("shape, n_tasks, k", [("uniform", 10, 4), ("uniform", 10, 16),
                                               ("hard", 20, 4), ("bimodal", 10, 16)])
def test_compare_false_moved_at_most_three_percent_per_direction(shape, n_tasks, k):
    a, b = study.SHAPES[shape]
    res = study.compare_cell(a, b, n_tasks, k, R, BOOT, np.random.default_rng(11))
    up, down = res["ours"]
    assert up <= 0.03 + 3 * sd(0.03) and down <= 0.03 + 3 * sd(0.03)


def test_old_compare_said_moved_too_often_at_few_tasks():
    a, b = study.SHAPES["uniform"]
    res = study.compare_cell(a, b, 5, 16, R, BOOT, np.random.default_rng(12))
    assert sum(res["old"]) > 0.06 + 3 * sd(0.06)                # both directions, the old rule
    assert sum(res["ours"]) == 0                                # 5 tasks: never "moved"


def test_teacher_power_matches_the_paired_test_at_its_false_clear_rate():
    a, b = study.SHAPES["uniform"]
    rng = np.random.default_rng(13)
    null = study.teacher_cell(a, b, 100, 4, 0.0, R, BOOT, rng)
    alt = study.teacher_cell(a, b, 100, 4, 0.1, R, BOOT, rng)
    assert null["ours"] <= 0.025 + 3 * sd(0.025)
    # within a few points of the paired t test, far above the old overlap rule
    assert alt["ours"] >= alt["paired t"] - 3 * math.sqrt(2) * sd(0.85)
    assert alt["ours"] > alt["old overlap"] + 0.3


@pytest.mark.parametrize("runs", [2, 3, 10])
def test_noise_band_false_pass_rate(runs):
    reps = 20_000
    res = study.noise_cell(runs, reps, np.random.default_rng(runs))
    assert abs(res["t band"] - 0.05) <= 3 * sd(0.05, reps)
    assert res["2 x run_std"] > 0.15
