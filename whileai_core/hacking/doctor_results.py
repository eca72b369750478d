"""What the run doctor returns: one signature's finding over the run, one step's numbers, and
the diagnosis that holds them (``doctor`` builds it; ``doctor_signatures`` fills the findings,
``doctor_steps`` the per-step numbers)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from ..result import Result

Signature = Literal["zero_advantage", "truncation_lock_in", "reward_pays_feature", "staleness",
                    "verifier_noise", "diversity_collapse", "entropy_runaway", "kl_runaway"]
SIGNATURES: tuple[str, ...] = Signature.__args__  # type: ignore[attr-defined]
Status = Literal["found", "clear", "not_checked"]
Interval = tuple[float, float]


class Finding(Result):
    """One signature over the run: where it fires, the evidence at its first step, the rule."""

    signature: Signature
    status: Status
    steps: list[int] = Field([], description="the steps where it fires (the first 20)")
    n_steps: int = Field(0, description="how many steps it fires at")
    evidence: str
    rate: float | None = Field(None, description="the rate at the first step it fires (or the "
                                                 "worst step when clear)")
    ci: Interval | None = None
    n: int | None = Field(None, description="groups (tasks) behind the rate")
    threshold: str = Field(description="the rule and the source of its threshold")
    action: str

    def render(self) -> str:
        where = ""
        if self.steps:
            more = f" (+{self.n_steps - len(self.steps)} more)" if self.n_steps > len(self.steps) else ""
            where = f" at steps {_ranges(self.steps)}{more}"
        line = f"{self.signature:<20} {self.status}{where}: {self.evidence}"
        if self.status == "found":
            line += f"\n{'':<22}-> {self.action}"
        return line


class DoctorStep(Result):
    """One training step's numbers (None: not in the files)."""

    step: int
    n_rollouts: int | None = None
    n_groups: int | None = None
    mean_reward: float | None = None
    zero_spread: float | None = None
    zero_spread_ci: Interval | None = None
    truncated: float | None = None
    truncated_ci: Interval | None = None
    distinct: float | None = None
    distinct_ci: Interval | None = None
    duplicate_sets: int | None = None
    noisy_sets: int | None = None
    max_staleness: int | None = None
    entropy: float | None = None
    kl: float | None = None
    found: list[Signature] = []

    def render(self) -> str:
        parts = [f"step {self.step:>5}"]
        if self.mean_reward is not None:
            parts.append(f"reward {self.mean_reward:.3f}")
        for name, value in (("zero-spread", self.zero_spread), ("trunc", self.truncated),
                            ("distinct", self.distinct)):
            if value is not None:
                parts.append(f"{name} {value:.2f}")
        if self.noisy_sets:
            parts.append(f"noisy {self.noisy_sets}/{self.duplicate_sets}")
        if self.max_staleness is not None:
            parts.append(f"lag {self.max_staleness}")
        if self.entropy is not None:
            parts.append(f"entropy {self.entropy:.3g}")
        if self.kl is not None:
            parts.append(f"kl {self.kl:.3g}")
        if self.found:
            parts.append("<- " + ", ".join(self.found))
        return "  ".join(parts)


class Diagnosis(Result):
    """What the run's files say about whether it learns, per signature and per step."""

    verdict: Literal["healthy", "sick", "not_enough_data"]
    source: str
    n_steps: int
    found: list[Signature]
    findings: list[Finding]
    steps: list[DoctorStep]
    steps_shown: str
    max_off_policy_steps: int | None = None
    level: float
    next_step: str
    notes: list[str] = []
    shown: str | None = None

    cut_lists = ("steps",)

    negative_means: ClassVar[str | None] = (
        "the run is `sick` (dead or wrong; `not_enough_data` early in a run is 0)")

    @property
    def negative(self) -> bool:
        return self.verdict == "sick"

    def render(self) -> str:
        lines = [f"doctor: {self.verdict} ({self.source}; {self.n_steps} steps)"
                 + (f": {', '.join(self.found)}" if self.found else "")]
        lines += [f.render() for f in self.findings]
        lines.append(f"per step ({self.steps_shown}):")
        lines += ["  " + s.render() for s in self.steps]
        lines += [f"note: {n}" for n in self.notes]
        lines.append(f"next: {self.next_step}")
        return "\n".join(lines)


def _ranges(steps: list[int]) -> str:
    runs: list[list[int]] = []
    for s in steps:
        if runs and s == runs[-1][1] + 1:
            runs[-1][1] = s
        else:
            runs.append([s, s])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)
