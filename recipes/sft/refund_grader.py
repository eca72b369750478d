"""The refund demo's grader, in the shape every SFT data folder's ``grader.py`` has.

``grade(ask, reply) -> float`` (pass = 1.0); ``ask`` is a held-out ask, here with the refund case
(``category``, ``order_id``). It runs wherever the model trains, so it imports only the refund
reward, which every training image has.
"""

from recipes.grpo.reward import Case, score


def grade(ask, reply):
    return score(reply, Case(ask["category"], ask.get("order_id") or None))
