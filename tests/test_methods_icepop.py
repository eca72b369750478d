"""The IcePop custom loss on CPU with hand-made tensors, called the way prime-rl 559b447 calls a
custom loss: ``fn(inputs, **kwargs)`` with LossInputs' fields. Expected values by hand."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

torch = pytest.importorskip("torch")

from whileai_core.methods.icepop import icepop_loss  # noqa: E402


@dataclass
class Inputs:  # the fields of prime-rl's LossInputs
    trainer_logprobs: "torch.Tensor"
    inference_logprobs: "torch.Tensor"
    ref_logprobs: "torch.Tensor | None"
    advantages: "torch.Tensor"
    loss_mask: "torch.Tensor"
    loss_weights: "torch.Tensor | None" = None


def _inputs(weights=None):
    # pi / mu per token: 1, 9 (above 5), 1, 0.25 (below 0.5); token 2 is outside the loss mask
    pi = torch.log(torch.tensor([0.5, 0.9, 0.3, 0.2], dtype=torch.float64)).requires_grad_(True)
    mu = torch.log(torch.tensor([0.5, 0.1, 0.3, 0.8], dtype=torch.float64))
    return Inputs(trainer_logprobs=pi, inference_logprobs=mu, ref_logprobs=None,
                  advantages=torch.tensor([1.0, 1.0, -2.0, 1.0], dtype=torch.float64),
                  loss_mask=torch.tensor([True, True, False, True]), loss_weights=weights)


def test_icepop_masks_tokens_outside_the_ratio_band():
    inputs = _inputs()
    out = icepop_loss(inputs, low=0.5, high=5.0)
    # only token 0 is kept: loss = -(A_0 * rho_0) = -1; d loss / d log pi_0 = -A_0 * rho_0 = -1
    assert out.loss.item() == pytest.approx(-1.0)
    out.loss.backward()
    assert inputs.trainer_logprobs.grad.tolist() == pytest.approx([-1.0, 0.0, 0.0, 0.0])
    # of the 3 masked-in tokens, 2 leave the band (one above, one below)
    assert out.metrics["icepop/is_masked"].item() == pytest.approx(2 / 3)
    assert out.metrics["icepop/is_masked_high"].item() == pytest.approx(1 / 3)
    assert out.metrics["icepop/is_masked_low"].item() == pytest.approx(1 / 3)


def test_icepop_kl_term_and_weights():
    weights = torch.tensor([2.0, 1.0, 1.0, 1.0], dtype=torch.float64)
    out = icepop_loss(_inputs(weights), low=0.5, high=5.0, kl_tau=0.1)
    # -(2 * 1 * 1) + 0.1 * (log(1)^2 * 2 + log(9)^2 + log(0.25)^2) over the loss mask
    expected = -2.0 + 0.1 * (0.0 + math.log(9) ** 2 + math.log(0.25) ** 2)
    assert out.loss.item() == pytest.approx(expected)


def test_a_wider_band_keeps_more_tokens():
    out = icepop_loss(_inputs(), low=0.2, high=10.0)
    # tokens 0, 1 and 3 kept: -(1*1 + 1*9 + 1*0.25)
    assert out.loss.item() == pytest.approx(-10.25)


def test_bad_band_is_refused():
    with pytest.raises(ValueError, match="0 < low < 1 < high"):
        icepop_loss(_inputs(), low=1.5, high=5.0)
