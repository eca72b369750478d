"""Before vs after on the same tasks: the paired difference, its interval and a verdict.

Verdicts (``level`` 0.95 and ``effect`` 0.05 by default):

* ``moved`` / ``moved_the_wrong_way``: the interval of the difference excludes 0 and |delta| is
  past the noise band (when one is given);
* ``within_noise``: the interval excludes 0 but |delta| is inside the noise band (a tie, within
  ``NOISE_TIE_TOLERANCE``, counts as inside);
* ``flat``: an equivalence statement: the whole interval lies inside +-``effect``;
* ``no_detectable_change``: the interval contains 0 but reaches past +-``effect``: the eval cannot
  tell;
* ``insufficient_data``: too few paired tasks for any test (:func:`paired.min_paired_tasks`).

Training seeds: ``before`` and ``after`` may each be a list of runs (one per training seed). The
arms are then the per-task means over their runs, and the interval adds the between-seed variance
of the run means to the task-level variance (Welch-Satterthwaite degrees of freedom, a t interval:
``ci_method`` ``seeds_welch_t``). An arm with one run borrows the other arm's seed variance (the
same training procedure assumed). With one run per arm the seed variance is unmeasured:
``seed_variance`` says so and a ``moved`` verdict carries that caveat in its note.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import Field, computed_field

from ..bootstrap import check_level, check_resamples, check_seed, z_value
from ..defaults import (BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE_LEVEL, HOLDOUT_POWER,
                        NOISE_TIE_TOLERANCE, PROVE_EFFECT)
from ..errors import ArgumentError
from ..operations import READS, VERDICT, operation
from ..operations.args import (SOURCE, Arg, ArmRows, AutoCluster, AutoMetric, CompareEffect,
                               Level, NoiseRuns, OptionalRowField, RunStd, Seed, Threshold)
from ..operations.describe import named, values_of
from ..result import Result, fmt_rate
from .fields import LEVEL_DOC, METHOD_DOC, ci95_alias
from .intervals import Interval
from .noise import NoiseFloor, resolve_band, rows_run_std
from .paired import (degenerate_note, min_paired_tasks, mover_difference, paired_interval,
                     value_scale)
from .clustered import (Families, check_cluster, cluster_interval, families_of, intervals,
                        positions)
from .rates import check_metric
from ..roles import FIELDS_DOC
from ..writers import one_writer
from .families import AUTO, FamilyInterval, compare_fields, judged_by_family, split_cluster
from .selection import Selection, selection_check, selection_ids
from .arms import (arm_values, as_runs, difference, in_unit, resolve_effect, resolve_metric,
                   scaled_mean, scaled_task_mean, with_seeds)
from .arms import correlation as task_correlation

Verdict = Literal["moved", "moved_the_wrong_way", "flat", "no_detectable_change",
                  "within_noise", "insufficient_data"]


class Comparison(Result):
    """Before vs after on the tasks both runs scored; see the module docstring for verdicts."""

    n_paired: int
    n_only_before: int
    n_only_after: int
    mean_before: float | None
    mean_before_ci: Interval | None
    mean_after: float | None
    mean_after_ci: Interval | None
    delta: float | None
    ci: Interval | None = Field(description="interval of delta at `level`")
    verdict: Verdict
    metric: Literal["pass", "reward"] = "pass"
    ci_method: str | None = Field(None, description=(
        "the difference's interval: t_sign_flip_exact / t_sign_flip_mc (the sign-flip test "
        "with the t interval, at any number of tasks), seeds_welch_t (several runs per arm), "
        "family_bootstrap_t (cluster=: families resampled, each drawn family's tasks kept; t "
        "on Bell-McCaffrey df), mover_unpaired (every task changed by the same amount: no paired test; "
        "the unpaired interval and its p-value)"))
    mean_before_ci_method: str | None = Field(None, description=METHOD_DOC)
    mean_after_ci_method: str | None = Field(None, description=METHOD_DOC)
    p_value: float | None = Field(None, description=(
        "two-sided p-value for delta = 0: the exact sign-flip test's, raised to the t test's when "
        "that does not reject, so p <= 1 - level exactly when the interval excludes 0; when "
        "every task changed alike (no paired spread), the unpaired MOVER interval's, and the "
        "note says so; with cluster=, the clustered t's (at least 1e-12)"))
    n_changed: int | None = Field(None, description="paired tasks whose value changed")
    effect: float = Field(PROVE_EFFECT, description="the equivalence margin behind `flat`")
    noise_band: float | None = None
    noise_runs: int | None = Field(None, description="re-runs the noise band rests on")
    n_runs_before: int = 1
    n_runs_after: int = 1
    seed_std: float | None = Field(None, description="between-seed sd of an arm's mean")
    seed_variance: Literal["measured", "unmeasured"] = "unmeasured"
    correlation: float | None = None
    mde: float | None = None
    level: float = Field(CONFIDENCE_LEVEL, description=LEVEL_DOC)
    cluster: str | None = Field(None, description="the row field naming each task's family; "
                                                  "intervals then resample families")
    n_families: int | None = None
    reward_warning: str | None = Field(None, description="rewards outside [0, 1]: why pass "
                                                         "rates at this threshold mislead, and "
                                                         "the fix")
    note: str | None = None
    families: FamilyInterval | None = Field(None, description=(
        "cluster='auto': the interval clustered by the family field the rows carry, beside the "
        "one over tasks; the verdict is no stronger than it"))
    fields: list[str] = Field(default_factory=list, description=FIELDS_DOC)
    selection: Selection | None = Field(None, description=(
        "with `selected_on`: whether the checkpoint was chosen on the tasks it is scored on "
        "(same_set, overlapping, separate), and the fix when it was"))

    ci95 = ci95_alias("ci")
    mean_before_ci95 = ci95_alias("mean_before_ci")
    mean_after_ci95 = ci95_alias("mean_after_ci")

    @computed_field(description="the power `mde` is computed at")
    @property
    def mde_power(self) -> float:
        return HOLDOUT_POWER

    def summary(self) -> str:
        """The verdict and the delta with its interval, in one line."""
        if self.delta is None:
            return self.render().splitlines()[0]
        what = "mean reward" if self.metric == "reward" else "pass rate"
        fam = self.families
        by = ("" if fam is None else f"; over {fam.n_families} families of `{fam.field}` "
              + signed_interval(fam.ci, "no interval"))
        return (f"verdict: {self.verdict}: {what} {self.delta:+.3f} {signed_interval(self.ci)} "
                f"(n={self.n_paired} paired tasks{by})")

    negative_means: ClassVar[str | None] = (
        "a significant regression: `moved_the_wrong_way`")

    @property
    def negative(self) -> bool:
        return self.verdict == "moved_the_wrong_way"

    def render(self) -> str:
        if self.delta is None:
            return f"verdict: {self.verdict} (n={self.n_paired} paired tasks). {self.note or ''}".strip()
        runs = "" if self.n_runs_before == self.n_runs_after == 1 else (
            f" ({self.n_runs_before} runs before, {self.n_runs_after} after)")
        what = "mean reward" if self.metric == "reward" else "pass rate"
        lines = ([f"warning: {self.reward_warning}"] if self.reward_warning else []) + [
            self.summary(),
            f"{what} by task"
            + (f", intervals over {self.n_families} families in `{self.cluster}`, then tasks"
               if self.cluster else ""),
            f"before  {fmt_rate(self.mean_before, self.mean_before_ci, self.n_paired)}",
            f"after   {fmt_rate(self.mean_after, self.mean_after_ci, self.n_paired)}",
            f"delta   {self.delta:+.3f} {signed_interval(self.ci)}"
            + f" (n={self.n_paired} paired tasks{runs})"
            + (f", p={self.p_value:.3g}, {self.ci_method}" if self.p_value is not None else ""),
            f"verdict: {self.verdict}",
        ]
        if self.noise_band is not None:
            lines.append(f"noise band: +/-{self.noise_band:.3f} ({self.noise_runs} re-runs)")
        if self.mde is not None:
            lines.append(f"smallest effect this holdout detects ({self.mde_power:.0%} power): "
                         f"{self.mde:.3f}")
        if self.n_only_before or self.n_only_after:
            lines.append(f"unpaired: {self.n_only_before} tasks only before, "
                         f"{self.n_only_after} only after (left out)")
        if self.families is not None:
            lines.append(f"families {self.families.render()}")
        if self.note:
            lines.append(f"note: {self.note}")
        lines += [f"field {f}" for f in self.fields]
        if self.selection is not None:
            lines.append(self.selection.render())
        return "\n".join(lines)


def signed_interval(ci: Interval | None, none: str = "[no interval]") -> str:
    """A difference's interval as text, each bound with its sign."""
    return f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else none


