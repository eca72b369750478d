"""The Modal backend against Modal's real client objects, up to the network boundary.

No token exists here (the environment variables are removed and Modal's parsed ~/.modal.toml is
emptied for each test), so Modal's own client stops at authentication, before any request
leaves the machine. These tests show every path (spawn, poll, cancel) reaches the real
``modal.Function`` / ``modal.FunctionCall`` and that each error names the variables to set.
"""

from __future__ import annotations

import sys

import pytest

from whileai_core.errors import ConfigError
from whileai_core.runs import Registry, cancel_run, collect_run, launch_run, list_runs, run_status
from whileai_core.runs.backend import NEVER_STARTED
from whileai_core.runs.modal_backend import ModalBackend, recipe_call
from whileai_core.runs.registry import now, run_id
from whileai_core.runs.targets import resolve_target
from test_runs_support import make_recipes, stub_modal_spawn

modal = pytest.importorskip("modal")

SECRET = "as-not-a-real-secret-0123456789"
VARIABLES = ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET", "modal token new")


@pytest.fixture(autouse=True)
def no_token(monkeypatch):
    for name in ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET", "MODAL_OAUTH_REFRESH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(modal.config, "_user_config", {})


@pytest.fixture
def where(tmp_path):
    return dict(state_dir=tmp_path / "state", recipes_dir=make_recipes(tmp_path))


def _names_the_fix(err: BaseException) -> None:
    for word in VARIABLES:
        assert word in str(err)


def _record(where, call_id: str | None, *, marked: bool = True):
    """A run the way a launch that reached Modal would have left it (running, with a call id)."""
    registry = Registry(where["state_dir"])
    target = resolve_target("tiny", recipes_dir=where["recipes_dir"])
    fields = dict(id=run_id(target.sha256, "tiny", "modal"), name="tiny", target="tiny",
                  target_kind="recipe",
                  recipe="tiny", sha256=target.sha256, backend="modal", gpu="A10G")
    registry.claim(fields)
    handle = {"backend_called_at": now()} | ({"call_id": call_id} if call_id else {})
    if marked:
        registry.set_handle(fields["id"], handle)
    if call_id:
        registry.transition(fields["id"], ("launching",), "running", handle=handle)
    return registry, target, registry.get(fields["id"])


def test_launch_without_token_records_nothing_and_names_the_variables(where):
    with pytest.raises(ConfigError) as caught:
        launch_run("tiny", backend="modal", confirm=True, **where)
    _names_the_fix(caught.value)
    assert "nothing was launched or recorded" in str(caught.value)
    assert Registry(where["state_dir"]).all() == []


def test_spawn_reaches_modals_real_client_and_names_the_variables(where):
    registry, target, record = _record(where, None)
    with pytest.raises(ConfigError) as caught:
        ModalBackend().launch(record, target, registry.run_dir(record.id), lock_fd=-1)
    _names_the_fix(caught.value)
    # raised while handling Modal's own AuthError from Function.spawn: the real client ran
    assert isinstance(caught.value.__context__, modal.exception.AuthError)


def test_status_and_cancel_reach_the_real_function_call(where):
    _, _, record = _record(where, "fc-01ABCDEFGHJKMNPQRSTVWXYZ00")
    for call in (run_status, cancel_run, collect_run):
        with pytest.raises(ConfigError) as caught:
            call(record.id, state_dir=where["state_dir"])
        _names_the_fix(caught.value)
        assert isinstance(caught.value.__context__, modal.exception.AuthError)
    # Modal could not be asked, so nothing about the run changed (it is not marked cancelled)
    assert Registry(where["state_dir"]).get(record.id).status == "running"


def test_a_cancel_modal_refuses_is_undone(where, monkeypatch):
    _, _, record = _record(where, "fc-01ABCDEFGHJKMNPQRSTVWXYZ00")
    # the poll succeeds (still running), then Modal's real cancel refuses for want of a token
    monkeypatch.setattr(modal.FunctionCall, "get", _still_running)
    with pytest.raises(ConfigError) as caught:
        cancel_run(record.id, state_dir=where["state_dir"])
    _names_the_fix(caught.value)
    assert isinstance(caught.value.__context__, modal.exception.AuthError)
    assert Registry(where["state_dir"]).get(record.id).status == "running"


def _still_running(self, timeout=None, **_):
    raise TimeoutError()  # what FunctionCall.get(timeout=0) raises while the call runs


def test_list_runs_shows_a_modal_run_as_last_recorded_when_it_cannot_ask(where):
    _, _, record = _record(where, "fc-01ABCDEFGHJKMNPQRSTVWXYZ00")
    listed = list_runs(state_dir=where["state_dir"])
    assert [r.status for r in listed.runs] == ["running"]
    assert "last recorded" in listed.notes[0] and "MODAL_TOKEN_ID" in listed.notes[0]


