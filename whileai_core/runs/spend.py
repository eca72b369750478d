"""The spend gate's question and answers: whether a launch would spend, what to ask the user
before it does (run, GPUs, hours and dollars with their kinds, the plan's approval), and the
answer when the user says no. The MCP server asks it by elicitation (``server/spend_gate.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..voice import name as op_name
from .forecast_results import fmt_quantity
from .plan import shown_approval
from .results import Launch, RunPlan


@dataclass(frozen=True)
class SpendQuestion:
    """What the host shows: ``message`` (the whole plan in a sentence) and ``title`` (the one
    field's label: launch or not)."""

    message: str
    title: str


def would_spend(launch: Launch) -> bool:
    """Whether confirming this plan would start a run that costs money."""
    plan = launch.plan
    fits = plan.forecast is None or plan.forecast.fits
    return (launch.action == "planned" and plan.spends_money and plan.ready and fits)


def spend_question(plan: RunPlan) -> SpendQuestion:
    """The question to ask before ``plan`` launches."""
    forecast = plan.forecast
    if forecast is None:
        cost = f"about {plan.est_gpu_hours:.2f} GPU hours ({plan.est_basis}); dollars unknown"
        short = f"~{plan.est_gpu_hours:.2f} GPU h"
    else:
        hours = forecast.gpu_hours
        money = forecast.dollars
        cost = (f"about {fmt_quantity(forecast.wall_s.value, 's')} wall clock, "
                f"{hours.value:.2f} GPU hours ({hours.kind})"
                + (f", {fmt_quantity(money.value, '$')} ({money.kind}, {money.basis})"
                   if money is not None else "; dollars unknown (no price for this GPU)"))
        short = (f"~{hours.value:.2f} GPU h"
                 + (f", ~{fmt_quantity(money.value, '$')}" if money is not None else ""))
    message = (f"Launch the training run {plan.name!r} ({plan.run_id}, {plan.target_kind} "
               f"{plan.target}) on Modal, {plan.gpu} ({plan.gpu_count} GPU): {cost}. This spends "
               "money on your Modal account. Accept to launch exactly this plan (approval "
               f"{shown_approval(plan.approval)}: its config, data, GPUs and cost; if any of them "
               "changes before it starts, nothing launches and you are asked again); decline to "
               "launch nothing.")
    return SpendQuestion(message=message, title=f"Launch {plan.name!r} on {plan.gpu} ({short})")


def declined(launch: Launch, how: Literal["decline", "cancel", "unticked"]) -> Launch:
    """The plan answered when the user did not approve it: nothing launched, nothing written."""
    said = {"decline": "declined the launch",
            "cancel": "dismissed the question without answering",
            "unticked": "accepted the form with `launch` unticked"}[how]
    return launch.model_copy(update={
        "action": "planned", "run": None,
        "next_step": (f"the user {said}: nothing was launched or recorded. Ask the user what to "
                      f"change before calling {op_name('launch_run')} again")})
