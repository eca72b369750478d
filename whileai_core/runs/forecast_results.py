"""What a launch forecast returns: its numbers, each GPU's load, the forecast, how its time
model was fitted and checked, and how past forecasts compared with their runs.

Every number carries ``kind``, where it comes from:

- ``measured``: a timing of a run that happened, used as measured;
- ``fitted``: a constant solved from measured runs, or a figure resting on one. Solved exactly
  (as many runs as unknowns), it reproduces those runs by construction: only a run held out of
  the fit checks it (``Calibration``);
- ``derived``: arithmetic from the run's config, stated rules and a datasheet;
- ``assumption``: a constant nobody measured here (``defaults.FORECAST_*``), or a figure
  resting on one. A total takes the kind of its largest part (``_largest_kind``); a figure
  built from several the weakest of theirs (``_weakest``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import computed_field

from ..result import Result

Kind = Literal["measured", "fitted", "derived", "assumption"]
_WEAKER = {"measured": 0, "fitted": 1, "derived": 2, "assumption": 3}


class Figure(Result):
    """One forecast number: ``value`` in ``unit``, its ``kind`` and the ``basis`` it rests on."""

    name: str
    value: float
    unit: str
    kind: Kind
    basis: str

    def render(self) -> str:
        return f"{self.name} {fmt_quantity(self.value, self.unit)} ({self.kind}: {self.basis})"


class CalibrationRun(Result):
    """One measured run against the time model: ``measured_s``, ``forecast_s`` (the part its own
    clock covers) and ``residual_s`` = forecast - measured. ``role``: ``fitted`` (residual 0 by
    construction) or ``held out`` (the residual is a check)."""

    run: str
    role: Literal["fitted", "held out"]
    measured_s: float
    forecast_s: float
    residual_s: float

    @computed_field(description="residual_s as a share of measured_s (null when 0 s measured)")
    @property
    def residual_share(self) -> float | None:
        return round(self.residual_s / self.measured_s, 4) if self.measured_s else None

    def render(self) -> str:
        share = f" ({self.residual_share:+.1%})" if self.residual_share is not None else ""
        return (f"{self.run} measured {self.measured_s:.0f} s, forecast {self.forecast_s:.1f} s, "
                f"residual {self.residual_s:+.1f} s{share}")


class Calibration(Result):
    """How the time model was fitted and checked: ``fitted`` (what was solved), ``runs`` (each
    measured run, fitted or held out, with its residual) and ``note`` (what they share, so what
    the check does not cover)."""

    fitted: str
    runs: list[CalibrationRun]
    note: str = ""

    def render(self) -> str:
        fit = [r for r in self.runs if r.role == "fitted"]
        held = [r for r in self.runs if r.role == "held out"]
        worst = max((abs(r.residual_s) for r in fit), default=0.0)
        text = (f"{self.fitted} fitted to "
                f"{' and '.join(f'{r.run} ({r.measured_s:.0f} s)' for r in fit)}, which it "
                f"therefore reproduces (residual {worst:.1f} s, by construction); ")
        text += ("held out: " + "; ".join(r.render() for r in held)) if held else (
            "no run held out: the fit is unchecked")
        return text + (f". {self.note}" if self.note else "")


class GpuLoad(Result):
    """What one GPU holds: ``items`` in GB against ``capacity_gb``. ``fits``: the derived items
    alone are within it (false: the run cannot start); ``tight``: everything, assumptions too,
    exceeds it (it may not fit)."""

    gpu: int
    role: str
    items: list[Figure]
    total_gb: float
    capacity_gb: float
    fits: bool
    tight: bool
    problem: str | None = None

    def render(self) -> str:
        parts = ", ".join(f"{i.name} {i.value:.1f}" for i in self.items)
        flag = "" if self.fits and not self.tight else (" DOES NOT FIT" if not self.fits
                                                         else " may not fit")
        return (f"GPU {self.gpu} {self.role}: {self.total_gb:.1f} of {self.capacity_gb:g} GB "
                f"({parts}){flag}")


class Forecast(Result):
    """What a launch will take. ``wall_s``: billed seconds (all parts); ``run_s``: the part a
    recipe's own clock measures (prime-rl's ``rl``). ``fits`` false: the plan refuses, with
    ``refusal`` (the numbers) and ``fixes``."""

    model: str | None
    training: str | None
    steps: int | None
    gpu: str | None
    gpu_count: int
    gpus_needed: int
    tokens: list[Figure]
    memory: list[GpuLoad]
    time: list[Figure]
    wall_s: Figure
    run_s: float
    gpu_hours: Figure
    dollars: Figure | None
    fits: bool
    refusal: str | None = None
    fixes: list[str] = []
    notes: list[str] = []
    calibration: Calibration | None = None

    def summary(self) -> str:
        """One line: wall clock, GPU hours and dollars with their kinds."""
        money = (f", ${self.dollars.value:.2f} ({self.dollars.kind})" if self.dollars else "")
        return (f"~{fmt_quantity(self.wall_s.value, 's')} wall clock ({self.wall_s.kind}), "
                f"{self.gpu_hours.value:.2f} GPU hours{money}")

    def render(self) -> str:
        lines = [f"forecast: {self.summary()}"]
        lines += [f"  tokens: {t.render()}" for t in self.tokens]
        lines += [f"  memory: {g.render()}" for g in self.memory]
        lines += [f"  time:   {t.render()}" for t in self.time]
        if self.dollars is not None:
            lines.append(f"  cost:   {self.dollars.render()}")
        if self.calibration is not None:
            lines.append(f"  fit:    {self.calibration.render()}")
        if self.refusal:
            lines.append(f"  REFUSED: {self.refusal}")
        lines += [f"  fix:    {f}" for f in self.fixes]
        lines += [f"  note:   {n}" for n in self.notes]
        return "\n".join(lines)


class ForecastError(Result):
    """How the forecasts of past runs on one backend compared with what they took:
    ``ratios`` = forecast / measured wall clock, most recent first (``runs`` their ids)."""

    backend: str
    n: int
    low: float
    high: float
    ratios: list[float]
    runs: list[str]

    def render(self) -> str:
        each = ", ".join(f"{r}: {x:.2f}x" for r, x in zip(self.runs, self.ratios))
        span = (f"{self.low:.2f}x" if self.n == 1 else f"{self.low:.2f}-{self.high:.2f}x")
        return (f"last {self.n} forecast{'s' if self.n != 1 else ''} on {self.backend} "
                f"{'were' if self.n != 1 else 'was'} {span} of the measured time ({each})")


def fmt_quantity(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value / 3600:.2f} h" if value >= 5400 else (
            f"{value / 60:.1f} min" if value >= 120 else f"{value:.0f} s")
    if unit == "tokens":
        return f"{value / 1e6:.2f}M tokens" if value >= 1e5 else f"{value:,.0f} tokens"
    if unit == "$":
        return f"${value:.2f}"
    return f"{value:.3g} {unit}"


def _weakest(*kinds: str) -> Kind:
    return max(kinds, key=_WEAKER.__getitem__)  # type: ignore[return-value]


def _largest_kind(parts: list[Figure]) -> tuple[Kind, str]:
    """The kind of the part contributing the most, and each kind's share in words."""
    totals: dict[str, float] = {}
    for p in parts:
        totals[p.kind] = totals.get(p.kind, 0.0) + p.value
    whole = sum(totals.values()) or 1.0
    kind = max(totals, key=totals.__getitem__)
    shares = ", ".join(f"{k} {v / whole:.0%}" for k, v in sorted(totals.items(), key=lambda kv:
                                                                 -kv[1]))
    return kind, shares  # type: ignore[return-value]
