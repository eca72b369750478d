"""One rollout per prompt: FlashReinforce, SAO and BPCO as specs with ``.update(batch)``.

prime-rl cannot run them (a batch-mean baseline with a sequence trust region; a value critic),
so ``.update`` gives the per-token coefficients for your own trainer: the loss is
``-sum_t coef_t * log pi(y_t)`` with ``coef`` held constant. Batch contract and output:
:mod:`whileai_core.methods.rollout_batch`.

References:
[1] Hu et al. 2026, FlashReinforce (batch-mean baseline, binary-drift sequence trust region).
[2] Hou et al. 2026, SAO (skip-observation GAE, length-adaptive lambda, ratio band).
[3] Qi et al. 2026, BPCO (bounded critic, Monte Carlo value targets, DPPO binary-TV clip).
The equations, in our words, are in docs/methods.md, Sources.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field, field_validator

from .. import defaults as D
from ._spec import Spec
from .rollout_batch import (RolloutUpdate, length_adaptive_lambda, parse_batch,
                            skip_observation_gae)


def _finite_stats(**values: float) -> dict[str, float]:
    return {k: float(v) for k, v in values.items() if np.isfinite(v)}


def _critic_warmup(coef: np.ndarray, step: int | None, warmup: int) -> tuple[np.ndarray, list]:
    """The coefficients, zero while only the critic trains, and the note that says so."""
    if step is not None and step < warmup:
        return np.zeros_like(coef), [f"critic warm-up (step {step} < {warmup}): only the critic "
                                     "trains; coefficients are 0"]
    return coef, []


class FlashReinforce(Spec):
    """REINFORCE with a batch-mean baseline and a sequence-level trust region [1].

    A_i = R_i - mean_j R_j (no std). Per action token, the binary drift between the sampler's
    probability p = mu(y_t) and the learner's q = pi(y_t) (both clamped to [1e-6, 1 - 1e-6]):
    d_t = p ln(p/q) + (1-p) ln((1-p)/(1-q)); D_i is its mean over the action tokens. A trajectory
    is admitted iff D_i <= ``trust``; its action tokens get coef A_i * rho_t / (T_i * B), with
    rho_t = exp(clamp(log pi - log mu, +-30)), T_i its action-token count and B the batch size
    (all trajectories, admitted or not).
    """

    trust: float = Field(D.FLASH_TRUST, gt=0.0, description="trust > 0 (mean binary drift)")
    off_policy_steps: int = Field(D.ASYNC_OFF_POLICY_STEPS, ge=0, description="integer >= 0")
    temperature: float = Field(D.PRIME_RL_TEMPERATURE, gt=0.0, le=2.0, description="0 < t <= 2")
    max_tokens: int = Field(D.FLASH_MAX_TOKENS, ge=1, description="integer >= 1")
    batch: int = Field(D.FLASH_BATCH, ge=2, description="integer >= 2 (a batch mean of one is "
                                                           "the reward itself)")

    @property
    def name(self) -> str:
        return "flash_reinforce"

    def update(self, batch: Any) -> RolloutUpdate:
        b = parse_batch(batch, need_values=False, method="FlashReinforce")
        eps = D.FLASH_PROB_CLAMP
        adv = b.reward - b.reward.mean()
        p = np.clip(np.exp(b.behavior), eps, 1 - eps)
        q = np.clip(np.exp(b.logp), eps, 1 - eps)
        drift = p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))
        n_act = b.action.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_drift = np.where(n_act > 0, (drift * b.action).sum(axis=1) / n_act, np.inf)
        admitted = (n_act > 0) & (mean_drift <= self.trust)
        clamp = D.FLASH_LOG_RATIO_CLAMP
        rho = np.exp(np.clip(b.logp - b.behavior, -clamp, clamp))
        scale = adv / (np.maximum(n_act, 1) * b.size)
        coef = np.where(b.action & admitted[:, None], scale[:, None] * rho, 0.0)
        advantages = np.where(b.action, adv[:, None], 0.0)
        notes = []
        if np.ptp(b.reward) == 0:
            notes.append("every reward is equal: all advantages are 0 (nothing to learn here)")
        if (n_act == 0).any():
            notes.append(f"{int((n_act == 0).sum())} trajectory(ies) without action tokens: not "
                         "admitted")
        rejected = int(((n_act > 0) & ~admitted).sum())
        if rejected:
            notes.append(f"{rejected} trajectory(ies) drifted past trust {self.trust}: no gradient")
        finite = mean_drift[np.isfinite(mean_drift)]
        return RolloutUpdate(
            method="FlashReinforce", coefficients=b.rows(coef), advantages=b.rows(advantages),
            admitted=admitted.tolist(), stats=_finite_stats(
                batch=b.size, admitted_share=admitted.mean(), mean_reward=b.reward.mean(),
                mean_drift=finite.mean() if finite.size else np.nan,
                max_drift=finite.max() if finite.size else np.nan),
            notes=notes)


def _band(value: Any) -> tuple[float, float]:
    try:
        low, high = (float(x) for x in value)
    except (TypeError, ValueError):
        raise ValueError("must be a pair of numbers (low, high)") from None
    if not 0.0 <= low < 1.0 < high:
        raise ValueError("must be (low, high) with 0 <= low < 1 < high")
    return low, high


class SAO(Spec):
    """A critic with skip-observation GAE and a token ratio band [2].

    GAE runs over the action tokens only (environment tokens skipped), gamma 1, with a
    length-adaptive lambda = max(0, 1 - 1/(alpha L)), L the trajectory's action-token count; the
    terminal reward sits on the last action token. A token is kept iff low < rho < high
    (rho = exp(log pi - log mu), log-ratio clamped at +-30 against overflow); kept tokens get
    coef rho * A / N with N the batch's action-token count. Value targets: A + V. During the
    first ``critic_warmup`` steps only the critic trains (coefficients are 0).
    """

    alpha: float = Field(D.SAO_ALPHA, gt=0.0, description="alpha > 0")
    band: tuple[float, float] = Field(D.SAO_BAND, description="(low, high), 0 <= low < 1 < high; "
                                                              "(0.2, 4.0) for coding")
    gamma: float = Field(D.SAO_GAMMA, gt=0.0, le=1.0, description="0 < gamma <= 1")
    critic_steps: int = Field(D.SAO_CRITIC_STEPS, ge=1, description="integer >= 1 (critic steps per policy step)")
    critic_warmup: int = Field(D.SAO_CRITIC_WARMUP, ge=0, description="integer >= 0 (steps before the policy trains)")
    critic_lr: float = Field(D.SAO_CRITIC_LR, gt=0.0, lt=1.0, description="0 < lr < 1")
    lr: float = Field(D.SAO_LR, gt=0.0, lt=1.0, description="0 < lr < 1")
    max_tokens: int = Field(D.SAO_MAX_TOKENS, ge=1, description="integer >= 1")

    @field_validator("band", mode="before")
    @classmethod
    def _check_band(cls, value: Any) -> tuple[float, float]:
        return _band(value)

    @property
    def name(self) -> str:
        return "sao"

    def update(self, batch: Any, step: int | None = None) -> RolloutUpdate:
        b = parse_batch(batch, need_values=True, method="SAO")
        n_act = b.action.sum(axis=1)
        lam = length_adaptive_lambda(n_act, self.alpha)
        adv = skip_observation_gae(b.values, b.action, b.reward, lam, self.gamma)
        rho = np.exp(np.clip(b.logp - b.behavior, -D.FLASH_LOG_RATIO_CLAMP, D.FLASH_LOG_RATIO_CLAMP))
        low, high = self.band
        keep = b.action & (rho > low) & (rho < high)
        total = max(int(b.action.sum()), 1)
        coef = np.where(keep, rho * adv / total, 0.0)
        targets = np.where(b.action, adv + b.values, 0.0)
        coef, notes = _critic_warmup(coef, step, self.critic_warmup)
        out_of_band = int((b.action & ~keep).sum())
        if out_of_band:
            notes.append(f"{out_of_band} action token(s) outside the ratio band {self.band}: dropped")
        return RolloutUpdate(
            method="SAO", coefficients=b.rows(coef), advantages=b.rows(adv),
            admitted=keep.any(axis=1).tolist(), value_targets=b.rows(targets),
            stats=_finite_stats(batch=b.size, action_tokens=int(b.action.sum()),
                                kept_share=keep.sum() / total, mean_reward=b.reward.mean()),
            notes=notes)


def _range(value: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(x) for x in value)
    except (TypeError, ValueError):
        raise ValueError("must be a pair of numbers (lo, hi)") from None
    if not lo < hi:
        raise ValueError("must be (lo, hi) with lo < hi")
    return lo, hi


class BPCO(Spec):
    """A bounded critic, Monte Carlo value targets and the DPPO binary-TV clip [3].

    ``values`` in the batch are the critic head's raw outputs z; the bounded value is
    V = lo + (hi - lo)(atan(z)/pi + 1/2) over ``reward_range``. GAE over action tokens with
    lambda = max(0, 1 - 1/(alpha L)); the value target is the return R at every action token.
    With h_t = clip / mu_t (mu_t the sampler's probability of the token), a token is active when
    A > 0 and rho <= 1 + h, or A < 0 and rho >= 1 - h, or A = 0; active action tokens get
    coef rho * A (log-ratio clamped at +-20). Reports explained variance 1 - Var(R - V)/Var(R)
    over action tokens when rewards differ.
    """

    alpha: float = Field(D.BPCO_ALPHA, gt=0.0, description="alpha > 0")
    clip: float = Field(D.BPCO_CLIP, gt=0.0, lt=1.0, description="0 < clip < 1")
    reward_range: tuple[float, float] = Field(D.BPCO_REWARD_RANGE, description="(lo, hi), lo < hi")
    critic_warmup: int = Field(D.BPCO_CRITIC_WARMUP, ge=0, description="integer >= 0 (steps before the policy trains)")
    critic_lr: float = Field(D.BPCO_CRITIC_LR, gt=0.0, lt=1.0, description="0 < lr < 1")
    lr: float = Field(D.BPCO_LR, gt=0.0, lt=1.0, description="0 < lr < 1")
    max_tokens: int = Field(D.BPCO_MAX_TOKENS, ge=1, description="integer >= 1")

    @field_validator("reward_range", mode="before")
    @classmethod
    def _check_range(cls, value: Any) -> tuple[float, float]:
        return _range(value)

    @property
    def name(self) -> str:
        return "bpco"

    def bound(self, z: Any) -> np.ndarray:
        """The bounded critic: lo + (hi - lo)(atan(z)/pi + 1/2)."""
        lo, hi = self.reward_range
        return lo + (hi - lo) * (np.arctan(np.asarray(z, dtype=float)) / np.pi + 0.5)

    def update(self, batch: Any, step: int | None = None) -> RolloutUpdate:
        b = parse_batch(batch, need_values=True, method="BPCO")
        values = self.bound(b.values)
        n_act = b.action.sum(axis=1)
        lam = length_adaptive_lambda(n_act, self.alpha)
        adv = skip_observation_gae(values, b.action, b.reward, lam, 1.0)
        lim = D.BPCO_LOG_RATIO_CLAMP
        rho = np.exp(np.clip(b.logp - b.behavior, -lim, lim))
        h = self.clip / np.exp(b.behavior)
        active = ((adv > 0) & (rho <= 1 + h)) | ((adv < 0) & (rho >= 1 - h)) | (adv == 0)
        active &= b.action
        coef = np.where(active, rho * adv, 0.0)
        returns = np.broadcast_to(b.reward[:, None], values.shape)
        targets = np.where(b.action, returns, 0.0)
        coef, notes = _critic_warmup(coef, step, self.critic_warmup)
        clipped = int((b.action & ~active).sum())
        if clipped:
            notes.append(f"{clipped} action token(s) outside the binary-TV trust region: no gradient")
        r_tok, v_tok = returns[b.action], values[b.action]
        stats = dict(batch=b.size, action_tokens=int(b.action.sum()),
                     active_share=active.sum() / max(int(b.action.sum()), 1),
                     mean_value=v_tok.mean() if v_tok.size else np.nan)
        if r_tok.size and np.var(r_tok) > 0:
            stats["explained_variance"] = 1.0 - np.var(r_tok - v_tok) / np.var(r_tok)
        else:
            notes.append("rewards are all equal: explained variance is undefined")
        return RolloutUpdate(method="BPCO", coefficients=b.rows(coef), advantages=b.rows(adv),
                             admitted=active.any(axis=1).tolist(), value_targets=b.rows(targets),
                             stats=_finite_stats(**stats), notes=notes)
