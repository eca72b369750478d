"""IcePop as a prime-rl custom loss: ``[trainer.loss] type = "custom"``, ``import_path =
"whileai_core.methods.icepop.icepop_loss"``, ``kwargs = {low, high}``.

prime-rl 559b447 calls ``fn(inputs: LossInputs, **kwargs) -> LossOutputs`` once per sample, with
per-token ``trainer_logprobs`` (pi, with gradient), ``inference_logprobs`` (mu), ``advantages``,
a boolean ``loss_mask`` and optional ``loss_weights``; it sums ``loss`` and averages ``metrics``.

IcePop (double-sided masking): a token trains only while ``rho = pi / mu`` stays in ``[low,
high]`` (published band 0.5..5.0), since a large train/inference mismatch makes its gradient
noise. On kept tokens ``loss_t = -A_t * rho_t``, optionally plus ``kl_tau * log(rho_t)^2`` on
every token of the mask (as prime-rl's own losses add).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import defaults as D


@dataclass
class LossOutputs:
    """Same fields as prime-rl's ``LossOutputs`` (used when prime-rl is not installed)."""

    loss: Any
    metrics: dict[str, Any]


def _outputs_type() -> type:
    try:  # inside prime-rl's trainer, return its own type
        from prime_rl.trainer.rl.loss import LossOutputs as PrimeLossOutputs
    except Exception:  # noqa: BLE001 - prime-rl absent (or partly installed): duck-typed twin
        return LossOutputs
    return PrimeLossOutputs


def icepop_loss(inputs: Any, low: float = D.ICEPOP_LOW, high: float = D.ICEPOP_HIGH,
                kl_tau: float = D.ICEPOP_KL_TAU, adv_tau: float = 1.0) -> Any:
    """IcePop loss for one sample (prime-rl's custom-loss signature); see the module docstring."""
    import torch  # lazy: torch is the train extra

    if not 0.0 < low < 1.0 < high:
        raise ValueError(f"icepop_loss: need 0 < low < 1 < high; got low={low}, high={high} "
                         f"(defaults {D.ICEPOP_LOW}, {D.ICEPOP_HIGH})")
    mask = inputs.loss_mask.bool()
    log_ratio = inputs.trainer_logprobs - inputs.inference_logprobs
    ratio = torch.exp(log_ratio)
    with torch.no_grad():
        below, above = ratio < low, ratio > high
        masked = below | above
    keep = mask & ~masked
    advantages = adv_tau * inputs.advantages
    per_token = -(keep * advantages * ratio)
    if kl_tau:
        per_token = per_token + kl_tau * mask * log_ratio ** 2
    if inputs.loss_weights is not None:
        per_token = per_token * inputs.loss_weights
    loss = per_token.sum()

    def share(flags: Any) -> Any:
        return (flags & mask).sum() / mask.sum().clamp_min(1)

    mismatch_kl = ratio - log_ratio - 1
    metrics = {
        "icepop/is_masked": share(masked).detach(),
        "icepop/is_masked_low": share(below).detach(),
        "icepop/is_masked_high": share(above).detach(),
        "icepop/mismatch_kl": ((mismatch_kl * mask).sum() / mask.sum().clamp_min(1)).detach(),
    }
    return _outputs_type()(loss=loss, metrics=metrics)
