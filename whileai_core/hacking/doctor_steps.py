"""A run's per-step numbers: the rates the doctor's signatures read, counted over every rollout
of the run at once.

Rates are per step over groups (tasks are the sampling unit): Wilson intervals [1] with the group
as the trial, at ``level``, with the counts behind them (``<rate>_k`` of ``<rate>_n`` groups; for
a mean of group shares, ``<rate>_values``, the step's group shares in group order, which the
signatures' betting test reads). :class:`RunArrays` is filled by ``doctor_files``' readers, or by
a simulation.

[1] Wilson (1927). Probable inference, the law of succession, and statistical inference. JASA
    22(158), 209-212.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..bootstrap import z_value


def _wilson(successes, n, level: float):
    """Wilson's interval with fractional successes allowed (a mean of group shares x groups);
    vectorised: arrays give arrays ``(lo, hi)``, numbers give a tuple of floats."""
    z = z_value(0.5 + level / 2.0)
    k, n = np.asarray(successes, dtype=np.float64), np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1.0 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(np.maximum(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / denom
    lo, hi = np.maximum(0.0, centre - half), np.minimum(1.0, centre + half)
    return (float(lo), float(hi)) if lo.ndim == 0 else (lo, hi)


# --- per-step numbers ------------------------------------------------------------------------

class RunArrays:
    """One run's training rollouts as flat arrays, one entry per rollout (the readers fill it
    from the files; the bench from a simulation). ``step``: the index into ``steps``; ``group``:
    a code per group (one task's rollouts of a step); ``truncated``: 1/0, NaN where a rollout
    has no flag; ``text``: a code per distinct reply, -1 where there is none; ``version``: the
    policy version that sampled it, NaN where unknown."""

    __slots__ = ("steps", "step", "group", "reward", "truncated", "text", "version")

    def __init__(self, steps, step, group, reward, truncated, text, version):
        self.steps = list(steps)
        self.step = np.asarray(step, dtype=np.int64)
        self.group = np.asarray(group, dtype=np.int64)
        self.reward = np.asarray(reward, dtype=np.float64)
        self.truncated = np.asarray(truncated, dtype=np.float64)
        self.text = np.asarray(text, dtype=np.int64)
        self.version = np.asarray(version, dtype=np.float64)

    @classmethod
    def from_rows(cls, by_step: dict[int, list[dict]], steps: list[int]) -> "RunArrays":
        """From the readers' rows (``task_id`` or ``group``, ``reward``, ``truncated``,
        ``completion``, ``policy_version``; all but the first two may be missing)."""
        index = {s: i for i, s in enumerate(steps)}
        groups: dict[str, int] = {}
        texts: dict[str, int] = {}
        cols: tuple[list, ...] = ([], [], [], [], [], [])
        for s, rows in by_step.items():
            for r in rows:
                key = str(r.get("group") or r["task_id"])
                text = r.get("completion")
                flag, version = r.get("truncated"), r.get("policy_version")
                for col, value in zip(cols, (
                        index[s], groups.setdefault(key, len(groups)), r["reward"],
                        math.nan if flag is None else float(bool(flag)),
                        -1 if text is None else texts.setdefault(text, len(texts)),
                        math.nan if version is None else version)):
                    col.append(value)
        return cls(steps, *cols)


def _cells(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct keys, each entry's cell, entries per cell)."""
    return np.unique(key, return_inverse=True, return_counts=True)


def _cell_spread(values: np.ndarray, inverse: np.ndarray, n: int) -> np.ndarray:
    lo, hi = np.full(n, np.inf), np.full(n, -np.inf)
    np.minimum.at(lo, inverse, values)
    np.maximum.at(hi, inverse, values)
    return hi - lo


def _step_numbers(run: RunArrays, metrics: dict[int, dict], level: float) -> list[dict[str, Any]]:
    """Per step (``run.steps``) the rates the signatures read, counted over all rollouts of the
    run at once (numpy, no loop over rollouts); a step without rollouts keeps the trainer's
    own logged shares (no group count, so no interval)."""
    rows = np.bincount(run.step, minlength=len(run.steps))
    out = _logged(run, metrics, rows)
    if run.step.size:
        _add_counts(run, metrics, level, rows, out)
    return out