def _check(run_std: Any, effect: Any) -> None:
    if effect is not None and (isinstance(effect, bool) or not isinstance(effect, (int, float))
                               or not math.isfinite(effect) or effect <= 0):
        raise ArgumentError(f"`effect` must be a number above 0, got {effect!r}", fix="the "
                            f"smallest change worth detecting, e.g. {PROVE_EFFECT} (5 points of "
                            "pass@1), or leave it out")
    if isinstance(run_std, NoiseFloor) or run_std is None:
        return
    if isinstance(run_std, bool) or not isinstance(run_std, (int, float)) \
            or not math.isfinite(run_std) or run_std < 0:
        raise ArgumentError(f"`run_std` must be a finite number >= 0, got {run_std!r}", fix="pass "
                            "noise_floor(run1, run2, run3).run_std, or omit it")


def _compare_doc() -> str:
    return ("Paired comparison of two runs on the same tasks: mean before and after, the delta "
            "with its interval, p-value and the interval used (`ci_method`), and a `verdict`: "
            f"{named(values_of(Comparison, 'verdict'))} (flat: the interval lies inside "
            "+-effect). An arm may be several runs (training seeds). After training, on the "
            "held-out tasks; `run_std` and `noise_runs` from noise_floor keep a change inside "
            "re-run noise from being called a move. plot: the paired deltas (per `by`).")


