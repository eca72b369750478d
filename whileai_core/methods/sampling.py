"""ReinforceAda (arXiv:2510.04996): keep sampling a prompt in rounds until it has the mix a
grouped update can learn from, then score the kept samples against everything drawn.

Rounds of ``round_size`` samples (at most ``max_rounds``) until the exit rule holds:
``"balanced"``: keep/2 passes and keep/2 fails; ``"positive"``: one pass. A sample passes iff
its reward > ``pass_threshold`` (0.7). Advantage A_i = r_i - p_hat, with p_hat the pass rate over
every sample drawn for the prompt. One study found it flat against GRPO at three seeds: an
experiment to run, not a default.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from .. import defaults as D
from ..errors import ArgumentError
from ..result import Result
from ._spec import Spec


class AdaSample(Result):
    """What ReinforceAda drew for one prompt and what it kept."""

    exited: bool
    rounds: int
    drawn: int
    passes: int
    p_hat: float
    kept_index: list[int]  # positions in draw order
    kept_rewards: list[float]
    advantages: list[float]
    notes: list[str]
    kept_items: list[Any] = Field(default_factory=list, exclude=True)

    def render(self) -> str:
        rule = "exit rule met" if self.exited else "exit rule NOT met"
        return "\n".join([f"ReinforceAda: {self.drawn} drawn in {self.rounds} round(s), "
                          f"{self.passes} passes (p_hat {self.p_hat:.3f}), {rule}; kept "
                          f"{len(self.kept_index)}"] + [f"note: {n}" for n in self.notes])


def _reward(item: Any, where: str) -> float:
    value = item.get("reward") if isinstance(item, Mapping) else item
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
            or not math.isfinite(float(value)):
        raise ArgumentError(f"{where}: each drawn sample must be a finite reward or a mapping with "
                            f"a finite 'reward'; got {item!r}")
    return float(value)


class ReinforceAda(Spec):
    """Adaptive sampler around a ``draw(n)`` callable; see the module docstring."""

    _positional: ClassVar[tuple[str, ...]] = ("keep", "round_size", "max_rounds", "exit")

    keep: int = Field(D.ADA_KEEP, ge=1, description="integer >= 1 (even for 'balanced')")
    round_size: int = Field(D.ADA_ROUND_SIZE, ge=1, description="integer >= 1")
    max_rounds: int = Field(D.ADA_MAX_ROUNDS, ge=1, description="integer >= 1")
    exit: Literal["balanced", "positive"] = Field(D.ADA_EXIT, description="'balanced' or 'positive'")
    pass_threshold: float = Field(D.ADA_PASS_THRESHOLD, description="a number; pass iff reward > it")

    @model_validator(mode="after")
    def _even(self) -> ReinforceAda:
        if self.exit == "balanced" and self.keep % 2:
            raise ValueError(f"`keep` {self.keep} must be even with exit='balanced' (keep/2 passes "
                             "and keep/2 fails)")
        if self.keep > self.round_size * self.max_rounds:
            raise ValueError(f"`keep` {self.keep} exceeds the most it can draw "
                             f"(round_size x max_rounds = {self.round_size * self.max_rounds})")
        return self

    @property
    def name(self) -> str:
        return "reinforce_ada"

    def sample(self, draw: Callable[[int], Any]) -> AdaSample:
        """Call ``draw(round_size)`` up to ``max_rounds`` times; each call returns that many
        samples (rewards, or mappings with ``reward``)."""
        if not callable(draw):
            raise ArgumentError("`draw` must be a callable draw(n) -> n samples")
        items: list[Any] = []
        rewards: list[float] = []
        exited, rounds = False, 0
        for rounds in range(1, self.max_rounds + 1):
            batch = list(draw(self.round_size))
            if len(batch) != self.round_size:
                raise ArgumentError(f"draw({self.round_size}) returned {len(batch)} samples in round "
                                    f"{rounds}")
            rewards += [_reward(x, f"round {rounds}") for x in batch]
            items += batch
            passes = int((np.array(rewards) > self.pass_threshold).sum())
            fails = len(rewards) - passes
            half = self.keep // 2
            exited = (passes >= half and fails >= half) if self.exit == "balanced" else passes >= 1
            if exited:
                break
        r = np.array(rewards)
        passed = r > self.pass_threshold
        notes = []
        if exited and self.exit == "balanced":
            half = self.keep // 2
            kept = np.sort(np.concatenate([np.flatnonzero(passed)[:half],
                                           np.flatnonzero(~passed)[:half]]))
        elif exited:
            first = int(np.flatnonzero(passed)[0])
            others = [i for i in range(len(r)) if i != first][: self.keep - 1]
            kept = np.array(sorted([first] + others))
        else:
            kept = np.arange(min(self.keep, len(r)))
            notes.append(f"exit rule '{self.exit}' not met after {self.max_rounds} rounds "
                         f"({int(passed.sum())} passes of {len(r)}): kept the first {len(kept)} "
                         "drawn")
        p_hat = float(passed.mean())
        if p_hat in (0.0, 1.0):
            notes.append(f"every drawn sample {'passed' if p_hat else 'failed'}: the advantages "
                         "carry no pass/fail contrast")
        return AdaSample(exited=exited, rounds=rounds, drawn=len(r), passes=int(passed.sum()),
                         p_hat=p_hat, kept_index=kept.tolist(), kept_rewards=r[kept].tolist(),
                         advantages=(r[kept] - p_hat).tolist(), notes=notes,
                         kept_items=[items[i] for i in kept])