def _logged(run: RunArrays, metrics: dict[int, dict], rows: np.ndarray) -> list[dict[str, Any]]:
    """Per step the trainer's logged entropy and KL, and for a step without rollouts its logged
    shares and reward."""
    out = []
    for s, n in zip(run.steps, rows):
        m = metrics.get(s, {})
        num = {"step": s, "entropy": m.get("entropy"), "kl": m.get("kl")}
        if not n:
            num.update({k: m[k] for k in ("zero_spread", "truncated") if m.get(k) is not None})
            if m.get("reward") is not None:
                num["mean_reward"] = m["reward"]
        out.append(num)
    return out


def _add_counts(run: RunArrays, metrics: dict[int, dict], level: float, rows: np.ndarray,
                out: list[dict[str, Any]]) -> None:
    """Add to each step with rollouts its rates over groups, with their intervals and counts."""
    n_steps = len(run.steps)
    count = lambda where, weights=None: np.bincount(  # noqa: E731
        where, weights=weights, minlength=n_steps)
    width = int(run.group.max()) + 1
    keys, cell, size = _cells(run.step * width + run.group)
    cell_step = keys // width
    n_cells = keys.size
    multi = size >= 2
    spread = _cell_spread(run.reward, cell, n_cells)
    g = count(cell_step[multi])
    zero = count(cell_step[multi & (spread <= 1e-12)])
    groups = count(cell_step)
    reward_sum = count(run.step, run.reward)
    flagged = count(run.step, ~np.isnan(run.truncated)) == rows
    share = np.bincount(cell, weights=np.nan_to_num(run.truncated), minlength=n_cells) / size
    cut_sum = count(cell_step, share)
    in_multi = multi[cell]
    texts_ok = count(run.step[in_multi], run.text[in_multi] >= 0) == count(run.step[in_multi])
    span = int(run.text.max()) + 2  # text codes from -1 (none)
    tkeys, tcell, tsize = _cells(cell * span + run.text + 1)
    text_cell = tkeys // span
    distinct = np.bincount(text_cell, minlength=n_cells)
    distinct_sum = count(cell_step[multi], distinct[multi] / size[multi])
    cut_at = np.searchsorted(cell_step, np.arange(n_steps + 1))  # cells are in step order
    multi_step = cell_step[multi]
    multi_at = np.searchsorted(multi_step, np.arange(n_steps + 1))
    distinct_share = distinct[multi] / size[multi]
    dupes = (tsize >= 2) & (tkeys % span != 0)  # one reply given twice or more in a group
    tspread = _cell_spread(run.reward, tcell, tkeys.size)
    sets = count(cell_step[text_cell[dupes]])
    noisy = count(cell_step[text_cell[dupes & (tspread > 1e-9)]])
    known = ~np.isnan(run.version)
    lag = np.full(n_steps, -np.inf)
    np.maximum.at(lag, run.step[known], np.asarray(run.steps)[run.step[known]] - 1
                  - run.version[known])
    z_lo, z_hi = _wilson(zero, g, level)
    t_lo, t_hi = _wilson(cut_sum, groups, level)
    d_lo, d_hi = _wilson(distinct_sum, g, level)
    for i, n in enumerate(rows):
        if not n:
            continue
        num = out[i]
        num.update(n_rollouts=int(n), n_groups=int(groups[i]),
                   mean_reward=float(reward_sum[i] / n))
        if g[i]:
            num.update(zero_spread=zero[i] / g[i], zero_spread_ci=(float(z_lo[i]), float(z_hi[i])),
                       zero_spread_k=float(zero[i]), zero_spread_n=int(g[i]))
        if flagged[i]:
            num.update(truncated=float(cut_sum[i] / groups[i]),
                       truncated_ci=(float(t_lo[i]), float(t_hi[i])),
                       truncated_k=float(cut_sum[i]), truncated_n=int(groups[i]),
                       truncated_values=share[cut_at[i]:cut_at[i + 1]])
        elif metrics.get(run.steps[i], {}).get("truncated") is not None:
            num["truncated"] = metrics[run.steps[i]]["truncated"]
        if g[i] and texts_ok[i]:
            num.update(distinct=float(distinct_sum[i] / g[i]),
                       distinct_ci=(float(d_lo[i]), float(d_hi[i])),
                       distinct_k=float(distinct_sum[i]), distinct_n=int(g[i]),
                       distinct_values=distinct_share[multi_at[i]:multi_at[i + 1]],
                       duplicate_sets=int(sets[i]), noisy_sets=int(noisy[i]))
        if np.isfinite(lag[i]):
            # prime-rl's episode_staleness: batch `step` trains on policy v{step - 1}
            num["max_staleness"] = int(lag[i])
