"""What every backend reports when asked about a run (``whileai_core.runs.api`` chooses one by
name)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NEVER_STARTED = ("the launch was interrupted before the backend was called (the launching process "
                 "died between the registry write and the launch); nothing ran. Fix: launch it "
                 "again with the same arguments: it reuses this run id")


@dataclass(frozen=True)
class Observation:
    """A backend's answer: the status it sees, and what it learned (handle, error, results)."""

    status: str
    handle: dict[str, Any] | None = None
    error: str | None = None
    results: dict[str, Any] | None = field(default=None)
    never_started: bool = False  # nothing ran: the run may be launched again under its id
