"""The decision rule of a registered experiment: data in a small typed grammar, never free text.

A rule is ``{"ship_if": [clause, ...]}``: ship when every clause holds. Two kinds of clause:

- ``{"kind": "delta_above", "bound": 0.05}``: the paired delta's interval (resampling tasks, at
  the comparison's level) lies wholly above ``bound``, i.e. its lower end is > bound;
- ``{"kind": "no_category_drop", "field": "category", "beyond": "noise_band"}``: no category
  (a value of ``field`` on the held-out rows) dropped beyond the band: its own paired interval
  lies wholly below 0 **and** its delta is below ``-band``. ``beyond`` is ``"noise_band"`` (the
  band of the registered noise floor, t x sqrt(2) x run_std, which is compare's
  ``moved_the_wrong_way`` with that floor) or a number (a fixed band). Each category is read on
  its own, uncorrected for how many there are: a guard against a drop is meant to be sensitive.

A rule is validated when it is registered; :func:`apply_rule` says, per clause, whether it holds
on one run and on what evidence. A clause that cannot be read (no interval, no category on the
rows) makes the decision ``undecided``, never a silent pass.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError

from ..errors import ArgumentError
from ..result import Result
from ..stats import Comparison, ManyComparisons

Decision = Literal["ship", "do_not_ship", "undecided"]
Basis = Literal["as_registered", "deviates", "not_registered"]


class DeltaAbove(Result):
    """The paired delta's interval lies wholly above ``bound``."""

    kind: Literal["delta_above"] = "delta_above"
    bound: float = Field(ge=-1.0, le=1.0, description="the interval's lower end must exceed it")

    def sentence(self) -> str:
        return f"the paired delta's interval lies above {self.bound:+.3f}"


class NoCategoryDrop(Result):
    """No category's paired delta fell below ``-band`` with its interval wholly below 0."""

    kind: Literal["no_category_drop"] = "no_category_drop"
    field: str = Field("category", min_length=1, max_length=64,
                       description="the row field that names a row's category")
    beyond: Literal["noise_band"] | Annotated[float, Field(ge=0.0, le=1.0)] = "noise_band"

    def sentence(self) -> str:
        band = "the noise band" if self.beyond == "noise_band" else f"{self.beyond:.3f}"
        return f"no {self.field} drops beyond {band}"


Clause = Annotated[DeltaAbove | NoCategoryDrop, Field(discriminator="kind")]


class DecisionRule(Result):
    """Ship when every clause of ``ship_if`` holds."""

    ship_if: list[Clause] = Field(min_length=1, max_length=8)

    def sentence(self) -> str:
        return "ship if " + " and ".join(c.sentence() for c in self.ship_if)

    def render(self) -> str:
        return self.sentence()

    def needs_noise_band(self) -> bool:
        return any(isinstance(c, NoCategoryDrop) and c.beyond == "noise_band"
                   for c in self.ship_if)

    def category_field(self) -> str | None:
        return next((c.field for c in self.ship_if if isinstance(c, NoCategoryDrop)), None)


_RULE = TypeAdapter(DecisionRule)
EXAMPLE_RULE = {"ship_if": [{"kind": "delta_above", "bound": 0.05},
                            {"kind": "no_category_drop", "field": "category",
                             "beyond": "noise_band"}]}


def parse_rule(rule: Any, *, argument: str = "rule") -> DecisionRule:
    """A :class:`DecisionRule` from its data (a dict, or a rule already built)."""
    if isinstance(rule, DecisionRule):
        return rule
    if not isinstance(rule, dict):
        raise ArgumentError(f"`{argument}` must be the rule as data (an object with `ship_if`: a "
                            f"list of clauses), got a {type(rule).__name__}: {str(rule)[:80]!r}",
                            fix=f"e.g. {EXAMPLE_RULE}")
    try:
        return _RULE.validate_python(rule)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        where = ".".join(map(str, first["loc"])) or "rule"
        raise ArgumentError(f"`{argument}` is not a rule this grammar knows: {where}: "
                            f"{first['msg']}. Clauses: {{'kind': 'delta_above', 'bound': "
                            "number in [-1, 1]}, {'kind': 'no_category_drop', 'field': "
                            "'category', 'beyond': 'noise_band' or a number in [0, 1]}",
                            fix=f"e.g. {EXAMPLE_RULE}") from None


