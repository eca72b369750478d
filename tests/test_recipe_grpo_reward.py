"""The refund reward, row by row. Expected scores are the reward table read by hand.

Every case writes the reply out in full and states the base score and the bonus it should get:
base from the table in recipes/grpo/README.md, +0.2 for a well-formed reply when a call was made or the prompt
names no id, capped at 1.0.
"""

import json

import pytest

from recipes.grpo.reward import Case, read_reply, refund_reward, score


def call(name, **arguments):
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


WITH = Case("with_id", "K12345")
NOID = Case("no_id")
OFF = Case("off_topic")

ROWS = [
    # (case, reply, expected, why)
    (WITH, call("lookup_order", order_id="K12345"), 1.0, "right lookup 1.0 + 0.2, capped"),
    (WITH, call("lookup_order", order_id="k12345 "), 1.0, "same id, case and spaces ignored"),
    (WITH, call("lookup_order", order_id="Z99999"), 0.3, "another id 0.1 + 0.2 well-formed call"),
    (WITH, call("refund_order", order_id="K12345", reason="x"), 0.2, "refund 0.0 + 0.2"),
    (WITH, call("cancel_order", order_id="K12345"), 0.2, "other call 0.0 + 0.2"),
    (WITH, "<tool_call>{not json}</tool_call>", 0.0, "malformed call: other call 0.0, no bonus"),
    (WITH, '<tool_call>{"name": "lookup_order", "arguments": {"order_id": "K12345"}}', 0.0,
     "unclosed block: a call attempt that did not parse, 0.0, no bonus"),
    (WITH, "Could you confirm your order number?", 0.3, "asking 0.3, no call so no bonus"),
    (WITH, "Your refund is on its way!", 0.0, "nothing (no call, no question) 0.0"),
    (WITH, "", 0.0, "empty reply 0.0"),
    (NOID, call("lookup_order", order_id="A00001"), 0.2, "invented call 0.0 + 0.2 well-formed"),
    (NOID, "<tool_call>oops</tool_call>", 0.0, "malformed call 0.0, no bonus"),
    (NOID, "Happy to help. What is your order ID?", 1.0, "asking 1.0 + 0.2, capped"),
    (NOID, "Sorry to hear that, we will sort it out.", 0.4, "neither 0.2 + 0.2 well-formed"),
    (NOID, "Is it broken?", 0.4, "a question that does not ask for the id is neither: 0.2 + 0.2"),
    (NOID, "   ", 0.2, "empty reply: neither 0.2, not well-formed"),
    (OFF, call("lookup_order", order_id="K1"), 0.2, "any call 0.0 + 0.2"),
    (OFF, "We are open 9 to 5 on Saturdays.", 1.0, "a reply of 1-400 characters 1.0"),
    (OFF, "x" * 400, 1.0, "exactly 400 characters is still short"),
    (OFF, "x" * 401, 0.3, "401 characters is long: 0.3"),
    (OFF, "", 0.0, "empty: 0.0"),
]


@pytest.mark.parametrize("case,reply,expected,why", ROWS, ids=[r[3] for r in ROWS])
def test_reward_table(case, reply, expected, why):
    assert score(reply, case) == pytest.approx(expected, abs=1e-12), why


def test_only_the_first_call_counts():
    # A right lookup followed by an invented refund is paid in full: the first call decides.
    reply = call("lookup_order", order_id="K12345") + call("refund_order", order_id="Q1")
    assert score(reply, WITH) == 1.0
    # And a refund first is a refund, whatever follows.
    reply = call("refund_order", order_id="K12345") + call("lookup_order", order_id="K12345")
    assert score(reply, WITH) == pytest.approx(0.2)


def test_text_before_the_call_is_kept():
    reading = read_reply("Let me check. " + call("lookup_order", order_id="K12345"))
    assert (reading.called, reading.tool, reading.order_id, reading.text) == (
        True, "lookup_order", "K12345", "Let me check.")


def test_trl_reward_function_reads_dataset_columns():
    completions = [[{"role": "assistant", "content": call("lookup_order", order_id="K12345")}],
                   [{"role": "assistant", "content": "What is your order number?"}],
                   "Open till 5."]
    got = refund_reward(prompts=[None] * 3, completions=completions,
                        category=["with_id", "no_id", "off_topic"], order_id=["K12345", "", ""])
    assert got == [1.0, 1.0, 1.0]


def test_case_refuses_inconsistent_ground_truth():
    with pytest.raises(ValueError, match="needs order_id"):
        Case("with_id")
    with pytest.raises(ValueError, match="one of"):
        Case("refund")


def test_trl_parsed_tool_calls_score_as_the_reply_they_came_from():
    # TRL 1.16 parses completions with parse_response when the tokenizer has a response template:
    # the call leaves `content` and arrives as `tool_calls` (the message shape of TRL's own
    # parse_response docstring, trl/chat_template_utils.py). Scores from the reward table:
    # with_id right lookup 1.0 (+0.2 capped at 1.0); no_id any call 0.0 + 0.2 well formed;
    # with_id a refund 0.0 + 0.2; text before the call kept, so "Sure." does not change that
    def parsed(name, arguments, content=""):
        return [{"role": "assistant", "content": content,
                 "tool_calls": [{"type": "function",
                                 "function": {"name": name, "arguments": arguments}}]}]

    completions = [parsed("lookup_order", {"order_id": "K12345"}),
                   parsed("lookup_order", {"order_id": "K9"}),
                   parsed("refund_order", '{"order_id": "K12345"}', content="Sure."),
                   [{"role": "assistant", "content": "Sure.", "tool_calls": None}]]
    got = refund_reward(prompts=[None] * 4, completions=completions,
                        category=["with_id", "no_id", "with_id", "off_topic"],
                        order_id=["K12345", "", "K12345", ""])
    assert got == [1.0, 0.2, 0.2, 1.0]
    # the same replies as raw text score the same
    raw = [call("lookup_order", order_id="K12345"), call("lookup_order", order_id="K9"),
           "Sure." + call("refund_order", order_id="K12345"), "Sure."]
    assert got == refund_reward(prompts=[None] * 4, completions=raw,
                                category=["with_id", "no_id", "with_id", "off_topic"],
                                order_id=["K12345", "", "K12345", ""])
