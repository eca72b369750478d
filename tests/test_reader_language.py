"""Human output in the reader's language: at the shell the next step is the command to
type and a fix names the flag (``--force``); over MCP it names the tool's arguments; from Python
it is the call. No ``None``, no Python repr, no ``<dict of 3 ...>`` in human text.

Expected spellings are written out by hand from the CLI's own --help and the tools' schemas.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from whileai_core import voice
from whileai_core.cli import main
from whileai_core.errors import ConfigError
from whileai_core.io import write_atomic
from whileai_core.runs import launch_run
from whileai_core.runs.registry import RunRecord
from whileai_core.runs.results import Collected
from whileai_core.voice import CLI, MCP, PYTHON, speaking

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = str(ROOT / "examples" / "graded.jsonl")
TEACHER = str(ROOT / "examples" / "teacher.jsonl")

# what never belongs in text meant for a person
PYTHON_SPEAK = [
    (re.compile(r"\bNone\b"), "a Python None"),
    (re.compile(r"<\w+ (of|object)\b"), "a Python repr"),
    (re.compile(r"\b\w+=(True|False)\b"), "a Python keyword argument"),
    (re.compile(r"\(\w+=\)"), "a Python keyword argument"),
    (re.compile(r"\b[a-z_]+='"), "a Python keyword argument"),
    (re.compile(r"`config_or_recipe`"), "the Python argument instead of TARGET"),
    (re.compile(r"\boverwrite\b"), "the Python argument instead of --force"),
    (re.compile(r"\b(prime_rl_config|launch_run|run_status|collect_run)\("), "a Python call"),
]


def assert_plain(text: str) -> None:
    for pattern, what in PYTHON_SPEAK:
        match = pattern.search(text)
        assert match is None, f"{what} in human output: {match.group(0)!r} in\n{text}"


# --- the spelling itself ---------------------------------------------------------------------

@pytest.mark.parametrize("reader, expected", [
    (PYTHON, "launch_run('grpo', backend='local', confirm=True)"),
    (CLI, "whileai-skills launch grpo --backend local --confirm"),
    (MCP, 'launch_run(config_or_recipe="grpo", backend="local", confirm=true)'),
])
def test_a_call_in_each_readers_language(reader, expected):
    with speaking(reader):
        assert voice.call("launch_run", config_or_recipe="grpo", backend="local",
                          gpu=None, confirm=True) == expected


@pytest.mark.parametrize("reader, expected", [
    (PYTHON, "prime_rl_config('my task', method={'name': 'opd', 'teacher': 't@u'}, "
             "model='m', lora=False, overwrite=True)"),
    (CLI, "whileai-skills config 'my task' --method '{\"name\": \"opd\", \"teacher\": \"t@u\"}' "
          "--model m --no-lora --force"),
    (MCP, 'prime_rl_config(taskset="my task", method={"name": "opd", "teacher": "t@u"}, '
          'model="m", lora=false, overwrite=true)'),
])
def test_flags_whose_names_differ(reader, expected):
    with speaking(reader):
        assert voice.call("prime_rl_config", taskset="my task",
                          method={"name": "opd", "teacher": "t@u"}, model="m", lora=False,
                          overwrite=True) == expected


@pytest.mark.parametrize("reader, with_value, bare", [
    (PYTHON, "overwrite=True", "overwrite"),
    (CLI, "--force", "--force"),
    (MCP, "overwrite=true", "overwrite"),
])
def test_one_argument(reader, with_value, bare):
    with speaking(reader):
        assert voice.arg("overwrite", True) == with_value
        assert voice.arg("overwrite") == bare


def test_the_reader_is_restored_after_the_block():
    with speaking(CLI):
        with speaking(MCP):
            assert voice.reader() == MCP
        assert voice.reader() == CLI
    assert voice.reader() == PYTHON


# --- the CLI ---------------------------------------------------------------------------------

def test_route_prints_the_config_command_and_it_runs(capsys, tmp_path):
    assert main(["route", EXAMPLE, "--model", "Qwen/Qwen3-8B", "--taskset", "reverse-text"]) == 0
    out = capsys.readouterr().out
    assert_plain(out)
    command = out.strip().splitlines()[-1].strip()
    assert command == ("whileai-skills config reverse-text --method grpo --model Qwen/Qwen3-8B")
    # the printed command is what a person types: run it as typed, plus where to write
    argv = shlex.split(command)[1:] + ["--out", str(tmp_path / "rl.toml")]
    assert main(argv) == 0 and (tmp_path / "rl.toml").is_file()
    assert_plain(capsys.readouterr().out)


def test_route_names_the_holdout_command(capsys):
    assert main(["route", EXAMPLE, "--model", "Qwen/Qwen3-8B"]) == 0
    assert "(`whileai-skills holdout-size`)" in capsys.readouterr().out


def test_an_existing_file_over_each_door(tmp_path):
    target = tmp_path / "x.txt"
    target.write_text("old")
    for reader, fix in ((PYTHON, "pass overwrite=True"), (CLI, "pass --force"),
                        (MCP, "pass overwrite=true")):
        with speaking(reader), pytest.raises(ConfigError) as err:
            write_atomic(target, "new")
        assert f"Fix: {fix} or choose another path" in str(err.value)
        assert "(CLI:" not in str(err.value)


def test_launch_plan_prints_the_command_to_confirm(tmp_path, capsys):
    state = tmp_path / "state"
    assert main(["launch", "prime-rl", "--backend", "local", "--state-dir", str(state)]) == 0
    out = capsys.readouterr().out
    assert_plain(out)
    plan = launch_run("prime-rl", backend="local", state_dir=state)
    approval = plan.plan.approval  # the confirm is bound to the plan shown
    assert (f"next: whileai-skills launch prime-rl --backend local --confirm --approved "
            f"{approval} --state-dir {state}" in out)
    assert plan.next_step == (f"launch_run('prime-rl', backend='local', confirm=True, "
                              f"approved={approval!r}, state_dir={str(state)!r})")


def test_an_unknown_run_names_the_state_dir_flag(tmp_path, capsys):
    assert main(["status", "run-0123456789ab", "--state-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "`whileai-skills runs` shows the runs; pass --state-dir" in err


def test_collect_renders_nested_metrics_in_words():
    record = RunRecord(id="run-0123456789ab", name="g", target="grpo", target_kind="recipe",
                       recipe="grpo", sha256="0" * 64, backend="local", status="succeeded",
                       gpu=None, created_at="2026-01-01T00:00:00+00:00",
                       updated_at="2026-01-01T00:00:00+00:00")
    collected = Collected(run=record, ready=True, metrics={
        "summary": {"a": 1, "b": {"c": 2}}, "steps": 2, "losses": [0.5, 0.25],
        "best": None, "by_category": [{"x": 1}, {"x": 2}, {"x": 3}], "smoke": True})
    with speaking(CLI):
        text = collected.render()
    assert_plain(text)
    lines = text.splitlines()[1:]
    assert lines == ["best: none", "by_category: 3 entries (the full data: --json)",
                     "losses: 0.5, 0.25", "smoke: yes", "steps: 2",
                     "summary: 2 fields (the full data: --json)"]


def test_audit_judge_without_a_clearing_judge_says_none(tmp_path, capsys):
    items = [{"id": f"r{i}", "label": i < 5, "grades": {"judge-b": True}} for i in range(10)]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    assert main(["audit-judge", str(path)]) == 1  # no judge clears: a negative verdict
    out = capsys.readouterr().out
    assert "\nbest: none\n" in out
    assert_plain(out)


@pytest.mark.parametrize("argv", [
    ["route", EXAMPLE, "--model", "Qwen/Qwen3-8B"],
    ["route", EXAMPLE, "--model", "Qwen/Qwen3-8B", "--teacher-rows", TEACHER],
    ["pass-at", EXAMPLE],
    ["compare", EXAMPLE, TEACHER],
    ["noise-floor", *(str(ROOT / "examples" / "reruns" / f"run-{i}.jsonl") for i in (1, 2))],
    ["holdout-size"],
    ["holdout-size", "--before", EXAMPLE, "--after", TEACHER],
    ["split", EXAMPLE],
    ["config", "reverse-text", "--model", "Qwen/Qwen3-8B"],
    ["config", "reverse-text", "--model", "Qwen/Qwen3-8B", "--method", "opsd"],
    pytest.param(["launch", "grpo", "--backend", "local"], marks=pytest.mark.train),
    ["failure-capable", EXAMPLE],
])
def test_human_output_speaks_plainly(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("WHILEAI_STATE_DIR", str(tmp_path / "state"))
    assert main(argv) == 0
    assert_plain(capsys.readouterr().out)


@pytest.mark.parametrize("argv", [
    ["by-category", EXAMPLE],                               # no category: names --tasks
    ["status", "run-x"],
    ["launch", "nope", "--backend", "local"],
    ["launch", "grpo", "--gpu", "H900"],
    ["config", "reverse-text", "--model", "m", "--method", "sao"],
])
def test_errors_speak_plainly(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("WHILEAI_STATE_DIR", str(tmp_path / "state"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert_plain(err)


# --- messages that were wrong ------------------------------------------------------------------

TRACE_COMMANDS = {
    "audit-judge": (["audit-judge", "{f}"], '"label": true'),
    "order-reversal": (["order-reversal", "{f}"], '"forward": "first"'),
    "select-sft": (["select-sft", "{f}"], '"messages"'),
    "decontaminate": (["decontaminate", "{f}", "{f}"], '"messages"'),
    "export-sft": (["export-sft", "{f}", "--out", "{o}"], '"messages"'),
}


@pytest.mark.parametrize("command", list(TRACE_COMMANDS))
def test_an_empty_file_gets_the_fix_for_its_own_kind(command, tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    argv, form = TRACE_COMMANDS[command]
    assert main([a.format(f=empty, o=tmp_path / "o.jsonl") for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is empty" in err and form in err
    assert "task_id and reward" not in err and "no rows" not in err


def test_rows_keep_the_rows_fix(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["pass-at", str(empty)]) == 2
    assert '"task_id": "t1", "reward": 1.0' in capsys.readouterr().err


def test_a_missing_file_at_the_shell_names_the_current_directory(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["pass-at", "nope.jsonl"]) == 2
    assert f"relative paths start at the current directory, {tmp_path}" in capsys.readouterr().err


# --- over MCP ----------------------------------------------------------------------------------

def test_a_missing_file_over_mcp_names_the_workspace_root(server, ws):
    from test_server_support import call, error_text

    text = error_text(call(server, "rate", {"rows": "evals/nope.jsonl"}), "rate")
    assert "no such file" in text and f"relative paths start at the workspace root {ws.resolve()}"\
        in text and "--root" in text
    assert "current directory" not in text


def test_an_existing_file_over_mcp_names_the_tool_argument(server, ws):
    from test_server_support import call, error_text

    (ws / "kept.jsonl").write_text("old\n")
    attempts = [{"task_id": "t", "reward": 1.0, "messages": [
        {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}]
    text = error_text(call(server, "select_sft", {"attempts": attempts, "out": "kept.jsonl"}),
                      "select_sft")
    assert "Fix: pass overwrite=true" in text and "--force" not in text


def test_launch_plan_over_mcp_names_the_tool(server, ws, monkeypatch, tmp_path):
    from test_server_support import call, ok

    monkeypatch.setenv("WHILEAI_STATE_DIR", str(tmp_path / "state"))
    out = ok(call(server, "launch_run", {"config_or_recipe": "prime-rl", "backend": "local"}))
    assert out["next_step"] == ('launch_run(config_or_recipe="prime-rl", backend="local", '
                                f'confirm=true, approved="{out["plan"]["approval"]}")')


# --- the plan checks what the run will need -------------------------------------------------------

@pytest.mark.train
@pytest.mark.parametrize("recipe", ["grpo", "dpo", "sft"])
def test_local_plan_is_not_ready_without_the_train_extra(tmp_path, monkeypatch, recipe):
    monkeypatch.setitem(sys.modules, "tokenizers", None)   # find_spec then answers None
    launch = launch_run(recipe, backend="local", state_dir=tmp_path)
    assert not launch.plan.ready
    (note,) = [n for n in launch.plan.notes if n.startswith("not ready")]
    assert "tokenizers is not installed" in note and "pip install" in note and "[train]" in note
    assert launch.next_step.startswith("fix what the plan's notes say")
    with pytest.raises(ConfigError, match=f"nothing was launched or recorded: the {recipe} smoke "
                                          "needs the `train` extra"):
        launch_run(recipe, backend="local", confirm=True, state_dir=tmp_path)


def test_local_plan_is_ready_with_the_train_extra(tmp_path):
    pytest.importorskip("trl")
    assert launch_run("grpo", backend="local", state_dir=tmp_path).plan.ready


def test_a_recipe_that_needs_no_extra_is_ready(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    assert launch_run("prime-rl", backend="local", state_dir=tmp_path).plan.ready


def test_every_recipe_whose_smoke_trains_names_its_extra():
    """A recipe folder whose train.py imports torch or trl must be in SMOKE_EXTRA, or its local
    plan says "ready" and the run dies on a missing module (sft did, before it was listed)."""
    from whileai_core.runs.local import SMOKE_EXTRA

    recipes = Path(__file__).resolve().parents[1] / "recipes"
    training = {p.parent.name for p in recipes.glob("*/train.py")
                if re.search(r"^\s*(import|from) (torch|trl)\b", p.read_text(), re.M)}
    assert training >= {"grpo", "dpo", "sft"}
    assert {name: SMOKE_EXTRA.get(name) for name in training} == dict.fromkeys(training, "train")


def test_record_nouns_are_pluralised_as_english_does():
    from whileai_core.errors import plural

    assert [plural(n) for n in ("reply", "trajectory", "row", "key", "pairs", "day")] == [
        "replies", "trajectories", "rows", "keys", "pairs", "days"]
