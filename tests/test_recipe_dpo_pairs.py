"""Pair building: margin, length matching, the chosen-longer cap and constructed negatives.

Rewards of the replies used below, from the reward table (recipes/grpo/README.md), by hand:
  off topic: "" -> 0.0, any 1-400 character plain reply -> 1.0, a well-formed call -> 0.2
  no id: a question naming the order number -> 1.0, other non-empty text -> 0.4, a call -> 0.2
  with id: the right lookup -> 1.0, asking for the number -> 0.3, a refund call -> 0.2
"""

import json

import pytest

from recipes.dpo.pairs import build_pairs, constructed_negative, invented_id
from recipes.grpo.reward import Case, score
from whileai_core.errors import ArgumentError


def rec(task_id, category, order_id=""):
    return {"task_id": task_id, "category": category, "order_id": order_id}


def call(name, oid):
    return "<tool_call>" + json.dumps({"name": name, "arguments": {"order_id": oid}}) + "</tool_call>"


ASK = "What is your order number?"          # 26 characters


def test_margin_and_length_matching():
    records = [rec("w", "with_id", "K1"), rec("n", "no_id"), rec("same", "no_id")]
    samples = [
        # rewards 1.0, 0.3 (ask), 0.2 (refund): margin 0.5 admits only the refund as rejected
        [call("lookup_order", "K1"), ASK, call("refund_order", "K1")],
        # 1.0 (ask), 0.4, 0.4: both rejected candidates clear the margin; the closer length wins
        [ASK, "Sorry about that, we will look at it right away.", "Sorry to hear it!!!!!!!!!!!!"],
        # everyone scores 0.4: no contrast, no pair
        ["hello there", "fine"],
    ]
    pair_set = build_pairs(records, samples, min_margin=0.5, max_chosen_longer=1.0)
    by_task = {p.task_id: p for p in pair_set.pairs}
    assert set(by_task) == {"w", "n"}
    assert (by_task["w"].rejected, by_task["w"].rejected_reward) == (samples[0][2], 0.2)
    # |26 - 48| = 22 against |26 - 28| = 2: the 28-character reply is the length match
    assert by_task["n"].rejected == "Sorry to hear it!!!!!!!!!!!!"
    assert len(by_task["n"].rejected) == 28
    assert pair_set.with_contrast == 2 and pair_set.prompts == 3


def test_chosen_longer_cap_swaps_then_drops_by_ratio():
    # five off-topic prompts; chosen (1.0) vs "" (0.0) is always longer, so the share is 5/5.
    records = [rec(f"o{i}", "off_topic") for i in range(5)]
    samples = [["a" * (i + 1), ""] for i in range(5)]
    # prompt o0 also has a constructed-free alternative: a long call (0.2) as rejected
    samples[0] = ["a", "", call("lookup_order", "Z1")]
    pair_set = build_pairs(records, samples, min_margin=0.5, max_chosen_longer=0.8)
    # o0: best gap is "a" vs "" (1 char), chosen longer; the swap picks "a" vs the call (shorter
    # chosen): share 4/5 = 0.8 is not < 0.8, so the largest ratio goes: o4 ("aaaaa" vs "", 5/1)
    # leaving 3/4 = 0.75 < 0.8.
    assert pair_set.swapped_for_length == 1
    assert pair_set.dropped_for_length == 1
    assert sorted(p.task_id for p in pair_set.pairs) == ["o0", "o1", "o2", "o3"]
    assert pair_set.chosen_longer_share == 0.75


def test_constructed_negatives_fill_prompts_without_contrast_within_their_share():
    records = [rec(f"o{i}", "off_topic") for i in range(4)] + [rec("n", "no_id")]
    # o0..o2: 1.0 vs 0.0 on-policy pairs (chosen longer). o3 and n: no contrast on-policy.
    samples = [["ok", ""], ["fine", ""], ["yes", ""], ["sure", "no"], [ASK, ASK]]
    pair_set = build_pairs(records, samples, min_margin=0.5, max_chosen_longer=0.8,
                           negative_share=0.4, seed=3)
    # room: floor(0.4 / 0.6 * 3) = 2. Prompts with no on-policy pair come first (o3, n); the
    # constructed call scores 0.2 on both (well-formed call), chosen 1.0 clears the 0.5 margin.
    built = [p for p in pair_set.pairs if p.constructed]
    assert sorted(p.task_id for p in built) == ["n", "o3"]
    assert all(p.rejected_reward == pytest.approx(0.2) for p in built)
    assert pair_set.constructed == 2 and len(pair_set.pairs) == 5
    # shares: constructed 2/5 = 0.4 <= 0.4; chosen longer 3/5 = 0.6 < 0.8
    assert pair_set.chosen_longer_share == pytest.approx(0.6)


def test_constructed_negative_breaks_the_rule_of_its_category():
    assert score(constructed_negative(rec("w", "with_id", "K1"), 0), Case("with_id", "K1")) == 0.2
    neg = constructed_negative(rec("n", "no_id"), 7)
    assert invented_id("n", 7) in neg and score(neg, Case("no_id")) == pytest.approx(0.2)
    assert invented_id("n", 7) == invented_id("n", 7) != invented_id("n", 8)


def test_bad_arguments():
    with pytest.raises(ArgumentError, match="min_margin"):
        build_pairs([], [], min_margin=0)
    with pytest.raises(ArgumentError, match="one list of replies per prompt"):
        build_pairs([rec("a", "no_id")], [])
