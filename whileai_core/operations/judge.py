"""Operations that audit an LLM judge: audit_judge, order_reversal, failures_needed,
rubric_ablation (the audit-your-judge skill). Defaults are the judge module's
(``whileai_core.defaults``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from .. import defaults as D
from . import READS, VERDICT, operation
from .describe import named, values_of
from .args import Arg, Level, Names, Records


def _audit_doc() -> str:
    from ..judge import JudgeReport  # lazy: the verdicts named are the core's Literal

    return ("Before trusting an LLM judge as a reward: compare each candidate judge with blind "
            "human labels. Per judge: agreement with its interval, Cohen's kappa, false-pass "
            "rate with its interval, length bias, and a `verdict` "
            f"({named(values_of(JudgeReport, 'verdict'))}); plus the judge to use (`best`), if "
            "any, and the next step. plot: agreement and kappa per judge as a picture.")


def _judge_picture(args: dict[str, Any], result: Any, *, out: Any = None,
                   overwrite: bool = False):
    from ..pictures import judge_picture  # lazy: matplotlib, only when a picture is asked for

    return judge_picture(args["items"], judges=args.get("judges"),
                         level=args.get("level", D.CONFIDENCE_LEVEL), out=out,
                         overwrite=overwrite)


Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


@operation(toolset="judge", effect=READS, title="Audit an LLM judge against human labels",
           description=_audit_doc, result="whileai_core.judge:JudgeAudit", exit_code=VERDICT,
           doing="auditing a judge", picture=_judge_picture, serves=("judge_picture",))
def audit_judge(
        items: Annotated[Records, Field(description=(
            "Blind human labels with each candidate judge's grade on the same replies, one "
            "object per reply: {\"id\": \"t1\", \"label\": true, \"grades\": {\"judge-a\": true, "
            "\"judge-b\": false}, \"reply\": \"...\"}; label/grades take true/false, 1/0 or "
            "\"pass\"/\"fail\"; reply (or length) turns on the length-bias check."))], *,
        judges: Annotated[Names, Field(description=(
            "Judge names to audit; null: every name found in `grades`."))] = None,
        min_agreement: Annotated[Share, Field(description=(
            "Floor on the lower bound of agreement with the labels, in [0, 1]."))
        ] = D.JUDGE_MIN_AGREEMENT,
        min_kappa: Annotated[Share, Field(description="Floor on Cohen's kappa, in [0, 1].")
                             ] = D.JUDGE_MIN_KAPPA,
        max_false_pass: Annotated[Share, Field(description=(
            "Ceiling on the share of label-fail replies the judge passes, in [0, 1]."))
        ] = D.JUDGE_MAX_FALSE_PASS,
        half_width: Annotated[float, Field(gt=0, lt=0.5, allow_inf_nan=False, description=(
            "Precision (+-) the false-pass rate is sized for, in (0, 0.5); sets how many "
            "labelled failures are needed."))] = D.JUDGE_FALSE_PASS_HALF_WIDTH,
        level: Level = D.CONFIDENCE_LEVEL):
    from ..judge import audit_judge as audit  # lazy: the judge module loads on the call

    return audit(items, judges=judges, min_agreement=min_agreement, min_kappa=min_kappa,
                 max_false_pass=max_false_pass, half_width=half_width, level=level)


def _order_doc() -> str:
    from ..judge import OrderReversal  # lazy: the verdicts named are the core's Literal

    return ("Read a pairwise judge's picks with each pair shown in both orders: how many flip, "
            f"with an interval, and the `verdict`: {named(values_of(OrderReversal, 'verdict'))}"
            " (its order can rank, or only its top pick can be used).")


@operation(toolset="judge", effect=READS, title="Does a pairwise judge flip with the order?",
           description=_order_doc, result="whileai_core.judge:OrderReversal", exit_code=VERDICT,
           doing="checking a judge's order consistency")
def order_reversal(
        pairs: Annotated[Records, Field(description=(
            "A pairwise judge's pick on each pair in both orders: {\"id\": ..., \"forward\": "
            "\"first\"|\"second\"|\"tie\", \"reversed\": \"first\"|\"second\"|\"tie\"} (picks "
            "by position)."))], *,
        max_flips: Annotated[Share, Field(description=(
            "Largest share of pairs whose pick may flip with the order for the judge to still "
            "be used as a ranking."))] = D.JUDGE_MAX_ORDER_FLIPS,
        level: Level = D.CONFIDENCE_LEVEL):
    from ..judge import order_reversal as order  # lazy: the judge module loads on the call

    return order(pairs, max_flips=max_flips, level=level)


@operation(
    toolset="judge", effect=READS, title="How many failures to label?",
    description=(
        "Before labelling: how many replies the labels must fail so the judge's false-pass rate "
        "is known to +-`half_width` (at worst), and how many replies to label in all at a 10%, "
        "30% or 50% failure share."),
    result="whileai_core.judge:LabelSample", doing="sizing a label sample",
    serves=("label_sample",))
def failures_needed(
        half_width: Annotated[float, Field(gt=0, lt=0.5, allow_inf_nan=False, description=(
            "Precision (+-) wanted on the false-pass rate, in (0, 0.5)."))
        ] = D.JUDGE_FALSE_PASS_HALF_WIDTH, *,
        level: Level = D.CONFIDENCE_LEVEL):
    from ..judge import label_sample  # lazy: the judge module loads on the call

    return label_sample(half_width, level=level)


def _ablation_doc() -> str:
    from ..judge import ClauseEffect  # lazy: the values named are the core's Literal

    return ("Agreement with the labels with the whole rubric, then with each clause dropped: "
            "per clause the agreement, its change, and its `effect` "
            f"({named(values_of(ClauseEffect, 'effect'))}), flagged when inside the sample's "
            "noise. The grades come with the items (your judge graded them), or, from Python, "
            "from `grade`, called with each clause list.")


@operation(toolset="judge", effect=READS, title="Which rubric clauses matter?",
           description=_ablation_doc, result="whileai_core.judge:RubricAblation",
           doing="ablating a rubric", serves=("ablation_from_grades",))
def rubric_ablation(
        items: Annotated[Records, Field(description=(
            "Labelled replies graded by the judge with the whole rubric and with each clause "
            "dropped in turn: {\"id\": \"t1\", \"label\": true, \"grade\": true, \"without\": "
            "{\"<clause 1>\": true, ...}}; grades take true/false, 1/0 or \"pass\"/\"fail\" "
            "(from Python with `grade`: the labels alone)."), examples=["judge/ablation.jsonl"])],
        clauses: Annotated[list[Annotated[str, Field(min_length=1, max_length=10_000)]], Field(
            min_length=2, max_length=200, description=(
                "The rubric's clauses, exactly as the keys of each item's `without`."),
            examples=[["Refuse refunds without an order id.", "Be polite."]]),
            Arg(metavar="CLAUSE")], *,
        grade: Annotated[Callable[[list[str], list[dict]], Any] | None,
                         Arg(cli=False, mcp=False)] = None,
        level: Level = D.CONFIDENCE_LEVEL):
    from ..judge import ablation_from_grades  # lazy: the judge module loads on the call
    from ..judge import rubric_ablation as ablate  # lazy: loads with the call

    if grade is not None:
        return ablate(items, grade, clauses, level=level)
    return ablation_from_grades(items, clauses, level=level)
