"""The run tools through the MCP protocol: plan, confirm, poll, collect; errors as tool errors.

The server's registry is ``$WHILEAI_STATE_DIR`` and its recipes ``$WHILEAI_RECIPES_DIR`` (both
temp folders here); the ``tiny`` recipe's verdict is derived by hand in test_runs_support.
"""

from __future__ import annotations

import time

import pytest

from server.app import build_server
from test_runs_support import launches, make_recipes
from test_server_support import call, error_text, ok


@pytest.fixture
def setup(tmp_path, monkeypatch):
    recipes = make_recipes(tmp_path)
    monkeypatch.setenv("WHILEAI_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("WHILEAI_RECIPES_DIR", str(recipes))
    for name in ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET"):
        monkeypatch.delenv(name, raising=False)
    ws = tmp_path / "ws"
    (ws / "configs").mkdir(parents=True)
    (ws / "configs" / "rl.toml").write_text("[deployment]\nnum_train_gpus = 1\nnum_infer_gpus = 1\n")
    return build_server(ws, skills_dir=ws / "no-skills"), recipes


def _poll(server, run_id: str, limit_s: float = 120.0) -> dict:
    deadline = time.monotonic() + limit_s
    while True:
        status = ok(call(server, "run_status", {"id": run_id}))
        if status["status"] not in ("launching", "running"):
            return status
        assert time.monotonic() < deadline, status
        time.sleep(0.05)


def test_plan_confirm_poll_collect_through_the_protocol(setup):
    server, recipes = setup
    plan = ok(call(server, "launch_run", {"config_or_recipe": "tiny", "backend": "local"}))
    assert plan["action"] == "planned" and launches(recipes) == []
    assert plan["run"] is None and ok(call(server, "list_runs", {}))["runs"] == []  # plans are free
    launched = ok(call(server, "launch_run", {"config_or_recipe": "tiny", "backend": "local",
                                              "confirm": True}))
    assert launched["action"] == "launched" and launched["run"]["id"] == plan["plan"]["run_id"]
    assert _poll(server, launched["run"]["id"])["status"] == "succeeded"
    collected = ok(call(server, "collect_run", {"id": launched["run"]["id"]}))
    assert collected["verdict"] == "moved"
    assert collected["comparison"]["delta"] == pytest.approx(0.5)  # by hand: every task +2/4
    listed = ok(call(server, "list_runs", {}))
    assert [r["id"] for r in listed["runs"]] == [launched["run"]["id"]]
    again = ok(call(server, "launch_run", {"config_or_recipe": "tiny", "backend": "local",
                                           "confirm": True}))
    assert again["action"] == "existing" and len(launches(recipes)) == 1
    stopped = ok(call(server, "cancel_run", {"id": launched["run"]["id"]}))
    assert "nothing to stop" in stopped["stopped"]


def test_a_workspace_config_plans_on_modal_and_paths_stay_in_the_root(setup):
    server, _ = setup
    plan = ok(call(server, "launch_run", {"config_or_recipe": "configs/rl.toml"}))
    assert plan["plan"]["gpu"] == "H100:2" and plan["plan"]["spends_money"] is True
    text = error_text(call(server, "launch_run", {"config_or_recipe": "../rl.toml"}),
                      "launch_run")
    assert "config_or_recipe" in text and "'..'" in text


def test_launching_on_modal_without_a_token_is_a_tool_error_naming_the_variables(setup):
    server, _ = setup
    text = error_text(call(server, "launch_run", {"config_or_recipe": "tiny", "confirm": True}),
                      "launch_run")
    assert "MODAL_TOKEN_ID" in text and "MODAL_TOKEN_SECRET" in text


def test_bad_arguments_are_tool_errors(setup):
    server, _ = setup
    text = error_text(call(server, "run_status", {"id": "nope"}), "run_status")
    assert "`id` must be a run id" in text
    text = error_text(call(server, "launch_run", {"config_or_recipe": "tiny", "backend": "gpu"}),
                      "launch_run")
    assert "`backend`" in text and "'gpu'" in text
    text = error_text(call(server, "collect_run", {"id": "run-0123456789ab"}), "collect_run")
    assert "no run 'run-0123456789ab'" in text


def test_the_spending_tool_says_so_in_its_annotations(setup):
    from server.registry import tool_specs

    specs = {s.name: s for s in tool_specs()}
    launch = specs["launch_run"].annotations
    assert launch.destructive_hint is True and launch.open_world_hint is True
    assert launch.read_only_hint is False
    assert specs["launch_run"].input.model_fields["confirm"].default is False
    assert specs["cancel_run"].annotations.destructive_hint is True
    for name in ("run_status", "list_runs", "collect_run"):
        assert specs[name].annotations.read_only_hint is True