# the picture is named, and imported only when a plot is asked for
@operation(toolset="core", effect=READS, title="Did the score move? (paired before/after)",
           description=_compare_doc, exit_code=VERDICT, doing="comparing two runs",
           picture="whileai_core.pictures:compare_picture", serves=("forest_picture",))
def compare(before: Annotated[ArmRows, Field(description=(
                "The baseline run: rows (the forms of route_rows's), or a list of files, one "
                "per training seed."))],
            after: Annotated[ArmRows, Field(description=(
                "The new run on the same tasks (paired by task_id): the same forms as "
                "`before`."))], *,
            level: Level = CONFIDENCE_LEVEL,
            run_std: RunStd = None, noise_runs: NoiseRuns = None,
            effect: CompareEffect = None, seed: Seed = BOOTSTRAP_SEED,
            threshold: Threshold = None, metric: AutoMetric = "auto",
            cluster: AutoCluster = AUTO,
            selected_on: Annotated[str | list[str] | list[dict[str, Any]] | None, Field(
                description=(
                    "When `after` is a checkpoint chosen among several: the tasks it was "
                    "chosen on (a task or rows file, or task ids); `selection` says whether "
                    "it is scored on that set (an optimistic score) and the fix.")),
                Arg(SOURCE, metavar="FILE")] = None,
            by: Annotated[OptionalRowField, Field(description=(
                "With plot: a row of the picture per value of this row field."))] = None,
            n_resamples: Annotated[int, Arg(cli=False, mcp=False)] = BOOTSTRAP_RESAMPLES
            ) -> Comparison:
    """Paired before/after comparison by task (module docstring for the verdicts).

    ``run_std``: the sd of the same eval re-run (:func:`noise_floor`, or its result, which also
    gives ``noise_runs``); the band is t_{R-1} x sqrt(2) x run_std at ``level``.
    ``effect``: the margin of ``flat`` and of the underpowered note, in the compared metric's
    units (:func:`whileai_core.stats.arms.resolve_effect`).
    ``metric`` "auto" reads the mean reward when the reward is continuous or on another scale and
    no ``threshold`` is given (a pass rate at 1.0 can stay at 0 while the reward moves), else the
    pass rate.
    ``cluster``: a row field naming each task's family (:mod:`.clustered`); ``"auto"``: the
    intervals stay over tasks, and a family field the rows carry gets its own interval beside
    them, the verdict no stronger than it (:mod:`.families`); None: tasks only.
    ``by``: read by the picture only (``plot``: a row per value of this row field).
    """
    if selected_on is not None:  # the same comparison, then where its checkpoint was chosen
        return _compared_where_chosen(before, after, selected_on, threshold, dict(
            level=level, run_std=run_std, seed=seed, threshold=threshold,
            n_resamples=n_resamples, metric=metric, effect=effect, noise_runs=noise_runs,
            cluster=cluster))
    level, seed = _checked(level, seed, n_resamples, metric, cluster, run_std, effect)
    runs_b, runs_a = _read_arms(before, after, threshold)
    cluster, found = split_cluster(cluster, runs_a[0], runs_b[0])
    metric, reward_warning, notes = resolve_metric(metric, runs_b + runs_a, threshold)
    band, band_runs, band_note = resolve_band(run_std, noise_runs, level,
                                              lambda: rows_run_std(runs_b, metric))
    effect, effect_note = resolve_effect(effect, metric, runs_b + runs_a)
    notes += [effect_note] if effect_note else []
    shared, base = _pairing(runs_b, runs_a, dict(
        noise_band=band, noise_runs=band_runs, level=level, metric=metric,
        effect=float(effect), cluster=cluster, reward_warning=reward_warning))
    if not shared:
        return _nothing_paired(base, notes)
    paired = _pair(runs_b, runs_a, shared, metric, cluster, level, seed, n_resamples, base)
    notes += [band_note] if band_note else []
    if len(shared) < min_paired_tasks(level) or not math.isfinite(paired.delta):
        return _too_few(paired, level, base, notes)
    corr = task_correlation(paired.pb, paired.pa)
    # a difference of two values in [0, 1] lies in [-1, 1]: no interval reaches past it
    bounds = (-1.0, 1.0) if in_unit(paired.pb) and in_unit(paired.pa) else None
    ci, method, p, seed_fields = _difference_interval(paired, level, seed, n_resamples, bounds,
                                                      notes)
    mde = _mde(ci, level)
    verdict, by_family = _judged(paired, ci, mde, band, effect, found, level, seed, bounds, notes)
    return Comparison(**paired.arms, delta=paired.delta, ci=ci, ci_method=method, p_value=p,
                      n_changed=int(np.count_nonzero(paired.d)), verdict=verdict,
                      correlation=corr, mde=mde, **base, **seed_fields,
                      note="; ".join(notes) or None, families=by_family,
                      fields=compare_fields(runs_b, runs_a, metric, cluster, by_family))


