"""Before labelling: how many replies to label for the audit (the failures_needed operation).

The count alone is :func:`.agreement.failures_needed` (an int, as
``whileai_core.judge.failures_needed`` stays); the operation answers with it and the replies to
label in all.
"""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import Field

from .. import defaults as D
from ..operations import READS, operation
from ..operations.args import Level
from ..result import Result
from . import agreement


class LabelSample(Result):
    """How many labelled failures the audit needs, and what that means in labelled replies."""

    failures: int = Field(description="label-fail items needed for +-half_width on the "
                                      "false-pass rate, at worst (p = 0.5)")
    half_width: float
    level: float
    items_by_failure_share: dict[str, int] = Field(
        description="replies to label in all when this share of them fail")

    def render(self) -> str:
        shares = ", ".join(f"{k} fail: {v}" for k, v in self.items_by_failure_share.items())
        return (f"label at least {self.failures} failures (false pass known to "
                f"+-{self.half_width:g} at {self.level:.0%}); replies to label: {shares}")


@operation(
    toolset="judge", effect=READS, title="How many failures to label?",
    description=(
        "Before labelling: how many replies the labels must fail so the judge's false-pass rate "
        "is known to +-`half_width` (at worst), and how many replies to label in all at a 10%, "
        "30% or 50% failure share."),
    doing="sizing a label sample", serves=("label_sample",))
def failures_needed(
        half_width: Annotated[float, Field(
            ge=agreement.HALF_WIDTH_MIN, lt=0.5, allow_inf_nan=False, description=(
            "Precision (+-) wanted on the false-pass rate, in (0, 0.5)."))
        ] = D.JUDGE_FALSE_PASS_HALF_WIDTH, *,
        level: Level = D.CONFIDENCE_LEVEL) -> LabelSample:
    """:func:`.agreement.failures_needed`, with the replies to label at a 10%, 30% and 50%
    failure share."""
    need = agreement.failures_needed(half_width, level=level)
    return LabelSample(failures=need, half_width=float(half_width), level=float(level),
                       items_by_failure_share={f"{share:.0%}": math.ceil(need / share - 1e-9)
                                               for share in (0.1, 0.3, 0.5)})


label_sample = failures_needed  # an older name, kept (_EXPORTS)
