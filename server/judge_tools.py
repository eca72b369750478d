"""Tools that audit an LLM judge: audit_judge, order_reversal (the audit-your-judge skill).

Labelled items and pairs come as a JSONL path under the root or a small inline list; defaults
are read from the core functions' own signatures.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from pydantic import Field

from whileai_core.judge import JudgeAudit, OrderReversal, audit_judge, order_reversal

from .tooling import READ_ONLY, Env, ToolInput, ToolSpec, source

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


TOOLS = [
    ToolSpec(
        name="audit_judge", title="Audit an LLM judge against human labels",
        description=(
            "Before trusting an LLM judge as a reward: compare each candidate judge with blind "
            "human labels. Per judge: agreement with its interval, Cohen's kappa, false-pass "
            "rate with its interval, length bias, and a verdict (clears / label_more / fails); "
            "plus the judge to use, if any, and the next step."),
        input=AuditJudgeInput, output=JudgeAudit, run=audit_judge_tool, annotations=READ_ONLY,
        doing="auditing a judge"),
    ToolSpec(
        name="order_reversal", title="Does a pairwise judge flip with the order?",
        description=(
            "Read a pairwise judge's picks with each pair shown in both orders: how many flip, "
            "with an interval, and whether its order can be used as a ranking or only its top "
            "pick."),
        input=OrderReversalInput, output=OrderReversal, run=order_reversal_tool,
        annotations=READ_ONLY, doing="checking a judge's order consistency"),
]
