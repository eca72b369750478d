"""Audit a judge before trusting a pass rate it produced (the audit-your-judge skill).

A judge is audited against a sample a person labelled blind with a codebook. For each candidate
judge this module reads three numbers against floors, each with its interval and n:

- agreement: share of items where the judge's pass/fail equals the label; its Wilson interval [1]
  and the floor ``JUDGE_MIN_AGREEMENT`` (0.8, after the ~81% human-human agreement in [2]) read
  on the interval's lower bound;
- Cohen's kappa [3]: agreement corrected for what two raters with the same pass shares would
  reach by chance; floor ``JUDGE_MIN_KAPPA`` (0.6, "substantial" in [4]). An always-pass judge
  has kappa 0 whatever its raw agreement;
- false-pass rate: among items the labels fail, the share the judge passes (the reward a policy
  learns to farm); ceiling ``JUDGE_MAX_FALSE_PASS`` read on the *upper end* of its Wilson
  interval (n = failures): a judge clears only when the sample shows its false-pass rate is under
  the ceiling.

Kappa carries a bootstrap interval over items, widened to agreement's Wilson bounds carried through
kappa so it keeps a width when the judge disagrees on few items (:func:`kappa_interval`), and its floor, like
agreement's, is read on the lower bound for ``clears`` (the point estimate for ``fails``).

Also: how many labelled failures the sample needs (:func:`failures_needed`), length bias (the
judge's grade correlated with reply length, beyond what the labels show), a rubric ablation one
clause at a time (:func:`rubric_ablation`) and order reversal on pairs (:func:`order_reversal`).

References: [1] Wilson 1927, JASA 22:209; Brown, Cai & DasGupta 2001, Stat. Sci. 16:101.
[2] Zheng et al. 2023, arXiv:2306.05685. [3] Cohen 1960, Educ. Psychol. Meas. 20:37.
[4] Landis & Koch 1977, Biometrics 33:159. [5] Efron & Tibshirani 1993, ch. 13 (percentile
bootstrap; here over items).

Small samples: kappa is undefined (None) when labels and grades are both constant; it then fails
its floor with a reason that says to label failures too. No verdict is "clears" without at least
one labelled failure.

Modules, by concept: :mod:`.agreement` (Wilson, kappa and its interval, failures needed),
:mod:`.labels` (the label-sample plan: the ``failures_needed`` operation, declared there; this
package's ``failures_needed`` stays the count alone), :mod:`.audit` (the audit and its
verdicts), :mod:`.ablation` (rubric ablation, paired by item), :mod:`.order` (order reversal).
Every name imports from ``whileai_core.judge`` as before.
"""

from __future__ import annotations

from .ablation import ClauseEffect, RubricAblation, ablation_from_grades, rubric_ablation
from .agreement import (KappaInterval, _check_level, _pearson, cohen_kappa, failures_needed,
                        kappa_interval, kappa_with_interval, wilson_interval)
from .audit import JudgeAudit, JudgeReport, Verdict, _as_pass, _read_items, audit_judge
from .labels import LabelSample, label_sample
from .order import OrderReversal, Pick, order_reversal

__all__ = ["ClauseEffect", "JudgeAudit", "JudgeReport", "KappaInterval", "LabelSample",
           "OrderReversal", "Pick", "RubricAblation", "Verdict", "ablation_from_grades",
           "audit_judge", "cohen_kappa", "failures_needed", "kappa_interval",
           "kappa_with_interval", "label_sample", "order_reversal",
           "rubric_ablation", "wilson_interval"]
_INTERNAL = (_as_pass, _read_items, _check_level, _pearson)  # used across the package's modules