def test_a_launcher_that_died_mid_spawn_is_reported_not_relaunched(where):
    _, _, record = _record(where, None)          # marker written, no call id, lock free
    seen = run_status(record.id, state_dir=where["state_dir"])
    assert seen.status == "failed" and "untracked" in seen.error
    assert launch_run("tiny", backend="local", **where).plan.run_id != record.id


def test_a_launcher_that_died_before_spawning_ran_nothing(where):
    _, _, record = _record(where, None, marked=False)  # claimed, spawn never reached
    seen = run_status(record.id, state_dir=where["state_dir"])
    assert seen.status == "failed" and seen.error == NEVER_STARTED and seen.handle is None


def test_the_recipe_says_what_to_spawn(where, tmp_path):
    call = recipe_call(resolve_target("tiny", recipes_dir=where["recipes_dir"]), "run-a")
    assert (call.app, call.function, call.args, call.kwargs) == (
        "whileai-test-tiny", "train", ("run-a",), {"config_toml": None})
    config = tmp_path / "rl.toml"
    config.write_text('[model]\nname = "x"\n')
    call = recipe_call(resolve_target(str(config), recipes_dir=where["recipes_dir"]), "rl")
    assert call.app == "whileai-test-prime-rl" and call.kwargs["config_toml"] == config.read_text()


def test_a_recipe_without_the_hook_is_not_ready_and_says_what_to_add(where):
    (where["recipes_dir"] / "nohook").mkdir()
    (where["recipes_dir"] / "nohook" / "run.py").write_text("print('hi')\n")
    plan = launch_run("nohook", backend="modal", **where).plan
    assert not plan.ready
    assert any("defines no modal_call(run_name, config_path)" in n for n in plan.notes)


def test_missing_modal_package_names_the_install(where, monkeypatch):
    monkeypatch.setitem(sys.modules, "modal", None)  # import modal -> ImportError
    with pytest.raises(ConfigError) as caught:
        launch_run("tiny", backend="modal", confirm=True, **where)
    # from a checkout (this one) the editable form; from a wheel the distribution's name
    assert "pip install -e '.[launch]'" in str(caught.value)
    assert "backend='local'" in str(caught.value)
    monkeypatch.setattr("whileai_core.extras.from_checkout", lambda: False)
    with pytest.raises(ConfigError) as caught:
        launch_run("tiny", backend="modal", confirm=True, **where)
    assert "pip install 'whileai-skills[launch]'" in str(caught.value)


def test_a_token_never_reaches_output_or_the_registry(where, monkeypatch):
    monkeypatch.setenv("MODAL_TOKEN_SECRET", SECRET)  # half a token: still refused
    result = launch_run("tiny", backend="modal", **where)
    with pytest.raises(ConfigError) as caught:
        launch_run("tiny", backend="modal", confirm=True, **where)
    assert SECRET not in str(caught.value) and SECRET not in result.model_dump_json()
    for file in where["state_dir"].rglob("*"):
        if file.is_file():
            assert SECRET.encode() not in file.read_bytes()


def test_an_identical_launch_returns_the_running_run_and_says_which_gpu_it_has(where):
    _, _, record = _record(where, "fc-01ABCDEFGHJKMNPQRSTVWXYZ00")
    again = launch_run("tiny", backend="modal", gpu="H100", **where)  # the plan finds it
    assert again.action == "existing" and again.run.id == record.id
    assert "launched on A10G, not H100" in again.next_step and "new name" in again.next_step


def test_a_modal_plan_shows_each_argument_as_a_reader_wants_it():
    from whileai_core.runs.modal_backend import ModalCall

    settings = {f"k{i}": i for i in range(8)}
    call = ModalCall("app", "train", ("run-a", settings), {"config_toml": "a = 1\nb = 2\n",
                                                            "rows": [1, 2, 3], "seed": 7})
    assert call.describe(None) == (
        "modal.Function.from_name('app', 'train').spawn('run-a', "
        "{k0, k1, k2, k3, k4, k5, ... 2 more}, config_toml=<text, 2 lines>, rows=<3 items>, "
        "seed=7)")
    from whileai_core.voice import CLI, speaking
    with speaking(CLI):  # the shell reads the call in words, not Modal's Python
        assert call.describe("H100:4") == (
            "Modal function train of app app on H100:4, spawned with 'run-a', "
            "{k0, k1, k2, k3, k4, k5, ... 2 more}, config-toml <text, 2 lines>, rows <3 items>, "
            "seed 7")


