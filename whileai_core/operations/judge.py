"""The one judge operation still declared on a wrapper: audit_judge (the audit-your-judge
skill). order_reversal, failures_needed and rubric_ablation are declared on their functions in
``whileai_core.judge``.

Why a wrapper: its picture (``plot``) draws ``whileai_core.pictures.judge_picture``, which
re-runs the audit from the items (it imports ``whileai_core.judge``); declared on
``whileai_core.judge.audit_judge``, the picture hook would import ``pictures`` back from the judge
package, an import cycle (tests/test_layers.py). Defaults are the judge module's
(``whileai_core.defaults``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from .. import defaults as D
from ..judge import JudgeReport
from ..judge import audit_judge as audit
from ..judge.audit import Share
from . import READS, VERDICT, operation
from .describe import named, values_of
from .args import Level, Names, Records


def _audit_doc() -> str:
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
    return audit(items, judges=judges, min_agreement=min_agreement, min_kappa=min_kappa,
                 max_false_pass=max_false_pass, half_width=half_width, level=level)
