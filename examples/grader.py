"""The refund assistant's grader: a reply passes when it is the refund amount, alone.

grade(ask, reply): the SFT recipe's form (ask: a held-out record with its messages).
reward(prompts, completions, answer, **fields): TRL's reward form (cheat-probes calls it).
"""

import re

_AMOUNT = re.compile(r"-?\d+\.\d{2}")


def _expected(text):
    paid, items, returned = (float(x) for x in re.findall(r"\d+(?:\.\d+)?", text)[1:4])
    return f"{paid / items * returned:.2f}"


def _score(reply, answer):
    reply = reply.strip()
    return 1.0 if _AMOUNT.fullmatch(reply) and reply == answer else 0.0


def grade(ask, reply):
    text = next(m["content"] for m in ask["messages"] if m["role"] == "user")
    return _score(reply, _expected(text))


def reward(prompts, completions, answer, **fields):
    return [_score(c, a) for c, a in zip(completions, answer)]
