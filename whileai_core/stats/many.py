"""Many behaviours at once: one paired comparison per category (or per checkpoint), corrected.

Reading many by-category deltas one by one lets pure-noise "moved"s through; picking the best
of several checkpoints on one holdout overstates its gain (the winner's curse).
:func:`compare_many` runs :func:`compare` on each behaviour, then adjusts the p-values for how
many were looked at, two ways:

* Benjamini-Hochberg [1] (``p_bh``): controls the false discovery rate, the expected share of
  false claims among the behaviours called changed;
* Holm [2] (``p_holm``): controls the family-wise rate, the chance of any false claim. Use it to
  pick a checkpoint.

A behaviour ``survives`` a correction when its adjusted p is <= 1 - level. Behaviours with too few
paired tasks for a test have no p-value and are left out of the family (counted in the note).

[1] Benjamini & Hochberg (1995), JRSS-B 57:289. [2] Holm (1979), Scand. J. Stat. 6:65.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import Field, computed_field

from ..bootstrap import check_level
from ..defaults import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE_LEVEL
from ..errors import ArgumentError
from ..operations import READS, VERDICT, operation
from ..operations.args import (NAMED, Arg, ArmRows, CompareEffect, Level, Metric,
                               OptionalRowField, Seed, Threshold)
from ..voice import arg
from ..voice import name as call_name
from ..result import Result
from .arms import as_runs
from .compare import Comparison, Verdict, compare, signed_interval
from .fields import LEVEL_DOC
from .intervals import Interval


# behaviours written out in the human text (all of them are in the data)
_TEXT_ROWS = 5


def adjust_bh(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values: min over j >= i of m p_(j) / j, capped at 1."""
    return _adjusted(p, lambda s, m: np.minimum.accumulate(
        (s * m / np.arange(1, m + 1))[::-1])[::-1])


def adjust_holm(p: np.ndarray) -> np.ndarray:
    """Holm adjusted p-values: max over j <= i of (m - j + 1) p_(j), capped at 1."""
    return _adjusted(p, lambda s, m: np.maximum.accumulate(s * (m - np.arange(m))))


def _adjusted(p: np.ndarray, adjust) -> np.ndarray:
    """``adjust`` (the sorted p-values, m) capped at 1, back in the order of ``p``."""
    p = np.asarray(p, dtype=np.float64)
    m = p.shape[0]
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    out = np.empty(m)
    out[order] = np.minimum(adjust(p[order], m), 1.0)
    return out


class Behaviour(Result):
    """One behaviour (category or checkpoint): its paired delta and the corrected p-values."""

    name: str
    n_paired: int
    mean_before: float | None
    mean_after: float | None
    delta: float | None
    ci: Interval | None = Field(description="uncorrected interval of delta at the family's `level`")
    ci_method: str | None
    verdict: Verdict = Field(description="compare's verdict on this behaviour alone (uncorrected)")
    p_value: float | None
    p_bh: float | None = Field(description="Benjamini-Hochberg adjusted p (false discovery rate)")
    p_holm: float | None = Field(description="Holm adjusted p (family-wise error rate)")
    survives_bh: bool
    survives_holm: bool


