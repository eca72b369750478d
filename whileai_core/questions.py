"""The route's questions, one function each, asked of the rows as they are.

1. :func:`truncated_passes`: can a cut-off reply pass?
2. :func:`rollouts_per_task`: how many rollouts per task (k)? At k = 1 it says what one rollout
   per task can estimate (the mean) and what it cannot (the per-task band).
3. :func:`band` and :func:`split_share`: which tasks carry signal for a grouped method: rewards
   that differ by more than ``REWARD_SPREAD_TOLERANCE`` of the reward's scale (on 0/1 rewards:
   the task is split). A continuous reward can carry signal while no reply passes: prime-rl's
   GRPO credit is the reward minus its group's mean (src/prime_rl/orchestrator/algo/grpo.py at
   559b447). ``floor`` is no signal in the reward at all.
5. :func:`on_policy`: did the model you will train write the rows? A model id that nearly
   matches the rows' (case, spaces, a revision suffix, one letter) is an error naming it.

Facts: docs/core.md, "The route"; question 4 (the teacher) is :mod:`whileai_core.teacher`.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from .bootstrap import check_level
from .defaults import (BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE_LEVEL, GROUP_MIN_ROLLOUTS)
from .errors import ArgumentError
from .models import base_model, model_size_b
from .result import Result, fmt_rate
from .rewards import RewardKind
from .rows import Rows, load_rows
from .stats import Rate, pass_rate
from .stats.clustered import Families
from .stats.fields import LEVEL_DOC, METHOD_DOC, ci95_alias
from .stats.intervals import task_interval
from .stats.rates import K1_CANNOT
from .truncation import CutOffPay, TruncatedPasses, cut_off_pay, truncated_passes  # noqa: F401
from .voice import arg

Interval = tuple[float, float]


# --- 2. rollouts per task (1. truncation: whileai_core.truncation) -----------------------------

class RolloutsPerTask(Result):
    """k = the fewest rollouts any task has (a grouped method needs k >= 2; 4+ is the aim). With
    tasks of one rollout, ``mean`` is what they can estimate and ``note`` what they cannot."""

    k: int
    max: int
    median: float
    n_tasks: int
    tasks_below_target: int
    target: int = GROUP_MIN_ROLLOUTS
    n_single: int = Field(0, description="tasks with one rollout")
    mean: Rate | None = Field(None, description="at k = 1: the mean over tasks, the one number "
                                                "one rollout per task estimates")
    note: str | None = None

    def render(self) -> str:
        text = (f"k = {self.k} (min rollouts per task; max {self.max}, median {self.median:g}, "
                f"{self.n_tasks} task{'' if self.n_tasks == 1 else 's'}; "
                f"{self.tasks_below_target} below {self.target})")
        if self.mean is not None:
            what = "mean reward" if self.mean.metric == "reward" else "mean pass rate"
            text += f"; {what} {fmt_rate(self.mean.value, self.mean.ci, self.mean.n_tasks)}"
        return text + (f"; {self.note}" if self.note else "")


def rollouts_per_task(rows: Any, *, level: float = CONFIDENCE_LEVEL) -> RolloutsPerTask:
    data = load_rows(rows)
    n = data.rollouts
    single = int((n == 1).sum())
    mean, note = None, None
    if single:
        metric = "reward" if data.reward_scale.continuous else "pass"
        mean = pass_rate(data, check_level(level), metric=metric)
        note = (f"{single} of {data.n_tasks} tasks have one rollout: the mean over tasks is "
                f"estimable; {K1_CANNOT}; re-sample every prompt at k >= {GROUP_MIN_ROLLOUTS}")
    return RolloutsPerTask(k=int(n.min()), max=int(n.max()), median=float(np.median(n)),
                           n_tasks=data.n_tasks,
                           tasks_below_target=int((n < GROUP_MIN_ROLLOUTS).sum()),
                           n_single=single, mean=mean, note=note)


# --- 3. the band: passes, and the reward's spread within each task ------------------------------

class Band(Result):
    """Where the tasks sit, read on the reward's spread within each task: ``floor`` (no task's
    rollouts differ), ``saturated`` (every rollout passes), ``mixed`` (some task has signal) or
    ``unseen`` (every task has one rollout). The pass counts are the band at the threshold;
    for a continuous reward ``mean_reward`` is the headline."""

    band: Literal["floor", "saturated", "mixed", "unseen"]
    n_tasks: int
    n_always_fail: int
    n_always_pass: int
    n_split: int
    pass_at_1: Rate
    reward_kind: RewardKind = "binary"
    n_signal: int = Field(0, description="tasks whose rewards differ by more than `tolerance`")
    n_single: int = Field(0, description="tasks with one rollout: no spread to read")
    tolerance: float = Field(0.0, description="a task has signal when its rewards differ by "
                                              "more than this (REWARD_SPREAD_TOLERANCE x scale)")
    spread_median: float | None = Field(None, description="median of max - min reward within "
                                                          "a task, over tasks with 2+ rollouts")
    mean_reward: Rate | None = None
    threshold: float = Field(1.0, description="the pass mark of the pass counts")

    def render(self) -> str:
        rates = [r for r in (self.mean_reward, self.pass_at_1) if r is not None]
        notes = "".join(f"\nnote: {n}" for n in dict.fromkeys(r.note for r in rates if r.note))
        p1 = self.pass_at_1
        passes = (f"{self.n_always_fail} tasks always fail, {self.n_always_pass} always pass, "
                  f"{self.n_split} split; pass@1 {fmt_rate(p1.value, p1.ci, p1.n_tasks)}, "
                  f"{p1.n_rows} rows")
        single = f"; {self.n_single} tasks have one rollout" if self.n_single else ""
        if self.reward_kind == "binary":
            return f"{self.band}: {passes}{single}{notes}"
        m = self.mean_reward
        mean = "n/a" if m is None else f"{fmt_rate(m.value, m.ci, m.n_tasks)}, {m.n_rows} rows"
        return (f"{self.band}: {self.n_signal} of {self.n_tasks - self.n_single} tasks have "
                f"rewards that differ by more than {self.tolerance:g} (median spread "
                f"{self.spread_median if self.spread_median is not None else 0:.3f}); mean reward "
                f"{mean}\n   passes at threshold {self.threshold:g}: {passes}{single}{notes}")


def _signal(data: Rows) -> tuple[np.ndarray, np.ndarray, float]:
    """(signal per task, spread per task, tolerance): rewards differ by more than tolerance.
    "More" past float rounding: 0.51 - 0.5 is 0.010000000000000009, a spread of exactly 0.01."""
    tol = data.reward_scale.tolerance
    spread = data.spread()
    grouped = data.rollouts >= 2
    return (spread > tol * (1.0 + 1e-9)) & grouped, spread, tol


def band(rows: Any, *, level: float = CONFIDENCE_LEVEL,
         families: Families | None = None) -> Band:
    data = load_rows(rows)
    level = check_level(level)
    zero = int((data.passes == 0).sum())
    full = int((data.passes == data.rollouts).sum())
    signal, spread, tol = _signal(data)
    grouped = data.rollouts >= 2
    n_signal, n_single = int(signal.sum()), int((~grouped).sum())
    if not grouped.any():
        name = "unseen"
    elif n_signal:
        name = "mixed"
    elif bool(np.all(data.passes[grouped] == data.rollouts[grouped])):
        name = "saturated"
    else:
        name = "floor"
    scale = data.reward_scale
    mean = pass_rate(data, level, metric="reward", families=families) if scale.continuous else None
    return Band(band=name, n_tasks=data.n_tasks, n_always_fail=zero, n_always_pass=full,
                n_split=data.n_tasks - zero - full,
                pass_at_1=pass_rate(data, level, families=families), reward_kind=scale.kind,
                n_signal=n_signal, n_single=n_single, tolerance=tol,
                spread_median=float(np.median(spread[grouped])) if grouped.any() else None,
                mean_reward=mean, threshold=data.threshold)


class SplitShare(Result):
    """Share of tasks with signal for a grouped method (split tasks for a 0/1 reward, a reward
    spread above ``tolerance`` for a continuous one); ``ci`` over tasks
    (:mod:`whileai_core.stats.intervals`). ``expected_by_k``: for a 0/1 reward, the mean of
    1 - p^k - (1-p)^k over tasks at their measured rate p; null at k = 1 or a continuous reward.
    """

    share: float
    ci: Interval | None = Field(description="interval of the share at `level`; null under 3 tasks")
    level: float = Field(CONFIDENCE_LEVEL, description=LEVEL_DOC)
    ci_method: str | None = Field(None, description=METHOD_DOC)
    n_split: int
    n_tasks: int
    basis: Literal["passes", "reward_spread"] = "passes"
    expected_by_k: dict[int, float] | None = None
    note: str | None = None

    ci95 = ci95_alias("ci")

    def render(self) -> str:
        what = "split share" if self.basis == "passes" else "share of tasks with reward spread"
        text = f"{what} {fmt_rate(self.share, self.ci, self.n_tasks)} ({self.n_split} with signal)"
        if self.expected_by_k:
            exp = ", ".join(f"k={k}: {v:.2f}" for k, v in self.expected_by_k.items())
            text += f"; expected at {exp}"
        return text + (f"; {self.note}" if self.note else "")


def split_share(rows: Any, *, level: float = CONFIDENCE_LEVEL) -> SplitShare:
    data = load_rows(rows)
    level = check_level(level)
    signal, _, tol = _signal(data)
    continuous = data.reward_scale.continuous
    grouped = data.rollouts >= 2
    expected, note = None, None
    if not continuous and grouped.all():
        rate, at = _distinct_rates(data)
        expected = {k: float(np.mean((1 - rate ** k - (1 - rate) ** k)[at]))
                    for k in (2, 4, 8, 16)}
    elif not grouped.all():
        note = (f"{int((~grouped).sum())} tasks have one rollout: {K1_CANNOT}; re-sample at k >= "
                f"{GROUP_MIN_ROLLOUTS}")
    else:
        note = (f"signal is a reward spread above {tol:g} within a task; no expected share by k "
                "for a continuous reward")
    iv = task_interval(signal.astype(float), level=level, seed=BOOTSTRAP_SEED,
                       n_resamples=BOOTSTRAP_RESAMPLES)
    return SplitShare(share=float(signal.mean()), ci=iv.ci, level=level, ci_method=iv.method,
                      n_split=int(signal.sum()), n_tasks=data.n_tasks,
                      basis="reward_spread" if continuous else "passes", expected_by_k=expected,
                      note=note)


def _distinct_rates(data: Rows) -> tuple[np.ndarray, np.ndarray]:
    """The tasks' pass rates as ``(rates, at)`` with ``rates[at]`` the per-task rates: each
    distinct (passes, rollouts) once where rollouts are few (powers computed once each)."""
    top = int(data.rollouts.max()) + 1 if data.n_tasks else 1
    if top > 1024:
        return data.pass_rate(), np.arange(data.n_tasks)
    code = data.passes * top + data.rollouts
    seen = np.zeros(top * top, dtype=bool)
    seen[code] = True
    codes = np.flatnonzero(seen)
    place = np.zeros(top * top, dtype=np.int64)
    place[codes] = np.arange(codes.shape[0])
    return (codes // top) / (codes % top), place[code]


# --- 5. who wrote the rows ---------------------------------------------------------------------

class OnPolicy(Result):
    """Who sampled the rows: the model you will train, an older copy of it (same name, another
    ``@`` revision), or another model; rows without ``model`` are assumed on-policy, noted."""

    status: Literal["on_policy", "older_copy", "other_model", "unknown"]
    model: str
    share_same: float
    models: dict[str, int]
    n_models: int
    n_rows: int
    note: str | None = None
    shown: str | None = None
    cut_lists = ("models",)

    def __bool__(self) -> bool:
        return self.status in ("on_policy", "unknown")

    def render(self) -> str:
        seen = ", ".join(f"{m} ({n})" for m, n in self.models.items())
        text = f"{self.status}: {self.share_same:.0%} of {self.n_rows} rows by {self.model}; seen {seen}"
        return (text + (f" ({self.shown})" if self.shown else "")
                + (f". {self.note}" if self.note else ""))


def _one_edit(a: str, b: str) -> str | None:
    """The character one edit changes between ``a`` and ``b`` ('' for none), else None."""
    if a == b or abs(len(a) - len(b)) > 1:
        return None
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return (a[i] + b[i]) if a[i + 1:] == b[i + 1:] else None
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[i] if longer[i + 1:] == shorter[i:] else None


def near_miss(model: str, seen: list[str]) -> tuple[str, str] | None:
    """(the rows' model, how it differs) when ``model`` is no row's model but nearly one's:
    spaces, letter case, a revision suffix, the hub owner on one side only (another owner's
    copy may be a fine-tune), or one edit of a letter (a digit changes the model)."""
    if model in seen:
        return None
    for m in seen:
        if m.strip() == model.strip():
            return m, "spaces around the id"
        if m.lower() == model.lower():
            return m, "letter case"
        if m.strip().lower() == model.strip().lower():
            return m, "letter case and spaces"
        if "@" in model and "@" not in m and base_model(model) == m:
            return m, "a revision suffix the rows do not carry"
        if ("/" in m) != ("/" in model) and m.rsplit("/", 1)[-1] == model.rsplit("/", 1)[-1]:
            return m, "an organisation prefix one of them lacks"
    for m in seen:
        changed = _one_edit(model, m)
        if changed and not any(ch.isdigit() for ch in changed) \
                and model_size_b(model) == model_size_b(m):
            return m, "one character"
    return None


def check_model(data: Rows, model: str) -> None:
    """An error when ``model`` is no row's model but nearly one's (:func:`near_miss`)."""
    if not isinstance(model, str) or not model.strip():
        raise ArgumentError(f"`model` must be the id of the model you will train, got {model!r}",
                            fix='e.g. model="Qwen/Qwen3-8B"')
    seen = [m for m in data.models() if m is not None]
    miss = near_miss(model, seen)
    if miss is not None:
        rows_model, how = miss
        raise ArgumentError(f"no row was written by `model` {model!r}; the rows' model is "
                            f"{rows_model!r} (they differ in {how})", fix="pass "
                            f"{arg('model', rows_model)} if that is the model you will train")


def on_policy(rows: Any, model: str) -> OnPolicy:
    data = load_rows(rows)
    check_model(data, model)
    counts = data.models()
    named = {m: n for m, n in counts.items() if m is not None}
    same = named.get(model, 0)
    # most rows first, so a cut list (bounded) keeps the models that matter
    top = dict(sorted((((m if m is not None else "<none>"), n) for m, n in counts.items()),
                      key=lambda kv: (-kv[1], kv[0])))
    if not named:
        return OnPolicy(status="unknown", model=model, share_same=0.0, models=top,
                        n_models=len(top), n_rows=data.n_rows, note="rows carry no `model` field: assumed sampled "
                        "by the model you will train; add the field to be sure")
    others = {m for m in named if m != model}
    if not others:
        status = "on_policy"
    elif all(base_model(m) == base_model(model) for m in others):
        status = "older_copy"
    else:
        status = "other_model"
    note = None
    if None in counts:
        note = f"{counts[None]} rows have no `model` field"
    return OnPolicy(status=status, model=model, share_same=same / data.n_rows, models=top,
                    n_models=len(top), n_rows=data.n_rows, note=note)
