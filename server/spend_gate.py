"""The spend gate: before a launch spends, the host asks the user (MCP elicitation, form mode),
and what launches is the plan the user approved, or nothing.

A ``launch_run`` with ``confirm=true`` that would spend (``runs.spend.would_spend``), from a
client that declared form elicitation (or a bare ``elicitation: {}``), is planned first (free),
then asked about with ``runs.spend.spend_question``: the run, GPUs, hours, dollars and the
plan's approval hash. Decline, cancel or ``launch`` unticked return the plan, nothing launched;
an accept without the form's answer is refused. An accept launches with ``approved`` set to the
hash shown, so only those bytes launch (else ``PlanChanged``, asked again up to
``SPEND_ASK_ROUNDS`` times). The launch is bound to the plan it looked at even where no question
is asked. A client without elicitation gets a plan, then ``confirm=true`` with ``approved``.

Up to 2025-11-25 the question is an ``elicitation/create`` request while the call waits; on
2026-07-28 it is an ``InputRequiredResult`` (SEP-2322) and the retried call carries the answer
and the sealed ``requestState`` (the approval shown), as the SDK's own resolvers do.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.elicitation import render_elicitation_schema
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (CallToolResult, ElicitRequest, ElicitRequestFormParams, ElicitResult,
                       InputRequiredResult)
from pydantic import BaseModel, Field, create_model

from .limits import SPEND_ASK_ROUNDS

QUESTION_KEY = "whileai/spend"  # the input request's key in an InputRequiredResult

Run = Callable[[dict[str, Any]], Awaitable[tuple[Any, CallToolResult]]]


@dataclass(frozen=True)
class Gate:
    """The gate's verdict: ``reply`` to answer now (the plan after a no, or the question), or
    None to go on and launch ``values`` (``approved`` set when the gate planned it)."""

    reply: CallToolResult | InputRequiredResult | None = None
    values: dict[str, Any] = field(default_factory=dict)


def asks(ctx: Any) -> bool:
    """Whether the client of this request can be asked a form (the SDK's own test,
    ``resolve._require_capability``: form declared, or a bare ``elicitation: {}``)."""
    caps = getattr(ctx, "client_capabilities", None) if ctx is not None else None
    elicitation = caps.elicitation if caps is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def _modern(ctx: Any) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return getattr(ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS


def _form(title: str) -> type[BaseModel]:
    """The form: one field, ``launch``, ticked; the facts are in the message above it."""
    return create_model("SpendApproval", launch=(bool, Field(True, title=title, description=(
        "Leave ticked and accept to launch; untick, decline or cancel to launch nothing."))))


async def _plan(run: Run, values: dict[str, Any]) -> Any:
    result, _ = await run({**values, "confirm": False, "approved": None})
    return result


async def gate(values: dict[str, Any], ctx: Any, run: Run,
               answer: Callable[[Any], CallToolResult]) -> Gate:
    """Ask before ``values`` (a ``launch_run`` call) spends. ``run(values)`` (awaited) runs the
    call and gives (result, reply); ``answer(result)`` turns a result into the tool's reply."""
    if not values.get("confirm") or not asks(ctx):
        return Gate(values=values)
    if _modern(ctx):
        reply = (ctx.input_responses or {}).get(QUESTION_KEY)
        state = ctx.request_state
        if isinstance(reply, ElicitResult) and isinstance(state, str):  # the retried call
            how = _how(reply)
            if how is None:  # launch what was shown, or nothing (the core checks the hash)
                return Gate(values={**values, "approved": state})
            return _no(await _plan(run, values), how, answer)
    return await ask(values, await _plan(run, values), ctx, answer)


async def ask(values: dict[str, Any], planned: Any, ctx: Any,
              answer: Callable[[Any], CallToolResult]) -> Gate:
    """Ask about ``planned`` (the ``Launch`` of the call without ``confirm``)."""
    from whileai_core.runs.spend import spend_question, would_spend

    bound = {**values, "approved": planned.plan.approval}
    if not would_spend(planned):  # local, launched before, not ready: no question, same plan
        return Gate(values=bound)
    question = spend_question(planned.plan)
    schema = render_elicitation_schema(_form(question.title))
    if _modern(ctx):
        return Gate(InputRequiredResult(
            input_requests={QUESTION_KEY: ElicitRequest(params=ElicitRequestFormParams(
                message=question.message, requested_schema=schema))},
            request_state=planned.plan.approval))
    reply = await ctx.request_context.session.elicit_form(
        message=question.message, requested_schema=schema, related_request_id=ctx.request_id)
    how = _how(reply)
    return Gate(values=bound) if how is None else _no(planned, how, answer)


async def launch(values: dict[str, Any], ctx: Any, run: Run,
                 answer: Callable[[Any], CallToolResult]) -> CallToolResult | InputRequiredResult:
    """Run the approved call; a plan that changed meanwhile is asked about again (at most
    ``SPEND_ASK_ROUNDS`` rounds), never launched unasked."""
    for _ in range(SPEND_ASK_ROUNDS):
        try:
            return (await run(values))[1]
        except ToolError as err:
            changed = _changed(err)
            if changed is None or not asks(ctx):
                raise
        verdict = await ask(values, changed, ctx, answer)
        if verdict.reply is not None:
            return verdict.reply
        values = verdict.values
    raise ToolError(f"the plan changed each of the {SPEND_ASK_ROUNDS} times the user approved "
                    "it (the config or its data is being rewritten); nothing was launched or "
                    "recorded. Fix: stop whatever writes the config, then launch again")


def _changed(err: ToolError) -> Any:
    """The plan as it is now, when ``err`` is the core's refusal of a changed plan."""
    from whileai_core.runs.plan import PlanChanged

    cause = err.__cause__
    return cause.launch if isinstance(cause, PlanChanged) else None


def _no(planned: Any, how: str, answer: Callable[[Any], CallToolResult]) -> Gate:
    from whileai_core.runs.spend import declined
    from whileai_core.voice import MCP, speaking

    with speaking(MCP):
        return Gate(answer(declined(planned, how)))


def _how(reply: ElicitResult) -> str | None:
    """None: approved; else how the user said no. An accept must carry the form's own answer,
    ``launch`` true or false; anything else (no content, ``{}``, another shape) launches
    nothing, on every revision."""
    if reply.action != "accept":
        return "cancel" if reply.action == "cancel" else "decline"
    content = reply.content
    ticked = content.get("launch") if isinstance(content, dict) else None
    if not isinstance(ticked, bool):
        raise ToolError("the host accepted the launch question without the form's answer (it "
                        "must send `launch`: true to launch); nothing was launched. Fix: answer "
                        "the form again, or launch with a client that shows it")
    return None if ticked else "unticked"
