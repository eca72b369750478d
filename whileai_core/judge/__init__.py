"""Audit a judge before trusting a pass rate it produced (the audit-your-judge skill).

Each candidate judge is read against a sample a person labelled blind, on three numbers with
their interval and n:

- agreement with the labels: its Wilson interval's [1] lower bound against ``JUDGE_MIN_AGREEMENT``
  (0.8, after the ~81% human-human agreement in [2]);
- Cohen's kappa [3], agreement beyond chance (an always-pass judge has kappa 0): floor
  ``JUDGE_MIN_KAPPA`` (0.6, "substantial" in [4]), read on the lower bound of its item bootstrap
  [5], widened to agreement's Wilson bounds (:func:`kappa_interval`);
- false-pass rate (label fails the judge passes: the reward a policy farms): the upper end of its
  Wilson interval (n = failures) against ``JUDGE_MAX_FALSE_PASS``.

Kappa is undefined (None) when labels and grades are both constant, and then fails its floor; no
verdict is "clears" without a labelled failure. Also: :func:`failures_needed`, length bias,
:func:`rubric_ablation` and :func:`order_reversal`.

References: [1] Wilson 1927, JASA 22:209; Brown, Cai & DasGupta 2001, Stat. Sci. 16:101.
[2] Zheng et al. 2023, arXiv:2306.05685. [3] Cohen 1960, Educ. Psychol. Meas. 20:37.
[4] Landis & Koch 1977, Biometrics 33:159. [5] Efron & Tibshirani 1993, ch. 13 (percentile
bootstrap; here over items).
"""

from __future__ import annotations

from .ablation import ClauseEffect, RubricAblation, ablation_from_grades, rubric_ablation
from .agreement import (KappaInterval, cohen_kappa, failures_needed, kappa_interval,
                        kappa_with_interval, wilson_interval)
from .audit import JudgeAudit, JudgeReport, Verdict, audit_judge
from .labels import LabelSample, label_sample
from .order import OrderReversal, Pick, order_reversal

__all__ = ["ClauseEffect", "JudgeAudit", "JudgeReport", "KappaInterval", "LabelSample",
           "OrderReversal", "Pick", "RubricAblation", "Verdict", "ablation_from_grades",
           "audit_judge", "cohen_kappa", "failures_needed", "kappa_interval",
           "kappa_with_interval", "label_sample", "order_reversal",
           "rubric_ablation", "wilson_interval"]
