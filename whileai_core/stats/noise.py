"""How much the same eval moves when re-run: run_std, and the band a delta must clear.

The band is a prediction interval for the difference of two runs of the same eval: with run_std
measured on R re-runs (R - 1 degrees of freedom), two new runs differ by more than
``t_{R-1, (1+level)/2} x sqrt(2) x run_std`` with probability 1 - level (normal run scores;
docs/statistics-study.md, table D). A run_std given without its number of runs is read as from
``NOISE_DEFAULT_RUNS`` (2) runs, the fewest :func:`noise_floor` takes, so an unstated count can
only widen the band, and the result says so.
"""

from __future__ import annotations

import math
import os
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from ..bootstrap import check_level
from ..defaults import CONFIDENCE_LEVEL, NOISE_DEFAULT_RUNS, NOISE_FLOOR_MAX_RUNS
from ..errors import ArgumentError, RowsError, WhileaiError
from ..operations import READS, operation
from ..operations.args import RUNS, Arg, AutoMetric, Cluster, Level, Score, Threshold
from ..result import Result
from ..rows import Rows, load_rows
from ..safepath import StreamPath, as_user_path, is_path
from ..voice import call, name
from .fields import LEVEL_DOC
from .intervals import t_value
from .clustered import check_cluster, families_of, positions
from .rates import check_metric, task_values


def noise_band(run_std: float, n_runs: int, level: float = CONFIDENCE_LEVEL) -> float:
    """t_{R-1, (1+level)/2} x sqrt(2) x run_std (module docstring)."""
    return float(t_value(0.5 + level / 2.0, n_runs - 1)) * math.sqrt(2.0) * float(run_std)


class NoiseFloor(Result):
    """run_std of the same eval re-run, and the band a delta must clear to count as a change.

    ``predicted_run_std``: what the rows' own within-task variance predicts (:func:`rows_run_std`).
    A measured run_std well above it means the runs are not independent re-samples
    (infrastructure, judge).
    """

    run_scores: list[float]
    n_runs: int = Field(description="re-runs the band rests on (its t quantile has n_runs - 1 df)")
    run_std: float
    band: float = Field(description="t_{n_runs-1} x sqrt(2) x run_std at `level`")
    level: float = Field(CONFIDENCE_LEVEL, description=LEVEL_DOC)
    predicted_run_std: float | None = None
    n_tasks: list[int] | None = None
    metric: Literal["pass", "reward"] = "pass"
    cluster: str | None = Field(None, description="the row field naming each task's family")
    n_families: int | None = None
    run_std_by_task: float | None = Field(
        None, description="run-to-run sd rebuilt from each task's own re-run spread "
                          "(sqrt(sum_t s_t^2)/C over the shared tasks; tasks independent)")
    run_std_by_family: float | None = Field(
        None, description="the same from each family's summed re-run spread "
                          "(sqrt(sum_f s_f^2)/C): noise shared within a family counts")
    warning: str | None = Field(None, description="the runs are not re-runs of one model's eval "
                                                  "(their `model` fields differ), or null")
    note: str | None = None

    @property
    def band_std(self) -> float:
        """The sd the band rests on: run_std, or the within-task prediction when the runs all
        scored the same (``NOISE_TIED_RUNS_RULE``: a run_std of 0 is no evidence of no noise)."""
        if self.run_std == 0.0 and self.predicted_run_std:
            return self.predicted_run_std
        return self.run_std

    def _band_rests_on(self) -> str:
        if self.band_std != self.run_std:  # the runs tied: the band rests on the prediction
            return f"the predicted run_std {self.band_std:.4f}, as the runs tied"
        return "run_std"

    def render(self) -> str:
        scores = ", ".join(f"{s:.3f}" for s in self.run_scores)
        lines = [f"warning: {self.warning}"] if self.warning else []
        lines += [f"runs: {self.n_runs} ({scores})",
                 f"run_std {self.run_std:.4f}; a delta must clear +/-{self.band:.4f} "
                 f"(t with {self.n_runs - 1} df x sqrt(2) x {self._band_rests_on()}, "
                 f"{self.level:.0%})"]
        if self.predicted_run_std is not None:
            lines.append(f"predicted run_std from within-task variance: {self.predicted_run_std:.4f}")
        if self.run_std_by_family is not None:
            lines.append(f"run-to-run sd from {self.n_families} families in `{self.cluster}`: "
                         f"{self.run_std_by_family:.4f} (tasks independent: "
                         f"{self.run_std_by_task:.4f})")
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


