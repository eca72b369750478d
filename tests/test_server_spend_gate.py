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
from test_runs_support import launches, make_recipes, stub_modal_spawn
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
    return stub_modal_spawn(monkeypatch)


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


def test_without_the_capability_a_spending_confirm_needs_the_plans_approved(setup, monkeypatch):
    ws, _, state = setup
    started = _spawned(monkeypatch)
    server = build_server(ws, skills_dir=ws / "none")
    plan = ok(_call(server, {**SPEND, "confirm": False}))
    assert plan["action"] == "planned" and plan["plan"]["spends_money"] is True
    assert not state.exists()
    # no host to ask: confirm=true alone would launch whatever the disk holds by then, so it
    # is refused, naming the argument to add with its value (the plan's next step has it too)
    refused = error_text(_call(server, SPEND), "launch_run")
    assert f'add approved="{plan["plan"]["approval"]}"' in refused, refused
    assert "nothing was launched or recorded" in refused and f"approved=\"" in plan["next_step"]
    assert started == [] and not state.exists()
    launched = ok(_call(server, {**SPEND, "approved": plan["plan"]["approval"]}))
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


# --- the plan the user approved is the plan that runs ----------------------

CONFIG = {"taskset": "gsm8k", "method": "grpo", "model": "Qwen/Qwen3-0.6B", "out": "rl.toml"}
LAUNCH = {"config_or_recipe": "rl.toml", "confirm": True}


def _staged(monkeypatch) -> list[tuple[str, bytes]]:
    """Modal's spawn replaced by a stand-in that keeps the GPU spec and the config bytes the
    launch hands the recipe (what would run), and starts nothing."""
    from whileai_core.runs.modal_backend import ModalBackend

    started: list[tuple[str, bytes]] = []

    def launch(self, record, target, run_dir, lock_fd, starting=None):
        if starting is not None:
            starting()
        started.append((record.gpu, target.data))
        return {"call_id": "fc-01ABCDEFGHJKMNPQRSTVWXYZ00"}

    monkeypatch.setattr(ModalBackend, "check_ready", lambda self, target=None: None)
    monkeypatch.setattr(ModalBackend, "launch", launch)
    return started