# --- compare's steps, in the order it takes them ------------------------------------------------

def _compared_where_chosen(before: Any, after: Any, selected_on: Any, threshold: Any,
                           given: dict[str, Any]) -> Comparison:
    """The comparison of ``given``'s arguments, then where its checkpoint was chosen."""
    chosen_on = selection_ids(selected_on)
    result = compare(before, after, **given)
    scored = set.intersection(*(set(r.task_ids) for r in
                                as_runs(before, threshold) + as_runs(after, threshold)))
    return result.model_copy(update={"selection": selection_check(scored, chosen_on)})


def _checked(level: Any, seed: Any, n_resamples: Any, metric: Any, cluster: Any, run_std: Any,
             effect: Any) -> tuple[float, int | None]:
    """Every argument checked before a row is read, in this order; the checked level and seed."""
    level, seed = check_level(level), check_seed(seed)
    check_resamples(n_resamples)
    if metric != "auto":
        check_metric(metric)
    check_cluster(cluster)
    _check(run_std, effect)
    return level, seed


def _read_arms(before: Any, after: Any, threshold: Any) -> tuple[list, list]:
    """Each arm's runs, each run the rows of one writer."""
    runs_b, runs_a = as_runs(before, threshold), as_runs(after, threshold)
    for arm, run in [("before", r) for r in runs_b] + [("after", r) for r in runs_a]:
        one_writer(run, argument=arm, reads="one comparison")
    return runs_b, runs_a


