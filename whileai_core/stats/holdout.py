"""Holdout sizing: tasks needed to detect an effect in a paired before/after comparison.

Miller 2024 (arXiv:2411.00640) Eq. 9:
n = (z_{1-alpha/2} + z_power)^2 (omega2 + sigma2_before/k + sigma2_after/k) / effect^2.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Annotated, Any, Literal, NamedTuple

import numpy as np
from pydantic import Field

from ..bootstrap import z_value
from ..defaults import (CLUSTER_MIN_FAMILIES, HOLDOUT_ALPHA, HOLDOUT_K, HOLDOUT_POWER,
                        HOLDOUT_SHARE,
                        HOLDOUT_TABLE_KS, PLANNING_RHO, PLANNING_SIGMA2, PLANNING_VAR_X,
                        PROVE_EFFECT, RHO_ALTERNATIVES)
from ..errors import ArgumentError
from ..operations import READS, operation
from ..operations.args import MAX_K, Arg, Cluster, EffectSize, OptionalRows, Threshold
from ..result import Result
from ..rows import Rows, load_rows
from .clustered import check_cluster, design_effect, families_of, mean_family_size
from .arms import pair_tasks
from .noise import within_variance
from .rates import check_metric
from ..roles import FIELDS_DOC, fields_report, read_fields
from ..voice import arg
from ..writers import one_writer


class HoldoutSize(Result):
    """Tasks needed to detect ``effect`` in a paired before/after comparison (Miller 2024 Eq. 9,
    module docstring)."""

    n_tasks: int
    effect: float
    k: int
    power: float
    alpha: float
    omega2: float | None
    sigma2_before: float | None
    sigma2_after: float | None
    inputs_from: Literal["pilot", "one-arm pilot", "binomial model"]
    table: dict[int, int]
    metric: Literal["pass", "reward"] = "pass"
    cluster: str | None = Field(None, description="the row field naming each task's family")
    design_effect: float | None = Field(
        None, description="how much families widen the variance of the mean (Miller 2024's "
                          "clustered variance over the independent one, on the pilot): every n "
                          "here is already multiplied by it")
    family_size: float | None = Field(None, description="mean tasks per family in the pilot")
    n_families: int | None = Field(None, description="families to hold out at that size")
    rho: float | None = Field(None, description=(
        "correlation of the arms' per-task values (pass rates, or mean rewards with metric "
        "'reward') that n rests on: measured on a paired pilot (``rho_from`` 'pilot'), else "
        "assumed (PLANNING_RHO, 'assumed')"))
    rho_from: Literal["pilot", "assumed"] | None = None
    n_tasks_if_rho: dict[str, int] | None = Field(None, description=(
        "when rho is assumed: the tasks needed at k if the arms correlate less (keys are rho)"))
    power_if_rho: dict[str, float] | None = Field(None, description=(
        "when rho is assumed: the power n_tasks has if the arms correlate less (keys are rho)"))
    pool: int | None = Field(None, description="tasks the pilot has: the pool a held-out set "
                                               "is drawn from (`split` says what it allows)")
    split: str | None = Field(None, description="what holding the tasks out of the pool costs, "
                                                "or that the pool is too small")
    fields: list[str] = Field(default_factory=list, description=FIELDS_DOC)
    note: str | None = None

    def render(self) -> str:
        lines = [f"holdout: {self.n_tasks} tasks at k={self.k} to detect {self.effect:.3f} "
                 f"(power {self.power:.2f}, alpha {self.alpha:.2f}; inputs from {self.inputs_from})"]
        lines.append("tasks needed by k: " + ", ".join(f"k={k}: {n}" for k, n in self.table.items()))
        if self.design_effect is not None:
            lines.append(f"families in `{self.cluster}`: design effect {self.design_effect:.2f} "
                         f"(included), about {self.family_size:.1f} tasks per family, so "
                         f"{self.n_families} families")
        if self.rho_from == "assumed" and self.n_tasks_if_rho:
            alt = ", ".join(f"rho {r}: {n} tasks (n={self.n_tasks} has power "
                            f"{self.power_if_rho[r]:.2f})" for r, n in self.n_tasks_if_rho.items())
            lines.append(f"rho {self.rho:g} between the arms is assumed, not measured; if lower: "
                         f"{alt}")
        elif self.rho is not None:
            lines.append(f"rho {self.rho:.2f} between the arms, measured on the pilot")
        if self.split:
            lines.append(self.split)
        if self.note:
            lines.append(f"note: {self.note}")
        lines += [f"field {f}" for f in self.fields]
        return "\n".join(lines)


def pool_split(need: int, pool: int, effect: float, power: float) -> str:
    """What a held-out test of ``need`` tasks costs a pool of ``pool`` (what is left to train
    on), or, when the pool is too small, what holding out HOLDOUT_SHARE of it detects instead
    (n scales as 1 / effect^2, so m tasks detect effect x sqrt(need / m))."""
    if need < pool:
        return (f"the pool of {pool} tasks holds a test of {need} (power {power:g} for "
                f"{effect:g}), leaving {pool - need} to train on")
    share = max(1, math.ceil(HOLDOUT_SHARE * pool))
    return (f"the pool of {pool} tasks is too small: a test that detects {effect:g} (power "
            f"{power:g}) needs {need}; holding out {share} ({HOLDOUT_SHARE:.0%}) leaves "
            f"{pool - share} to train on and detects about {effect * math.sqrt(need / share):.2f}"
            "; score more tasks for the test, or accept that coarser one")


def _within_var(data: Rows, idx: np.ndarray | None = None, metric: str = "pass"
                ) -> tuple[float, float, np.ndarray]:
    """(mean s_i^2, mean s_i^2/n_i, per-task values) over tasks with >= 2 rollouts; s_i^2 the
    binomial n/(n-1) p(1-p) for pass rates, the rewards' sample variance for a mean reward."""
    n, c = data.rollouts, data.passes
    p = data.task_values(metric)
    s2_all = within_variance(data) if metric == "reward" else None
    if idx is not None:
        n, c, p = n[idx], c[idx], p[idx]
        s2_all = None if s2_all is None else s2_all[idx]
    ok = n >= 2
    if not ok.any():
        return float("nan"), float("nan"), p
    s2 = s2_all[ok] if s2_all is not None else n[ok] / (n[ok] - 1) * p[ok] * (1 - p[ok])
    return float(s2.mean()), float((s2 / n[ok]).mean()), p


