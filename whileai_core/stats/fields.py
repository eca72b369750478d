"""Field helpers shared by every result that carries an interval: ``ci`` with ``level`` beside it.

``ci`` (and ``pass_at_k_ci``, ``mean_before_ci``...) hold the interval at ``level``; the
deprecated ``*_ci95`` aliases give it only when ``level`` is 0.95, so a 90% interval is never
labelled 95%.
"""

from __future__ import annotations

from pydantic import computed_field

Interval = tuple[float, float]

LEVEL_DOC = "confidence level of every interval in this result (0.95 = 95%)"
METHOD_DOC = ("the interval used: mid_p / agresti_coull (one 0/1 outcome per task), effective_n "
              "(a share of several 0/1 outcomes per task), hall_t (pass@k, pass^k, graded "
              "rewards: Hall's skewness-corrected t), betting (few tasks carry the mean); "
              "with cluster=, family_effective_n (shares) / family_hall_t (pass@k, pass^k, "
              "graded rewards) over families; see docs/core.md 'Which interval'")
DEPRECATED = ("deprecated alias of `{field}` (removed in 0.3): the same interval when `level` is "
              "0.95, null at any other level")


def ci95_alias(field: str):
    """A read-only ``*_ci95`` field mirroring ``field`` at level 0.95 (None at other levels)."""

    def get(self) -> Interval | None:
        return getattr(self, field) if abs(self.level - 0.95) < 1e-12 else None

    return computed_field(property(get), return_type=Interval | None,
                          description=DEPRECATED.format(field=field))
