"""The forecast against what happened: what a launch records of its forecast, what collect_run
measures beside it, and the error of past forecasts that the next plan shows.

A measured wall clock is *exact* when something timed the run itself: the local wrapper's pid
file (written when the recipe starts) and exit-code file (written when it ends), or a recipe that
reports its own ``wall_clock_s`` (the prime-rl recipe times ``rl``, which the forecast's
``run_s`` covers). Otherwise it is the registry's launch time to the first status call that saw
the run finished: an upper bound, shown but left out of the error statistics.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import defaults as D
from ._wrapper import EXIT_FILE, PID_FILE
from .forecast_results import Forecast, ForecastError, fmt_quantity

if TYPE_CHECKING:  # annotations only: the registry renders a run with describe() from here
    from .registry import RunRecord


# how a measured wall clock was timed (the registry keeps the key, a reader gets the words)
CLOCKS = {"wrapper": "the local wrapper's pid and exit files",
          "recipe": "the recipe's own wall_clock_s, container start not included",
          "registry": "launch to the first status call that saw it finished: an upper bound"}


def recorded(forecast: Forecast) -> dict[str, Any]:
    """What the registry keeps of a launch's forecast: its totals (the plan holds the parts;
    every run in list_runs carries this, so it stays a few numbers)."""
    return {"wall_s": round(forecast.wall_s.value, 1), "run_s": round(forecast.run_s, 1),
            "kind": forecast.wall_s.kind, "gpu_hours": round(forecast.gpu_hours.value, 4),
            "dollars": None if forecast.dollars is None else round(forecast.dollars.value, 4)}


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
    return lines


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
    if wall is None:
        wall = _seconds(record.launched_at, record.finished_at)
    if wall is None or wall <= 0:
        return None
    count = _gpu_count(record.gpu) if record.backend == "modal" else 0
    price = D.MODAL_GPU_PRICE_PER_S.get((record.gpu or "").split(":")[0], 0.0)
    out: dict[str, Any] = {"wall_s": round(wall, 3), "exact": exact, "clock": clock,
                           "gpu_hours": round(wall * count / 3600, 4),
                           "dollars": round(wall * count * price, 4) if count else None,
                           "ratio": None}
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
