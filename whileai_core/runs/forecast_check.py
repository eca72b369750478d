"""The forecast against what happened: what a launch records of its forecast, what collect_run
measures beside it, and the error of past forecasts that the next plan shows.

A measured wall clock is *exact* when something timed the run itself (the local wrapper's pid
and exit-code files, or a recipe's own ``wall_clock_s``); else it is launch to the first status
that saw it finished, an upper bound left out of the error statistics. The prime-rl recipe also
times the billed parts outside ``rl`` (``PARTS``), which :func:`reconcile` sets beside theirs.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import defaults as D
from ._wrapper import EXIT_FILE, PID_FILE
from .forecast_results import Forecast, ForecastError, fmt_quantity
from .forecast_time import CHECKPOINT_COPY, TEACHER_START

if TYPE_CHECKING:  # annotations only: the registry renders a run with describe() from here
    from .registry import RunRecord


# how a measured wall clock was timed (the registry keeps the key, a reader gets the words)
CLOCKS = {"wrapper": "the local wrapper's pid and exit files",
          "recipe": "the recipe's own wall_clock_s, container start not included",
          "registry": "launch to the first status call that saw it finished: an upper bound"}


# The parts a recipe's record times, each with where the record keeps its seconds: rl's own clock
# (the forecast's run_s), an OPD teacher's start-up and the end-of-run copy (forecast_time names).
PARTS = {"rl": ("wall_clock_s",), TEACHER_START: ("teacher", "ready_after_s"),
         CHECKPOINT_COPY: ("kept", "seconds")}


def forecast_parts(forecast: Forecast) -> dict[str, float]:
    """The forecast seconds of each part in ``PARTS`` the forecast has."""
    out = {"rl": round(forecast.run_s, 1)}
    out.update({t.name: round(t.value, 1) for t in forecast.time if t.name in PARTS})
    return out


def measured_parts(results: dict[str, Any] | None) -> dict[str, float]:
    """The seconds of each part in ``PARTS`` a recipe's record holds (numbers only)."""
    out = {}
    for name, keys in PARTS.items():
        value: Any = results or {}
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            out[name] = float(value)
    return out


def reconcile(forecast: dict[str, float] | None, results: dict[str, Any] | None
              ) -> dict[str, dict[str, float | None]]:
    """Each part a record timed or the forecast counted, side by side: ``forecast_s``,
    ``measured_s`` and ``ratio`` (forecast / measured), None where one side has nothing."""
    measured = measured_parts(results)
    out = {}
    for name in PARTS:
        f, m = (forecast or {}).get(name), measured.get(name)
        if f is None and m is None:
            continue
        out[name] = {"forecast_s": f, "measured_s": m,
                     "ratio": round(f / m, 4) if f is not None and m else None}
    return out


def recorded(forecast: Forecast) -> dict[str, Any]:
    """What the registry keeps of a launch's forecast: its totals and the parts a recipe's
    record times (every run in list_runs carries it: a few numbers)."""
    return {"wall_s": round(forecast.wall_s.value, 1), "run_s": round(forecast.run_s, 1),
            "kind": forecast.wall_s.kind, "gpu_hours": round(forecast.gpu_hours.value, 4),
            "dollars": None if forecast.dollars is None else round(forecast.dollars.value, 4),
            "parts": forecast_parts(forecast)}


def describe(forecast: dict[str, Any] | None, measured: dict[str, Any] | None) -> list[str]:
    """The lines a run's record shows of its forecast and of what it measured."""
    lines = []
    if forecast:
        money = "" if forecast.get("dollars") is None else f", ${forecast['dollars']:.2f}"
        lines.append(f"forecast: {fmt_quantity(forecast['wall_s'], 's')} wall clock "
                     f"({forecast.get('kind')}), {forecast.get('gpu_hours', 0):.2f} GPU "
                     f"hours{money}")
    if measured:
        line = (f"measured: {fmt_quantity(measured['wall_s'], 's')} "
                f"({CLOCKS.get(measured.get('clock'), 'unknown clock')})")
        if measured.get("ratio") is not None:
            line += f"; the forecast was {measured['ratio']:.2f}x the measured time"
        lines.append(line)
        parts = measured.get("parts") or {}
        if len(parts) > 1 or any(name != "rl" for name in parts):
            lines.append("  by part: " + "; ".join(part_text(n, p) for n, p in parts.items()))
        if measured.get("billed_s") is not None:
            lines.append(f"  billed: {fmt_quantity(measured['billed_s'], 's')} measured (the "
                         "parts above; the container's own start is not timed)")
    return lines


