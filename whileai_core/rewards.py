"""What the reward is: 0/1, a score in [0, 1], or another scale. Read once, where rows load.

Every statistic and the route read the reward through :func:`classify_reward` (``Rows.reward_scale``):

=============  ============================================  ==========================================
kind           rewards                                       what reads differently
=============  ============================================  ==========================================
``binary``     every reward is 0 or 1                         nothing: a pass is a 1
``bounded``    every reward in [0, 1], some strictly between  the mean reward is the headline number; a
                                                              task has signal when its rollouts' rewards
                                                              differ (question 3), not when it splits
``scale``      some reward outside [0, 1]                     a warning in every answer that reads it:
                                                              the pass mark and the scale must be said
=============  ============================================  ==========================================

An LCS ratio, a partial credit or a judge's 0-1 score is ``bounded``: pass@1 at the default
threshold (1.0) counts only perfect replies, which can stay at 0 while the reward moves. A 0-10
or 0-100 grade read at threshold 1.0 counts almost every reply as a pass.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from .defaults import PASS_THRESHOLD, REWARD_SPREAD_TOLERANCE
from .errors import RowsError
from .result import Result
from .voice import arg

RewardKind = Literal["binary", "bounded", "scale"]

# Named scales a grader commonly uses, smallest first: rewards in [0, top] past 1 look like one.
_KNOWN_TOPS = (5.0, 10.0, 100.0)


class RewardScale(Result):
    """The reward as the rows carry it: its kind, range, the pass mark it is read at, and a
    warning (with the fix) whenever pass rates at that mark would mislead."""

    kind: RewardKind = Field(description="binary (0/1), bounded (in [0, 1], not all 0/1) or "
                                         "scale (some reward outside [0, 1])")
    low: float
    high: float
    n_distinct: int = Field(description="distinct reward values (counted up to 1,000,000)")
    threshold: float = Field(description="the pass mark: a pass is reward >= threshold")
    span: float = Field(description="the scale's width the spread tolerance is read on: 1 for "
                                    "rewards in [0, 1], the named scale's top (10, 100) or the "
                                    "observed range otherwise")
    looks_like: str | None = Field(None, description="the scale the rewards look like "
                                                     "('0-10', '0-100', 'signed'), when not [0, 1]")
    warning: str | None = Field(None, description="why pass rates at this threshold mislead, "
                                                  "and the fix")

    @property
    def continuous(self) -> bool:
        """True when a pass/fail reading loses information: any kind but binary."""
        return self.kind != "binary"

    @property
    def tolerance(self) -> float:
        """Rewards of one task that differ by more than this carry signal (in reward units)."""
        return REWARD_SPREAD_TOLERANCE * self.span

    def summary(self) -> str:
        """The kind in a few words: 'continuous reward in [0, 1], 0.02 to 0.97'."""
        return {"binary": "binary 0/1 reward",
                "bounded": f"continuous reward in [0, 1], {self.low:.3g} to {self.high:.3g}",
                "scale": f"reward on another scale, {self.low:.4g} to {self.high:.4g}"
                         + (f" ({self.looks_like})" if self.looks_like else "")}[self.kind]

    def render(self) -> str:
        text = f"{self.summary()}; a pass is reward >= {self.threshold:g}"
        return text + (f"\nwarning: {self.warning}" if self.warning else "")


def classify_reward(reward: np.ndarray, threshold: float = PASS_THRESHOLD) -> RewardScale:
    """The kind of ``reward`` (a finite float column) and the warning its threshold earns."""
    r = np.asarray(reward, dtype=np.float64)
    lo, hi = float(r.min()), float(r.max())
    zero, one = r == 0.0, r == 1.0
    binary = bool(np.all(zero | one))
    bounded = lo >= 0.0 and hi <= 1.0
    cut = min(r.shape[0], 1_000_000)  # (the distinct values of the first million)
    # (0/1 rewards: their distinct values are which of the two occur, without a sort)
    n_distinct = int(zero[:cut].any()) + int(one[:cut].any()) if binary else \
        int(np.unique(r[:cut]).shape[0])
    kind: RewardKind = "binary" if binary else "bounded" if bounded else "scale"
    looks_like, span = None, 1.0
    if kind == "scale":
        if lo < 0.0:
            looks_like, span = "signed", hi - lo
        else:
            top = next((t for t in _KNOWN_TOPS if hi <= t), None)
            looks_like = f"0-{top:g}" if top is not None else None
            span = top if top is not None else hi
    warning = _warning(kind, lo, hi, float(threshold), looks_like, span)
    return RewardScale(kind=kind, low=lo, high=hi, n_distinct=n_distinct,
                       threshold=float(threshold), span=float(span), looks_like=looks_like,
                       warning=warning)


def _warning(kind: RewardKind, lo: float, hi: float, threshold: float, looks_like: str | None,
             span: float) -> str | None:
    if kind == "scale":
        named = f" (looks like a {looks_like} scale)" if looks_like and looks_like != "signed" else ""
        where = f"rewards run from {lo:.4g} to {hi:.4g}{named}, not 0 to 1"
        if threshold == PASS_THRESHOLD:
            top = span if looks_like and looks_like != "signed" else hi
            shown = float(f"{top:.6g}")  # as a person writes it: 100, 7.5, 1e+300
            mark = arg("threshold", int(shown) if shown.is_integer() and abs(shown) < 1e15 else shown)
            reads = (f"no reward reaches the default threshold {PASS_THRESHOLD:g}, so nothing "
                     "passes" if hi < PASS_THRESHOLD else
                     f"at the default threshold {PASS_THRESHOLD:g} every reward >= "
                     f"{PASS_THRESHOLD:g} is a pass, a mark nobody chose on this scale"
                     + (" (on 0-10 or 0-100 grades, nearly any nonzero grade)"
                        if looks_like in ("0-10", "0-100") else ""))
            return (f"{where}: {reads}. Fix: give the pass mark on "
                    f"this scale ({mark}, or your own cut), or rescale the rewards to "
                    "[0, 1] before reading them")
        return (f"{where}: passes are read at threshold {threshold:g} as given, and a mean "
                "reward is on this scale (rescale to [0, 1] to read it as a rate)")
    if threshold > 1.0:
        return (f"threshold {threshold:g} is above every reward in [0, 1]: nothing can pass. "
                f"Fix: a pass mark in (0, 1], e.g. {arg('threshold', 1.0)}")
    if threshold <= 0.0:
        return (f"threshold {threshold:g} is at or below every reward: every rollout passes. "
                f"Fix: a pass mark in (0, 1], e.g. {arg('threshold', 1.0)}")
    return None


def check_reach(scale: RewardScale, source: str | None = None) -> None:
    """A :class:`~whileai_core.errors.RowsError` when no reward reaches the pass mark, or every
    reward does: every pass rate would be 0 (or 1) by construction. The range is [0, 1] for a
    reward in [0, 1] (a run where every reply fails is a floor, not a bad mark), else the
    rewards' own."""
    thr = scale.threshold
    lo, hi = (0.0, 1.0) if scale.kind != "scale" else (scale.low, scale.high)
    if lo < thr <= hi:
        return
    what = "above every reward, so nothing can pass" if thr > hi else \
        "at or below every reward, so every rollout passes"
    mark = 1.0 if scale.kind != "scale" else hi
    raise RowsError(f"`{arg('threshold')}` {thr:g} is {what}: the rewards run from "
                    f"{scale.low:.4g} to {scale.high:.4g} ({scale.summary()})", source=source,
                    field="reward",
                    fix=f"give a pass mark in ({lo:.4g}, {hi:.4g}], e.g. "
                        f"{arg('threshold', int(mark) if float(mark).is_integer() else mark)}, "
                        "or leave it out")


