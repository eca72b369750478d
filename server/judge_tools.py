"""Tools that audit an LLM judge: audit_judge, order_reversal (the audit-your-judge skill).

Labelled items and pairs come as a JSONL path under the root or a small inline list; defaults
are read from the core functions' own signatures.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from pydantic import Field

from whileai_core.defaults import CONFIDENCE_LEVEL, JUDGE_FALSE_PASS_HALF_WIDTH
from whileai_core.judge import (ClauseEffect, JudgeAudit, JudgeReport, LabelSample, OrderReversal, RubricAblation,
                                ablation_from_grades, audit_judge, label_sample, order_reversal)

from .tooling import READ_ONLY, Env, ToolInput, ToolSpec, named, source, values_of

_AUDIT = inspect.signature(audit_judge).parameters
_ORDER = inspect.signature(order_reversal).parameters


class AuditJudgeInput(ToolInput):
    items: Annotated[str | list[dict[str, Any]], Field(
        description="Blind human labels with each candidate judge's grade on the same replies: "
                    "a JSONL path relative to the workspace root (preferred) or a small list. "
                    'One object per reply: {"id": "t1", "label": true, "grades": {"judge-a": '
                    'true, "judge-b": false}, "reply": "..."}; label/grades take true/false, '
                    '1/0 or "pass"/"fail"; reply (or length) turns on the length-bias check.')]
    judges: Annotated[list[str] | None, Field(
        description="Judge names to audit; null: every name found in `grades`.")] = None
    min_agreement: Annotated[float, Field(
        ge=0, le=1, allow_inf_nan=False, description="Floor on the lower bound of agreement with the labels, in [0, 1]."
    )] = _AUDIT["min_agreement"].default
    min_kappa: Annotated[float, Field(
        ge=0, le=1, allow_inf_nan=False, description="Floor on Cohen's kappa, in [0, 1].")] = _AUDIT["min_kappa"].default
    max_false_pass: Annotated[float, Field(
        ge=0, le=1, allow_inf_nan=False, description="Ceiling on the share of label-fail replies the judge passes, in [0, 1]."
    )] = _AUDIT["max_false_pass"].default
    half_width: Annotated[float, Field(
        gt=0, lt=0.5, allow_inf_nan=False,
        description="Precision (+-) the false-pass rate is sized for, in (0, 0.5); sets how many "
                    "labelled failures are needed.")] = _AUDIT["half_width"].default
    level: Annotated[float, Field(
        gt=0, lt=1, allow_inf_nan=False,
        description="Confidence level of the intervals, in (0, 1).")] = _AUDIT["level"].default


def audit_judge_tool(args: AuditJudgeInput, env: Env) -> JudgeAudit:
    return audit_judge(source(args.items, env.workspace, argument="items"), judges=args.judges,
                       min_agreement=args.min_agreement, min_kappa=args.min_kappa,
                       max_false_pass=args.max_false_pass, half_width=args.half_width,
                       level=args.level)


class OrderReversalInput(ToolInput):
    pairs: Annotated[str | list[dict[str, Any]], Field(
        description="A pairwise judge's pick on each pair in both orders: a JSONL path under "
                    'the root or a small list of {"id": ..., "forward": "first"|"second"|"tie", '
                    '"reversed": "first"|"second"|"tie"} (picks by position).')]
    max_flips: Annotated[float, Field(
        ge=0, le=1, allow_inf_nan=False, description="Largest share of pairs whose pick may flip with the order for the judge "
                    "to still be used as a ranking.")] = _ORDER["max_flips"].default
    level: Annotated[float, Field(
        gt=0, lt=1, allow_inf_nan=False,
        description="Confidence level of the interval, in (0, 1).")] = _ORDER["level"].default


def order_reversal_tool(args: OrderReversalInput, env: Env) -> OrderReversal:
    return order_reversal(source(args.pairs, env.workspace, argument="pairs"),
                          max_flips=args.max_flips, level=args.level)


class FailuresNeededInput(ToolInput):
    half_width: Annotated[float, Field(
        gt=0.0, lt=0.5, description="Precision (+-) wanted on the false-pass rate, in (0, 0.5).")
    ] = JUDGE_FALSE_PASS_HALF_WIDTH
    level: Annotated[float, Field(
        gt=0.0, lt=1.0, description="Confidence level, in (0, 1).")] = CONFIDENCE_LEVEL


def failures_needed_tool(args: FailuresNeededInput, env: Env) -> LabelSample:
    return label_sample(args.half_width, level=args.level)


class RubricAblationInput(ToolInput):
    items: Annotated[str | list[dict[str, Any]], Field(
        description="Labelled replies graded by the judge with the whole rubric and with each "
                    "clause dropped in turn: a JSONL path under the root (preferred) or a small "
                    'list. One object per reply: {"id": "t1", "label": true, "grade": true, '
                    '"without": {"<clause 1>": true, "<clause 2>": false, ...}}; grades take '
                    'true/false, 1/0 or "pass"/"fail".',
        examples=["judge/ablation.jsonl"])]
    clauses: Annotated[list[Annotated[str, Field(min_length=1, max_length=10_000)]], Field(
        min_length=2, max_length=200,
        description="The rubric's clauses, exactly as the keys of each item's `without`.",
        examples=[["Refuse refunds without an order id.", "Be polite."]])]
    level: Annotated[float, Field(
        gt=0.0, lt=1.0, description="Confidence level of the intervals, in (0, 1).")
    ] = CONFIDENCE_LEVEL


def rubric_ablation_tool(args: RubricAblationInput, env: Env) -> RubricAblation:
    return ablation_from_grades(source(args.items, env.workspace, argument="items"),
                                args.clauses, level=args.level)


TOOLS = [
    ToolSpec(
        name="audit_judge", title="Audit an LLM judge against human labels",
        description=(
            "Before trusting an LLM judge as a reward: compare each candidate judge with blind "
            "human labels. Per judge: agreement with its interval, Cohen's kappa, false-pass "
            "rate with its interval, length bias, and a `verdict` "
            f"({named(values_of(JudgeReport, 'verdict'))}); plus the judge to use (`best`), if "
            "any, and the next step."),
        input=AuditJudgeInput, output=JudgeAudit, run=audit_judge_tool, annotations=READ_ONLY,
        doing="auditing a judge", core=("audit_judge",)),
    ToolSpec(
        name="order_reversal", title="Does a pairwise judge flip with the order?",
        description=(
            "Read a pairwise judge's picks with each pair shown in both orders: how many flip, "
            "with an interval, and the `verdict`: "
            f"{named(values_of(OrderReversal, 'verdict'))} (its order can rank, or only its top "
            "pick can be used)."),
        input=OrderReversalInput, output=OrderReversal, run=order_reversal_tool,
        annotations=READ_ONLY, doing="checking a judge's order consistency",
        core=("order_reversal",)),
    ToolSpec(
        name="failures_needed", title="How many failures to label?",
        description=(
            "Before labelling: how many replies the labels must fail so the judge's false-pass "
            "rate is known to +-`half_width` (at worst), and how many replies to label in all "
            "at a 10%, 30% or 50% failure share."),
        input=FailuresNeededInput, output=LabelSample, run=failures_needed_tool,
        annotations=READ_ONLY, doing="sizing a label sample",
        core=("failures_needed", "label_sample")),
    ToolSpec(
        name="rubric_ablation", title="Which rubric clauses matter?",
        description=(
            "Agreement with the labels with the whole rubric, then with each clause dropped "
            "(grades you made with the judge): per clause the agreement, its change, and its "
            f"`effect` ({named(values_of(ClauseEffect, 'effect'))}), flagged when inside the "
            "sample's noise."),
        input=RubricAblationInput, output=RubricAblation, run=rubric_ablation_tool,
        annotations=READ_ONLY, doing="ablating a rubric",
        core=("rubric_ablation", "ablation_from_grades")),
]
