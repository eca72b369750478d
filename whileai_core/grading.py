"""Question 0 of the route: who graded the rows? A judge's score is audited before any RL on it.

The rows say who graded them through their fields (:mod:`whileai_core.roles`) or the reward's
shape (whole numbers 1 to 10: a rating). A program grader is read as it is. An LLM judge's grade
is the reward a policy learns to farm, so the route sends it to the audit-your-judge skill first
(:mod:`whileai_core.judge`); :func:`grading` says how many replies to label (enough label-fail
items for :func:`whileai_core.judge.failures_needed`, at the share the judge fails here), which
(a seeded draw within each of the judge's scores), and what pass mark or rescaling an RL config
on this score must state.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field

from . import defaults as D
from .judge import failures_needed
from .result import Result
from .roles import read_fields
from .voice import arg


class LabelPlan(Result):
    """What to label for the judge's audit: how many replies, which, and the pass mark."""

    items: int = Field(description="replies to label blind (at most every reply there is)")
    failures: int = Field(description="label-fail replies the false-pass rate needs")
    fail_share: float = Field(description="share of replies the judge fails at `pass_mark`")
    pass_mark: float
    pass_mark_given: bool = Field(description="false: a convention (70% of the top of the "
                                              "rating), to be replaced by yours")
    by_score: dict[str, int] = Field(description="replies to draw, at random (seed 0), at "
                                                 "each of the judge's scores")

    def render(self) -> str:
        scores = ", ".join(f"{k}: {v}" for k, v in self.by_score.items())
        return (f"label {self.items} replies blind ({self.failures} failures needed for the "
                f"false-pass rate to +-{D.JUDGE_FALSE_PASS_HALF_WIDTH:g}; the judge fails "
                f"{self.fail_share:.0%} at pass mark {self.pass_mark:g}); draw them at random "
                f"within each score: {scores}")


class Grading(Result):
    """Who graded the rows (``grader``: program, llm_judge, human, or unknown), what says so,
    and for a judge what to label (``label``) and what an RL config must say (``reward``)."""

    grader: Literal["program", "llm_judge", "human", "unknown"]
    why: str | None = None
    label: LabelPlan | None = None
    reward: str | None = Field(None, description="the pass mark or rescaling an RL config on a "
                                                 "judge's score must state")

    def __bool__(self) -> bool:
        return self.grader == "llm_judge"

    def render(self) -> str:
        head = {"program": "a program", "llm_judge": "an LLM judge", "human": "people",
                "unknown": "unknown (no field says; a program grader is assumed)"}[self.grader]
        text = head + (f" ({self.why})" if self.why else "")
        if self.label is not None:
            text += f"\n{self.label.render()}"
        if self.reward:
            text += f"\n{self.reward}"
        return text


def grading(data, *, half_width: float = D.JUDGE_FALSE_PASS_HALF_WIDTH) -> Grading:
    """Question 0 asked of loaded rows (module docstring)."""
    reading = read_fields(data)
    if reading.grader != "llm_judge":
        return Grading(grader=reading.grader or "unknown", why=reading.grader_why)
    scale = data.reward_scale
    rating = scale.kind == "scale" and scale.low >= 1
    given = data.threshold != D.PASS_THRESHOLD or not scale.continuous
    top = scale.high if not rating else next((t for t in (5, 7, 10) if scale.high <= t),
                                             scale.high)
    mark = data.threshold if given else (
        math.ceil(D.JUDGE_RATING_PASS_SHARE * top) if rating else 0.5)
    failing = float(np.mean(data.reward < mark))
    share = failing if 0 < failing < 1 else D.JUDGE_ASSUMED_FAIL_SHARE
    need = failures_needed(half_width)
    items = min(data.n_rows, math.ceil(need / share))
    values, counts = np.unique(data.reward, return_counts=True)
    quota = np.maximum(np.minimum(counts, 5), np.floor(counts / counts.sum() * items)).astype(int)
    by_score = {f"{v:g}": int(q) for v, q in zip(values.tolist(), quota.tolist())}
    if scale.kind == "binary":
        reward = ("the judge's pass/fail is the reward: once it clears, train on it as it is")
    elif rating:
        lo = scale.low
        reward = (f"an RL config on this {lo:g}-{top:g} rating must state its pass mark "
                  f"({arg('threshold', mark)}"
                  + ("" if given else ", a convention: choose yours")
                  + f") or rescale the reward to [0, 1] as (score - {lo:g}) / {top - lo:g}")
    else:
        reward = (f"an RL config on this score must state its pass mark "
                  f"({arg('threshold', mark)}) or train on the score itself")
    return Grading(grader="llm_judge", why=reading.grader_why,
                   label=LabelPlan(items=items, failures=need, fail_share=share,
                                   pass_mark=float(mark), pass_mark_given=given,
                                   by_score=by_score), reward=reward)
