"""launch_run / run_status / list_runs / cancel_run / collect_run on the local backend.

Recipes are the recipe-like scripts of test_runs_support (written into a temp folder); the
expected verdict of the ``tiny`` recipe is derived by hand there.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from pathlib import Path

import pytest

import whileai_core
from whileai_core import defaults
from whileai_core.cli import main as cli_main
from whileai_core.errors import ArgumentError, ConfigError, WhileaiError
from whileai_core.runs import (Registry, cancel_run, collect_run, launch_run, list_runs,
                               run_status, state_dir)
from whileai_core.runs.registry import REGISTRY_FILE, run_id
from test_runs_support import launches, make_recipes, wait_for, wait_until_finished


@pytest.fixture
def where(tmp_path):
    recipes = make_recipes(tmp_path)
    state = tmp_path / "state"
    return dict(state_dir=state, recipes_dir=recipes)


def test_end_to_end_plan_launch_poll_collect_and_launch_once(where):
    recipes, state = where["recipes_dir"], where["state_dir"]

    plan = launch_run("tiny", backend="local", **where)
    assert plan.action == "planned"
    assert plan.run is None                 # a plan is free: nothing recorded
    assert launches(recipes) == []  # nothing ran
    out = state / "runs" / plan.plan.run_id / "out"
    assert plan.plan.command.endswith(f"tiny/run.py --smoke --out {out}")
    assert plan.plan.est_gpu_hours == 0 and plan.plan.spends_money is False

    launched = launch_run("tiny", backend="local", confirm=True, **where)
    assert launched.action == "launched"
    assert launched.run.id == plan.plan.run_id
    assert launched.run.status == "running"
    assert launched.run.handle["pid"] > 0

    done = wait_until_finished(launched.run.id, state)
    assert done.status == "succeeded", done.error
    assert done.finished_at is not None

    collected = collect_run(done.id, state_dir=state)
    assert collected.ready
    assert collected.metrics == {"steps": 2, "loss": 0.25}
    assert (collected.n_before_rows, collected.n_after_rows) == (40, 40)
    c = collected.comparison
    assert c.n_paired == 10
    assert c.mean_before == pytest.approx(0.125)
    assert c.mean_after == pytest.approx(0.625)
    assert c.delta == pytest.approx(0.5)
    # every task gains exactly 0.5, so the paired spread is 0: the interval is the unpaired
    # difference of the arms' intervals (MOVER: lower = d - sqrt((after - lo_a)^2 + (hi_b - before)^2))
    (lb, ub), (la, ua) = c.mean_before_ci, c.mean_after_ci
    assert c.ci_method == "mover_unpaired"
    assert c.ci == pytest.approx((0.5 - math.hypot(0.625 - la, ub - 0.125),
                                  0.5 + math.hypot(ua - 0.625, 0.125 - lb)))
    assert c.ci[0] > 0 and collected.verdict == "moved"
    assert "verdict: moved" in str(collected)

    again = launch_run("tiny", backend="local", confirm=True, **where)
    assert again.action == "existing"
    assert again.run.id == launched.run.id
    assert len(launches(recipes)) == 1  # the recipe ran once

    # the row lists stay in the registry; what a status call shows is their size
    assert run_status(done.id, state_dir=state).results["before_rows"].startswith("40 rows")


def test_a_new_name_is_a_new_run_and_ids_follow_target_name_backend(where):
    first = launch_run("plain", backend="local", confirm=True, **where)
    second = launch_run("plain", backend="local", name="plain-2", confirm=True, **where)
    assert first.plan.run_id != second.plan.run_id
    assert first.run.id == run_id(first.run.sha256, "plain", "local")
    assert second.run.id == run_id(first.run.sha256, "plain-2", "local")
    for launched in (first, second):
        assert wait_until_finished(launched.run.id, where["state_dir"]).status == "succeeded"
    listed = list_runs(state_dir=where["state_dir"])
    assert [r.id for r in listed.runs] == [first.run.id, second.run.id]
    no_rows = collect_run(first.run.id, state_dir=where["state_dir"])
    assert no_rows.ready and no_rows.comparison is None and "no before_rows" in no_rows.note


def test_changing_the_recipe_changes_its_sha_and_so_the_run(where):
    recipes = where["recipes_dir"]
    first = launch_run("plain", backend="local", **where)
    with open(recipes / "plain" / "run.py", "a") as fh:
        fh.write("# edited\n")
    second = launch_run("plain", backend="local", **where)
    assert first.plan.sha256 != second.plan.sha256
    assert first.plan.run_id != second.plan.run_id


def test_a_recipe_that_fails_is_failed_with_its_exit_code_and_log(where):
    launched = launch_run("broken", backend="local", confirm=True, **where)
    done = wait_until_finished(launched.run.id, where["state_dir"])
    assert done.status == "failed"
    assert "exited with code 3" in done.error
    assert "loss went to nan at step 3" in done.error  # the log's last lines
    collected = collect_run(done.id, state_dir=where["state_dir"])
    assert not collected.ready and "failed" in collected.note
    # a run that started is never launched again under the same name
    assert launch_run("broken", backend="local", confirm=True, **where).action == "existing"
    assert len(launches(where["recipes_dir"])) == 1


def test_a_recipe_that_writes_no_results_fails_and_says_which_file(where):
    launched = launch_run("silent", backend="local", confirm=True, **where)
    done = wait_until_finished(launched.run.id, where["state_dir"])
    assert done.status == "failed"
    assert "results.json" in done.error and "exited 0" in done.error


def test_cancel_stops_a_running_recipe(where):
    state = where["state_dir"]
    launched = launch_run("slow", backend="local", confirm=True, **where)
    out = Path(launched.run.handle["out"])
    wait_for(out / "running")
    assert run_status(launched.run.id, state_dir=state).status == "running"
    stopped = cancel_run(launched.run.id, state_dir=state)
    assert stopped.run.status == "cancelled"
    assert "stopped process group" in stopped.stopped
    pid = launched.run.handle["pid"]
    with pytest.raises(ProcessLookupError):  # the wrapper's process group is gone
        os.killpg(pid, 0)
    assert run_status(launched.run.id, state_dir=state).status == "cancelled"
    again = cancel_run(launched.run.id, state_dir=state)
    assert "nothing to stop" in again.stopped


def test_a_second_launch_returns_while_the_first_run_is_still_running(where):
    state = where["state_dir"]
    first = launch_run("slow", backend="local", confirm=True, **where)
    wait_for(Path(first.run.handle["out"]) / "running")
    again = launch_run("slow", backend="local", confirm=True, **where)
    assert again.action == "existing" and again.run.id == first.run.id
    # it did not wait for the run to end (the run's lock is held until then): still running
    assert run_status(first.run.id, state_dir=state).status == "running"
    cancel_run(first.run.id, state_dir=state)
    assert len(launches(where["recipes_dir"])) == 1


def test_a_plan_writes_nothing_and_confirm_replans_and_launches(where):
    # found by a cold agent: a plan without confirm wrote a "planned" record into the registry
    state = where["state_dir"]
    plan = launch_run("plain", backend="local", **where)
    assert plan.action == "planned" and plan.run is None
    assert not state.exists()                      # not even the registry's folder
    assert list_runs(state_dir=state).runs == []
    with pytest.raises(ArgumentError, match="no run"):
        cancel_run(plan.plan.run_id, state_dir=state)
    again = launch_run("plain", backend="local", **where)   # planning twice is still free
    assert again.plan == plan.plan and not state.exists()
    launched = launch_run("plain", backend="local", confirm=True, **where)
    assert launched.action == "launched" and launched.run.id == plan.plan.run_id
    assert [r.id for r in list_runs(state_dir=state).runs] == [plan.plan.run_id]
    cancel_run(launched.run.id, state_dir=state)


def test_a_plan_of_a_launched_run_says_existing_and_records_nothing_new(where):
    state = where["state_dir"]
    launched = launch_run("plain", backend="local", confirm=True, **where)
    before = list_runs(state_dir=state).runs
    plan = launch_run("plain", backend="local", **where)
    assert plan.action == "existing" and plan.run.id == launched.run.id
    assert [(r.id, r.created_at) for r in list_runs(state_dir=state).runs] == \
        [(r.id, r.created_at) for r in before]
    cancel_run(launched.run.id, state_dir=state)


# --- the state directory ---------------------------------------------------------------------

def test_state_dir_flag_beats_env_beats_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("WHILEAI_STATE_DIR", raising=False)
    assert state_dir() == tmp_path / "home" / ".whileai"
    assert defaults.STATE_DIR == "~/.whileai" and defaults.source("STATE_DIR")
    monkeypatch.setenv("WHILEAI_STATE_DIR", str(tmp_path / "env"))
    assert state_dir() == tmp_path / "env"
    assert state_dir(tmp_path / "flag") == tmp_path / "flag"


def test_registry_is_sqlite_in_wal_mode_with_one_row_per_target_name_backend(tmp_path):
    registry = Registry(tmp_path)
    db = sqlite3.connect(tmp_path / REGISTRY_FILE)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    row = dict(id="run-000000000001", name="a", target="tiny", target_kind="recipe", recipe="tiny",
               sha256="f" * 64, backend="local", gpu=None, status="planned", created_at="t",
               updated_at="t")
    cols = ", ".join(row)
    db.execute(f"INSERT INTO runs ({cols}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
    db.commit()
    with pytest.raises(sqlite3.IntegrityError):  # same sha256, name and backend: refused
        db.execute(f"INSERT INTO runs ({cols}) VALUES ({', '.join('?' * len(row))})",
                   [*("run-000000000002",), *list(row.values())[1:]])
    with pytest.raises(sqlite3.IntegrityError):  # an unknown status: refused
        db.execute(f"INSERT INTO runs ({cols}) VALUES ({', '.join('?' * len(row))})",
                   [*("run-000000000003", "b"), *list(row.values())[2:8], "done", "t", "t"])
    assert registry.get("run-000000000001").status == "planned"


def test_transition_is_compare_and_set(tmp_path):
    registry = Registry(tmp_path)
    fields = dict(id="run-00000000000a", name="a", target="t", target_kind="recipe", recipe="t",
                  sha256="0" * 64, backend="local", gpu=None)
    record, claimed = registry.claim(fields)
    assert claimed and record.status == "launching"
    assert registry.claim(fields) == (registry.get(record.id), False)
    assert registry.transition(record.id, ("launching",), "cancelled").status == "cancelled"
    # a late reconcile that still believes the run is launching changes nothing
    assert registry.transition(record.id, ("launching",), "succeeded") is None
    assert registry.get(record.id).status == "cancelled"


# --- bad input: one message that names the argument, the value and the fix --------------------

@pytest.mark.parametrize("kwargs, error, words", [
    (dict(config_or_recipe="nope"), ArgumentError, ["'nope'", "broken", "tiny", "TOML"]),
    (dict(config_or_recipe=""), ArgumentError, ["config_or_recipe", "grpo"]),
    (dict(config_or_recipe=".."), ArgumentError, ["'..' is not a recipe name", "tiny"]),
    (dict(config_or_recipe="tiny", backend="gpu"), ArgumentError, ["backend", "'gpu'", "local"]),
    (dict(config_or_recipe="tiny", gpu="H900"), ArgumentError, ["gpu", "'H900'", "H100:8"]),
    (dict(config_or_recipe="tiny", gpu="H100:9"), ArgumentError, ["COUNT 1-8", "'H100:9'"]),
    (dict(config_or_recipe="tiny", name="a b"), ArgumentError, ["name", "'a b'", "letters"]),
    (dict(config_or_recipe="tiny", confirm="yes"), ArgumentError, ["confirm", "'yes'"]),
])
def test_launch_refuses_bad_arguments(where, kwargs, error, words):
    kwargs.setdefault("backend", "modal")
    with pytest.raises(error) as caught:
        launch_run(**kwargs, **where)
    for word in words:
        assert word in str(caught.value)
    assert "Fix:" in str(caught.value)


def test_a_config_is_not_run_locally_and_the_message_says_why(where, tmp_path):
    config = tmp_path / "rl.toml"
    config.write_text('[model]\nname = "Qwen/Qwen3-0.6B"\n')
    with pytest.raises(ArgumentError) as caught:
        launch_run(str(config), backend="local", **where)
    text = str(caught.value)
    assert "only a recipe's CPU path" in text and "backend='modal'" in text
    assert "launch_run('prime-rl', backend='local')" in text


def test_config_files_are_checked(where, tmp_path):
    (tmp_path / "notes.txt").write_text("hi")
    (tmp_path / "bad.toml").write_text("[model\n")
    with pytest.raises(ArgumentError, match="not a .toml file"):
        launch_run(str(tmp_path / "notes.txt"), **where)
    with pytest.raises(ConfigError, match="not valid TOML"):
        launch_run(str(tmp_path / "bad.toml"), **where)
    with pytest.raises(ArgumentError, match="no such file"):
        launch_run(str(tmp_path / "missing.toml"), **where)


def test_a_prime_rl_config_plans_on_modal_with_its_deployment_gpus(where, tmp_path, monkeypatch):
    monkeypatch.delenv("MODAL_TOKEN_ID", raising=False)
    monkeypatch.delenv("MODAL_TOKEN_SECRET", raising=False)
    config = tmp_path / "rl.toml"
    config.write_text("[deployment]\ntype = \"single_node\"\nnum_train_gpus = 3\n"
                      "num_infer_gpus = 1\n")
    plan = launch_run(str(config), **where).plan
    assert plan.recipe == "prime-rl" and plan.target_kind == "config"
    assert plan.gpu == "H100:4" and plan.gpu_count == 4  # 3 + 1 from [deployment]
    # the forecast's own GPU hours (its arithmetic is checked in test_runs_forecast.py); the
    # config sets no max_steps, so the forecast says it assumed some
    assert plan.est_gpu_hours == plan.forecast.gpu_hours.value > 0
    assert any("no max_steps" in n for n in plan.forecast.notes)
    assert plan.spends_money
    assert plan.command == ("modal.Function.from_name('whileai-test-prime-rl', 'train')"
                            ".with_options(gpu='H100:4').spawn('rl', config_toml=<text, 4 lines>)")
    # the run name as written, the config by its size (the file above: 4 lines), never whole
    assert not plan.ready and any("MODAL_TOKEN_ID" in n for n in plan.notes)
    assert launch_run(str(config), gpu="a100-80gb:2", **where).plan.gpu == "A100-80GB:2"


@pytest.mark.parametrize("call", [run_status, collect_run, cancel_run])
def test_unknown_or_malformed_run_ids(where, call):
    state = where["state_dir"]
    with pytest.raises(ArgumentError, match="no run 'run-0123456789ab'.*list_runs"):
        call("run-0123456789ab", state_dir=state)
    with pytest.raises(ArgumentError, match="`id` must be a run id"):
        call("../etc", state_dir=state)


def test_a_state_dir_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(WhileaiError, match="not a folder"):
        list_runs(state_dir=tmp_path / "f")


def test_exported_from_the_package(where):
    # the package exports the operations (what the CLI and the server offer), which call these
    from whileai_core.operations import get

    assert whileai_core.launch_run.__wrapped__ is get("launch_run").fn
    assert whileai_core.collect_run.__wrapped__ is get("collect_run").fn
    plan = whileai_core.launch_run("tiny", backend="local", recipes_dir=where["recipes_dir"],
                                   state_dir=where["state_dir"])
    assert plan.action == "planned" and plan.plan == launch_run(
        "tiny", backend="local", recipes_dir=where["recipes_dir"],
        state_dir=where["state_dir"]).plan


# --- CLI ----------------------------------------------------------------------------------------

def test_cli_launch_status_runs_collect(where, capsys):
    flags = ["--state-dir", str(where["state_dir"])]
    assert cli_main(["launch", "tiny", "--backend", "local", "--recipes-dir",
                     str(where["recipes_dir"]), "--json", *flags]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["action"] == "planned"
    assert cli_main(["launch", "tiny", "--backend", "local", "--confirm", "--recipes-dir",
                     str(where["recipes_dir"]), "--json", *flags]) == 0
    run = json.loads(capsys.readouterr().out)["run"]
    wait_until_finished(run["id"], where["state_dir"])
    assert cli_main(["status", run["id"], *flags]) == 0
    assert "succeeded" in capsys.readouterr().out
    assert cli_main(["runs", *flags]) == 0
    assert run["id"] in capsys.readouterr().out
    assert cli_main(["collect", run["id"], "--json", *flags]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "moved"
    assert cli_main(["cancel", run["id"], *flags]) == 0
    assert "nothing to stop" in capsys.readouterr().out


def test_cli_bad_input_is_one_line_and_exit_2(where, capsys):
    assert cli_main(["status", "run-0123456789ab", "--state-dir", str(where["state_dir"])]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no run") and err.count("\n") == 1


_LAUNCH = ["launch", "tiny", "--backend", "local", "--confirm"]
_FOLDER = (lambda path: path.mkdir(), "cannot be opened or written (unable to open database file)")
_GARBAGE = (lambda path: path.write_text("not sqlite\n" * 100),
            "is not a run registry SQLite can read")


# a folder where the database file goes stands for a read-only folder (root writes through
# permissions), SQLite's answer is the same: unable to open database file
@pytest.mark.parametrize("command, spoil, said", [(_LAUNCH, *_FOLDER), (_LAUNCH, *_GARBAGE),
                                                  (["runs"], *_GARBAGE)])
def test_an_unusable_registry_file_is_one_line_and_exit_2(where, capsys, spoil, said, command):
    state = where["state_dir"]
    state.mkdir()
    spoil(state / REGISTRY_FILE)
    before = sorted(p.name for p in state.iterdir())
    assert cli_main([*command, "--state-dir", str(state),
                     *(["--recipes-dir", str(where["recipes_dir"])] if command[0] == "launch"
                       else [])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err and str(state / REGISTRY_FILE) in err
    assert "--state-dir" in err and "Traceback" not in err
    assert sorted(p.name for p in state.iterdir()) == before      # nothing written beside it
    assert launches(where["recipes_dir"]) == []


def test_reading_never_creates_the_state_dir(tmp_path):
    state = tmp_path / "state"
    assert list_runs(state_dir=state).runs == []
    with pytest.raises(ArgumentError, match="no run"):
        run_status("run-0123456789ab", state_dir=state)
    assert not state.exists()
