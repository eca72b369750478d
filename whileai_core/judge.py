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

Kappa carries a bootstrap interval over items (:func:`kappa_interval`) and its floor, like
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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from . import defaults as D
from .bootstrap import z_value
from .errors import ArgumentError, RowsError
from .result import Result, fmt_rate, fmt_value

Verdict = Literal["clears", "fails", "label_more"]


# --- the statistics ------------------------------------------------------------------------

def _check_level(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < level < 1.0:
        raise ArgumentError(f"level must be a number strictly between 0 and 1, got {level!r}. "
                            f"Fix: use the default {D.CONFIDENCE_LEVEL}")
    return float(level)


def wilson_interval(successes: int, n: int, *, level: float = D.CONFIDENCE_LEVEL
                    ) -> tuple[float, float] | None:
    """Wilson score interval for ``successes`` out of ``n`` independent trials [1]; None at n=0.

    Checks its arguments, then calls the library's one Wilson formula
    (:func:`whileai_core.bootstrap.wilson_interval`). Unlike the Wald interval it stays inside
    [0, 1] and keeps a width at 0/n and n/n.
    """
    from .bootstrap import wilson_interval as _wilson

    level = _check_level(level)
    if n < 0 or successes < 0 or successes > n:
        raise ArgumentError(f"successes must be in [0, n], got successes={successes}, n={n}")
    if n == 0:
        return None
    return _wilson(int(successes), int(n), level)


def cohen_kappa(labels: Sequence[bool], grades: Sequence[bool]) -> float | None:
    """Cohen's kappa for two binary raters [3]: (p_o - p_e) / (1 - p_e); None when p_e = 1."""
    a = np.asarray(labels, dtype=bool)
    b = np.asarray(grades, dtype=bool)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ArgumentError(f"labels and grades must be two non-empty lists of equal length, "
                            f"got {a.size} and {b.size}")
    p_o = float(np.mean(a == b))
    pa, pb = float(a.mean()), float(b.mean())
    p_e = pa * pb + (1 - pa) * (1 - pb)
    if p_e >= 1.0:  # both raters constant and equal: chance explains everything
        return None
    return (p_o - p_e) / (1 - p_e)


def kappa_interval(labels: Sequence[bool], grades: Sequence[bool], *,
                   level: float = D.CONFIDENCE_LEVEL, seed: int | None = D.BOOTSTRAP_SEED,
                   n_resamples: int = D.BOOTSTRAP_RESAMPLES) -> tuple[float, float] | None:
    """Percentile interval of Cohen's kappa from a bootstrap over items [5].

    Kappa depends on the items only through the 2x2 table of (label, grade), so a resample of
    items is a Multinomial(n, table / n) draw of that table: exact and vectorised. Resamples whose
    kappa is undefined (both raters constant) are left out; None when kappa itself is undefined.
    """
    level = _check_level(level)
    a = np.asarray(labels, dtype=bool)
    b = np.asarray(grades, dtype=bool)
    if cohen_kappa(a, b) is None:
        return None
    n = a.size
    cells = np.array([np.sum(a & b), np.sum(a & ~b), np.sum(~a & b), np.sum(~a & ~b)], float)
    draws = np.random.default_rng(seed).multinomial(n, cells / n, size=n_resamples) / n
    p_o = draws[:, 0] + draws[:, 3]
    pa, pb = draws[:, 0] + draws[:, 1], draws[:, 0] + draws[:, 2]
    p_e = pa * pb + (1 - pa) * (1 - pb)
    ok = p_e < 1.0 - 1e-12
    kappas = (p_o[ok] - p_e[ok]) / (1 - p_e[ok])
    from .bootstrap import percentile_interval

    return percentile_interval(kappas, level)


def failures_needed(half_width: float = D.JUDGE_FALSE_PASS_HALF_WIDTH, *,
                    level: float = D.CONFIDENCE_LEVEL) -> int:
    """Labelled failures needed so the false-pass rate is known to +-``half_width`` at worst.

    Worst case p = 0.5: z sqrt(0.25 / n_fail) <= half_width, so n_fail = ceil(z^2 0.25 / hw^2)
    (97 at the default 0.1). The sample must hold this many items the labels *fail*; at a 30%
    failure rate that is about 324 items in all.
    """
    level = _check_level(level)
    if isinstance(half_width, bool) or not isinstance(half_width, (int, float)) \
            or not 0.0 < half_width < 0.5:
        raise ArgumentError(f"half_width must be in (0, 0.5), got {half_width!r}. "
                            f"Fix: use the default {D.JUDGE_FALSE_PASS_HALF_WIDTH}")
    return math.ceil(z_value(0.5 + level / 2.0) ** 2 * 0.25 / half_width ** 2 - 1e-9)


class LabelSample(Result):
    """How many labelled failures the audit needs, and what that means in labelled replies."""

    failures: int = Field(description="label-fail items needed for +-half_width on the "
                                      "false-pass rate, at worst (p = 0.5)")
    half_width: float
    level: float
    items_by_failure_share: dict[str, int] = Field(
        description="replies to label in all when this share of them fail")

    def render(self) -> str:
        shares = ", ".join(f"{k} fail: {v}" for k, v in self.items_by_failure_share.items())
        return (f"label at least {self.failures} failures (false pass known to "
                f"+-{self.half_width:g} at {self.level:.0%}); replies to label: {shares}")


def label_sample(half_width: float = D.JUDGE_FALSE_PASS_HALF_WIDTH, *,
                 level: float = D.CONFIDENCE_LEVEL) -> LabelSample:
    """:func:`failures_needed`, with the replies to label at a 10%, 30% and 50% failure share."""
    need = failures_needed(half_width, level=level)
    return LabelSample(failures=need, half_width=float(half_width), level=float(level),
                       items_by_failure_share={f"{share:.0%}": math.ceil(need / share - 1e-9)
                                               for share in (0.1, 0.3, 0.5)})


def _pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


# --- the audit -----------------------------------------------------------------------------

class JudgeReport(Result):
    """One candidate judge against the labels."""

    name: str
    n: int = Field(description="labelled items this judge graded")
    agreement: float
    agreement_ci: tuple[float, float] | None
    kappa: float | None = Field(description="Cohen's kappa; None when both raters are constant")
    kappa_ci: tuple[float, float] | None = Field(
        None, description="bootstrap interval of kappa over items, at the audit's level")
    n_label_fail: int = Field(description="items the labels fail: the n of the false-pass rate")
    false_pass: float | None = Field(description="share of label-fail items the judge passes")
    false_pass_ci: tuple[float, float] | None
    false_fail: float | None = Field(description="share of label-pass items the judge fails")
    length_r: float | None = Field(None, description="Pearson r of reply length with the grade")
    length_bias: float | None = Field(
        None, description="length_r minus the labels' own length correlation")
    verdict: Verdict
    reasons: list[str]

    def render(self) -> str:
        kappa = "undefined" if self.kappa is None else f"{self.kappa:.3f}"
        if self.kappa_ci is not None:
            kappa += f" [{self.kappa_ci[0]:.3f}, {self.kappa_ci[1]:.3f}]"
        lines = [f"{self.name}: {self.verdict}",
                 f"  agreement  {fmt_rate(self.agreement, self.agreement_ci, self.n, 'items')}",
                 f"  kappa      {kappa}",
                 f"  false pass {fmt_rate(self.false_pass, self.false_pass_ci, self.n_label_fail, 'label-fail items')}"]
        if self.length_bias is not None:
            lines.append(f"  length bias {self.length_bias:+.3f} (r with length {self.length_r:+.3f})")
        lines += [f"  - {r}" for r in self.reasons]
        return "\n".join(lines)


class JudgeAudit(Result):
    """Every candidate judge read against the floors; ``best`` is the one to use, if any."""

    n_items: int
    n_label_fail: int
    failures_needed: int = Field(description="label-fail items needed for +-half-width false pass")
    floors: dict[str, float]
    judges: list[JudgeReport]
    best: str | None = Field(description="the clearing judge with the highest kappa, else None")
    next_step: str

    def render(self) -> str:
        head = (f"judge audit: {self.n_items} labelled items, {self.n_label_fail} labelled "
                f"failures (want >= {self.failures_needed})")
        floors = ", ".join(f"{k} {v}" for k, v in self.floors.items())
        body = "\n".join(j.render() for j in self.judges)
        return f"{head}\nfloors: {floors}\n{body}\nbest: {fmt_value(self.best)}\nnext: {self.next_step}"


def _as_pass(value: Any, *, where: dict, field: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in ("pass", "fail"):
        return value.lower() == "pass"
    raise RowsError(f"`{field}` is {value!r}; expected pass/fail", **where, field=field,
                    fix='write true/false, 1/0 or "pass"/"fail" (threshold a score first)')


def _read_items(items: Any, noun: str = "item"):
    from .rows import read_records  # one reader for every JSONL input, with line-numbered errors

    return read_records(items, noun=noun)


def audit_judge(items: Any, *, judges: Sequence[str] | None = None,
                min_agreement: float = D.JUDGE_MIN_AGREEMENT,
                min_kappa: float = D.JUDGE_MIN_KAPPA,
                max_false_pass: float = D.JUDGE_MAX_FALSE_PASS,
                half_width: float = D.JUDGE_FALSE_PASS_HALF_WIDTH,
                level: float = D.CONFIDENCE_LEVEL) -> JudgeAudit:
    """Read every candidate judge against blind human labels.

    Arguments (JSON-friendly):
      items: a JSONL path or a list of dicts, one per labelled reply:
        ``{"id": "t1", "label": true, "grades": {"judge-a": true, "judge-b": 0}, "reply": "..."}``.
        ``label`` is the person's pass/fail (true/false, 1/0, "pass"/"fail"); ``grades`` maps each
        judge's name to its pass/fail on the same reply. ``reply`` (text) or ``length`` (a number)
        is optional and turns on the length-bias check.
      judges: names to audit (default: every name found in ``grades``, in first-seen order).
        A judge must have graded every item.
      min_agreement: floor on the Wilson lower bound of agreement (default 0.8).
      min_kappa: floor on Cohen's kappa (default 0.6).
      max_false_pass: ceiling on the false-pass rate, read on its interval's upper end (0.1).
      half_width: the false-pass precision the sample is sized for (default 0.1: 97 failures).
      level: interval level (default 0.95).

    Verdict per judge: ``fails`` when a point estimate misses its floor (kappa, agreement, false
    pass) or kappa is undefined; ``label_more`` when the point estimates clear but an interval
    does not (agreement's or kappa's lower bound under its floor, the false-pass upper bound over
    its ceiling), or the labels hold fewer failures than ``failures_needed(half_width)``;
    ``clears`` otherwise.
    """
    level = _check_level(level)
    for name, value in (("min_agreement", min_agreement), ("min_kappa", min_kappa),
                        ("max_false_pass", max_false_pass)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise ArgumentError(f"{name} must be a number in [0, 1], got {value!r}. Fix: use "
                                f"the default {getattr(D, 'JUDGE_' + name.upper())}")
    need = failures_needed(half_width, level=level)
    recs = _read_items(items)
    records, source = recs.items, recs.name
    if not records:
        raise RowsError("no labelled items", source=source,
                        fix="label a sample blind with your codebook first")
    labels, grades, lengths = [], {}, []
    names: list[str] = list(judges) if judges is not None else list(dict.fromkeys(
        k for rec in records if isinstance(rec.get("grades"), Mapping) for k in rec["grades"]))
    for i, rec in enumerate(records):
        where = recs.where(i)
        if "label" not in rec:
            raise RowsError("item has no `label`", **where, field="label",
                            fix='add the blind human label, e.g. "label": true')
        labels.append(_as_pass(rec["label"], where=where, field="label"))
        g = rec.get("grades")
        if not isinstance(g, Mapping) or not g:
            raise RowsError(f"`grades` is {g!r}", **where, field="grades",
                            fix='map each judge to its pass/fail: "grades": {"judge-a": true}')
        if "length" in rec or "reply" in rec:
            length = rec.get("length", None)
            if length is None:
                reply = rec["reply"]
                length = len(reply) if isinstance(reply, str) else None
            if isinstance(length, bool) or not isinstance(length, (int, float)):
                raise RowsError(f"reply length is {length!r}", **where, field="length",
                                fix="give `reply` as text or `length` as a number")
            lengths.append(float(length))
        for name in names:
            if name not in g:
                raise RowsError(f"judge {name!r} did not grade this item", **where,
                                field="grades",
                                fix="grade every labelled item with every judge (or drop it)")
            grades.setdefault(name, []).append(_as_pass(g[name], where=where,
                                                          field=f"grades.{name}"))
    if not names:
        raise ArgumentError("judges is empty. Fix: name at least one judge found in `grades`")
    if lengths and len(lengths) != len(records):
        raise RowsError("some items give `reply`/`length` and some do not", source=source,
                        field="length", fix="give a reply (or length) for every item, or none")
    label = np.array(labels, dtype=bool)
    length = np.array(lengths) if lengths else None
    label_r = _pearson(length, label.astype(float)) if length is not None else None
    reports = [_report(name, label, np.array(grades[name], dtype=bool), length, label_r,
                       min_agreement, min_kappa, max_false_pass, need, level)
               for name in names]
    clearing = [r for r in reports if r.verdict == "clears"]
    best = max(clearing, key=lambda r: r.kappa or 0.0).name if clearing else None
    n_fail = int((~label).sum())
    if best is not None:
        step = f"grade with {best!r} at temperature {D.JUDGE_TEMPERATURE}; re-audit when the rubric changes"
    elif any(r.verdict == "label_more" for r in reports):
        step = f"label more items: {max(0, need - n_fail)} more labelled failures at least"
    else:
        step = ("no judge clears: fix the rubric (run rubric_ablation) or write a program grader")
    return JudgeAudit(n_items=len(records), n_label_fail=n_fail, failures_needed=need,
                      floors={"agreement_lower": float(min_agreement), "kappa": float(min_kappa),
                              "false_pass_max": float(max_false_pass)},
                      judges=reports, best=best, next_step=step)


def _report(name, label, grade, length, label_r, min_agreement, min_kappa, max_false_pass,
            need, level) -> JudgeReport:
    n = int(label.size)
    agree = int((label == grade).sum())
    agreement_ci = wilson_interval(agree, n, level=level)
    kappa = cohen_kappa(label, grade)
    kappa_ci = kappa_interval(label, grade, level=level)
    fails = ~label
    n_fail = int(fails.sum())
    false_pass_count = int((grade & fails).sum())
    false_pass = false_pass_count / n_fail if n_fail else None
    n_pass = n - n_fail
    false_fail = int((~grade & label).sum()) / n_pass if n_pass else None
    length_r = _pearson(length, grade.astype(float)) if length is not None else None
    bias = None
    if length_r is not None:
        bias = length_r - (label_r or 0.0)
    reasons: list[str] = []
    hard = False
    if kappa is None:
        hard = True
        reasons.append("kappa undefined (labels and grades are one constant value): label "
                       "failures too")
    elif kappa < min_kappa:
        hard = True
        reasons.append(f"kappa {kappa:.3f} < {min_kappa} (chance-corrected agreement too low)")
    if agree / n < min_agreement:
        hard = True
        reasons.append(f"agreement {agree / n:.3f} < {min_agreement}")
    if false_pass is not None and false_pass > max_false_pass:
        hard = True
        reasons.append(f"false pass {false_pass:.3f} > {max_false_pass}: it passes "
                       f"{false_pass_count} of {n_fail} replies the labels fail")
    soft: list[str] = []
    if agreement_ci is not None and agreement_ci[0] < min_agreement <= agree / n:
        soft.append(f"agreement lower bound {agreement_ci[0]:.3f} < {min_agreement}: "
                    f"too few items to tell")
    if kappa is not None and kappa_ci is not None and kappa_ci[0] < min_kappa <= kappa:
        soft.append(f"kappa lower bound {kappa_ci[0]:.3f} < {min_kappa}: too few items to tell")
    false_pass_ci = wilson_interval(false_pass_count, n_fail, level=level)
    if false_pass_ci is not None and false_pass is not None \
            and false_pass <= max_false_pass < false_pass_ci[1]:
        soft.append(f"false-pass upper bound {false_pass_ci[1]:.3f} > {max_false_pass}: the sample "
                    f"cannot show the judge stays under the ceiling; label more failures")
    if n_fail == 0:
        soft.append("no labelled failure: the false-pass rate is unknown")
    elif n_fail < need:
        soft.append(f"only {n_fail} labelled failures (want {need}): the false-pass interval "
                    f"{fmt_rate(false_pass, wilson_interval(false_pass_count, n_fail, level=level))} "
                    "is too wide to trust")
    if bias is not None and bias > D.JUDGE_MAX_LENGTH_BIAS:
        reasons.append(f"length bias {bias:+.3f} > {D.JUDGE_MAX_LENGTH_BIAS}: the judge "
                       "rewards longer replies more than the labels do")
    verdict: Verdict = "fails" if hard else ("label_more" if soft else "clears")
    return JudgeReport(name=name, n=n, agreement=agree / n, agreement_ci=agreement_ci,
                       kappa=kappa, kappa_ci=kappa_ci, n_label_fail=n_fail, false_pass=false_pass,
                       false_pass_ci=false_pass_ci,
                       false_fail=false_fail, length_r=length_r, length_bias=bias,
                       verdict=verdict, reasons=reasons + soft)


# --- rubric ablation -----------------------------------------------------------------------

class ClauseEffect(Result):
    clause: str
    agreement: float = Field(description="agreement with this clause removed")
    agreement_ci: tuple[float, float] | None
    kappa: float | None
    delta: float = Field(description="agreement without the clause minus with the full rubric")
    delta_ci: tuple[float, float] | None = Field(
        None, description="paired interval of delta over items (same items, two rubrics)")
    delta_ci_method: str | None = None
    p_value: float | None = Field(None, description="paired two-sided p for delta = 0")
    n_changed: int = Field(0, description="items whose agreement changed with the clause removed")
    effect: Literal["needed", "no_effect", "hurts"]
    within_noise: bool = Field(description="the paired test cannot tell delta from 0 (p > "
                                           "1 - level, or too few items changed)")


class RubricAblation(Result):
    """Agreement with the full rubric, then with each clause removed, one at a time, each change
    read as a paired difference over the same items (exact McNemar under 30 changed items)."""

    n: int
    agreement: float
    agreement_ci: tuple[float, float] | None
    kappa: float | None
    clauses: list[ClauseEffect]
    note: str

    def render(self) -> str:
        lines = [f"full rubric: agreement {fmt_rate(self.agreement, self.agreement_ci, self.n, 'items')}"]
        for c in self.clauses:
            ci = "" if c.delta_ci is None else f" [{c.delta_ci[0]:+.3f}, {c.delta_ci[1]:+.3f}]"
            p = "" if c.p_value is None else f", p={c.p_value:.3g}"
            lines.append(f"  without {c.clause!r}: {fmt_rate(c.agreement, c.agreement_ci)} "
                         f"({c.delta:+.3f}{ci}{p}, {c.n_changed} items changed) {c.effect}"
                         + (" (within noise)" if c.within_noise else ""))
        return "\n".join(lines + [self.note])


def rubric_ablation(items: Any, grade: Callable[[list[str], list[dict]], Sequence[Any]],
                    clauses: Sequence[str], *, level: float = D.CONFIDENCE_LEVEL
                    ) -> RubricAblation:
    """Grade the labelled items with the full rubric, then with each clause dropped.

    ``grade(clauses, items)`` returns one pass/fail per item for a rubric made of ``clauses``.
    A clause whose removal lowers agreement is ``needed``; one whose removal changes nothing is
    ``no_effect`` (cut it, or it tests something the sample does not contain); one whose removal
    raises agreement ``hurts``. Each change is paired by item (the same items graded twice): its
    interval and p-value come from :func:`whileai_core.stats.paired_interval` (the exact McNemar
    test when fewer than 30 items changed); ``within_noise`` when that test cannot tell it from 0.
    """
    from .stats.paired import paired_interval

    level = _check_level(level)
    recs = _read_items(items)
    records = recs.items
    if not records:
        raise RowsError("no labelled items", source=recs.name,
                        fix="give the replies a person labelled, each with its `label`")
    clauses = list(clauses)
    if len(clauses) < 2 or len(set(clauses)) != len(clauses):
        raise ArgumentError(f"clauses must be at least 2 distinct rubric clauses, got "
                            f"{len(clauses)}. Fix: split the rubric into its clauses")
    label = np.array([_as_pass(r.get("label"), where=recs.where(i), field="label")
                      for i, r in enumerate(records)], dtype=bool)

    def score(active: list[str]) -> tuple[np.ndarray, float | None]:
        out = list(grade(active, records))
        if len(out) != len(records):
            raise ArgumentError(f"grade() returned {len(out)} grades for {len(records)} items. "
                                "Fix: return one pass/fail per item, in order")
        g = np.array([_as_pass(v, where={"source": "grade()"}, field="grade") for v in out],
                     dtype=bool)
        return (g == label).astype(float), cohen_kappa(label, g)

    full, full_kappa = score(clauses)
    n = len(records)
    effects = []
    for clause in clauses:
        agree, kappa = score([c for c in clauses if c != clause])
        d = agree - full
        delta = float(d.mean())
        pi = paired_interval(d, level=level, seed=D.BOOTSTRAP_SEED,
                             n_resamples=D.BOOTSTRAP_RESAMPLES, mcnemar=True,
                             draws=_paired_draws(d))
        noise = pi.ci is None or not (pi.ci[0] > 0 or pi.ci[1] < 0)
        effect = "needed" if delta < 0 else ("hurts" if delta > 0 else "no_effect")
        effects.append(ClauseEffect(
            clause=clause, agreement=float(agree.mean()), kappa=kappa,
            agreement_ci=wilson_interval(int(agree.sum()), n, level=level), delta=delta,
            delta_ci=pi.ci, delta_ci_method=pi.method, p_value=pi.p_value,
            n_changed=pi.n_changed, effect=effect, within_noise=noise))
    return RubricAblation(n=n, agreement=float(full.mean()),
                          agreement_ci=wilson_interval(int(full.sum()), n, level=level),
                          kappa=full_kappa, clauses=effects,
                          note="each change is paired by item (the same items, two rubrics): "
                               "exact McNemar under 30 changed items, paired bootstrap above")


def _paired_draws(d: np.ndarray) -> np.ndarray | None:
    from .stats.paired import needs_sign_flip

    if needs_sign_flip(d):
        return None
    from .bootstrap import task_bootstrap

    return task_bootstrap(d, D.BOOTSTRAP_RESAMPLES, D.BOOTSTRAP_SEED)


def ablation_from_grades(items: Any, clauses: Sequence[str], *,
                         level: float = D.CONFIDENCE_LEVEL) -> RubricAblation:
    """:func:`rubric_ablation` from grades already made, for a caller that grades elsewhere.

    Each item carries its ``label``, ``grade`` (the judge's grade with the whole rubric) and
    ``without``: ``{clause: grade with that clause dropped}`` for every clause, e.g.
    ``{"id": "t1", "label": true, "grade": true, "without": {"Be polite.": true, ...}}``.
    """
    recs = _read_items(items)
    if not recs.items:
        raise RowsError("no labelled items", source=recs.name,
                        fix="give the replies a person labelled, each with its `label`")
    clauses = list(clauses)
    for i, rec in enumerate(recs.items):
        without = rec.get("without")
        missing = ([c for c in clauses if c not in without] if isinstance(without, dict)
                   else clauses)
        if "grade" not in rec or missing:
            what = "`grade`" if "grade" not in rec else f"`without` for {missing[0]!r}"
            raise RowsError(f"item has no {what}", **recs.where(i), field="without",
                            fix='give each item "grade" (the whole rubric) and "without": '
                                '{clause: grade with that clause dropped} for every clause')
    full = len(clauses)

    def grade(active: list[str], records: list[dict]) -> list[Any]:
        if len(active) == full:
            return [r["grade"] for r in records]
        (dropped,) = [c for c in clauses if c not in active]
        return [r["without"][dropped] for r in records]

    return rubric_ablation(items, grade, clauses, level=level)  # re-read: errors name lines


# --- order reversal on pairs ---------------------------------------------------------------

Pick = Literal["first", "second", "tie"]
_MIRROR = {"first": "second", "second": "first", "tie": "tie"}


class OrderReversal(Result):
    """A pairwise judge asked each pair twice, once in each order."""

    n_pairs: int
    consistent: int = Field(description="pairs whose pick names the same reply in both orders")
    flips: int = Field(description="pairs whose pick changed with the order")
    tie_flips: int = Field(description="flips where one order called a tie")
    flip_rate: float
    flip_ci: tuple[float, float] | None
    verdict: Literal["ranking", "top_pick_only"]
    note: str

    def render(self) -> str:
        return (f"order reversal: {self.flips} of {self.n_pairs} pairs flip "
                f"({fmt_rate(self.flip_rate, self.flip_ci, self.n_pairs, 'pairs')}), "
                f"{self.tie_flips} via a tie -> {self.verdict}\n{self.note}")


def order_reversal(pairs: Any, *, max_flips: float = D.JUDGE_MAX_ORDER_FLIPS,
                   level: float = D.CONFIDENCE_LEVEL) -> OrderReversal:
    """Read a pairwise judge's picks in both orders.

    Arguments (JSON-friendly): ``pairs`` is a JSONL path or a list of dicts
    ``{"id": ..., "forward": "first"|"second"|"tie", "reversed": "first"|"second"|"tie"}``:
    the judge's pick with (A, B) shown, then with (B, A) shown, by position. Consistent means the
    reversed pick mirrors the forward one. ``max_flips``: the flip share (point estimate) a
    judge may show and still rank (default 0.05); above it, use only its top pick, where the
    margin is large, never its order.
    """
    level = _check_level(level)
    recs = _read_items(pairs, noun="pair")
    records, source = recs.items, recs.name
    if not records:
        raise RowsError("no pairs", source=source, fix="ask the judge about at least one pair")
    flips = ties = 0
    for i, rec in enumerate(records):
        fwd, rev = rec.get("forward"), rec.get("reversed")
        for field, v in (("forward", fwd), ("reversed", rev)):
            if v not in _MIRROR:
                raise RowsError(f"`{field}` is {v!r}", **recs.where(i),
                                field=field, fix='write "first", "second" or "tie"')
        if _MIRROR[fwd] != rev:
            flips += 1
            ties += "tie" in (fwd, rev)
    n = len(records)
    rate = flips / n
    verdict = "ranking" if rate <= max_flips else "top_pick_only"
    note = ("its order is stable: usable as a ranking" if verdict == "ranking" else
            "its pick follows the position on close pairs: take its top pick only, never its order")
    return OrderReversal(n_pairs=n, consistent=n - flips, flips=flips, tie_flips=ties,
                         flip_rate=rate, flip_ci=wilson_interval(flips, n, level=level),
                         verdict=verdict, note=note)