def resolve_band(run_std: Any, noise_runs: int | None, level: float,
                 predicted: Any = None) -> tuple[float | None, int | None, str | None]:
    """(band, runs it rests on, note) for compare's ``run_std``/``noise_runs`` arguments.

    ``predicted``: () -> the run_std the compared rows predict (:func:`rows_run_std`), asked for
    only when ``run_std`` is 0: tied re-runs are no evidence of no noise (``NOISE_TIED_RUNS_RULE``,
    as :class:`NoiseFloor` reads them), and a band of 0 called every difference a change."""
    if run_std is None:
        return None, None, None
    note = None
    if isinstance(run_std, NoiseFloor):
        std, runs = run_std.band_std, run_std.n_runs
    else:
        std, runs = float(run_std), noise_runs
        guess = predicted() if std == 0.0 and predicted is not None else None
        if guess:
            std = guess
            note = (f"run_std 0 (the re-runs tied) is no evidence of no noise: the band rests on "
                    f"the run_std the baseline's within-task variance predicts, {guess:.4f}")
    if runs is None:
        runs = NOISE_DEFAULT_RUNS
        said = (f"run_std given without its number of re-runs: read as from {runs} runs; pass "
                "noise_runs (or the noise_floor result itself)")
        note = f"{note}; {said}" if note else said
    elif isinstance(runs, bool) or not isinstance(runs, int) or runs < 2:
        raise ArgumentError(f"`noise_runs` must be an integer >= 2, got {runs!r}", fix="the number "
                            "of re-runs run_std was measured on (noise_floor(...).n_runs)")
    return noise_band(std, runs, level), runs, note


@operation(
    toolset="stats", effect=READS, title="How much does the score move on a re-run?",
    description=(
        "From re-runs of the same frozen eval: each run's score, `run_std` (their standard "
        "deviation), `n_runs`, and the `band` a change must clear to count (t on n_runs - 1 "
        "degrees of freedom x sqrt(2) x run_std, at `level`), with the run_std the within-task "
        "variance predicts. Give both numbers to compare: a change inside the band is then not "
        "called a move."),
    doing="measuring a noise floor")
def noise_floor(*runs: Annotated[list[str | Score], Field(
                    min_length=2, max_length=NOISE_FLOOR_MAX_RUNS, description=(
                        "Two or more re-runs of the same frozen eval (3+ recommended): each a "
                        "rows file, or that run's score as a number."),
                    examples=[["evals/run0.jsonl", "evals/run1.jsonl", "evals/run2.jsonl"]]),
                    Arg(RUNS, positional=True, metavar="RUN", rows=True)],
                metric: AutoMetric = "auto", level: Level = CONFIDENCE_LEVEL,
                threshold: Threshold = None,
                cluster: Annotated[Cluster, Field(description=(
                    "Optional: the row field naming each task's family; with 2+ runs given as "
                    "rows, the run-to-run sd is also rebuilt per family (noise shared within a "
                    "family shows as a gap)."))] = None) -> NoiseFloor:
    """run_std of the same eval re-run (each run: rows, or its score as a number).

    Needs at least 2 runs (3 or more recommended: with R runs the relative SE of run_std is
    about 1/sqrt(2(R-1)), 71% at R = 2, 50% at R = 3). ``metric="auto"`` reads the mean reward
    when the reward is continuous and no threshold is given, else the pass rate.
    ``cluster``: a row field naming each task's family; with 2+ runs of rows it also rebuilds
    the run-to-run sd from each family's summed re-run spread (``run_std_by_family``) beside the
    one from each task's (``run_std_by_task``): noise shared within families shows as a gap.
    """
    runs, level = _checked_runs(runs, metric, cluster, level)
    loaded = [None if isinstance(run, (int, float)) and not isinstance(run, bool)
              else load_rows(run, threshold=threshold) for run in runs]
    row_runs = [d for d in loaded if d is not None]
    warning = next((d.reward_scale.warning for d in row_runs if d.reward_scale.warning), None)
    models_warning = _models_differ(loaded)
    if metric == "auto":
        metric = ("reward" if threshold is None and any(d.reward_scale.continuous
                                                        for d in row_runs) else "pass")
    scores, sizes = _scores(runs, loaded, metric)
    pred = rows_run_std(row_runs, metric)
    run_std = float(np.std(scores, ddof=1))
    notes = [warning] if warning else []
    by_family: dict[str, Any] = {}
    if cluster is not None:
        by_family, family_note = _by_family(row_runs, cluster, metric)
        if family_note:
            notes.append(family_note)
    agreed = len(row_runs) > 1 and _every_task_agrees(row_runs)
    notes += _spread_notes(len(runs), sizes, run_std, pred, agreed and metric == "pass",
                           len(scores))
    nf = NoiseFloor(run_scores=scores, n_runs=len(scores), run_std=run_std, band=0.0,
                    level=level, predicted_run_std=pred, n_tasks=sizes or None, metric=metric,
                    cluster=cluster, **by_family, warning=models_warning,
                    note="; ".join(notes) or None)
    return nf.model_copy(update={"band": noise_band(nf.band_std, len(scores), level)})


