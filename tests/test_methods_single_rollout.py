"""FlashReinforce, SAO and BPCO updates against worked examples computed by hand.

Each example has an environment token (action_mask False), stale behaviour log-probabilities and
a rejected trajectory. Expected values are written out from the equations in
docs/methods.md (Sources) with the math module, token by token, not with the code's arrays.
"""

from __future__ import annotations

import math

import pytest

from whileai_core.errors import ArgumentError, SpecError
from whileai_core.methods import BPCO, SAO, FlashReinforce

ln = math.log


def binary_drift(p: float, q: float) -> float:
    return p * ln(p / q) + (1 - p) * ln((1 - p) / (1 - q))


# ---- FlashReinforce ----------------------------------------------------------------------

FLASH_BATCH = [
    # on-policy, two action tokens
    {"reward": 1.0, "logprobs": [ln(0.5), ln(0.25)]},
    # stale sampler, an environment token in the middle, small drift: admitted
    {"reward": 0.0, "logprobs": [ln(0.5), ln(0.6), ln(0.7)],
     "behavior_logprobs": [ln(0.52), ln(0.3), ln(0.7)], "action_mask": [True, False, True]},
    # stale sampler far from the learner: rejected by the trust region
    {"reward": 0.0, "logprobs": [ln(0.9)], "behavior_logprobs": [ln(0.5)]},
]


def test_flash_reinforce_worked_example():
    out = FlashReinforce().update(FLASH_BATCH)
    # baseline: mean reward 1/3; B = 3 trajectories
    a0, a1, a2 = 1 - 1 / 3, 0 - 1 / 3, 0 - 1 / 3
    # trajectory 1: drift on action tokens only (token 1 is the environment's; token 2 has p=q)
    d1 = (binary_drift(0.52, 0.5) + binary_drift(0.7, 0.7)) / 2
    assert d1 == pytest.approx(0.000400, abs=2e-6) and d1 <= 0.003
    d2 = binary_drift(0.5, 0.9)  # 0.5 ln(0.5/0.9) + 0.5 ln(0.5/0.1) = 0.5108
    assert d2 == pytest.approx(0.510826, abs=1e-6) and d2 > 0.003
    assert out.admitted == [True, True, False]
    expected = [
        [a0 * 1 / (2 * 3), a0 * 1 / (2 * 3)],             # rho = 1 on-policy, T = 2
        [a1 * (0.5 / 0.52) / (2 * 3), 0.0, a1 * 1.0 / (2 * 3)],  # T = 2 action tokens
        [0.0],                                           # rejected
    ]
    for got, want in zip(out.coefficients, expected):
        assert got == pytest.approx(want, abs=1e-12)
    assert out.advantages[1] == pytest.approx([a1, 0.0, a1])
    assert out.advantages[2] == pytest.approx([a2])
    assert out.stats["max_drift"] == pytest.approx(d2)
    assert any("trust" in n for n in out.notes)


def test_flash_reinforce_equal_rewards_give_zero_and_say_so():
    out = FlashReinforce().update([{"reward": 1.0, "logprobs": [-0.1]},
                                   {"reward": 1.0, "logprobs": [-0.2, -0.3]}])
    assert all(c == 0.0 for row in out.coefficients for c in row)
    assert any("equal" in n for n in out.notes)


def test_flash_reinforce_log_ratio_is_clamped_at_30():
    # log pi - log mu = -0.0 - (-40) = 40 -> clamped to 30; drift is huge, so set trust high
    out = FlashReinforce(trust=100.0).update([{"reward": 1.0, "logprobs": [0.0 - 1e-9],
                                               "behavior_logprobs": [-40.0]},
                                              {"reward": 0.0, "logprobs": [-1.0]}])
    assert out.coefficients[0][0] == pytest.approx(0.5 * math.exp(30) / (1 * 2), rel=1e-9)


# ---- SAO ---------------------------------------------------------------------------------

SAO_BATCH = [
    # action, environment, action; stale behaviour inside the band (rho 1.25 and 0.8)
    {"reward": 1.0, "logprobs": [ln(0.5), ln(0.3), ln(0.4)],
     "behavior_logprobs": [ln(0.4), ln(0.3), ln(0.5)], "values": [0.5, 9.9, 0.6],
     "action_mask": [True, False, True]},
    # rho = 0.9 / 0.1 = 9 > 6: outside the band, rejected
    {"reward": 0.0, "logprobs": [ln(0.9)], "behavior_logprobs": [ln(0.1)], "values": [0.2]},
]


def test_sao_worked_example():
    out = SAO().update(SAO_BATCH)
    # trajectory 0: L = 2 action tokens, lambda = 1 - 1/(1.5 * 2) = 2/3, gamma 1, the
    # environment token's value (9.9) is skipped: V' = [0.5, 0.6]
    lam = 1 - 1 / (1.5 * 2)
    a_last = 1.0 + 0.0 - 0.6                     # terminal: r + 0 - V
    a_first = (0.0 + 0.6 - 0.5) + lam * a_last   # delta_0 + lambda * A_1
    assert out.advantages[0] == pytest.approx([a_first, 0.0, a_last])
    assert out.value_targets[0] == pytest.approx([a_first + 0.5, 0.0, a_last + 0.6])
    # trajectory 1: L = 1, lambda = max(0, 1 - 1/1.5) = 1/3; A = 0 + 0 - 0.2
    assert out.advantages[1] == pytest.approx([-0.2])
    n_tokens = 3  # action tokens in the batch
    assert out.coefficients[0] == pytest.approx([1.25 * a_first / n_tokens, 0.0,
                                                 0.8 * a_last / n_tokens])
    assert out.coefficients[1] == [0.0]
    assert out.admitted == [True, False]
    assert out.stats["kept_share"] == pytest.approx(2 / 3)


