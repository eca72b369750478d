"""Every default of the library, once, each with its source.

A default is a module constant in UPPER_CASE followed by ``_source(NAME, text)``: where the value
comes from (a paper, a tool's own default, or "convention, untested"). ``SOURCES`` maps each name
to that text; a test fails when a constant has no source. Sections are appended per concept.
"""

from __future__ import annotations

SOURCES: dict[str, str] = {}


def _source(name: str, text: str) -> None:
    SOURCES[name] = text


# --- graded rows ---------------------------------------------------------------------------

PASS_THRESHOLD = 1.0
_source("PASS_THRESHOLD", "convention: a program grader gives 1.0 for a pass; pass iff reward >= 1.0")

# --- intervals -----------------------------------------------------------------------------

CONFIDENCE_LEVEL = 0.95
_source("CONFIDENCE_LEVEL", "convention: 95% intervals (Miller 2024, arXiv:2411.00640, sec. 1.6)")

BOOTSTRAP_RESAMPLES = 10_000
_source("BOOTSTRAP_RESAMPLES",
        "convention: >= 1,000 for percentile intervals (Efron & Tibshirani 1993, ch. 13); "
        "10,000 keeps the Monte-Carlo error of a 2.5% endpoint's rank near 0.16 points")

BOOTSTRAP_SEED = 0
_source("BOOTSTRAP_SEED", "convention: seeded so the same rows give the same interval")

MIN_TASKS_FOR_INTERVAL = 3
_source("MIN_TASKS_FOR_INTERVAL",
        "convention: a bootstrap over 1-2 tasks has 1-3 distinct resample means; no interval is "
        "given below 3 tasks (Bowyer et al. 2025, arXiv:2503.01747, on small-n intervals)")

# --- comparing runs ------------------------------------------------------------------------

PROVE_EFFECT = 0.05
_source("PROVE_EFFECT",
        "convention (engineering, not a published threshold): 5 points of pass@1 is the smallest "
        "change worth a training run; the effect Miller 2024's planning table is sized for")

NOISE_BAND_RUN_STDS = 2.0
_source("NOISE_BAND_RUN_STDS",
        "convention: a delta must exceed 2 x run_std of the same eval re-run to count as moved "
        "(shared/reference/stats.md sec. 5.2)")

# --- holdout sizing (Miller 2024, arXiv:2411.00640, Eq. 9) ----------------------------------

HOLDOUT_POWER = 0.8
_source("HOLDOUT_POWER", "Miller 2024 Eq. 9 worked example: 80% power")

HOLDOUT_ALPHA = 0.05
_source("HOLDOUT_ALPHA", "Miller 2024 Eq. 9 worked example: two-sided alpha 0.05")

HOLDOUT_K = 4
_source("HOLDOUT_K", "convention: 4 rollouts per task, the smallest k the routing playbook accepts")

PLANNING_VAR_X = 1.0 / 12.0
_source("PLANNING_VAR_X",
        "binomial planning model: true per-task pass rates uniform on [0, 1], Var(x) = 1/12 "
        "(Miller 2024 sec. 1.3 worked example)")

PLANNING_SIGMA2 = 1.0 / 6.0
_source("PLANNING_SIGMA2",
        "binomial planning model: E[x(1-x)] = 1/6 for x uniform on [0, 1] (Miller 2024 sec. 1.3)")

PLANNING_RHO = 0.8
_source("PLANNING_RHO",
        "inferred: correlation of true per-task pass rates before vs after training of one model, "
        "lower end of the 0.8-0.95 range in shared/reference/stats.md sec. 7 (conservative)")

HOLDOUT_TABLE_KS = (1, 2, 4, 8, 16, 32)
_source("HOLDOUT_TABLE_KS", "shared/reference/stats.md sec. 10.5: report n(k) for these k")

# --- routing -------------------------------------------------------------------------------

GROUP_MIN_ROLLOUTS = 4
_source("GROUP_MIN_ROLLOUTS",
        "convention: re-run at k >= 4 so a task at p = 0.5 is split with probability 0.875 "
        "(1 - p^k - (1-p)^k)")

OPSD_MIN_PARAMS_B = 7.0
_source("OPSD_MIN_PARAMS_B",
        "OPSD needs in-context learning strong enough to use the hint: about 7B and up "
        "(Zhao et al. 2026, arXiv:2601.18734; measured -0.554 vs GRPO on Qwen3-0.6B)")