def _checked_runs(runs: tuple, metric: Any, cluster: Any, level: Any) -> tuple[tuple, float]:
    """The runs (one list of them unwrapped) and the level, every argument checked."""
    if len(runs) == 1 and isinstance(runs[0], (list, tuple)) and runs[0] and all(
            isinstance(r, (int, float, str, Rows)) or hasattr(r, "__fspath__") for r in runs[0]):
        runs = tuple(runs[0])
    if metric != "auto":
        check_metric(metric)
    check_cluster(cluster)
    level = check_level(level)
    if len(runs) < 2:
        raise ArgumentError(f"{name('noise_floor')} needs at least 2 runs of the same eval, got "
                            f"{len(runs)}",
                            fix="re-run the same frozen eval (3 or more runs recommended)")
    _refuse_one_run_twice(runs)
    return runs, level


def _scores(runs: tuple, loaded: list[Rows | None], metric: str) -> tuple[list[float], list[int]]:
    """Each run's score (given, or the mean of its per-task ``metric``) and the tasks each run
    given as rows scored."""
    scores, sizes = [], []
    for run, data in zip(runs, loaded):
        if data is None:
            if not math.isfinite(run):
                raise ArgumentError(f"a run score must be finite, got {run!r}")
            scores.append(float(run))
            continue
        scores.append(float(task_values(data, metric).mean()))
        sizes.append(data.n_tasks)
    return scores, sizes


def _spread_notes(n_runs: int, sizes: list[int], run_std: float, pred: float | None,
                  agreed: bool, n_scores: int) -> list[str]:
    """What the runs' spread cannot say: too few runs, different task sets, a spread past the
    within-task prediction, and tied runs (``agreed``: every task gave one outcome throughout)."""
    notes = []
    if n_runs < 3:
        notes.append("run_std from 2 runs is itself very noisy (relative SE ~71%) and its band "
                     "uses a t quantile with 1 degree of freedom (12.7 at 95%); use 3+ runs")
    if sizes and len(set(sizes)) > 1:
        notes.append(f"runs scored different numbers of tasks {sizes}: re-run the same frozen set")
    if pred is not None and pred > 0 and run_std > 3 * pred:
        notes.append(f"measured run_std is {run_std / pred:.1f}x the within-task prediction: the "
                     "runs may not be independent re-samples (a drifting judge or infrastructure)")
    if run_std == 0.0:
        if pred and agreed:
            notes.append(f"the {n_scores} runs scored the same and every task gave the same "
                         "outcome in every rollout: no evidence of no noise either, so the band "
                         f"uses {pred:.4f}, the largest run_std that agreement allows at 95% "
                         "(rule of three)")
        elif pred:
            notes.append(f"the {n_scores} runs scored the same: a run_std of 0 is no evidence "
                         "of no noise (run scores move in steps of one rollout), so the band "
                         f"uses the within-task prediction {pred:.4f} instead")
        else:
            notes.append(f"the {n_scores} runs scored the same: a run_std of 0 is no evidence "
                         "of no noise (run scores move in steps of one rollout) and the band is "
                         "0; re-run more, or pass the runs' rows so the band can use the "
                         "within-task prediction")
    return notes