class ManyComparisons(Result):
    """Every behaviour's paired comparison, with which survive the two corrections.

    The library returns every behaviour; a bounded copy (the MCP answer) keeps the first
    ``LIST_SHOWN_MAX``, smallest p first, and says "n of N shown" in ``shown``.
    """

    family: Literal["group", "checkpoint"]
    by: str | None
    n_behaviours: int
    n_tested: int = Field(description="behaviours with a p-value: the family corrected over")
    behaviours: list[Behaviour] = Field(description="smallest p first")
    survive_bh: list[str]
    survive_holm: list[str]
    n_survive_bh: int
    n_survive_holm: int
    best: str | None = Field(None, description="checkpoints: the largest delta surviving Holm")
    level: float = Field(CONFIDENCE_LEVEL, description=LEVEL_DOC)
    note: str | None = None
    shown: str | None = Field(None, description="which lists were cut, as 'n of N shown'")
    cut_lists = ("behaviours", "survive_bh", "survive_holm")

    negative_means: ClassVar[str | None] = (
        "a behaviour drops: its delta is below 0 and survives the Holm correction")

    @property
    def negative(self) -> bool:
        return any(b.survives_holm and b.delta is not None and b.delta < 0
                   for b in self.behaviours)

    @computed_field(description="the rate both corrections hold: 1 - level")
    @property
    def alpha(self) -> float:
        return round(1.0 - self.level, 12)

    def render(self) -> str:
        what = f"by {self.by}" if self.family == "group" else "checkpoints"
        lines = [f"{self.n_behaviours} behaviours ({what}); {self.n_tested} tested; "
                 f"{self.n_survive_bh} survive Benjamini-Hochberg, {self.n_survive_holm} "
                 f"survive Holm at {self.alpha:.2g}"]
        for b in self.behaviours[:_TEXT_ROWS]:  # the text is a summary; the data has them all
            ci = signed_interval(b.ci)
            delta = "n/a" if b.delta is None else f"{b.delta:+.3f}"
            p = "" if b.p_value is None else (f" p={b.p_value:.3g} bh={b.p_bh:.3g} "
                                              f"holm={b.p_holm:.3g}")
            mark = "holm" if b.survives_holm else ("bh" if b.survives_bh else "-")
            lines.append(f"  {b.name}: {delta} {ci} (n={b.n_paired}){p} {b.verdict}; "
                         f"survives: {mark}")
        if len(self.behaviours) > _TEXT_ROWS:
            lines.append(f"  ... {len(self.behaviours) - _TEXT_ROWS} more, smallest p first, "
                         "in the data")
        if self.shown:
            lines.append(f"  ({self.shown})")
        if self.best:
            lines.append(f"best checkpoint: {self.best}")
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


def _rows_by_key(keys: np.ndarray) -> dict[str, np.ndarray]:
    """Each key's row indices, increasing."""
    if keys.size == 0:
        return {}
    names, codes = np.unique(keys.astype(str), return_inverse=True)
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return dict(zip(names.tolist(), np.split(order, bounds)))


def _groups(before: Any, after: Any, by: str, threshold: float | None) -> dict[str, tuple]:
    if not isinstance(by, str) or not by:
        raise ArgumentError(f"`{arg('by')}` must be a row field name, got {by!r}",
                            fix=f"e.g. {arg('by', 'category')}")
    runs_b, runs_a = as_runs(before, threshold), as_runs(after, threshold)
    names: dict[str, None] = {}
    keyed = []
    for runs in (runs_b, runs_a):
        arm = []
        for r in runs:
            keys = np.array(["(missing)" if v is None else str(v) for v in r.column(by)],
                            dtype=object)
            names.update(dict.fromkeys(keys.tolist()))
            arm.append((r, keys))
        keyed.append(arm)
    if list(names) == ["(missing)"]:
        raise ArgumentError(f"no row has the field `{by}`", fix="name a field the rows carry "
                            "(e.g. 'category'), or compare the checkpoints as a mapping")
    # each run's row indices per group, found in one sort (not a pass over every row per group)
    indexed = [[(r, _rows_by_key(keys)) for r, keys in arm] for arm in keyed]
    out = {}
    for name in names:
        arms = [[r.where(of[name]) for r, of in arm if name in of] for arm in indexed]
        if arms[0] and arms[1]:
            out[name] = (arms[0] if len(arms[0]) > 1 else arms[0][0],
                         arms[1] if len(arms[1]) > 1 else arms[1][0])
    return out


@operation(
    toolset="stats", effect=READS, title="Which behaviours moved? (corrected for how many)",
    description=(
        "One paired comparison per category (a row field, `by`) or per checkpoint, with "
        "p-values adjusted by Benjamini-Hochberg (false discovery rate) and Holm (any false "
        "claim among them), and which behaviours survive each. Use for by-category tables and "
        "for picking a checkpoint. Behaviours come smallest p first; a long list is cut and "
        "says n of N."),
    exit_code=VERDICT, doing="comparing many behaviours")
