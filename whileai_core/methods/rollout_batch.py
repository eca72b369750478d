"""The single-rollout batch contract (FlashReinforce, SAO, BPCO): checked once, held as arrays.

A batch is a list of mappings, one per trajectory: ``reward`` (finite), ``logprobs`` (per
generated token under the learner, finite, <= 0), optional ``behavior_logprobs`` (the sampler's;
absent = on-policy), ``values`` (critic per token; SAO and BPCO), ``action_mask`` (False on
tokens the environment wrote). Every ``.update`` returns a :class:`RolloutUpdate`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ArgumentError
from ..result import Result

_KEYS = {"reward", "logprobs", "behavior_logprobs", "values", "action_mask"}


class RolloutUpdate(Result):
    """Per-token coefficients and what decided them, for one batch of single rollouts."""

    method: str
    coefficients: list[list[float]]
    advantages: list[list[float]]
    admitted: list[bool]
    value_targets: list[list[float]] | None = None
    stats: dict[str, float]
    notes: list[str]
    shown: str | None = None

    def _cut_lists(self, limit: int) -> RolloutUpdate:
        """The first ``limit`` trajectories' ``admitted``, and the per-token lists of the first
        ``limit // 4`` of them cut to ``limit`` tokens each (``stats`` cover all); ``shown``
        says what was cut, as n of N."""
        n = len(self.admitted)
        rows = max(1, limit // 4)
        longest = max((len(t) for t in self.coefficients), default=0)
        if n <= rows and longest <= limit:
            return self
        update: dict[str, Any] = {
            name: [t[:limit] for t in getattr(self, name)[:rows]]
            for name in ("coefficients", "advantages", "value_targets")
            if getattr(self, name) is not None}
        update["admitted"] = self.admitted[:limit]
        update["shown"] = (f"admitted: {min(n, limit)} of {n} trajectories; per-token lists: "
                           f"{min(n, rows)} of {n} trajectories, at most {limit} of their tokens "
                           f"each (longest {longest}); stats cover all "
                           f"({sum(self.admitted)} of {n} admitted)")
        return self.model_copy(update=update)

    def render(self) -> str:
        n = len(self.admitted)
        head = f"{self.method}: {sum(self.admitted)}/{n} trajectories admitted"
        stats = ", ".join(f"{k} {v:.4g}" for k, v in self.stats.items())
        return "\n".join([head, stats] + [f"note: {x}" for x in self.notes]
                         + ([f"({self.shown})"] if self.shown else []))


@dataclass(frozen=True)
class Batch:
    """Padded (B, T) arrays; ``valid`` marks real tokens, ``action`` the policy's own tokens."""

    reward: np.ndarray
    logp: np.ndarray
    behavior: np.ndarray
    values: np.ndarray | None
    action: np.ndarray
    valid: np.ndarray
    lengths: np.ndarray
    on_policy: np.ndarray

    @property
    def size(self) -> int:
        return int(self.reward.shape[0])

    def rows(self, padded: np.ndarray) -> list[list[float]]:
        return [padded[i, :n].tolist() for i, n in enumerate(self.lengths)]


def _where(i: int, key: str, t: int | None = None) -> str:
    return f"batch[{i}].{key}" + (f"[{t}]" if t is not None else "")


