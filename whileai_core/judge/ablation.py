"""Rubric ablation: agreement with each clause removed, paired by item against the full rubric."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from .. import defaults as D
from ..bootstrap import task_bootstrap
from ..errors import ArgumentError, RowsError
from ..operations import READS, operation
from ..operations.args import Arg, Level, Records
from ..operations.describe import named, values_of
from ..records import read_records
from ..result import Result, fmt_rate
from ..stats.paired import needs_sign_flip, paired_interval
from .agreement import _check_level, cohen_kappa, wilson_interval
from .audit import _as_pass

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
    read as a paired difference over the same items (the exact McNemar test)."""

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


def _ablation_doc() -> str:
    return ("Agreement with the labels with the whole rubric, then with each clause dropped: "
            "per clause the agreement, its change, and its `effect` "
            f"({named(values_of(ClauseEffect, 'effect'))}), flagged when inside the sample's "
            "noise. The grades come with the items (your judge graded them), or, from Python, "
            "from `grade`, called with each clause list.")


@operation(toolset="judge", effect=READS, title="Which rubric clauses matter?",
           description=_ablation_doc, doing="ablating a rubric",
           serves=("ablation_from_grades",))
def rubric_ablation(
        items: Annotated[Records, Field(description=(
            "Labelled replies graded by the judge with the whole rubric and with each clause "
            "dropped in turn: {\"id\": \"t1\", \"label\": true, \"grade\": true, \"without\": "
            "{\"<clause 1>\": true, ...}}; grades take true/false, 1/0 or \"pass\"/\"fail\" "
            "(from Python with `grade`: the labels alone)."), examples=["judge/ablation.jsonl"])],
        clauses: Annotated[list[Annotated[str, Field(min_length=1, max_length=10_000)]], Field(
            min_length=2, max_length=200, description=(
                "The rubric's clauses, exactly as the keys of each item's `without`."),
            examples=[["Refuse refunds without an order id.", "Be polite."]]),
            Arg(metavar="CLAUSE")], *,
        grade: Annotated[Callable[[list[str], list[dict]], Any] | None,
                         Arg(cli=False, mcp=False)] = None,
        level: Level = D.CONFIDENCE_LEVEL) -> RubricAblation:
    """Grade the labelled items with the full rubric, then with each clause dropped.

    ``grade(clauses, items)`` returns one pass/fail per item for a rubric made of ``clauses``;
    without it the grades come with the items (:func:`ablation_from_grades`). A clause whose
    removal lowers agreement is ``needed``; one whose removal changes nothing is ``no_effect``
    (cut it, or it tests something the sample does not contain); one whose removal raises
    agreement ``hurts``. Each change is paired by item (:func:`whileai_core.stats.paired_interval`).
    """
    if grade is None:
        return ablation_from_grades(items, clauses, level=level)
    return _ablate(items, grade, clauses, level=level)


def _ablate(items: Any, grade: Callable[[list[str], list[dict]], Sequence[Any]],
            clauses: Sequence[str], *, level: float = D.CONFIDENCE_LEVEL) -> RubricAblation:
    level = _check_level(level)
    recs = read_records(items, noun="item")
    records = recs.items
    if not records:
        raise RowsError("no labelled items", source=recs.name,
                        fix="give the replies a person labelled, each with its `label`")
    clauses = list(clauses)
    if len(clauses) < 2 or len(set(clauses)) != len(clauses):
        raise ArgumentError(f"clauses must be at least 2 distinct rubric clauses, got "
                            f"{len(clauses)}", fix="split the rubric into its clauses")
    label = np.array([_as_pass(r.get("label"), where=recs.where(i), field="label")
                      for i, r in enumerate(records)], dtype=bool)

    def score(active: list[str]) -> tuple[np.ndarray, float | None]:
        out = list(grade(active, records))
        if len(out) != len(records):
            raise ArgumentError(f"grade() returned {len(out)} grades for {len(records)} items",
                                fix="return one pass/fail per item, in order")
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
                               "the exact McNemar test (the sign-flip test on 0/1 values) at any number")


def _paired_draws(d: np.ndarray) -> np.ndarray | None:
    if needs_sign_flip(d):
        return None
    return task_bootstrap(d, D.BOOTSTRAP_RESAMPLES, D.BOOTSTRAP_SEED)


def ablation_from_grades(items: Any, clauses: Sequence[str], *,
                         level: float = D.CONFIDENCE_LEVEL) -> RubricAblation:
    """:func:`rubric_ablation` from grades already made, for a caller that grades elsewhere.

    Each item carries its ``label``, ``grade`` (the judge's grade with the whole rubric) and
    ``without``: ``{clause: grade with that clause dropped}`` for every clause, e.g.
    ``{"id": "t1", "label": true, "grade": true, "without": {"Be polite.": true, ...}}``.
    """
    recs = read_records(items, noun="item")
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

    return _ablate(items, grade, clauses, level=level)  # re-read: errors name lines