def compare_many(before: Annotated[ArmRows, Field(description=(
                     "The baseline run (a rows file, rows, or seed files)."))],
                 after: Annotated[ArmRows | None, Field(description=(
                     "The new run, split by the row field `by` (give `by`); or null when "
                     "`checkpoints` is given."))] = None, *,
                 by: Annotated[OptionalRowField, Field(description=(
                     "Row field to split both runs by, e.g. 'category': one paired comparison "
                     "per value."))] = None,
                 checkpoints: Annotated[dict[str, str] | None, Field(
                     max_length=500, description=(
                         "Instead of `after`/`by`: checkpoint name -> its rows file on the same "
                         "tasks; each is compared with `before` and the best surviving one "
                         "named.")), Arg(NAMED, metavar="NAME=FILE", rows=True)] = None,
                 level: Level = CONFIDENCE_LEVEL, effect: CompareEffect = None,
                 seed: Seed = BOOTSTRAP_SEED, threshold: Threshold = None,
                 metric: Metric = "pass",
                 n_resamples: Annotated[int, Arg(cli=False, mcp=False)] = BOOTSTRAP_RESAMPLES,
                 run_std: Annotated[float | None, Arg(cli=False, mcp=False)] = None,
                 noise_runs: Annotated[int | None, Arg(cli=False, mcp=False)] = None
                 ) -> ManyComparisons:
    """Compare many behaviours and correct for how many were looked at (module docstring).

    Either ``checkpoints`` (or ``after``) maps checkpoint names to rows, each compared with
    ``before`` (the checkpoint family), or ``by`` names a row field both arms are split by (the
    group family). Arms may be lists of runs (training seeds), as in :func:`compare`.
    """
    if checkpoints is not None:
        if after is not None or by is not None:
            raise ArgumentError(f"give {arg('checkpoints', op='compare_many')}, or "
                                f"{arg('after', op='compare_many')} with "
                                f"{arg('by', op='compare_many')}, not both", fix="drop one of them")
        after = checkpoints
    elif after is None:
        raise ArgumentError(f"{arg('after', op='compare_many')} is missing",
                            fix=f"give {arg('after', op='compare_many')} and "
                            f"{arg('by', 'category', op='compare_many')}, or "
                            + arg("checkpoints", op="compare_many"))
    level = check_level(level)
    options = dict(level=level, seed=seed, threshold=threshold, n_resamples=n_resamples,
                   metric=metric, effect=effect, run_std=run_std, noise_runs=noise_runs)
    if isinstance(after, Mapping):
        if by is not None:
            raise ArgumentError("give either checkpoints (after as a mapping) or `by`, not both",
                                fix="compare checkpoints on the whole holdout, or one run by group")
        if not after:
            raise ArgumentError("no checkpoints given", fix="after={'step-100': rows, ...}")
        family = "checkpoint"
        results = {str(name): compare(before, rows, **options) for name, rows in after.items()}
    else:
        family = "group"
        if by is None:
            raise ArgumentError(f"{call_name('compare_many')} needs "
                                f"`{arg('by', op='compare_many')}` (a row field such as "
                                "'category') or " + arg("checkpoints", op="compare_many"),
                                fix=arg("by", "category", op="compare_many"))
        results = {name: compare(b, a, **options)
                   for name, (b, a) in _groups(before, after, by, threshold).items()}
    return _correct(results, family, by if family == "group" else None, level)


def _correct(results: dict[str, Comparison], family: str, by: str | None,
             level: float) -> ManyComparisons:
    alpha = 1.0 - level
    tested = [name for name, c in results.items() if c.p_value is not None]
    p = np.array([results[name].p_value for name in tested])
    bh = dict(zip(tested, adjust_bh(p).tolist()))
    holm = dict(zip(tested, adjust_holm(p).tolist()))
    rows = []
    for name, c in results.items():
        rows.append(Behaviour(
            name=name, n_paired=c.n_paired, mean_before=c.mean_before, mean_after=c.mean_after,
            delta=c.delta, ci=c.ci, ci_method=c.ci_method, verdict=c.verdict,
            p_value=c.p_value, p_bh=bh.get(name), p_holm=holm.get(name),
            survives_bh=name in bh and bh[name] <= alpha,
            survives_holm=name in holm and holm[name] <= alpha))
    rows.sort(key=lambda b: (b.p_value is None, b.p_value if b.p_value is not None else 0.0))
    notes = []
    untested = len(results) - len(tested)
    if untested:
        notes.append(f"{untested} behaviours have no p-value (too few paired tasks for a test) "
                     "and are not in the corrected family")
    best = None
    if family == "checkpoint":
        winners = [b for b in rows if b.survives_holm and b.delta is not None]
        if winners:
            best = max(winners, key=lambda b: b.delta).name
            notes.append("the best checkpoint's delta is optimistic (chosen on this holdout): "
                         "confirm it on fresh held-out tasks before reporting it")
    bh, holm = [b.name for b in rows if b.survives_bh], [b.name for b in rows if b.survives_holm]
    return ManyComparisons(
        family=family, by=by, n_behaviours=len(results), n_tested=len(tested), behaviours=rows,
        survive_bh=bh, survive_holm=holm, n_survive_bh=len(bh), n_survive_holm=len(holm),
        best=best, level=level, note="; ".join(notes) or None)
