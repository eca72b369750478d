"""The spend gate through the SDK's in-process client: a spending launch asks the user (form
elicitation) when the client declared the capability; a no launches and writes nothing; a client
without the capability keeps the plan-then-confirm flow; a --read-only server never asks.

Both ways the question travels are exercised: the 2026-07-28 connection (the client's default,
an InputRequiredResult retried with the answer) and a 2025-11-25 one (``mode="legacy"``, a
standalone elicitation/create request). Modal is never called: a launch that gets past the gate
meets ``ModalBackend``'s token check (no token here) or, where the test says so, a stand-in for
its spawn.
"""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitResult

from server.app import build_server
from test_runs_support import launches, make_recipes
from test_server_support import error_text, ok

# tiny on Modal has no run shape: its forecast is FORECAST_UNKNOWN_RECIPE_H = 1 hour of wall
# clock (an assumption). On A10G:2 that is 1 h x 2 GPUs = 2.00 GPU hours, and at Modal's A10G
# price of $0.000306/s (defaults.MODAL_GPU_PRICE_PER_S, read from modal.com/pricing):
# 3600 s x 2 x 0.000306 = $2.2032 -> "$2.20".
SPEND = {"config_or_recipe": "tiny", "gpu": "A10G:2", "confirm": True}


@pytest.fixture
def setup(tmp_path, monkeypatch):
    recipes = make_recipes(tmp_path)
    state = tmp_path / "state"
    monkeypatch.setenv("WHILEAI_STATE_DIR", str(state))
    monkeypatch.setenv("WHILEAI_RECIPES_DIR", str(recipes))
    for name in ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET"):
        monkeypatch.delenv(name, raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws, recipes, state


class Host:
    """A host that shows the form and answers as told, keeping what it was shown."""

    def __init__(self, action: str, content: dict | None = None) -> None:
        self.action, self.content, self.asked = action, content, []

    async def __call__(self, context, params):
        self.asked.append(params)
        return ElicitResult(action=self.action, content=self.content)


def _call(server, arguments: dict, *, host: Host | None = None, mode: str = "auto"):
    async def go():
        async with Client(server, elicitation_callback=host, mode=mode) as client:
            return await client.call_tool("launch_run", arguments)
    return anyio.run(go)


def _spawned(monkeypatch) -> list[str]:
    """Modal's spawn replaced by a stand-in that records the run and starts nothing."""
    from whileai_core.runs.modal_backend import ModalBackend

    started: list[str] = []

    def launch(self, record, target, run_dir, lock_fd, starting=None):
        if starting is not None:
            starting()
        started.append(record.id)
        return {"call_id": "fc-01ABCDEFGHJKMNPQRSTVWXYZ00"}

    monkeypatch.setattr(ModalBackend, "check_ready", lambda self, target=None: None)
    monkeypatch.setattr(ModalBackend, "launch", launch)
    return started


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_no_launches_nothing_and_writes_nothing(setup, monkeypatch, mode, action):
    ws, recipes, state = setup
    started = _spawned(monkeypatch)
    host = Host(action)
    answer = ok(_call(build_server(ws, skills_dir=ws / "none"), SPEND, host=host, mode=mode))
    assert len(host.asked) == 1
    shown = host.asked[0]
    assert shown.mode == "form"
    for fact in ("'tiny'", "A10G:2", "2 GPU", "2.00 GPU hours", "$2.20"):
        assert fact in shown.message, fact
    assert list(shown.requested_schema["properties"]) == ["launch"]
    assert answer["action"] == "planned" and answer["run"] is None
    assert "nothing was launched or recorded" in answer["next_step"]
    assert not state.exists()  # not even the registry's folder (and so no run folder)
    assert launches(recipes) == [] and started == []


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_accept_launches_as_confirm_does(setup, monkeypatch, mode):
    ws, _, state = setup
    started = _spawned(monkeypatch)
    host = Host("accept", {"launch": True})
    answer = ok(_call(build_server(ws, skills_dir=ws / "none"), SPEND, host=host, mode=mode))
    assert len(host.asked) == 1
    assert answer["action"] == "launched" and started == [answer["run"]["id"]]
    assert answer["run"]["status"] == "running" and answer["run"]["gpu"] == "A10G:2"
    assert state.exists()


def test_a_launch_that_cannot_start_is_refused_without_asking(setup):
    """No Modal token: the plan is not ready, so the user is not asked to approve a launch
    that would fail; confirm's own refusal (naming the variables) comes back."""
    ws, _, state = setup
    host = Host("accept", {"launch": True})
    text = error_text(_call(build_server(ws, skills_dir=ws / "none"), SPEND, host=host),
                      "launch_run")
    assert "MODAL_TOKEN_ID" in text and "nothing was launched or recorded" in text
    assert host.asked == []


def test_the_form_accepted_unticked_launches_nothing(setup, monkeypatch):
    ws, _, state = setup
    started = _spawned(monkeypatch)
    host = Host("accept", {"launch": False})
    answer = ok(_call(build_server(ws, skills_dir=ws / "none"), SPEND, host=host))
    assert answer["action"] == "planned" and "unticked" in answer["next_step"]
    assert started == [] and not state.exists()


def test_without_the_capability_plan_then_confirm_is_unchanged(setup, monkeypatch):
    ws, _, state = setup
    started = _spawned(monkeypatch)
    server = build_server(ws, skills_dir=ws / "none")
    plan = ok(_call(server, {**SPEND, "confirm": False}))
    assert plan["action"] == "planned" and plan["plan"]["spends_money"] is True
    assert not state.exists()
    launched = ok(_call(server, SPEND))  # no host to ask: confirm=true launches, as before
    assert launched["action"] == "launched" and started == [launched["run"]["id"]]


def test_plans_and_local_runs_are_never_asked(setup):
    ws, recipes, _ = setup
    server = build_server(ws, skills_dir=ws / "none")
    host = Host("decline")
    plan = ok(_call(server, {**SPEND, "confirm": False}, host=host))
    assert plan["action"] == "planned"
    local = ok(_call(server, {"config_or_recipe": "tiny", "backend": "local", "confirm": True},
                     host=host))
    assert local["action"] == "launched" and local["run"]["backend"] == "local"
    assert host.asked == []  # a plan is free and a CPU smoke spends nothing


def test_a_read_only_server_never_asks(setup):
    ws, _, state = setup
    host = Host("accept", {"launch": True})
    server = build_server(ws, skills_dir=ws / "none", read_only=True)
    text = error_text(_call(server, SPEND, host=host), "launch_run")
    assert "disabled by --read-only" in text
    assert host.asked == []


def test_an_answer_counts_only_for_the_plan_it_was_shown(setup, monkeypatch):
    """2026-07-28: the retried call must carry the question's digest the server sealed; an
    answer sent with no state (or for another plan) is not taken, the question is asked."""
    ws, _, state = setup
    started = _spawned(monkeypatch)
    server = build_server(ws, skills_dir=ws / "none")

    async def go():
        async with Client(server, elicitation_callback=Host("accept", {"launch": True})) as c:
            first = await c.session.call_tool("launch_run", SPEND, allow_input_required=True)
            forged = await c.session.call_tool(
                "launch_run", SPEND, allow_input_required=True,
                input_responses={"whileai/spend": ElicitResult(action="accept",
                                                               content={"launch": True})})
            return first, forged
    first, forged = anyio.run(go)
    assert first.result_type == "input_required" and "whileai/spend" in first.input_requests
    assert forged.result_type == "input_required"  # asked again, nothing launched
    assert started == [] and not state.exists()