def part_text(name: str, part: dict[str, Any]) -> str:
    """'teacher start-up 95 s (forecast 61 s, 0.64x)': one reconciled part in words."""
    f, m = part.get("forecast_s"), part.get("measured_s")
    text = f"{name} {'not timed' if m is None else fmt_quantity(m, 's')}"
    text += " (not forecast)" if f is None else f" (forecast {fmt_quantity(f, 's')}"
    if f is not None:
        text += f", {part['ratio']:.2f}x)" if part.get("ratio") is not None else ")"
    return text


def _mtime(path: Path) -> float | None:
    try:
        return os.stat(path, follow_symlinks=False).st_mtime
    except OSError:
        return None


def _seconds(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def measure(record: RunRecord, run_dir: Path) -> dict[str, Any] | None:
    """What a succeeded run took, beside its forecast; None when nothing can say."""
    wall, exact, compare_to, clock = None, False, "wall_s", "registry"
    if record.backend == "local":
        started, ended = _mtime(run_dir / PID_FILE), _mtime(run_dir / EXIT_FILE)
        if started is not None and ended is not None and ended >= started:
            wall, exact, clock = ended - started, True, "wrapper"
    else:
        reported = (record.results or {}).get("wall_clock_s")
        if isinstance(reported, (int, float)) and not isinstance(reported, bool) and reported > 0:
            wall, exact, compare_to, clock = float(reported), True, "run_s", "recipe"
    parts = reconcile((record.forecast or {}).get("parts"), record.results) \
        if clock == "recipe" else {}
    timed = [p["measured_s"] for p in parts.values() if p["measured_s"] is not None]
    billed = sum(timed) if clock == "recipe" else None
    if wall is None:
        wall = _seconds(record.launched_at, record.finished_at)
    if wall is None or wall <= 0:
        return None
    count = _gpu_count(record.gpu) if record.backend == "modal" else 0
    price = D.MODAL_GPU_PRICE_PER_S.get((record.gpu or "").split(":")[0], 0.0)
    paid = billed if billed else wall  # the recipe's timed parts, all billed; else the clock
    out: dict[str, Any] = {"wall_s": round(wall, 3), "exact": exact, "clock": clock,
                           "gpu_hours": round(paid * count / 3600, 4),
                           "dollars": round(paid * count * price, 4) if count else None,
                           "ratio": None}
    if parts:
        out["parts"], out["billed_s"] = parts, round(billed, 3)
    predicted = (record.forecast or {}).get(compare_to)
    if isinstance(predicted, (int, float)) and predicted > 0:
        out["ratio"] = round(predicted / wall, 4)
    return out


def _gpu_count(gpu: str | None) -> int:
    if not gpu:
        return 0
    _, _, count = gpu.partition(":")
    return int(count) if count.isdigit() else 1


def past_error(records: list[RunRecord], backend: str) -> ForecastError | None:
    """The forecast/measured ratios of the last ``FORECAST_ERROR_RUNS`` runs on ``backend``
    whose wall clock was measured exactly, most recent first; None when there are none."""
    done = [r for r in records if r.backend == backend and r.measured and r.measured.get("exact")
            and isinstance(r.measured.get("ratio"), (int, float))]
    done.sort(key=lambda r: r.finished_at or r.updated_at, reverse=True)
    done = done[:D.FORECAST_ERROR_RUNS]
    if not done:
        return None
    ratios = [float(r.measured["ratio"]) for r in done]
    return ForecastError(backend=backend, n=len(done), low=min(ratios), high=max(ratios),
                         ratios=ratios, runs=[r.id for r in done])