def _gpus(config: bytes) -> int:
    import tomllib

    deployment = tomllib.loads(config.decode())["deployment"]
    return deployment["num_train_gpus"] + deployment["num_infer_gpus"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_config_rewritten_while_the_question_is_open_is_asked_again(setup, monkeypatch, mode):
    """The red team's case: the user approves "H100:2 (2 GPU)" while a second MCP client
    calls prime_rl_config(gpus=8, overwrite=true). Before: H100:8 launched (4 of 4). Now the
    launch is bound to the approval shown: the 8-GPU plan is asked about, and a user who
    approved only the 2-GPU one launches nothing."""
    ws, _, state = setup
    started = _staged(monkeypatch)
    server = build_server(ws, skills_dir=ws / "none")
    shown: list[str] = []

    async def go():
        async with Client(server) as other:
            ok(await other.call_tool("prime_rl_config", {**CONFIG, "gpus": 2, "overwrite": True}))

            async def host(context, params):
                shown.append(params.message)
                if len(shown) == 1:  # the question is open: another client rewrites the config
                    ok(await other.call_tool("prime_rl_config",
                                             {**CONFIG, "gpus": 8, "overwrite": True}))
                    return ElicitResult(action="accept", content={"launch": True})
                return ElicitResult(action="decline")  # the user approved 2 GPUs, not 8

            async with Client(server, elicitation_callback=host, mode=mode) as client:
                return await client.call_tool("launch_run", LAUNCH)

    for attempt in range(4):
        shown.clear()
        answer = ok(anyio.run(go))
        assert len(shown) == 2, attempt
        assert "H100:2 (2 GPU)" in shown[0] and "H100:8 (8 GPU)" in shown[1]
        assert answer["action"] == "planned" and answer["run"] is None
        assert answer["plan"]["gpu"] == "H100:8" and "declined" in answer["next_step"]
    assert started == [] and not state.exists()


def test_a_writer_toggling_the_config_never_launches_an_unapproved_plan(setup, monkeypatch):
    """2026-07-28: a writer swaps the config between 2 and 8 GPUs while calls are answered and
    retried. Before: 17 of 30 launches differed from the last plan approved. Now every launch
    is the last plan the user was shown and accepted: its GPUs, and bytes that say so."""
    import os
    import re
    import threading

    ws, _, _ = setup
    started = _staged(monkeypatch)
    server = build_server(ws, skills_dir=ws / "none")

    async def write_both():
        async with Client(server) as other:
            for gpus in (2, 8):
                ok(await other.call_tool("prime_rl_config",
                                         {**CONFIG, "gpus": gpus, "out": f"rl{gpus}.toml"}))
    anyio.run(write_both)
    texts = [(ws / "rl2.toml").read_bytes(), (ws / "rl8.toml").read_bytes()]
    (ws / "rl.toml").write_bytes(texts[0])
    stop = threading.Event()

    def toggle():
        i = 0
        while not stop.is_set():
            i += 1
            tmp = ws / f".swap{i % 2}"
            tmp.write_bytes(texts[i % 2])
            os.replace(tmp, ws / "rl.toml")

    approved: list[str] = []  # per call: the GPU spec of the last question accepted

    async def host(context, params):
        approved[-1] = re.search(r"on Modal, (H100(?::\d+)?) \(", params.message).group(1)
        return ElicitResult(action="accept", content={"launch": True})

    async def calls():
        async with Client(server, elicitation_callback=host) as client:
            for i in range(30):
                approved.append(None)
                n = len(started)
                result = await client.call_tool("launch_run", {**LAUNCH, "name": f"t{i}"})
                if len(started) > n:  # it launched: exactly what was approved last
                    assert not result.is_error
                    gpu, data = started[-1]
                    assert gpu == approved[-1], (i, gpu, approved[-1])
                    assert f"H100:{_gpus(data)}" == gpu
                else:  # refused: the plan kept changing, each change asked about
                    assert result.is_error and "changed each of the 3 times" in error_text(
                        result, "launch_run")

    thread = threading.Thread(target=toggle, daemon=True)
    thread.start()
    try:
        anyio.run(calls)
    finally:
        stop.set()
        thread.join()
    assert started, "no launch got through in 30 calls: the toggle test proves nothing"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("content", [None, {}, {"launch": "yes"}])
def test_an_accept_without_the_forms_answer_never_launches(setup, monkeypatch, mode, content):
    """An accept must carry ``launch: true``: before, no content launched on 2026-07-28 (the
    form's default) and ``{}`` on 2025-11-25, while the same answer was refused elsewhere."""
    ws, _, state = setup
    started = _spawned(monkeypatch)
    host = Host("accept", content)
    text = error_text(_call(build_server(ws, skills_dir=ws / "none"), SPEND, host=host,
                            mode=mode), "launch_run")
    assert "without the form's answer" in text and "nothing was launched" in text
    assert started == [] and not state.exists()


def test_a_confirm_bound_to_its_plan_refuses_another(setup, monkeypatch):
    """Without elicitation: the plan's next step carries its approval; a confirm with it after
    the config changed is refused, nothing launched or recorded."""
    ws, _, state = setup
    started = _staged(monkeypatch)
    server = build_server(ws, skills_dir=ws / "none")

    async def go():
        async with Client(server) as client:
            ok(await client.call_tool("prime_rl_config", {**CONFIG, "gpus": 2}))
            plan = ok(await client.call_tool("launch_run", {**LAUNCH, "confirm": False}))
            ok(await client.call_tool("prime_rl_config", {**CONFIG, "gpus": 8,
                                                          "overwrite": True}))
            refused = await client.call_tool(
                "launch_run", {**LAUNCH, "approved": plan["plan"]["approval"]})
            return plan, refused
    plan, refused = anyio.run(go)
    approval = plan["plan"]["approval"]
    assert f'approved="{approval}"' in plan["next_step"]
    text = error_text(refused, "launch_run")
    assert "nothing was launched or recorded" in text and approval[:23] in text
    assert "H100:8 (8 GPU)" in text
    assert started == [] and not state.exists()