def _tokens(i: int, row: Mapping[str, Any], key: str, n: int | None, *, logprob: bool) -> np.ndarray:
    raw = row[key]
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence | np.ndarray):
        raise ArgumentError(f"{_where(i, key)} must be a list of numbers; got {type(raw).__name__}")
    try:
        arr = np.asarray(raw, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError(f"{_where(i, key)} must be a list of numbers") from None
    if arr.ndim != 1 or (n is not None and arr.shape[0] != n):
        raise ArgumentError(f"{_where(i, key)} has {arr.size} entries; `logprobs` has {n}",
                            fix="one "
                            "entry per generated token")
    bad = np.flatnonzero(~np.isfinite(arr) | ((arr > 0) if logprob else False))
    if bad.size:
        t = int(bad[0])
        need = "finite and <= 0 (a log-probability)" if logprob else "finite"
        raise ArgumentError(f"{_where(i, key, t)} is {float(arr[t])!r}; must be {need}")
    return arr


BATCH_FIX = ("give one trajectory per item (batch[i] is the (i+1)-th): reward (a number), "
             "logprobs (the learner's per generated token, <= 0), optionally behavior_logprobs, "
             "values (per token; SAO and BPCO need them) and action_mask, nothing else")


def parse_batch(batch: Any, *, need_values: bool, method: str) -> Batch:
    """The batch checked against the contract (errors name ``batch[i].key[t]``) and padded."""
    try:
        return _parse_batch(batch, need_values=need_values, method=method)
    except ArgumentError as err:
        if "Fix:" in str(err):
            raise
        raise ArgumentError(f"{err}", fix=f"{BATCH_FIX}") from None


def _parse_batch(batch: Any, *, need_values: bool, method: str) -> Batch:
    if isinstance(batch, Mapping) or not isinstance(batch, Sequence) or len(batch) == 0:
        raise ArgumentError(f"{method}.update: `batch` must be a non-empty list of trajectories "
                            "(mappings with reward and logprobs)")
    rewards, logps, behaviors, values, actions, on_policy = [], [], [], [], [], []
    for i, row in enumerate(batch):
        if not isinstance(row, Mapping):
            raise ArgumentError(f"batch[{i}] must be a mapping; got {type(row).__name__}")
        unknown = set(row) - _KEYS
        if unknown:
            raise ArgumentError(f"batch[{i}] has unknown key(s) {sorted(unknown)}; known: "
                                f"{sorted(_KEYS)}")
        for key in ("reward", "logprobs"):
            if key not in row:
                raise ArgumentError(f"{_where(i, key)} is missing")
        reward = row["reward"]
        if isinstance(reward, bool) or not isinstance(reward, (int, float, np.number)) \
                or not math.isfinite(float(reward)):
            raise ArgumentError(f"{_where(i, 'reward')} is {reward!r}; must be a finite number")
        lp = _tokens(i, row, "logprobs", None, logprob=True)
        n = lp.shape[0]
        if row.get("behavior_logprobs") is None:
            mu, fresh = lp, True
        else:
            mu, fresh = _tokens(i, row, "behavior_logprobs", n, logprob=True), False
        if row.get("values") is not None:
            values.append(_tokens(i, row, "values", n, logprob=False))
        elif need_values:
            raise ArgumentError(f"{_where(i, 'values')} is missing; {method} needs the critic's "
                                "value per token")
        mask = row.get("action_mask")
        if mask is None:
            act = np.ones(n, dtype=bool)
        else:
            act = np.asarray(mask)
            if act.shape != (n,) or act.dtype.kind not in "bi" or not np.isin(act, (0, 1)).all():
                raise ArgumentError(f"{_where(i, 'action_mask')} must be {n} booleans (True on the "
                                    "policy's own tokens)")
            act = act.astype(bool)
        rewards.append(float(reward))
        logps.append(lp)
        behaviors.append(mu)
        actions.append(act)
        on_policy.append(fresh)
    if values and len(values) != len(logps):
        raise ArgumentError("`values` must be given for every trajectory or for none")
    lengths = np.array([a.shape[0] for a in logps])
    width = max(int(lengths.max()), 1)
    valid = np.arange(width)[None, :] < lengths[:, None]

    def pad(parts: list[np.ndarray], fill: float = 0.0, dtype: Any = float) -> np.ndarray:
        out = np.full((len(parts), width), fill, dtype=dtype)
        if parts:
            out[valid] = np.concatenate(parts) if lengths.sum() else np.array([], dtype=dtype)
        return out

    return Batch(reward=np.array(rewards), logp=pad(logps), behavior=pad(behaviors),
                 values=pad(values) if values else None,
                 action=pad(actions, False, bool) & valid, valid=valid, lengths=lengths,
                 on_policy=np.array(on_policy))


def length_adaptive_lambda(n_actions: np.ndarray, alpha: float) -> np.ndarray:
    """lambda = max(0, 1 - 1/(alpha L)) per trajectory; L = 0 gives 0 (nothing to credit)."""
    with np.errstate(divide="ignore"):
        lam = 1.0 - 1.0 / (alpha * n_actions.astype(float))
    return np.where(n_actions > 0, np.maximum(0.0, lam), 0.0)


def skip_observation_gae(values: np.ndarray, action: np.ndarray, reward: np.ndarray,
                         lam: np.ndarray, gamma: float = 1.0) -> np.ndarray:
    """(B, T) GAE advantages over each trajectory's action tokens only (0 elsewhere), the
    terminal reward on the last action token and V = 0 after it."""
    order = np.argsort(~action, axis=1, kind="stable")  # action tokens first, in order
    v = np.take_along_axis(values, order, axis=1)
    n_act = action.sum(axis=1)
    width = values.shape[1]
    live = np.arange(width)[None, :] < n_act[:, None]
    adv = np.zeros_like(v)
    running = np.zeros(values.shape[0])
    for t in range(width - 1, -1, -1):
        nxt = live[:, t + 1] if t + 1 < width else np.zeros(values.shape[0], dtype=bool)
        v_next = np.where(nxt, v[:, t + 1] if t + 1 < width else 0.0, 0.0)
        r_t = np.where(t == n_act - 1, reward, 0.0)
        delta = r_t + gamma * v_next - v[:, t]
        running = np.where(live[:, t], delta + gamma * lam * np.where(nxt, running, 0.0), 0.0)
        adv[:, t] = running
    out = np.zeros_like(adv)
    np.put_along_axis(out, order, adv, axis=1)
    return out