_EDGE = 1e-6  # the normal quantiles and n ~ 1/effect^2 overflow past these


def _design(cluster: str | None, rows: Rows | None, idx: np.ndarray | None,
            values: np.ndarray | None) -> tuple[float, float | None, str | None]:
    """(design effect, mean family size, note) of a pilot's per-task values (1 without families;
    never below 1: a design effect under 1 read off a pilot is not a promise to plan on)."""
    if cluster is None:
        return 1.0, None, None
    fam = families_of(rows, cluster).take(idx)
    note = None
    if fam.n_families < CLUSTER_MIN_FAMILIES:
        note = (f"the design effect is read from only {fam.n_families} families: it is itself "
                "uncertain; a pilot with more families sharpens it")
    return max(1.0, design_effect(values, fam)), mean_family_size(fam), note


@operation(
    toolset="core", effect=READS, title="How many held-out tasks?",
    description=(
        "Number of held-out tasks a paired eval needs to detect `effect` with the given power "
        "(Miller 2024, Eq. 9), plus a table over k. Without pilot rows it uses a planning "
        "model; with pilot rows, your data's variances."),
    doing="sizing a holdout")
def holdout_size(effect: Annotated[EffectSize, Field(ge=_EDGE, le=1 - _EDGE, description=(
                     "Smallest change in pass@1 worth detecting, in (0, 1): 0.05 = 5 "
                     "points."))] = PROVE_EFFECT, *,
                 k: Annotated[int, Field(ge=1, le=MAX_K, description=(
                     "Rollouts per task in the held-out eval."))] = HOLDOUT_K,
                 before: Annotated[OptionalRows, Field(description=(
                     "Optional pilot rows of the baseline: with them the variances come from "
                     "your data instead of a planning model."))] = None,
                 after: Annotated[OptionalRows, Field(description=(
                     "Optional pilot rows after training, the same tasks as `before` (enables "
                     "the paired correlation)."))] = None,
                 power: Annotated[float, Field(
                     ge=_EDGE, le=1 - _EDGE, allow_inf_nan=False, description=(
                     "Probability of detecting a true change of `effect`, in (0, 1)."))
                 ] = HOLDOUT_POWER,
                 alpha: Annotated[float, Field(
                     ge=_EDGE, le=1 - _EDGE, allow_inf_nan=False, description=(
                     "Two-sided false-positive rate, in (0, 1)."))] = HOLDOUT_ALPHA,
                 threshold: Threshold = None, cluster: Cluster = None,
                 metric: Annotated[Literal["auto", "pass", "reward"],
                                   Arg(cli=False, mcp=False)] = "auto") -> HoldoutSize:
    """Tasks to hold out so a paired eval at ``k`` rollouts detects ``effect`` (Miller Eq. 9).

    Inputs: with pilot rows ``before`` and ``after`` (paired by task, >= 2 rollouts per task),
    omega2 = max(0, Var_i(d_i) - mean_i(s_A,i^2/n_A,i + s_B,i^2/n_B,i)) and sigma2 = mean s_i^2.
    With one arm only, Var(x) from that arm and omega2 = 2 Var(x) (1 - rho), rho = 0.8.
    With neither, the binomial planning model: x ~ U(0, 1), Var(x) = 1/12, E[sigma2] = 1/6, rho 0.8.
    ``metric``: "auto" sizes for the mean reward when a pilot's reward is continuous (the
    within-task variance is then the rewards' own), else for the pass rate.
    ``cluster``: a row field naming each task's family in the pilot; every n is multiplied by
    the pilot's design effect (Miller 2024's clustered variance of the mean over the
    independent one, on the paired differences, or on one arm's values) and the families
    needed at the pilot's family size are given.
    """
    _check_arguments(effect, k, power, alpha, cluster, metric, before, after)
    z2 = (z_value(1 - alpha / 2) + z_value(power)) ** 2
    pilots, metric = _pilots(before, after, threshold, metric)
    warning = next((p.reward_scale.warning for p in pilots if p.reward_scale.warning), None)
    if len(pilots) == 2:
        v = _paired_pilot(*pilots, metric)
        if v.var_d is not None:  # one rollout per task: only k = 1 can be sized
            return _one_rollout(v, z2, effect, power, alpha, metric, cluster)
    elif pilots:
        v = _one_arm_pilot(pilots[0], metric, cluster)
    else:
        v = _planning_model()
    deff, fam_size, fam_note = _design(cluster, v.rows, v.idx, v.values)

    def size(kk: int, omega2: float = v.omega2) -> int:
        var = omega2 + v.s2b / kk + v.s2a / kk
        return max(1, math.ceil(deff * z2 * var / effect ** 2 - 1e-9))

    table = {kk: size(kk) for kk in sorted(set(HOLDOUT_TABLE_KS) | {k})}
    n_k = table[k]
    assumed: dict[str, Any] = {}
    if v.inputs_from != "pilot":
        assumed = _if_rho(v, size, k, deff, effect, alpha, n_k)
    elif v.rho is not None:
        assumed = dict(rho=v.rho, rho_from="pilot")
    small = ("under a few hundred tasks the normal approximation is optimistic "
             "(Bowyer et al. 2025): round up") if n_k < 300 else None
    note = "; ".join(filter(None, [v.note, warning, fam_note, small])) or None
    pool = max(p.n_tasks for p in pilots) if pilots else None
    return HoldoutSize(n_tasks=n_k, effect=float(effect), k=k, power=float(power),
                       pool=pool, split=None if pool is None else pool_split(
                           n_k, pool, float(effect), float(power)),
                       fields=_fields(pilots, metric, cluster),
                       alpha=float(alpha), omega2=v.omega2, sigma2_before=v.s2b,
                       sigma2_after=v.s2a, inputs_from=v.inputs_from, table=table,
                       metric=metric, note=note,
                       **_families_fields(cluster, deff, fam_size, n_k), **assumed)