def _pairing(runs_b: list, runs_a: list, settings: dict[str, Any]) -> tuple[list[str], dict]:
    """The tasks every run scored (in the first after run's order), and the fields of the
    result every verdict carries: the counts of paired and unpaired tasks, then ``settings``."""
    sets_b = [set(r.task_ids) for r in runs_b]
    sets_a = [set(r.task_ids) for r in runs_a]
    common = set.intersection(*sets_b, *sets_a)
    shared = [t for t in runs_a[0].task_ids if t in common]
    base = dict(n_paired=len(shared), n_only_before=len(set.union(*sets_b) - common),
                n_only_after=len(set.union(*sets_a) - common),
                noise_band=settings["noise_band"], noise_runs=settings["noise_runs"],
                level=settings["level"], metric=settings["metric"], effect=settings["effect"],
                n_runs_before=len(runs_b), n_runs_after=len(runs_a),
                cluster=settings["cluster"], reward_warning=settings["reward_warning"])
    return shared, base


def _nothing_paired(base: dict, notes: list[str]) -> Comparison:
    """No task scored in every run: nothing to pair."""
    return Comparison(mean_before=None, mean_before_ci=None, mean_after=None,
                      mean_after_ci=None, delta=None, ci=None, verdict="insufficient_data",
                      **base, note="; ".join(notes + [
                          "the runs share no task_id: nothing to pair; score the same "
                          "frozen held-out tasks before and after"]))


@dataclass
class _Paired:
    """The arms on their shared tasks: values (runs x tasks), per-task means, their difference,
    the families (with ``cluster``) and each arm's interval."""

    shared: list[str]
    one_seed: bool
    vb: np.ndarray
    va: np.ndarray
    cap_b: float | None
    cap_a: float | None
    pb: np.ndarray
    pa: np.ndarray
    d: np.ndarray
    delta: float
    scale: Any
    families: Families | None
    arm_bounds: tuple[float, float] | None
    iv_b: Any
    iv_a: Any
    arms: dict[str, Any]


def _pair(runs_b: list, runs_a: list, shared: list[str], metric: str, cluster: str | None,
          level: float, seed: int | None, n_resamples: int, base: dict) -> _Paired:
    """The arms on the shared tasks and each arm's interval (``base`` gets the families'
    count)."""
    vb, cap_b = arm_values(runs_b, shared, metric)
    va, cap_a = arm_values(runs_a, shared, metric)
    pb, pa = scaled_task_mean(vb), scaled_task_mean(va)
    d = difference(pa, pb)
    delta = scaled_mean(d)
    scale = value_scale(pb, pa)   # a spread within rounding of this is none (paired.no_spread)
    one_seed = len(runs_b) == 1 and len(runs_a) == 1
    families = None
    if cluster is not None:
        # the family field may be on one arm only (a teacher's rows often lack it)
        arm = runs_a[0] if runs_a[0].has_field(cluster) else runs_b[0]
        families = families_of(arm, cluster).take(positions(arm.task_ids, shared))
        base["n_families"] = families.n_families
    # each arm's interval stays in [0, 1] unless the rewards are on another scale
    arm_bounds = (None if metric == "reward" and runs_a[0].reward_scale.kind == "scale"
                  else (0.0, 1.0))
    iv_b, iv_a = intervals([pb, pa], [cap_b, cap_a], level, seed, n_resamples, families,
                           arm_bounds)
    arms = dict(mean_before=scaled_mean(pb), mean_before_ci=iv_b.ci,
                mean_before_ci_method=iv_b.method, mean_after=scaled_mean(pa),
                mean_after_ci=iv_a.ci, mean_after_ci_method=iv_a.method)
    return _Paired(shared, one_seed, vb, va, cap_b, cap_a, pb, pa, d, delta, scale, families,
                   arm_bounds, iv_b, iv_a, arms)