def _refuse_one_run_twice(runs: tuple) -> None:
    """Raise when two of ``runs`` are the same file (by its identity on disk, however it was
    spelled; standard input by its descriptor) or the same rows object: its spread against
    itself is 0, and the band built on it would let every change through as "beyond noise"."""
    seen: dict[tuple, int] = {}
    for i, run in enumerate(runs):
        key = _identity(run)
        if key is None:
            continue
        if key in seen:
            j = seen[key]
            shown = os.fspath(run) if isinstance(run, (str, os.PathLike)) else \
                str(run) if is_path(run) else getattr(run, "source", None) or \
                f"<{type(run).__name__}>"  # rows loaded once for both (a server's cache)
            what = "rows" if key[0] == "obj" else "file"
            raise ArgumentError(f"runs {j + 1} and {i + 1} are the same {what} ({shown}): "
                                "a noise floor is the spread between separate re-runs, and one run "
                                "against itself has none",
                                fix="re-run the same frozen eval and give "
                                "each run's rows once")
        seen[key] = i


def _identity(run: Any) -> tuple | None:
    if isinstance(run, (int, float)):
        return None
    if not is_path(run):
        return ("obj", id(run))
    try:
        path = as_user_path(run, None, argument="runs", error=RowsError)
        if isinstance(path, StreamPath):
            return ("stream", path.fd)
        with path.open_stream("rows", error=RowsError) as fh:
            return ("file", fh.stat.st_dev, fh.stat.st_ino)
    except WhileaiError:  # a folder, or a path the load will refuse in its own words
        return None


def _models_differ(loaded: list[Rows | None]) -> str | None:
    """A warning when the runs given as rows name different models (their ``model`` field)."""
    named = [(i, sorted(m for m in d.models() if m is not None))
             for i, d in enumerate(loaded) if d is not None]
    named = [(i, m) for i, m in named if m]
    if len({tuple(m) for _, m in named}) < 2:
        return None
    shown = "; ".join(f"run {i + 1}: {', '.join(m[:3])}{' ...' if len(m) > 3 else ''}"
                      for i, m in named[:6])
    return (f"the runs are of different models ({shown}): a noise floor is one model's eval "
            "re-run, so this spread mixes the models' difference into the noise; to measure "
            f"that difference, use {call('compare')}")


def within_variance(data: Rows) -> np.ndarray:
    """Per task, the sample variance (ddof 1) of its rollouts' rewards (NaN for one rollout)."""
    n = data.rollouts.astype(np.float64)
    sq = np.bincount(data.task_index, weights=data.reward ** 2, minlength=data.n_tasks)
    mean = data.reward_sum / n
    with np.errstate(invalid="ignore", divide="ignore"):
        s2 = (sq - n * mean ** 2) / (n - 1)
    return np.where(n >= 2, np.maximum(s2, 0.0), np.nan)


def _by_family(runs: list[Rows], field: str, metric: str) -> tuple[dict[str, Any], str | None]:
    """The run-to-run sd rebuilt from per-task and per-family re-run spreads (shared tasks)."""
    if len(runs) < 2:
        return {}, "cluster needs 2 or more runs given as rows (not scores) to read families"
    shared = [t for t in runs[0].task_ids if all(t in set(r.task_ids) for r in runs[1:])]
    if len(shared) < 2:
        return {}, "the runs share fewer than 2 tasks: no per-family spread to read"
    v = np.stack([task_values(r, metric)[positions(r.task_ids, shared)]
                  for r in runs])                          # runs x tasks
    fam = families_of(runs[0], field).take(positions(runs[0].task_ids, shared))
    n = v.shape[1]
    task_var = v.var(axis=0, ddof=1).sum()
    sums = np.stack([np.bincount(fam.codes, weights=row, minlength=fam.n_families) for row in v])
    family_var = sums.var(axis=0, ddof=1).sum()
    by_task, by_family = math.sqrt(task_var) / n, math.sqrt(family_var) / n
    note = None
    if by_task > 0 and by_family > 1.5 * by_task:
        note = (f"re-run noise moves whole families together: {by_family / by_task:.1f}x the "
                "run-to-run sd independent tasks would give (one sandbox, seed or judge call "
                f"per family?); read deltas with compare(..., cluster={field!r})")
    return dict(n_families=fam.n_families, run_std_by_task=by_task,
                run_std_by_family=by_family), note


