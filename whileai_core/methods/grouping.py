"""GroupwiseGrading: a grader ranks the passes of a group that a binary reward makes equal.

MiMo-V2.6 sec. 4.3 (summarized in docs/methods.md, Sources). A sample passes iff its reward is
>= ``pass_threshold`` (0.5). Two modes:

- ``"reward"`` (GRS): each pass gets R' = R * max(floor, s) * max(floor, b), with the grader's
  solution quality s and behaviour quality b in [0, 1]; fails keep their reward.
- ``"advantage"`` (GAR): on a mixed group, passes get quality factors f in (0, 1] from a ranking
  (linear from 1.0 for the best to ``min_factor`` for the worst; ties share their mean rank).
  With A = R - mean(R) and lambda = min(sum_P A / sum_P f A, cap), passes get lambda f A, fails
  keep A, and the mean of A' is subtracted. Uncapped, sum_P A' = sum_P A: the pass mass is
  conserved, so the grader only reorders credit among the passes.

Flagged hacks get reward 0 in both modes. A grader whose scores barely vary is a constant
multiplier that group normalisation erases: :meth:`GroupwiseGrading.spread` checks for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from .. import defaults as D
from ..errors import ArgumentError
from ..operations import READS, operation
from ..operations.args import Score
from ..result import Result
from ._spec import Spec

GROUP_MAX = 64  # a group of rollouts of one prompt (shape_group); keeps the answer a few KB


class GroupShaping(Result):
    """One group after shaping: the new rewards (GRS) or advantages (GAR), and the evidence."""

    mode: str
    passed: list[bool]
    rewards: list[float]
    advantages: list[float] | None = None
    factors: list[float] | None = None
    scale: float | None = None  # GAR's lambda
    pass_mass_before: float | None = None
    pass_mass_after: float | None = None
    notes: list[str]

    def render(self) -> str:
        head = f"GroupwiseGrading ({self.mode}): {sum(self.passed)}/{len(self.passed)} passes"
        body = [f"rewards {np.round(self.rewards, 4).tolist()}"]
        if self.advantages is not None:
            body.append(f"advantages {np.round(self.advantages, 4).tolist()}, lambda "
                        f"{self.scale if self.scale is None else round(self.scale, 4)}, pass mass "
                        f"{self.pass_mass_before} -> {self.pass_mass_after}")
        return "\n".join([head] + body + [f"note: {n}" for n in self.notes])


def _vector(name: str, value: Any, n: int | None = None) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError(f"`{name}` must be a list of numbers") from None
    if arr.ndim != 1 or (n is not None and arr.shape[0] != n) or arr.size == 0:
        raise ArgumentError(f"`{name}` must be a non-empty list" + (f" of {n} numbers (one per "
                            "sample)" if n is not None else "") + f"; got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ArgumentError(f"`{name}` has a non-finite entry at {int(np.flatnonzero(~np.isfinite(arr))[0])}")
    return arr


def _average_ranks_desc(quality: np.ndarray) -> np.ndarray:
    """Rank 1 = best (highest quality); tied values share their mean rank."""
    from scipy.stats import rankdata  # lazy: scipy.stats costs 0.6 s to import
    return rankdata(-quality, method="average")


class GroupwiseGrading(Spec):
    """Shape a group's rewards (``mode="reward"``) or advantages (``mode="advantage"``) with a
    grader's scores of its passes (module docstring). ``grader``: optional, a callable over the
    passing items returning their scores; without it, :meth:`shape` takes the scores."""

    _positional = ("grader",)

    grader: Callable[..., Any] | str | None = Field(None, description="a callable over the passing "
                                                    "items, a name, or None (scores given to shape)")
    mode: Literal["reward", "advantage"] = Field("reward", description="'reward' (GRS) or "
                                                                        "'advantage' (GAR)")
    floor: float = Field(D.GRS_FLOOR, ge=0.0, le=1.0, description="0 <= floor <= 1")
    min_factor: float = Field(D.GAR_MIN_FACTOR, gt=0.0, le=1.0, description="0 < min_factor <= 1")
    cap: float | None = Field(D.GAR_CAP, ge=1.0, description="cap >= 1, or None (uncapped)")
    pass_threshold: float = Field(D.GROUP_PASS_THRESHOLD, description="a number; pass iff reward "
                                                                      ">= it")

    @property
    def name(self) -> str:
        return "groupwise_grading"

    def shape(self, rewards: Sequence[float], scores: Any = None, *,
              hacked: Sequence[bool] | None = None, items: Sequence[Any] | None = None) -> GroupShaping:
        """Shape one group. ``scores`` holds one entry per sample (fails' entries are ignored):
        ``(s, b)`` pairs in reward mode, a quality number in advantage mode. Without scores,
        ``grader(items of the passes)`` supplies them."""
        r = _vector("rewards", rewards)
        n = r.shape[0]
        flagged = np.zeros(n, dtype=bool) if hacked is None else np.asarray(hacked, dtype=bool)
        if flagged.shape != (n,):
            raise ArgumentError(f"`hacked` must hold {n} booleans (one per sample)")
        r = np.where(flagged, 0.0, r)
        passed = r >= self.pass_threshold
        notes = [f"{int(flagged.sum())} flagged hack(s) set to reward 0"] if flagged.any() else []
        quality = self._scores(scores, items, passed, n)
        if self.mode == "reward":
            return self._grs(r, passed, quality, notes)
        return self._gar(r, passed, quality, notes)

    def _scores(self, scores: Any, items: Sequence[Any] | None, passed: np.ndarray,
                n: int) -> np.ndarray:
        width = 2 if self.mode == "reward" else 1
        if scores is None:
            if not callable(self.grader) or items is None:
                raise ArgumentError("GroupwiseGrading.shape needs `scores` (one per sample), or a "
                                    "callable `grader` and the group's `items`")
            if len(items) != n:
                raise ArgumentError(f"`items` must hold {n} entries (one per sample)")
            graded = list(self.grader([x for x, p in zip(items, passed) if p]))
            full: list[Any] = [(1.0, 1.0) if width == 2 else 1.0] * n
            for i, value in zip(np.flatnonzero(passed), graded):
                full[i] = value
            if len(graded) != int(passed.sum()):
                raise ArgumentError(f"grader returned {len(graded)} scores for {int(passed.sum())} "
                                    "passes")
            scores = full
        want = f"{n} (s, b) pairs" if width == 2 else f"{n} quality numbers"
        try:
            arr = np.asarray(scores, dtype=float)
        except (TypeError, ValueError):  # ragged ([[0.1, 0.2], [0.3]]) or not numbers
            raise ArgumentError(f"`scores` must hold {want} (one per sample), each the same "
                                "shape; some entries differ in length or are not numbers") from None
        if arr.shape != ((n, 2) if width == 2 else (n,)):
            raise ArgumentError(f"`scores` must hold {want} (one per sample); got shape {arr.shape}")
        if not np.isfinite(arr).all():
            raise ArgumentError("`scores` must be finite")
        if width == 2 and ((arr < 0) | (arr > 1)).any():
            raise ArgumentError("reward-mode scores (s, b) must lie in [0, 1]")
        return arr

    def _grs(self, r: np.ndarray, passed: np.ndarray, sb: np.ndarray,
             notes: list[str]) -> GroupShaping:
        factor = np.maximum(self.floor, sb[:, 0]) * np.maximum(self.floor, sb[:, 1])
        shaped = np.where(passed, r * factor, r)
        if passed.sum() >= 2:
            ok, why = self.spread(factor[passed])
            if not ok:
                notes.append(why)
        return GroupShaping(mode="reward", passed=passed.tolist(), rewards=shaped.tolist(),
                            factors=np.where(passed, factor, 1.0).tolist(), notes=notes)

    def _gar(self, r: np.ndarray, passed: np.ndarray, quality: np.ndarray,
             notes: list[str]) -> GroupShaping:
        adv = r - r.mean()
        n_pass = int(passed.sum())
        mass = float(adv[passed].sum())
        if n_pass == 0 or n_pass == r.shape[0]:
            notes.append("group is not mixed (all pass or all fail): advantages left as R - mean(R)")
            return GroupShaping(mode="advantage", passed=passed.tolist(), rewards=r.tolist(),
                                advantages=adv.tolist(), factors=[1.0] * r.shape[0],
                                pass_mass_before=mass, pass_mass_after=mass, notes=notes)
        ranks = _average_ranks_desc(quality[passed])
        f_pass = (1.0 - (1.0 - self.min_factor) * (ranks - 1) / (n_pass - 1)) if n_pass > 1 \
            else np.ones(1)
        factors = np.ones_like(r)
        factors[passed] = f_pass
        weighted = float((f_pass * adv[passed]).sum())
        lam = mass / weighted
        if self.cap is not None and lam > self.cap:
            notes.append(f"lambda {lam:.4g} capped at {self.cap:g}: the pass mass shrinks")
            lam = self.cap
        shaped = np.where(passed, lam * factors * adv, adv)
        shaped = shaped - shaped.mean()
        if n_pass >= 2:
            ok, why = self.spread(quality[passed])
            if not ok:
                notes.append(why)
        return GroupShaping(mode="advantage", passed=passed.tolist(), rewards=r.tolist(),
                            advantages=shaped.tolist(), factors=factors.tolist(), scale=lam,
                            pass_mass_before=mass, pass_mass_after=float(shaped[passed].sum()),
                            notes=notes)

    @staticmethod
    def spread(scores: Sequence[float]) -> tuple[bool, str]:
        """Does the grader separate the passes? std >= 0.05 and at most 90% of scores within
        0.05 of the median; otherwise group normalisation erases it (a constant multiplier)."""
        s = _vector("scores", scores)
        std = float(s.std())
        near = float((np.abs(s - np.median(s)) <= D.GRADER_MIN_STD).mean())
        if std < D.GRADER_MIN_STD:
            return False, (f"grader scores barely vary (std {std:.3f} < {D.GRADER_MIN_STD}): a "
                           "constant multiplier that group normalisation erases")
        if near > D.GRADER_MAX_NEAR_MEDIAN:
            return False, (f"{near:.0%} of grader scores sit within {D.GRADER_MIN_STD} of the median "
                           f"(> {D.GRADER_MAX_NEAR_MEDIAN:.0%}): it does not separate the passes")
        return True, f"grader spread ok (std {std:.3f}, {near:.0%} near the median)"


@operation(
    toolset="methods", effect=READS,
    title="Rank a group's passes with a grader (GroupwiseGrading)",
    description=(
        "Shape one group with your grader's scores: mode 'reward' scales each pass's reward "
        "(GRS), mode 'advantage' reorders a mixed group's credit among its passes (GAR), with "
        "the pass mass before and after. Notes say when the scores barely spread (a constant "
        "multiplier that group normalisation erases)."),
    doing="shaping a group", serves=("GroupwiseGrading",))
def shape_group(
        rewards: Annotated[list[Score], Field(min_length=1, max_length=GROUP_MAX, description=(
            "One group's rewards (the rollouts of one prompt), in order."),
            examples=[[1.0, 1.0, 0.0, 1.0]])],
        scores: Annotated[list[list[Score]] | list[Score], Field(
            min_length=1, max_length=GROUP_MAX, description=(
                "Your grader's scores, one per rollout (a fail's entry is ignored): mode "
                "'reward', [solution, behaviour] pairs in [0, 1]; mode 'advantage', one quality "
                "number each, higher is better."),
            examples=[[[0.9, 1.0], [0.4, 0.8], [0.0, 0.0], [0.7, 0.5]]])], *,
        mode: Annotated[Literal["reward", "advantage"], Field(description=(
            "'reward' (GRS: scale each pass by its scores) or 'advantage' (GAR: reorder a mixed "
            "group's credit among its passes by rank)."))] = "reward",
        hacked: Annotated[list[bool] | None, Field(max_length=GROUP_MAX, description=(
            "Optional: rollouts flagged as reward hacks (reward set to 0)."))] = None,
        floor: Annotated[float, Field(ge=0.0, le=1.0, description=(
            "GRS: lowest factor a score can give, in [0, 1]."))] = D.GRS_FLOOR,
        min_factor: Annotated[float, Field(gt=0.0, le=1.0, description=(
            "GAR: factor of the worst pass, in (0, 1]."))] = D.GAR_MIN_FACTOR,
        cap: Annotated[float | None, Field(ge=1.0, le=1e6, description=(
            "GAR: cap on lambda (>= 1), null: uncapped."))] = D.GAR_CAP,
        pass_threshold: Annotated[float, Field(ge=-1e12, le=1e12, description=(
            "A rollout passes when reward >= this."))] = D.GROUP_PASS_THRESHOLD) -> GroupShaping:
    """One group shaped by :class:`GroupwiseGrading` with these knobs (checked by the spec)."""
    method = GroupwiseGrading(mode=mode, floor=floor, min_factor=min_factor, cap=cap,
                              pass_threshold=pass_threshold)
    return method.shape(rewards, scores, hacked=hacked)