def _too_few(paired: _Paired, level: float, base: dict, notes: list[str]) -> Comparison:
    """Too few paired tasks for any test, or a difference past a float's range."""
    n, delta = len(paired.shared), paired.delta
    notes.insert(0, f"fewer than {min_paired_tasks(level)} paired tasks: no test on {n} "
                    f"tasks can call a change at level {level:g}; score more shared tasks"
                 if n < min_paired_tasks(level) else
                 "the difference of the arms does not fit a float's range (rewards near "
                 "1e308 of opposite signs): rescale the rewards")
    return Comparison(**paired.arms, delta=delta if math.isfinite(delta) else None, ci=None,
                      verdict="insufficient_data", **base,
                      n_changed=int(np.count_nonzero(paired.d)), note="; ".join(notes))


def _difference_interval(paired: _Paired, level: float, seed: int | None, n_resamples: int,
                         bounds: tuple[float, float] | None, notes: list[str]
                         ) -> tuple[Interval | None, str | None, float | None, dict[str, Any]]:
    """(interval, method, p-value, seed fields) of the difference: the paired statistic, else
    the unpaired one when no task's change differs, kept inside ``bounds``."""
    ci, method, p, seed_fields = _paired_statistic(paired, level, seed, n_resamples, bounds,
                                                   notes)
    ci, method, p = _unpaired_fallback(paired, (ci, method, p), bounds, seed, notes)
    if ci is not None and bounds is not None:
        ci = (max(ci[0], bounds[0]), min(ci[1], bounds[1]))
    return ci, method, p, seed_fields


def _paired_statistic(paired: _Paired, level: float, seed: int | None, n_resamples: int,
                      bounds: tuple[float, float] | None, notes: list[str]
                      ) -> tuple[Interval | None, str | None, float | None, dict[str, Any]]:
    """The paired interval: over families (``cluster``), over tasks (one run per arm), or with
    the between-seed variance added (several runs per arm)."""
    d, scale = paired.d, paired.scale
    seed_fields: dict[str, Any] = {}
    if paired.families is not None:
        ci_d = cluster_interval(d, paired.families, level=level, seed=seed, bounds=bounds)
        ci, method, p = ci_d.ci, ci_d.method, ci_d.p_value
        if not paired.one_seed:
            notes.append("several runs per arm: the clustered interval averages each arm's runs "
                         "per task and does not add the between-seed variance")
        note_d = degenerate_note(d, scale)
        if ci is not None and note_d is not None:   # no paired spread: no paired interval
            ci = method = p = None
            notes.append(note_d)
        elif ci_d.note:
            notes.append(ci_d.note)
    elif paired.one_seed:
        pb, pa = paired.pb, paired.pa
        binary = bool(np.all((pb == 0) | (pb == 1)) and np.all((pa == 0) | (pa == 1)))
        pi = paired_interval(d, level=level, seed=seed, n_resamples=n_resamples, mcnemar=binary,
                            scale=scale)
        ci, method, p = pi.ci, pi.method, pi.p_value
        if pi.note:
            notes.append(pi.note)
    else:
        ci, method, p, seed_fields, seed_note = with_seeds(d, paired.vb, paired.va, level)
        notes.append(seed_note)
        if ci is not None and ci[1] - ci[0] <= 0.0:
            ci = method = p = None
            notes.append(degenerate_note(d, scale) or "the seeds and the tasks show no spread: no "
                         "interval or p-value")
    return ci, method, p, seed_fields


def _unpaired_fallback(paired: _Paired, statistic: tuple, bounds: tuple[float, float] | None,
                       seed: int | None, notes: list[str]) -> tuple:
    """``statistic`` (interval, method, p-value), or where it has no interval because every task
    changed alike, the unpaired (MOVER) one of the two arms' intervals."""
    ci, method, p = statistic
    if ci is not None or degenerate_note(paired.d, paired.scale) is None:
        return statistic
    iv_b, iv_a, arms = paired.iv_b, paired.iv_a, paired.arms
    if iv_b.ci is None or iv_a.ci is None:
        notes.append("an arm has no interval (every task has the same value): no spread to "
                     "build an interval of the change from; score tasks whose values differ")
        return statistic
    ci = mover_difference(arms["mean_after"], iv_a.ci, arms["mean_before"], iv_b.ci, bounds)
    method = "mover_unpaired" if all(map(math.isfinite, ci)) else None
    ci = ci if method else None
    if method:
        p = mover_pvalue(arms["mean_after"], paired.pa, paired.cap_a, arms["mean_before"],
                         paired.pb, paired.cap_b, bounds, families=paired.families,
                         arm_bounds=paired.arm_bounds, seed=seed)
    notes.append("the interval and p-value are the unpaired ones of the two arms' "
                 "intervals (MOVER), which ignore the pairing, and the verdict reads "
                 "them" if method else
                 "the arms' intervals do not fit a float's range: no interval")
    return ci, method, p


