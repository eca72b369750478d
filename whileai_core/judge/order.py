"""Order reversal: a pairwise judge asked each pair in both orders."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from .. import defaults as D
from ..errors import RowsError, as_json
from ..operations import READS, VERDICT, operation
from ..operations.args import Level, Records
from ..operations.describe import named, values_of
from ..records import read_records
from ..result import Result, fmt_rate
from .agreement import _check_level, wilson_interval
from .audit import Share

Pick = Literal["first", "second", "tie"]
_MIRROR = {"first": "second", "second": "first", "tie": "tie"}


class OrderReversal(Result):
    """A pairwise judge asked each pair twice, once in each order."""

    n_pairs: int
    consistent: int = Field(description="pairs whose pick names the same reply in both orders")
    flips: int = Field(description="pairs whose pick changed with the order")
    tie_flips: int = Field(description="flips where one order called a tie")
    flip_rate: float
    flip_ci: tuple[float, float] | None
    verdict: Literal["ranking", "top_pick_only"]
    note: str

    negative_means: ClassVar[str | None] = "flips past the limit: `top_pick_only`"

    @property
    def negative(self) -> bool:
        return self.verdict == "top_pick_only"

    def render(self) -> str:
        return (f"order reversal: {self.flips} of {self.n_pairs} pairs flip "
                f"({fmt_rate(self.flip_rate, self.flip_ci, self.n_pairs, 'pairs')}), "
                f"{self.tie_flips} via a tie -> {self.verdict}\n{self.note}")


def _order_doc() -> str:
    return ("Read a pairwise judge's picks with each pair shown in both orders: how many flip, "
            f"with an interval, and the `verdict`: {named(values_of(OrderReversal, 'verdict'))}"
            " (its order can rank, or only its top pick can be used).")


@operation(toolset="judge", effect=READS, title="Does a pairwise judge flip with the order?",
           description=_order_doc, exit_code=VERDICT,
           doing="checking a judge's order consistency")
def order_reversal(
        pairs: Annotated[Records, Field(description=(
            "A pairwise judge's pick on each pair in both orders: {\"id\": ..., \"forward\": "
            "\"first\"|\"second\"|\"tie\", \"reversed\": \"first\"|\"second\"|\"tie\"} (picks "
            "by position)."))], *,
        max_flips: Annotated[Share, Field(description=(
            "Largest share of pairs whose pick may flip with the order for the judge to still "
            "be used as a ranking."))] = D.JUDGE_MAX_ORDER_FLIPS,
        level: Level = D.CONFIDENCE_LEVEL) -> OrderReversal:
    """Read a pairwise judge's picks in both orders: consistent when the reversed pick mirrors
    the forward one. Above ``max_flips`` (point estimate) use only its top pick, never its order."""
    level = _check_level(level)
    recs = read_records(pairs, noun="pair")
    records, source = recs.items, recs.name
    if not records:
        raise RowsError("no pairs", source=source, fix="ask the judge about at least one pair")
    flips = ties = 0
    for i, rec in enumerate(records):
        fwd, rev = rec.get("forward"), rec.get("reversed")
        for field, v in (("forward", fwd), ("reversed", rev)):
            if not isinstance(v, str) or v not in _MIRROR:
                raise RowsError(f"`{field}` is {as_json(v)}", **recs.where(i),
                                field=field, fix='write "first", "second" or "tie"')
        if _MIRROR[fwd] != rev:
            flips += 1
            ties += "tie" in (fwd, rev)
    n = len(records)
    rate = flips / n
    verdict = "ranking" if rate <= max_flips else "top_pick_only"
    note = ("its order is stable: usable as a ranking" if verdict == "ranking" else
            "its pick follows the position on close pairs: take its top pick only, never its order")
    return OrderReversal(n_pairs=n, consistent=n - flips, flips=flips, tie_flips=ties,
                         flip_rate=rate, flip_ci=wilson_interval(flips, n, level=level),
                         verdict=verdict, note=note)