def task_spread(reward: np.ndarray, task_index: np.ndarray, n_tasks: int,
                starts: np.ndarray | None = None) -> np.ndarray:
    """Per task, the largest minus the smallest reward of its rollouts (0 for one rollout).
    ``starts``: where each task's rows start when they are consecutive (``Rows.runs``)."""
    n = reward.shape[0]
    width = n // max(n_tasks, 1)
    if starts is not None and 1 < width <= 64 and width * n_tasks == n and \
            bool((np.diff(starts) == width).all()) and not np.signbit(reward).any():
        # every task's rollouts in one run of the same length: its rewards are a row of a table,
        # read column by column (no -0.0 to tie with 0.0: the same largest in any order)
        table = reward.reshape(n_tasks, width)
        hi, lo = table[:, 0].copy(), table[:, 0].copy()
        for j in range(1, width):
            np.maximum(hi, table[:, j], out=hi)
            np.minimum(lo, table[:, j], out=lo)
        return hi - lo
    hi = np.full(n_tasks, -np.inf)
    lo = np.full(n_tasks, np.inf)
    np.maximum.at(hi, task_index, reward)
    np.minimum.at(lo, task_index, reward)
    return hi - lo


def reward_notes(data) -> list[str]:
    """What a pass-rate answer on loaded rows must say first about their reward: the scale's
    warning, or that a continuous reward is read here as passes at the threshold."""
    scale = data.reward_scale
    if scale.warning:
        return [f"warning: {scale.warning}"]
    if scale.kind == "bounded":
        return [f"the reward is continuous ({scale.summary()}): these are pass rates at "
                f"threshold {scale.threshold:g}; mean_reward reads the reward itself"]
    return []