def _mde(ci: Interval | None, level: float) -> float | None:
    """The smallest effect detected at ``HOLDOUT_POWER``, from the standard error the interval
    implies (so every method reads alike)."""
    if ci is None:
        return None
    z = z_value(0.5 + level / 2.0)
    return (z + z_value(HOLDOUT_POWER)) * (ci[1] - ci[0]) / (2.0 * z)


def _judged(paired: _Paired, ci: Interval | None, mde: float | None, band: float | None,
            effect: float, found: Any, level: float, seed: int | None,
            bounds: tuple[float, float] | None, notes: list[str]
            ) -> tuple[Verdict, FamilyInterval | None]:
    """The verdict (no stronger than the families' interval, when the rows carry a family
    field) and its caveats."""
    delta = paired.delta
    verdict = _verdict(delta, ci, band, effect, notes)
    by_family, verdict = (None, verdict) if found is None else judged_by_family(
        found, paired.shared, paired.d, verdict, lambda ci: _verdict(delta, ci, band, effect, []),
        level=level, seed=seed, bounds=bounds)
    if verdict == "no_detectable_change" and mde is not None and mde > effect:
        notes.append(f"underpowered: this holdout detects only effects >= {mde:.3f} "
                     f"(effect of interest {effect:g}); no detectable change is not no change")
    if paired.one_seed and verdict in ("moved", "moved_the_wrong_way"):
        notes.append("one run per arm: training-seed variance is unmeasured, so this verdict "
                     "covers task sampling and rollout noise only; train 2+ seeds per arm and "
                     "pass them as lists of runs")
    return verdict, by_family


def mover_pvalue(mean_a: float, values_a: np.ndarray, cap_a: float | None, mean_b: float,
                 values_b: np.ndarray, cap_b: float | None, bounds, *,
                 families: Families | None = None,
                 arm_bounds: tuple[float, float] | None = (0.0, 1.0),
                 seed: int | None = BOOTSTRAP_SEED) -> float:
    """The p-value of the unpaired (MOVER) interval: the smallest 1 - level at which it excludes
    0, found by bisection on the level (each arm's interval by the one rule at that level, over
    ``families`` when given). 1.0 when it never does; at least 1e-12 (a level of 1 - 1e-12 is
    the finest a float keeps)."""
    def excludes(p: float) -> bool:
        level = 1.0 - p
        ib, ia = intervals([values_b, values_a], [cap_b, cap_a], level, seed, 0, families,
                           arm_bounds)
        if ib.ci is None or ia.ci is None:
            return False
        lo, hi = mover_difference(mean_a, ia.ci, mean_b, ib.ci, bounds)
        return lo > 0 or hi < 0

    if not excludes(0.999999):
        return 1.0
    lo, hi = 1e-12, 0.999999           # excludes at p = hi; find the smallest such p
    if excludes(lo):
        return lo
    for _ in range(60):                # bisect on log p: p spans many decades
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if excludes(mid) else (mid, hi)
        if hi / lo < 1.0 + 1e-6:
            break
    return hi


def _verdict(delta: float, ci: Interval | None, band: float | None, effect: float,
             notes: list[str]) -> Verdict:
    if ci is None:
        return "insufficient_data"
    if ci[0] > 0 or ci[1] < 0:
        if band is not None and abs(delta) <= band + NOISE_TIE_TOLERANCE:
            notes.append(f"the interval excludes 0 but |delta| {abs(delta):.3f} is inside the "
                         f"noise band {band:.3f}")
            return "within_noise"
        return "moved" if delta > 0 else "moved_the_wrong_way"
    if -effect <= ci[0] and ci[1] <= effect:
        return "flat"
    return "no_detectable_change"


