"""Holdout sizing: tasks needed to detect an effect in a paired before/after comparison.

Miller 2024 (arXiv:2411.00640) Eq. 9:
n = (z_{1-alpha/2} + z_power)^2 (omega2 + sigma2_before/k + sigma2_after/k) / effect^2.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from pydantic import Field

from ..bootstrap import z_value
from ..defaults import (HOLDOUT_ALPHA, HOLDOUT_K, HOLDOUT_POWER, HOLDOUT_TABLE_KS, PLANNING_RHO,
                        PLANNING_SIGMA2, PLANNING_VAR_X, PROVE_EFFECT, RHO_ALTERNATIVES)
from ..errors import ArgumentError
from ..result import Result
from ..rows import Rows, load_rows
from .compare import pair_tasks


class HoldoutSize(Result):
    """Tasks needed to detect ``effect`` in a paired before/after comparison (Miller 2024 Eq. 9).

    n = (z_{1-alpha/2} + z_power)^2 (omega2 + sigma2_before/k + sigma2_after/k) / effect^2.
    """

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
    rho: float | None = Field(None, description=(
        "correlation of the arms' per-task pass rates that n rests on: measured on a paired "
        "pilot (``rho_from`` 'pilot'), else assumed (PLANNING_RHO, 'assumed')"))
    rho_from: Literal["pilot", "assumed"] | None = None
    n_tasks_if_rho: dict[str, int] | None = Field(None, description=(
        "when rho is assumed: the tasks needed at k if the arms correlate less (keys are rho)"))
    power_if_rho: dict[str, float] | None = Field(None, description=(
        "when rho is assumed: the power n_tasks has if the arms correlate less (keys are rho)"))
    note: str | None = None

    def render(self) -> str:
        lines = [f"holdout: {self.n_tasks} tasks at k={self.k} to detect {self.effect:.3f} "
                 f"(power {self.power:.2f}, alpha {self.alpha:.2f}; inputs from {self.inputs_from})"]
        lines.append("tasks needed by k: " + ", ".join(f"k={k}: {n}" for k, n in self.table.items()))
        if self.rho_from == "assumed" and self.n_tasks_if_rho:
            alt = ", ".join(f"rho {r}: {n} tasks (n={self.n_tasks} has power "
                            f"{self.power_if_rho[r]:.2f})" for r, n in self.n_tasks_if_rho.items())
            lines.append(f"rho {self.rho:g} between the arms is assumed, not measured; if lower: "
                         f"{alt}")
        elif self.rho is not None:
            lines.append(f"rho {self.rho:.2f} between the arms, measured on the pilot")
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


def _within_var(data: Rows, idx: np.ndarray | None = None) -> tuple[float, float, np.ndarray]:
    """(mean s_i^2, mean s_i^2/n_i, per-task rates) over tasks with >= 2 rollouts."""
    n, c = data.rollouts, data.passes
    if idx is not None:
        n, c = n[idx], c[idx]
    p = c / n
    ok = n >= 2
    if not ok.any():
        return float("nan"), float("nan"), p
    s2 = n[ok] / (n[ok] - 1) * p[ok] * (1 - p[ok])
    return float(s2.mean()), float((s2 / n[ok]).mean()), p


def holdout_size(effect: float = PROVE_EFFECT, *, k: int = HOLDOUT_K, before: Any = None,
                 after: Any = None, power: float = HOLDOUT_POWER, alpha: float = HOLDOUT_ALPHA,
                 threshold: float | None = None) -> HoldoutSize:
    """Tasks to hold out so a paired eval at ``k`` rollouts detects ``effect`` (Miller Eq. 9).

    Inputs: with pilot rows ``before`` and ``after`` (paired by task, >= 2 rollouts per task),
    omega2 = max(0, Var_i(d_i) - mean_i(s_A,i^2/n_A,i + s_B,i^2/n_B,i)) and sigma2 = mean s_i^2.
    With one arm only, Var(x) from that arm and omega2 = 2 Var(x) (1 - rho), rho = 0.8.
    With neither, the binomial planning model: x ~ U(0, 1), Var(x) = 1/12, E[sigma2] = 1/6, rho 0.8.
    """
    for name, value, lo, hi in (("effect", effect, 0.0, 1.0), ("power", power, 0.0, 1.0),
                                ("alpha", alpha, 0.0, 1.0)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo < value < hi:
            raise ArgumentError(f"`{name}` must be a number strictly between {lo:g} and {hi:g}, "
                                f"got {value!r}. Fix: e.g. effect=0.05, power=0.8, alpha=0.05")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ArgumentError(f"`k` must be a positive integer, got {k!r}. Fix: e.g. k=4")
    z2 = (z_value(1 - alpha / 2) + z_value(power)) ** 2
    note = None
    table_ks = tuple(sorted(set(HOLDOUT_TABLE_KS) | {k}))
    if before is not None and after is not None:
        b, a = load_rows(before, threshold=threshold), load_rows(after, threshold=threshold)
        ib, ia = pair_tasks(b, a)
        if ib.shape[0] < 3:
            raise ArgumentError(f"pilot runs share {ib.shape[0]} tasks; need >= 3 paired tasks. "
                                "Fix: score the same tasks before and after, or omit the pilot")
        s2b, s2b_n, pb = _within_var(b, ib)
        s2a, s2a_n, pa = _within_var(a, ia)
        var_d = float(np.var(pa - pb, ddof=1))
        if math.isnan(s2b) or math.isnan(s2a):
            # k = 1 pilot: the whole bracket at k = 1 is Var(d_i) (stats.md sec. 1.5).
            n1 = max(1, math.ceil(z2 * var_d / effect ** 2))
            return HoldoutSize(n_tasks=n1, effect=effect, k=1, power=power, alpha=alpha,
                               omega2=None, sigma2_before=None, sigma2_after=None,
                               inputs_from="pilot", table={1: n1},
                               note="pilot has one rollout per task: only k = 1 can be sized; "
                                    "re-run the pilot at k >= 2 to size other k")
        omega2 = max(0.0, var_d - (s2b_n + s2a_n))
        inputs_from = "pilot"
        rho = float(np.corrcoef(pb, pa)[0, 1]) if np.ptp(pb) > 0 and np.ptp(pa) > 0 else None
    elif before is not None or after is not None:
        one = load_rows(before if before is not None else after, threshold=threshold)
        s2, s2_n, p = _within_var(one)
        if math.isnan(s2) or one.n_tasks < 3:
            raise ArgumentError("a one-arm pilot needs >= 3 tasks with >= 2 rollouts each. Fix: "
                                "re-run the pilot at k >= 2, or omit it for the planning model")
        var_x = max(0.0, float(np.var(p, ddof=1)) - s2_n)
        omega2, s2b, s2a = 2 * var_x * (1 - PLANNING_RHO), s2, s2
        inputs_from = "one-arm pilot"
        rho = None
        note = (f"after-arm assumed like the pilot, rho = {PLANNING_RHO} between arms (assumed, "
                "not measured: a pilot of both arms measures it)")
    else:
        var_x = PLANNING_VAR_X
        omega2 = 2 * PLANNING_VAR_X * (1 - PLANNING_RHO)
        s2b = s2a = PLANNING_SIGMA2
        inputs_from = "binomial model"
        rho = None
        note = (f"no pilot: pass rates uniform on [0, 1], rho = {PLANNING_RHO} between arms "
                "(assumed, not measured); a pilot run of both arms gives a sharper number")

    def size(kk: int) -> int:
        return max(1, math.ceil(z2 * (omega2 + s2b / kk + s2a / kk) / effect ** 2 - 1e-9))

    table = {kk: size(kk) for kk in table_ks}
    n_k = table[k]
    assumed: dict[str, Any] = {}
    if inputs_from != "pilot":
        # n rests on rho; say what a weaker correlation costs (the audit: rho 0.5 instead of
        # 0.8 leaves the planned n about 62% power)
        z_a = z_value(1 - alpha / 2)
        n_if, power_if = {}, {}
        for r in RHO_ALTERNATIVES:
            var = 2 * var_x * (1 - r) + s2b / k + s2a / k
            n_if[f"{r:g}"] = max(1, math.ceil(z2 * var / effect ** 2 - 1e-9))
            power_if[f"{r:g}"] = float(NormalDist().cdf(math.sqrt(n_k) * effect / math.sqrt(var)
                                                        - z_a))
        assumed = dict(rho=PLANNING_RHO, rho_from="assumed", n_tasks_if_rho=n_if,
                       power_if_rho=power_if)
    elif rho is not None:
        assumed = dict(rho=rho, rho_from="pilot")
    if n_k < 300:
        extra = ("under a few hundred tasks the normal approximation is optimistic "
                 "(Bowyer et al. 2025): round up")
        note = f"{note}; {extra}" if note else extra
    return HoldoutSize(n_tasks=n_k, effect=float(effect), k=k, power=float(power),
                       alpha=float(alpha), omega2=omega2, sigma2_before=s2b, sigma2_after=s2a,
                       inputs_from=inputs_from, table=table, note=note, **assumed)
