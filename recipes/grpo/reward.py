"""The whole environment of the GRPO recipe: score a refund assistant's first reply.

The policy has one rule: look an order up before refunding it, never invent an order id, and ask
for the id when the customer gives none. The reward reads only the first reply. A tool call is a
``<tool_call>`` block holding JSON ``{"name": ..., "arguments": {...}}``; only the first block
counts, and anything after it is free (the environment is one turn by design).

The base score is ``BASE_SCORE[(category, outcome)]``, then +0.2 for a well-formed reply when a
call was made or the prompt names no id, capped at 1.0 (every row: ``recipes/grpo/README.md``).
So the policy is paid for the wire format before the rule: an invented call on a ``no_id`` prompt
scores 0.2, not 0.0. A pass (for pass@1) is a score of 1.0 only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

WITH_ID = "with_id"
NO_ID = "no_id"
OFF_TOPIC = "off_topic"
CATEGORIES = (WITH_ID, NO_ID, OFF_TOPIC)

LOOKUP_TOOL = "lookup_order"
REFUND_TOOL = "refund_order"

OFF_TOPIC_MAX_CHARS = 400
FORMAT_BONUS = 0.2

# The reward table, once: (category, what the first reply did) -> base score.
BASE_SCORE: dict[tuple[str, str], float] = {
    (WITH_ID, "right_lookup"): 1.0,
    (WITH_ID, "other_lookup"): 0.1,
    (WITH_ID, "other_call"): 0.0,
    (WITH_ID, "ask"): 0.3,
    (WITH_ID, "neither"): 0.0,
    (NO_ID, "call"): 0.0,
    (NO_ID, "ask"): 1.0,
    (NO_ID, "neither"): 0.2,
    (OFF_TOPIC, "call"): 0.0,
    (OFF_TOPIC, "short_reply"): 1.0,
    (OFF_TOPIC, "long_reply"): 0.3,
    (OFF_TOPIC, "empty"): 0.0,
}

_OPEN, _CLOSE = "<tool_call>", "</tool_call>"
# "Asking" is a question that names the order's id or number: "What is your order number?"
_NAMES_THE_ID = re.compile(r"\border\s*(?:id|number|no\.?|#)", re.IGNORECASE)


@dataclass(frozen=True)
class Case:
    """What the prompt is about: its category and, for ``with_id``, the order id it names."""

    category: str
    order_id: str | None = None

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"category must be one of {CATEGORIES}, got {self.category!r}")
        if (self.category == WITH_ID) != bool(self.order_id):
            raise ValueError(f"a {self.category} case {'needs' if self.category == WITH_ID else 'has no'}"
                             f" order_id, got {self.order_id!r}")


@dataclass(frozen=True)
class Reading:
    """What the first reply did, before any scoring."""

    called: bool            # a <tool_call> tag was opened
    tool: str | None        # the called tool's name, when the block parsed
    order_id: str | None    # arguments.order_id, when given as a string
    well_formed: bool       # the block parsed (name + arguments), or a non-empty plain reply
    asked: bool             # no call, a "?" and a mention of the order id/number/#
    text: str               # the reply text before the first call (stripped)


def read_reply(reply: str) -> Reading:
    """Parse the first reply: the text before the first ``<tool_call>`` and that block's JSON."""
    start = reply.find(_OPEN)
    if start < 0:
        text = reply.strip()
        # A stray closing tag is a broken call attempt, not a plain reply.
        return Reading(called=False, tool=None, order_id=None,
                       well_formed=bool(text) and _CLOSE not in text,
                       asked="?" in text and bool(_NAMES_THE_ID.search(text)), text=text)
    text = reply[:start].strip()
    end = reply.find(_CLOSE, start)
    tool = order_id = None
    well_formed = False
    if end >= 0:
        try:
            call = json.loads(reply[start + len(_OPEN):end])
        except ValueError:
            call = None
        if (isinstance(call, dict) and isinstance(call.get("name"), str)
                and isinstance(call.get("arguments"), dict)):
            well_formed = True
            tool = call["name"]
            value = call["arguments"].get("order_id")
            order_id = value.strip() if isinstance(value, str) else None
    return Reading(called=True, tool=tool, order_id=order_id, well_formed=well_formed,
                   asked=False, text=text)


def outcome(reading: Reading, case: Case) -> str:
    """The row of the reward table this reply falls in (a key of ``BASE_SCORE``)."""
    if case.category == WITH_ID:
        if reading.called:
            if reading.tool == LOOKUP_TOOL and reading.order_id is not None:
                same = reading.order_id.upper() == str(case.order_id).strip().upper()
                return "right_lookup" if same else "other_lookup"
            return "other_call"
        return "ask" if reading.asked else "neither"
    if reading.called:
        return "call"
    if case.category == NO_ID:
        return "ask" if reading.asked else "neither"
    if not reading.text:
        return "empty"
    return "short_reply" if len(reading.text) <= OFF_TOPIC_MAX_CHARS else "long_reply"


def score(reply: str, case: Case) -> float:
    """The reward of one first reply (``BASE_SCORE``, then the format bonus)."""
    reading = read_reply(reply)
    base = BASE_SCORE[(case.category, outcome(reading, case))]
    if reading.well_formed and (reading.called or case.category == NO_ID):
        base += FORMAT_BONUS
    return round(min(base, 1.0), 10)


def completion_text(completion) -> str:
    """The reply text of a TRL completion: a string, or a list of chat messages (first is used).

    With a response template (or tools), TRL 1.16 moves each parsed ``<tool_call>`` block out of
    ``content`` into ``tool_calls`` (``trl/trainer/grpo_trainer.py:2228-2242``); each is written
    back as a block after the content, so the reward reads the same reply either way.
    """
    if isinstance(completion, str):
        return completion
    if not (isinstance(completion, list) and completion and isinstance(completion[0], dict)):
        return ""
    message = completion[0]
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    for call in message.get("tool_calls") or ():
        function = call.get("function", call) if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        arguments = function.get("arguments")
        if isinstance(arguments, str):  # OpenAI style: arguments as a JSON string
            try:
                arguments = json.loads(arguments)
            except ValueError:
                pass
        block = json.dumps({"name": function.get("name"), "arguments": arguments})
        text += f"{_OPEN}\n{block}\n{_CLOSE}"
    return text


def refund_reward(prompts, completions, category, order_id, **_: object) -> list[float]:
    """TRL reward function: one score per completion, from the dataset's ``category``/``order_id``."""
    return [score(completion_text(c), Case(cat, oid or None))
            for c, cat, oid in zip(completions, category, order_id)]