def _pilots(before: Any, after: Any, threshold: Any, metric: str) -> tuple[list[Rows], str]:
    """The pilot runs given (each one writer's rows) and the metric in force."""
    named = [(n, x) for n, x in (("before", before), ("after", after)) if x is not None]
    pilots = [load_rows(x, threshold=threshold) for _, x in named]
    for (name, _), pilot in zip(named, pilots):
        one_writer(pilot, argument=name, reads="one holdout size")
    if metric == "auto":
        metric = ("reward" if threshold is None and any(p.reward_scale.continuous
                                                        for p in pilots) else "pass")
    return pilots, metric


def _families_fields(cluster: str | None, deff: float, fam_size: float | None,
                     n: int) -> dict[str, Any]:
    """The result's cluster fields: the design effect, family size and families for n tasks."""
    return dict(cluster=cluster, design_effect=None if cluster is None else deff,
                family_size=fam_size,
                n_families=None if fam_size is None else math.ceil(n / fam_size))


def _check_arguments(effect: Any, k: Any, power: Any, alpha: Any, cluster: Any, metric: Any,
                     before: Any, after: Any) -> None:
    check_cluster(cluster)
    if metric != "auto":
        check_metric(metric)
    if cluster is not None and before is None and after is None:
        raise ArgumentError("`cluster` needs pilot rows (before, after, or both) that carry the "
                            "family field: without them there is no design effect to read",
                            fix="pass a pilot, or leave cluster out")
    for name, value, lo, hi in (("effect", effect, 0.0, 1.0), ("power", power, 0.0, 1.0),
                                ("alpha", alpha, 0.0, 1.0)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo < value < hi:
            raise ArgumentError(f"`{name}` must be a number strictly between {lo:g} and {hi:g}, "
                                f"got {value!r}", fix="e.g. effect=0.05, power=0.8, alpha=0.05")
        # the normal quantiles and n ~ 1/effect^2 overflow past these
        if not _EDGE <= value <= 1 - _EDGE:
            raise ArgumentError(f"`{name}` = {value!r} is too close to 0 or 1 to size a holdout "
                                f"(it must be in [{_EDGE:g}, 1 - {_EDGE:g}])", fix="e.g. "
                                "effect=0.05, power=0.8, alpha=0.05")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ArgumentError(f"`k` must be a positive integer, got {k!r}", fix="e.g. k=4")


class _Inputs(NamedTuple):
    """What n is sized from: the between-task variance of the difference (``omega2``), each
    arm's within-task variance, and where they come from; the values, rows and tasks a design
    effect is read on; ``var_d``, set only for a paired pilot of one rollout per task."""

    omega2: float
    s2b: float
    s2a: float
    inputs_from: Literal["pilot", "one-arm pilot", "binomial model"]
    var_x: float | None = None
    rho: float | None = None
    note: str | None = None
    values: np.ndarray | None = None
    rows: Rows | None = None
    idx: np.ndarray | None = None
    var_d: float | None = None


def _paired_pilot(b: Rows, a: Rows, metric: str) -> _Inputs:
    ib, ia = pair_tasks(b, a)
    if ib.shape[0] < 3:
        raise ArgumentError(f"pilot runs share {ib.shape[0]} tasks; need >= 3 paired tasks",
                            fix="score the same tasks before and after, or omit the pilot")
    s2b, s2b_n, pb = _within_var(b, ib, metric)
    s2a, s2a_n, pa = _within_var(a, ia, metric)
    var_d = float(np.var(pa - pb, ddof=1))
    design = dict(values=pa - pb, rows=a, idx=ia)
    if math.isnan(s2b) or math.isnan(s2a):
        return _Inputs(math.nan, s2b, s2a, "pilot", var_d=var_d, **design)
    rho = float(np.corrcoef(pb, pa)[0, 1]) if np.ptp(pb) > 0 and np.ptp(pa) > 0 else None
    return _Inputs(max(0.0, var_d - (s2b_n + s2a_n)), s2b, s2a, "pilot", rho=rho, **design)


def _one_rollout(v: _Inputs, z2: float, effect: float, power: float, alpha: float, metric: str,
                 cluster: str | None) -> HoldoutSize:
    """A k = 1 pilot: the whole bracket at k = 1 is Var(d_i) (stats.md sec. 1.5)."""
    deff, fam_size, _ = _design(cluster, v.rows, v.idx, v.values)
    n1 = max(1, math.ceil(deff * z2 * v.var_d / effect ** 2))
    return HoldoutSize(n_tasks=n1, effect=effect, k=1, power=power, alpha=alpha,
                       omega2=None, sigma2_before=None, sigma2_after=None,
                       inputs_from="pilot", table={1: n1}, metric=metric,
                       **_families_fields(cluster, deff, fam_size, n1),
                       note="pilot has one rollout per task: only k = 1 can be sized; "
                            "re-run the pilot at k >= 2 to size other k")


def _one_arm_pilot(one: Rows, metric: str, cluster: str | None) -> _Inputs:
    """The after-arm assumed like the pilot, the arms correlating PLANNING_RHO."""
    s2, s2_n, p = _within_var(one, None, metric)
    if math.isnan(s2) or one.n_tasks < 3:
        raise ArgumentError("a one-arm pilot needs >= 3 tasks with >= 2 rollouts each",
                            fix="re-run the pilot at k >= 2, or omit it for the planning model")
    var_x = max(0.0, float(np.var(p, ddof=1)) - s2_n)
    note = "; ".join(filter(None, [
        f"after-arm assumed like the pilot, rho = {PLANNING_RHO} between arms (assumed, not "
        "measured: a pilot of both arms measures it)",
        None if cluster is None else
        "the design effect is read on one arm's per-task values: paired differences usually "
        "cluster less, so this n is on the safe side; a paired pilot reads it on the "
        "differences"]))
    return _Inputs(2 * var_x * (1 - PLANNING_RHO), s2, s2, "one-arm pilot", var_x=var_x,
                   note=note, values=p, rows=one, idx=np.arange(one.n_tasks))


def _planning_model() -> _Inputs:
    return _Inputs(2 * PLANNING_VAR_X * (1 - PLANNING_RHO), PLANNING_SIGMA2, PLANNING_SIGMA2,
                   "binomial model", var_x=PLANNING_VAR_X,
                   note=f"no pilot: pass rates uniform on [0, 1], rho = {PLANNING_RHO} between "
                        "arms (assumed, not measured); a pilot run of both arms gives a sharper "
                        "number")


def _if_rho(v: _Inputs, size: Any, k: int, deff: float, effect: float, alpha: float,
            n_k: int) -> dict[str, Any]:
    """n rests on an assumed rho: what a weaker correlation costs (the audit: rho 0.5 instead
    of 0.8 leaves the planned n about 62% power)."""
    z_a = z_value(1 - alpha / 2)
    n_if, power_if = {}, {}
    for r in RHO_ALTERNATIVES:
        var = 2 * v.var_x * (1 - r) + v.s2b / k + v.s2a / k
        n_if[f"{r:g}"] = size(k, omega2=2 * v.var_x * (1 - r))
        power_if[f"{r:g}"] = float(NormalDist().cdf(
            math.sqrt(n_k / deff) * effect / math.sqrt(var) - z_a))
    return dict(rho=PLANNING_RHO, rho_from="assumed", n_tasks_if_rho=n_if,
                power_if_rho=power_if)


def _fields(pilots: list[Rows], metric: str, cluster: str | None) -> list[str]:
    """How the first pilot's fields were read."""
    did = {"task": "the pilot's tasks: their variances size the test",
           "reward": f"sized for the {'mean reward' if metric == 'reward' else 'pass rate'}",
           "model": "one writer per pilot",
           **({cluster: "its design effect multiplies n"} if cluster else {})}
    family = read_fields(pilots[0]).family if pilots and cluster is None else None
    if family is not None:
        did[family.name] = (f"{family.n_values} families, not read: "
                            f"{arg('cluster', family.name)} multiplies n by their design effect")
    return [line for p in pilots[:1] for line in fields_report(p, did)]