def rows_run_std(row_runs: list[Rows], metric: str) -> float | None:
    """The run_std the rows' within-task variance predicts: for pass rates each task's outcomes
    pooled over every run (:func:`pooled_run_std`), for a mean reward its own within-task
    variance run by run, averaged. None without rows or a task with 2+ rollouts."""
    if not row_runs:
        return None
    if metric == "pass":
        return pooled_run_std(row_runs)
    per_run = [predicted_run_std(d.rollouts, None, within_variance(d)) for d in row_runs]
    per_run = [x for x in per_run if x is not None]
    return float(np.mean(per_run)) if per_run else None


def predicted_run_std(rollouts: np.ndarray, passes: np.ndarray | None,
                      variances: np.ndarray | None = None) -> float | None:
    """sqrt(sum_i s_i^2 / n_i) / C; tasks with one rollout take the mean s^2 of the others
    (leaving them out would bias the prediction low). ``s_i^2`` is n_i/(n_i-1) p_i(1-p_i) for
    pass rates, or ``variances`` (a reward's within-task variance)."""
    ok = rollouts >= 2
    if not ok.any():
        return None
    if variances is not None:
        s2 = variances[ok]
    else:
        p = passes[ok] / rollouts[ok]
        s2 = rollouts[ok] / (rollouts[ok] - 1) * p * (1 - p)
    single = int((~ok).sum())
    total = float((s2 / rollouts[ok]).sum()) + single * float(s2.mean())
    return math.sqrt(total) / rollouts.shape[0]


def pooled_run_std(runs: list[Rows]) -> float | None:
    """The run_std the within-task variance predicts, each task's s_i^2 from its rollouts pooled
    over ``runs`` (tasks every run scored; rollouts per run n_i = pooled rollouts / runs). A
    single run falls back to :func:`predicted_run_std`. None when no task has 2+ rollouts."""
    if len(runs) == 1:
        return predicted_run_std(runs[0].rollouts, runs[0].passes)
    common = set(runs[0].task_ids).intersection(*(r.task_ids for r in runs[1:]))
    if not common:
        return None
    order = sorted(common)
    total_n = np.zeros(len(order))
    total_c = np.zeros(len(order))
    for r in runs:
        idx = positions(r.task_ids, order)
        total_n += r.rollouts[idx]
        total_c += r.passes[idx]
    per_run = total_n / len(runs)
    return predicted_run_std_pooled(total_n, total_c, per_run)


def predicted_run_std_pooled(total_n: np.ndarray, total_c: np.ndarray,
                             per_run: np.ndarray) -> float | None:
    """sqrt(sum_i s_i^2 / n_i) / C with s_i^2 = T_i/(T_i-1) p_i(1-p_i) from T_i pooled rollouts
    and n_i rollouts per run; tasks with a single pooled rollout take the mean s^2 of the others.

    When every task gave the same outcome in all its pooled rollouts, every s_i^2 is 0, which is
    no evidence of no noise either: then the largest run_std that such agreement allows at 95%
    (rule of three: prod_i (1 - T_i x_i) >= 0.05 bounds sum_i T_i x_i by 3, so the run variance
    sum_i x_i(1-x_i)/n_i / C^2 by 3 / (min_i T_i n_i C^2)), not a band of 0."""
    ok = total_n >= 2
    if not ok.any():
        return None
    p = total_c[ok] / total_n[ok]
    s2 = total_n[ok] / (total_n[ok] - 1) * p * (1 - p)
    total = float((s2 / per_run[ok]).sum()) + float((1.0 / per_run[~ok]).sum()) * float(s2.mean())
    if total == 0.0:
        return math.sqrt(3.0 / float(np.min(total_n[ok] * per_run[ok]))) / total_n.shape[0]
    return math.sqrt(total) / total_n.shape[0]


def _every_task_agrees(runs: list[Rows]) -> bool:
    """Every task every run scored passed all its rollouts or failed all of them, alike in every
    run (the pooled within-task variance is then 0)."""
    common = set(runs[0].task_ids).intersection(*(r.task_ids for r in runs[1:]))
    seen: dict[str, float] = {}
    for r in runs:
        rate = r.passes / r.rollouts
        for t, v in zip(r.task_ids, rate.tolist()):
            if t in common:
                if v not in (0.0, 1.0) or seen.setdefault(t, v) != v:
                    return False
    return True