def _returns(record):
    def get(self, timeout=None, **_):
        return record  # what FunctionCall.get gives once the call has returned
    return get


@pytest.mark.parametrize("code", [1, 3])
def test_a_returned_record_with_a_nonzero_returncode_is_a_failed_run(where, monkeypatch, code):
    # prime-rl's train() returns {"returncode": rl's exit status, "log_tail": ...} instead of
    # raising (1: rl crashed; 3: stopped before rl, the GPUs were not there)
    _, _, record = _record(where, "fc-01ABCDEFGHJKMNPQRSTVWXYZ00")
    tail = "x" * 2000 + "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp"
    monkeypatch.setattr(modal.FunctionCall, "get", _returns(
        {"returncode": code, "log_tail": tail, "run_dir": "e2e-grpo/fc-01", "eval_files": []}))
    seen = run_status(record.id, state_dir=where["state_dir"])
    assert seen.status == "failed"
    assert f"return code {code}" in seen.error and seen.error.endswith("ProcessGroupNCCL.cpp")
    assert len(seen.error) < 1000  # the log tail is cut, not pasted whole
    stored = Registry(where["state_dir"]).get(record.id)
    assert stored.status == "failed" and stored.results["returncode"] == code  # record kept
    collected = collect_run(record.id, state_dir=where["state_dir"])
    assert collected.ready is False and collected.verdict is None and not collected.metrics
    assert collected.note.startswith("the run failed: ") and f"return code {code}" in collected.note


@pytest.mark.parametrize("returned", [{"returncode": 0, "wall_clock_s": 9}, {"wall_clock_s": 9}])
def test_a_returned_record_with_returncode_zero_or_none_at_all_succeeds(where, monkeypatch,
                                                                         returned):
    # the TRL recipes return results.json's data, which has no returncode
    _, _, record = _record(where, "fc-01ABCDEFGHJKMNPQRSTVWXYZ00")
    monkeypatch.setattr(modal.FunctionCall, "get", _returns(returned))
    assert run_status(record.id, state_dir=where["state_dir"]).status == "succeeded"
    collected = collect_run(record.id, state_dir=where["state_dir"])
    assert collected.ready and collected.metrics["wall_clock_s"] == 9


# --- a launch that spends runs only the plan the user approved -----------------------------------

def _stub_spawn(monkeypatch) -> list[str]:
    return stub_modal_spawn(monkeypatch)


def test_a_modal_launch_without_approved_is_refused_with_the_argument_to_add(where, monkeypatch):
    from whileai_core.errors import ArgumentError

    started = _stub_spawn(monkeypatch)
    plan = launch_run("tiny", backend="modal", **where).plan
    # before: confirm=True re-planned from disk and launched whatever was there
    with pytest.raises(ArgumentError) as refused:
        launch_run("tiny", backend="modal", confirm=True, **where)
    text = str(refused.value)
    assert f"add approved={plan.approval!r}" in text and "nothing was launched" in text, text
    assert started == [] and not where["state_dir"].exists()
    launched = launch_run("tiny", backend="modal", confirm=True, approved=plan.approval, **where)
    assert launched.action == "launched" and started == [launched.run.id]
    # launched before: a confirm without approved spends nothing, so it answers the run
    from whileai_core.runs.backend import Observation

    monkeypatch.setattr(ModalBackend, "poll", lambda self, record, run_dir: Observation("running"))
    again = launch_run("tiny", backend="modal", confirm=True, **where)
    assert again.action == "existing" and started == [launched.run.id]


def test_at_the_shell_the_refusal_names_the_flag_and_its_command_launches(where, monkeypatch,
                                                                           capsys):
    import json
    import shlex

    from whileai_core.cli import main

    started = _stub_spawn(monkeypatch)
    flags = ["--recipes-dir", str(where["recipes_dir"]), "--state-dir", str(where["state_dir"])]
    assert main(["launch", "tiny", "--confirm", *flags]) != 0
    err = capsys.readouterr().err
    approval = launch_run("tiny", backend="modal", **where).plan.approval
    assert f"add --approved {approval}" in " ".join(err.split()), err
    assert started == [] and not where["state_dir"].exists()
    command = " ".join(err.split()).rsplit(f"add --approved {approval}: ", 1)[1]
    words = shlex.split(command.split(". ")[0])
    assert words[:3] == ["whileai-skills", "launch", "tiny"] and "--approved" in words, words
    assert main([*words[1:], "--json"]) == 0  # the printed command, pasted, launches
    assert json.loads(capsys.readouterr().out)["action"] == "launched" and len(started) == 1