def test_sao_warmup_trains_only_the_critic():
    out = SAO().update(SAO_BATCH, step=3)
    assert all(c == 0.0 for row in out.coefficients for c in row)
    assert out.value_targets[0][0] != 0.0 and any("warm-up" in n for n in out.notes)


# ---- BPCO --------------------------------------------------------------------------------

BPCO_BATCH = [
    # raw critic outputs z: V = atan(z)/pi + 1/2 -> z=0: 0.5, z=1: 0.75 (z=5 is an env token)
    {"reward": 1.0, "logprobs": [ln(0.6), ln(0.2), ln(0.9)],
     "behavior_logprobs": [ln(0.5), ln(0.2), ln(0.8)], "values": [0.0, 5.0, 1.0],
     "action_mask": [True, False, True]},
    # z = -1: V = 0.25; A < 0 and rho = 0.1/0.5 = 0.2 < 1 - 0.2/0.5 = 0.6: clipped, rejected
    {"reward": 0.0, "logprobs": [ln(0.1)], "behavior_logprobs": [ln(0.5)], "values": [-1.0]},
]


def test_bpco_worked_example():
    out = BPCO().update(BPCO_BATCH)
    # lambda = max(0, 1 - 1/(0.4 L)) = 0 for L = 1 and 2: A_t = delta_t
    a_last = 1.0 - 0.75
    a_first = 0.0 + 0.75 - 0.5
    assert out.advantages[0] == pytest.approx([a_first, 0.0, a_last])
    # h = 0.2 / mu: token 0: rho 1.2 <= 1 + 0.4; token 2: rho 1.125 <= 1 + 0.25 -> active
    assert out.coefficients[0] == pytest.approx([1.2 * a_first, 0.0, (0.9 / 0.8) * a_last])
    assert out.advantages[1] == pytest.approx([-0.25])
    assert out.coefficients[1] == [0.0] and out.admitted == [True, False]
    assert out.value_targets == [[1.0, 0.0, 1.0], [0.0]]  # Monte Carlo: R at every action token
    # explained variance over action tokens: R = [1, 1, 0], V = [0.5, 0.75, 0.25]:
    # Var(R) = 2/9, Var(R - V) = Var([0.5, 0.25, -0.25]) = 7/72 -> 1 - (7/72)/(2/9) = 0.5625
    assert out.stats["explained_variance"] == pytest.approx(0.5625)


def test_bpco_trust_region_at_its_edge():
    # A > 0 and rho exactly 1 + h (mu = 0.5, h = 0.4, rho = 1.4 -> pi = 0.7): still active;
    # a hair above: clipped
    bpco = BPCO()
    edge = {"reward": 1.0, "logprobs": [ln(0.7)], "behavior_logprobs": [ln(0.5)], "values": [0.0]}
    over = {"reward": 1.0, "logprobs": [ln(0.7001)], "behavior_logprobs": [ln(0.5)],
            "values": [0.0]}
    assert bpco.update([edge]).admitted == [True]
    assert bpco.update([over]).admitted == [False]


def test_bpco_bound_is_inside_the_reward_range():
    bpco = BPCO(reward_range=(-1.0, 2.0))
    assert bpco.bound([0.0]).tolist() == pytest.approx([0.5])
    assert bpco.bound([1e9]).tolist()[0] == pytest.approx(2.0, abs=1e-8)
    assert bpco.bound([-1e9]).tolist()[0] == pytest.approx(-1.0, abs=1e-8)


# ---- the batch contract and the knobs ----------------------------------------------------

@pytest.mark.parametrize("batch, match", [
    ([], "non-empty list"),
    ([{"logprobs": [-0.1]}], r"batch\[0\]\.reward is missing"),
    ([{"reward": float("nan"), "logprobs": [-0.1]}], "finite number"),
    ([{"reward": 1.0, "logprobs": [-0.1, 0.2]}], r"batch\[0\]\.logprobs\[1\] is 0.2; must be finite and <= 0"),
    ([{"reward": 1.0, "logprobs": [-0.1], "behavior_logprobs": [-0.1, -0.2]}], "one entry per"),
    ([{"reward": 1.0, "logprobs": [-0.1], "action_mask": [2]}], "booleans"),
    ([{"reward": 1.0, "logprobs": [-0.1], "extra": 1}], "unknown key"),
])
def test_bad_batches_name_the_place(batch, match):
    with pytest.raises(ArgumentError, match=match):
        FlashReinforce().update(batch)


def test_critic_methods_need_values():
    with pytest.raises(ArgumentError, match=r"batch\[0\]\.values is missing; SAO"):
        SAO().update([{"reward": 1.0, "logprobs": [-0.1]}])


@pytest.mark.parametrize("make, knob", [
    (lambda: FlashReinforce(trust=0), "trust"),
    (lambda: SAO(band=(0.9, 0.95)), "band"),
    (lambda: SAO(alpha=-1), "alpha"),
    (lambda: BPCO(clip=1.5), "clip"),
    (lambda: BPCO(reward_range=(1, 0)), "reward_range"),
])
def test_bad_knobs_name_knob_range_and_default(make, knob):
    with pytest.raises(SpecError, match=rf"knob `{knob}`.*allowed: .*default"):
        make()
