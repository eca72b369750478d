"""GroupwiseGrading (GRS/GAR) and ReinforceAda against hand-computed groups.

GAR: expected values written from the MiMo-V2.6 sec. 4.3 equations (methods.md) by hand; the
conservation property is checked with hypothesis on random mixed groups.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whileai_core.errors import ArgumentError, SpecError
from whileai_core.methods import GroupwiseGrading, ReinforceAda


def test_grs_scales_passes_by_solution_and_behaviour_quality():
    g = GroupwiseGrading(mode="reward", floor=0.2)
    out = g.shape([1.0, 0.0, 1.0, 1.0], [(0.9, 1.0), (0.0, 0.0), (0.5, 0.1), (1.0, 1.0)])
    # passes: 1*0.9*1.0, 1*0.5*max(0.2, 0.1), 1*1*1; the fail keeps 0
    assert out.rewards == pytest.approx([0.9, 0.0, 0.1, 1.0])
    assert out.passed == [True, False, True, True]


def test_gar_hand_example_uncapped_conserves_pass_mass():
    g = GroupwiseGrading(mode="advantage", cap=None)
    out = g.shape([1, 1, 1, 0], [0.9, 0.5, 0.1, 0.0])
    # A = R - 0.75 = [.25, .25, .25, -.75]; ranks 1,2,3 -> f = 1, 0.75, 0.5
    # lambda = 0.75 / (0.25 * (1 + 0.75 + 0.5)) = 4/3; A' = [1/3, 1/4, 1/6, -3/4], mean 0
    assert out.factors == pytest.approx([1.0, 0.75, 0.5, 1.0])
    assert out.scale == pytest.approx(4 / 3)
    assert out.advantages == pytest.approx([1 / 3, 1 / 4, 1 / 6, -3 / 4])
    assert out.pass_mass_after == pytest.approx(out.pass_mass_before) == pytest.approx(0.75)


def test_gar_ties_share_their_mean_rank():
    g = GroupwiseGrading(mode="advantage", cap=None)
    out = g.shape([1, 1, 1, 0], [0.7, 0.7, 0.1, 0.0])
    # ranks 1.5, 1.5, 3 -> f = 1 - 0.5 * 0.5/2 = 0.875 for both ties, 0.5 for the worst
    assert out.factors[:3] == pytest.approx([0.875, 0.875, 0.5])


def test_gar_cap_shrinks_the_pass_mass_and_says_so():
    g = GroupwiseGrading(mode="advantage", min_factor=0.1, cap=1.0)
    out = g.shape([1, 1, 0, 0], [0.9, 0.1, 0.0, 0.0])
    # A = [.5, .5, -.5, -.5]; f = [1, 0.1]; lambda = 1 / 0.55 = 1.818 -> capped at 1
    # A' before centring = [.5, .05, -.5, -.5], mean -0.1125 -> [.6125, .1625, -.3875, -.3875]
    assert out.scale == 1.0
    assert out.advantages == pytest.approx([0.6125, 0.1625, -0.3875, -0.3875])
    assert out.pass_mass_after == pytest.approx(0.775) and any("capped" in n for n in out.notes)


def test_flagged_hacks_get_zero_and_groups_that_are_not_mixed_are_left_alone():
    g = GroupwiseGrading(mode="advantage")
    out = g.shape([1, 1], [0.9, 0.1], hacked=[False, True])
    assert out.rewards == [1.0, 0.0] and out.advantages == pytest.approx([0.5, -0.5])
    allpass = g.shape([1, 1, 1], [0.9, 0.5, 0.1])
    assert allpass.advantages == pytest.approx([0, 0, 0]) and "not mixed" in allpass.notes[0]


def test_grader_callable_scores_the_passes_only():
    seen = []

    def grader(items):
        seen.extend(items)
        return [(1.0, 0.5) for _ in items]

    out = GroupwiseGrading(grader, mode="reward").shape([1, 0, 1], items=["a", "b", "c"])
    assert seen == ["a", "c"] and out.rewards == pytest.approx([0.5, 0.0, 0.5])


def test_spread_flags_a_grader_that_normalisation_would_erase():
    ok, why = GroupwiseGrading.spread([0.80, 0.81, 0.80, 0.82])
    assert not ok and "std" in why
    # std 0.3 but 10 of 11 within 0.05 of the median
    ok, why = GroupwiseGrading.spread([0.5] * 10 + [1.5])
    assert not ok and "median" in why
    assert GroupwiseGrading.spread([0.1, 0.5, 0.9])[0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=2, max_size=12).filter(lambda b: 0 < sum(b) < len(b)),
       st.data())
def test_gar_uncapped_conserves_pass_mass_and_centres(passes, data):
    quality = data.draw(st.lists(st.floats(0, 1), min_size=len(passes), max_size=len(passes)))
    rewards = [1.0 if p else 0.0 for p in passes]
    out = GroupwiseGrading(mode="advantage", cap=None).shape(rewards, quality)
    n, k = len(passes), sum(passes)
    # independent: the pass mass of A = R - mean(R) is k (1 - k/n)
    assert out.pass_mass_after == pytest.approx(k * (1 - k / n), abs=1e-9)
    assert sum(out.advantages) == pytest.approx(0.0, abs=1e-9)
    fails = [a for a, p in zip(out.advantages, passes) if not p]
    assert fails == pytest.approx([-k / n] * (n - k))


@pytest.mark.parametrize("kwargs, knob", [({"mode": "rank"}, "mode"), ({"floor": 2}, "floor"),
                                          ({"cap": 0.5}, "cap"), ({"min_factor": 0}, "min_factor")])
def test_grouping_knobs(kwargs, knob):
    with pytest.raises(SpecError, match=rf"`{knob}`.*default"):
        GroupwiseGrading(**kwargs)


def test_shape_argument_errors():
    g = GroupwiseGrading(mode="reward")
    with pytest.raises(ArgumentError, match=r"\(s, b\) pairs"):
        g.shape([1, 0], [0.5, 0.5])
    with pytest.raises(ArgumentError, match=r"\[0, 1\]"):
        g.shape([1, 0], [(1.5, 1), (0, 0)])
    with pytest.raises(ArgumentError, match="needs `scores`"):
        g.shape([1, 0])


# ---- ReinforceAda ------------------------------------------------------------------------

def _rounds(*rounds):
    it = iter(rounds)
    return lambda n: next(it)


def test_reinforce_ada_balanced_exits_when_the_mix_is_there():
    draw = _rounds([0.0] * 8, [0.9, 0.1, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0] * 8)
    out = ReinforceAda().sample(draw)
    # after round 2: 2 passes (> 0.7) of 16 drawn; keep 2 passes + the first 2 fails
    assert out.exited and out.rounds == 2 and out.drawn == 16 and out.passes == 2
    assert out.kept_index == [0, 1, 8, 10]
    assert out.p_hat == pytest.approx(2 / 16)
    assert out.advantages == pytest.approx([0 - 0.125, 0 - 0.125, 0.9 - 0.125, 0.8 - 0.125])


def test_reinforce_ada_positive_and_the_exit_that_never_comes():
    out = ReinforceAda(exit="positive", keep=3).sample(_rounds([0.1, 0.75, 0.2, 0.0] + [0.0] * 4))
    assert out.exited and out.rounds == 1 and out.kept_index == [0, 1, 2]
    never = ReinforceAda(keep=2, round_size=2, max_rounds=2).sample(_rounds([0, 0], [0, 0]))
    assert not never.exited and never.rounds == 2 and never.kept_index == [0, 1]
    assert any("not met" in n for n in never.notes)


def test_reinforce_ada_knobs_and_draw_errors():
    with pytest.raises(SpecError, match="even"):
        ReinforceAda(keep=3)
    with pytest.raises(SpecError, match="exceeds"):
        ReinforceAda(keep=10, round_size=2, max_rounds=2)
    with pytest.raises(ArgumentError, match="returned 1 samples"):
        ReinforceAda().sample(lambda n: [1.0])
    with pytest.raises(ArgumentError, match="finite reward"):
        ReinforceAda(round_size=2, keep=2).sample(lambda n: ["x", "y"])
    assert ReinforceAda(2, 4, 3, "positive").keep == 2  # positional order keep, round_size, ...
    assert np.isclose(ReinforceAda(round_size=2, keep=2).sample(
        lambda n: [{"reward": 1.0}, {"reward": 0.0}]).p_hat, 0.5)
