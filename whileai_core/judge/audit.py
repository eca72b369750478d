"""The audit itself: every candidate judge read against blind human labels and the floors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from .. import voice
from .. import defaults as D
from ..errors import ArgumentError, RowsError, as_json
from ..operations import READS, VERDICT, operation
from ..operations.args import Level, Names, Records
from ..operations.describe import named, values_of
from ..result import Result, fmt_rate, fmt_value
from ..records import read_records
from .agreement import HALF_WIDTH_MIN, _check_level, _pearson, cohen_kappa, failures_needed, kappa_interval, \
    wilson_interval


Verdict = Literal["clears", "fails", "label_more"]
Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]  # a floor, a ceiling, a limit


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

    negative_means: ClassVar[str | None] = "no judge clears the floors"

    @property
    def negative(self) -> bool:
        return self.best is None

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
    raise RowsError(f"`{field}` is {as_json(value)}; expected pass/fail", **where, field=field,
                    fix='write true/false, 1/0 or "pass"/"fail" (threshold a score first)')


def _audit_doc() -> str:
    return ("Before trusting an LLM judge as a reward: compare each candidate judge with blind "
            "human labels. Per judge: agreement with its interval, Cohen's kappa, false-pass "
            "rate with its interval, length bias, and a `verdict` "
            f"({named(values_of(JudgeReport, 'verdict'))}); plus the judge to use (`best`), if "
            "any, and the next step. plot: agreement and kappa per judge as a picture.")


@operation(toolset="judge", effect=READS, title="Audit an LLM judge against human labels",
           description=_audit_doc, exit_code=VERDICT, doing="auditing a judge",
           picture="whileai_core.pictures:audit_judge_picture", serves=("judge_picture",))
def audit_judge(
        items: Annotated[Records, Field(description=(
            "Blind human labels with each candidate judge's grade on the same replies, one "
            "object per reply: {\"id\": \"t1\", \"label\": true, \"grades\": {\"judge-a\": true, "
            "\"judge-b\": false}, \"reply\": \"...\"}; label/grades take true/false, 1/0 or "
            "\"pass\"/\"fail\"; reply (or length) turns on the length-bias check."))], *,
        judges: Annotated[Names, Field(description=(
            "Judge names to audit; null: every name found in `grades`."))] = None,
        min_agreement: Annotated[Share, Field(description=(
            "Floor on the lower bound of agreement with the labels, in [0, 1]."))
        ] = D.JUDGE_MIN_AGREEMENT,
        min_kappa: Annotated[Share, Field(description="Floor on Cohen's kappa, in [0, 1].")
                             ] = D.JUDGE_MIN_KAPPA,
        max_false_pass: Annotated[Share, Field(description=(
            "Ceiling on the share of label-fail replies the judge passes, in [0, 1]."))
        ] = D.JUDGE_MAX_FALSE_PASS,
        half_width: Annotated[float, Field(
            ge=HALF_WIDTH_MIN, lt=0.5, allow_inf_nan=False, description=(
            "Precision (+-) the false-pass rate is sized for, in (0, 0.5); sets how many "
            "labelled failures are needed."))] = D.JUDGE_FALSE_PASS_HALF_WIDTH,
        level: Level = D.CONFIDENCE_LEVEL) -> JudgeAudit:
    """Read every candidate judge against blind human labels.

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
            raise ArgumentError(f"{name} must be a number in [0, 1], got {value!r}", fix="use "
                                f"the default {getattr(D, 'JUDGE_' + name.upper())}")
    need = failures_needed(half_width, level=level)
    names, labels, grades, lengths = _read_judged(items, judges)
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
        step = (f"grade with {best!r} at temperature {D.JUDGE_TEMPERATURE}; re-audit when the "
                "rubric changes")
    elif any(r.verdict == "label_more" for r in reports):
        step = f"label more items: {max(0, need - n_fail)} more labelled failures at least"
    else:
        step = (f"no judge clears: fix the rubric (run {voice.name('rubric_ablation')}) or write a "
                "program grader")
    return JudgeAudit(n_items=len(labels), n_label_fail=n_fail, failures_needed=need,
                      floors={"agreement_lower": float(min_agreement), "kappa": float(min_kappa),
                              "false_pass_max": float(max_false_pass)},
                      judges=reports, best=best, next_step=step)


def _read_judged(items: Any, judges: Sequence[str] | None
                 ) -> tuple[list[str], list[bool], dict[str, list[bool]], list[float]]:
    """The judges' names, the labels, each judge's grades and the reply lengths (or none)."""
    recs = read_records(items, noun="item")
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
            raise RowsError(f"`grades` is {as_json(g)}", **where, field="grades",
                            fix='map each judge to its pass/fail: "grades": {"judge-a": true}')
        if "length" in rec or "reply" in rec:
            length = rec.get("length", None)
            if length is None:
                reply = rec["reply"]
                length = len(reply) if isinstance(reply, str) else None
            if isinstance(length, bool) or not isinstance(length, (int, float)):
                raise RowsError(f"reply length is {as_json(length)}", **where, field="length",
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
        raise ArgumentError("judges is empty", fix="name at least one judge found in `grades`")
    if lengths and len(lengths) != len(records):
        raise RowsError("some items give `reply`/`length` and some do not", source=source,
                        field="length", fix="give a reply (or length) for every item, or none")
    return names, labels, grades, lengths


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
    bias = None if length_r is None else length_r - (label_r or 0.0)
    reasons: list[str] = []  # a point estimate past its floor: the judge fails
    if kappa is None:
        reasons.append("kappa undefined (labels and grades are one constant value): label "
                       "failures too")
    elif kappa < min_kappa:
        reasons.append(f"kappa {kappa:.3f} < {min_kappa} (chance-corrected agreement too low)")
    if agree / n < min_agreement:
        reasons.append(f"agreement {agree / n:.3f} < {min_agreement}")
    if false_pass is not None and false_pass > max_false_pass:
        reasons.append(f"false pass {false_pass:.3f} > {max_false_pass}: it passes "
                       f"{false_pass_count} of {n_fail} replies the labels fail")
    hard = bool(reasons)
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
                    f"{fmt_rate(false_pass, false_pass_ci)} "
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
