"""The spend gate: before a launch spends, the host asks the user (MCP elicitation, form mode).

When a ``launch_run`` call with ``confirm=true`` would start a run that costs money
(``whileai_core.runs.spend.would_spend``: Modal GPUs, a plan that is ready and fits, not a run
launched before) and the client declared the ``elicitation`` capability (form mode, or the bare
``elicitation: {}`` of the revisions before modes existed), the server plans first (free,
nothing written), then asks the question ``whileai_core.runs.spend.spend_question`` words: the
run's name, the GPUs, the GPU hours and the dollars of the forecast. Accept launches as
``confirm=true`` does; decline, cancel, or the form accepted with ``launch`` unticked return the
plan, and nothing is launched or written. A client without the capability gets today's flow: a
plan, then ``confirm=true`` once the user approved it. A ``--read-only`` server never asks: it
does not serve ``launch_run`` at all.

How the question travels follows the negotiated revision, as the SDK's own resolvers do
(``mcp/server/mcpserver/resolve.py`` in mcp 2.3.0):

- up to 2025-11-25: a standalone ``elicitation/create`` request while the call waits
  (``Context.elicit``; MCP 2025-11-25, client/elicitation);
- 2026-07-28: an ``InputRequiredResult`` carrying the question (multi round-trip requests,
  SEP-2322); the client retries the call with its ``inputResponses`` and the ``requestState``
  echoed, which the SDK seals and checks (``mcp/server/request_state.py``). The state holds the
  question's digest: an answer counts only for the plan it was shown, so a plan that changed
  between the rounds (another GPU, a data folder edited) is asked again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.elicitation import (AcceptedElicitation, CancelledElicitation,
                                    render_elicitation_schema)
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (CallToolResult, ElicitRequest, ElicitRequestFormParams, ElicitResult,
                       InputRequiredResult)
from pydantic import BaseModel, Field, ValidationError, create_model

QUESTION_KEY = "whileai/spend"  # the input request's key in an InputRequiredResult


@dataclass(frozen=True)
class Gate:
    """The gate's verdict: ``reply`` to answer now (the plan after a no, or the question
    itself), or None to go on and launch."""

    reply: CallToolResult | InputRequiredResult | None = None


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


def _digest(message: str, schema: dict[str, Any]) -> str:
    text = json.dumps({"message": message, "schema": schema}, sort_keys=True)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


async def gate(values: dict[str, Any], ctx: Any, plan: Callable[[], Any],
               answer: Callable[[Any], CallToolResult]) -> Gate:
    """Ask before ``values`` (a ``launch_run`` call) spends. ``plan()`` (awaited) gives the
    ``Launch`` of the same call without ``confirm``; ``answer(result)`` turns a result into
    the tool's reply."""
    if not values.get("confirm") or not asks(ctx):
        return Gate()
    from whileai_core.runs.spend import declined, spend_question, would_spend
    from whileai_core.voice import MCP, speaking

    planned = await plan()
    if not would_spend(planned):  # local, launched before, not ready: confirm goes on as today
        return Gate()
    question = spend_question(planned.plan)
    form = _form(question.title)
    if _modern(ctx):
        schema = render_elicitation_schema(form)
        asked = _digest(question.message, schema)
        reply = (ctx.input_responses or {}).get(QUESTION_KEY)
        if reply is None or ctx.request_state != asked or not isinstance(reply, ElicitResult):
            return Gate(InputRequiredResult(
                input_requests={QUESTION_KEY: ElicitRequest(params=ElicitRequestFormParams(
                    message=question.message, requested_schema=schema))},
                request_state=asked))
        how = _how_modern(reply, form)
    else:
        try:
            outcome = await ctx.elicit(question.message, form)
        except ValueError as exc:  # accepted without content, or content that is not the form
            raise ToolError(f"the host's answer to the launch question was not the form it was "
                            f"shown ({exc}); nothing was launched. Fix: answer the form again, "
                            "or launch with a client that shows it") from None
        how = _how(outcome)
    if how is None:
        return Gate()
    with speaking(MCP):
        return Gate(answer(declined(planned, how)))


def _how(outcome: Any) -> str | None:
    """None: approved; else how the user said no."""
    if isinstance(outcome, AcceptedElicitation):
        return None if outcome.data.launch else "unticked"
    return "cancel" if isinstance(outcome, CancelledElicitation) else "decline"


def _how_modern(reply: ElicitResult, form: type[BaseModel]) -> str | None:
    if reply.action != "accept":
        return "cancel" if reply.action == "cancel" else "decline"
    try:
        data = form.model_validate(reply.content or {})
    except ValidationError:
        raise ToolError("the host's answer to the launch question was not the form it was "
                        "shown; nothing was launched. Fix: answer the form again") from None
    return None if data.launch else "unticked"