class ClauseOutcome(Result):
    """One clause, read on one run: ``holds`` (None: it could not be read) and the evidence."""

    clause: str
    holds: bool | None
    evidence: str


def _delta_above(clause: DeltaAbove, comparison: Comparison) -> ClauseOutcome:
    text = clause.sentence()
    if comparison.ci is None or comparison.delta is None:
        return ClauseOutcome(clause=text, holds=None, evidence=(
            f"no interval of the paired delta ({comparison.verdict}, n={comparison.n_paired} "
            "paired tasks): the rule cannot be read"))
    low, high = comparison.ci
    holds = low > clause.bound
    return ClauseOutcome(clause=text, holds=holds, evidence=(
        f"delta {comparison.delta:+.3f} [{low:+.3f}, {high:+.3f}] (n={comparison.n_paired} "
        f"paired tasks): lower end {'above' if holds else 'at or below'} {clause.bound:+.3f}"))


def _no_drop(clause: NoCategoryDrop, by: ManyComparisons | None,
             band: float | None) -> ClauseOutcome:
    text = clause.sentence()
    if by is None or not by.behaviours:
        return ClauseOutcome(clause=text, holds=None, evidence=(
            f"the held-out rows carry no `{clause.field}`: no category could be read"))
    limit = band if clause.beyond == "noise_band" else float(clause.beyond)
    if limit is None:
        return ClauseOutcome(clause=text, holds=None, evidence=(
            "the rule names the noise band and no noise floor was registered"))
    dropped, unread = [], []
    for b in by.behaviours:
        if b.ci is None or b.delta is None:
            unread.append(b.name)
        elif b.ci[1] < 0 and b.delta < -limit:
            dropped.append(f"{b.name} {b.delta:+.3f} [{b.ci[0]:+.3f}, {b.ci[1]:+.3f}] "
                           f"(n={b.n_paired})")
    band_text = f"band {limit:.3f}"
    if dropped:
        return ClauseOutcome(clause=text, holds=False, evidence=(
            f"dropped beyond the {band_text}: " + "; ".join(dropped)))
    if unread:
        return ClauseOutcome(clause=text, holds=None, evidence=(
            f"no drop beyond the {band_text} where it could be read, but {len(unread)} of "
            f"{len(by.behaviours)} categories have no interval (too few paired tasks: "
            f"{', '.join(unread[:5])})"))
    return ClauseOutcome(clause=text, holds=True, evidence=(
        f"none of {len(by.behaviours)} categories dropped beyond the {band_text}"))


def apply_rule(rule: DecisionRule, comparison: Comparison, by_category: ManyComparisons | None,
               *, band: float | None) -> tuple[Decision, list[ClauseOutcome]]:
    """The decision by ``rule`` on one run: ``ship`` when every clause holds, ``do_not_ship``
    when one fails, else ``undecided``. ``band``: the noise band the registration's floor gives
    (None without one)."""
    outcomes = [_delta_above(c, comparison) if isinstance(c, DeltaAbove)
                else _no_drop(c, by_category, band) for c in rule.ship_if]
    if any(o.holds is False for o in outcomes):
        return "do_not_ship", outcomes
    if any(o.holds is None for o in outcomes):
        return "undecided", outcomes
    return "ship", outcomes


class ExperimentDecision(Result):
    """The decision on one run: by which rule, on which metric and held-out set, and whether
    that is what was registered before the run."""

    decision: Decision
    basis: Basis
    deviations: list[str] = Field(description="each way this reading differs from the "
                                              "registration (empty when as registered)")
    experiment: str | None
    arm: str | None
    rule: str
    clauses: list[ClauseOutcome]
    metric: Literal["pass", "reward"]
    holdout: str | None = Field(description="the held-out set this run was read on, when known")
    registered_holdout: str | None
    min_effect: float | None
    notes: list[str] = []

    def render(self) -> str:
        head = {"as_registered": "by the rule registered before the run",
                "deviates": "NOT AS REGISTERED",
                "not_registered": "by a rule given after the run (no registration)"}[self.basis]
        where = f" ({self.experiment}/{self.arm})" if self.experiment else ""
        lines = [f"decision{where}: {self.decision}, {head}", f"rule: {self.rule}"]
        lines += [f"  {'holds' if c.holds else 'fails' if c.holds is False else 'unread'}: "
                  f"{c.clause}: {c.evidence}" for c in self.clauses]
        lines += [f"deviation: {d}" for d in self.deviations]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)
