"""The refund demo's grader, in the shape every SFT data folder's ``grader.py`` has.

``grade(ask, reply) -> float``: ``ask`` is a held-out ask (``task_id``, ``messages``: the prompt,
and here the refund case: ``category`` and ``order_id``), ``reply`` the policy's text. A pass is 1.0. The
recipe reads this file's text and runs it wherever it trains (here, or in the Modal container),
so a grader must be one self-contained file; this one imports the refund reward, which both
places have.
"""

from recipes.grpo.reward import Case, score


def grade(ask, reply):
    return score(reply, Case(ask["category"], ask.get("order_id") or None))
