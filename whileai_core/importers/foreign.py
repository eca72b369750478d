"""What an importer reads from another system's output: the graded rows and the counts behind
them, before any statistic (``whileai_core.importers.result`` adds the rates an import reports)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class StepRows:
    """One training step's rows (prime-rl): how many, how many errored, the policy versions that
    sampled them, and the scored (not errored) ones."""

    step: int | None
    rows: int
    errored: int
    policy_versions: list[int]
    scored: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class ForeignRows:
    """Graded rows made from another system's output, and what was read to make them."""

    format: str
    source: str
    files: list[str]
    rows: list[dict]
    errored: int
    kept_errored: bool
    metric: str | None = None
    steps: list[StepRows] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
