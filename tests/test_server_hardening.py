"""The red-team findings through the MCP protocol (in process): nested paths, numeric ranges, the tool pool,
--read-only, a locked registry.

Each test is a finding of the red-team pass that used to succeed:
- a tokenizer path nested in `method` opened /etc/shadow, /proc/self/environ and /dev/zero;
- NaN, 1e100 and integers past 64 bits came back as "a bug in whileai";
- 41 slow tool calls filled the thread pool the stdio transport reads with;
- a registry locked by another process stalled each write for 30 s.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time

import anyio
import anyio.to_thread
import pytest
from mcp import Client

import whileai_core.stats.report as report  # where rate calls pass_at
from server.app import build_server
from server.pool import ToolPool
from server.registry import tool_specs
from test_server_support import call, error_text, make_workspace, ok

GRPO = {"taskset": "reverse-text", "model": "Qwen/Qwen3-0.6B"}
TEACHER = "http://localhost:8001/v1"


@pytest.fixture()
def ws(tmp_path):
    return make_workspace(tmp_path / "ws")


def _tokenizer(path, vocab):
    path.write_text(json.dumps({"model": {"vocab": vocab}, "added_tokens": []}))
    return path


def _opd(vocab, **extra):
    return {"name": "opd", "teacher": {"url": TEACHER, "model": "Qwen/Qwen3-1.7B",
                                       "vocab": vocab}, **extra}


# --- nested paths: tokenizer files in the method spec ------------------------------------------

@pytest.mark.parametrize("vocab, says", [
    ("/etc/shadow", "outside the workspace root"),
    ("/proc/self/environ", "outside the workspace root"),
    ("/dev/zero", "outside the workspace root"),
    ("../outside/tokenizer.json", "contains '..'"),
    ("link-out.json", "is a symlink that leads outside the workspace root"),
    ("link-dir/tokenizer.json", "`link-dir` is a symlink that leads outside"),
    ("pipe.json", "is a FIFO"),
    ("hard.json", "has 2 hard links"),
])
def test_a_nested_tokenizer_path_goes_through_the_door(server, ws, tmp_path, vocab, says):
    outside = tmp_path / "outside"
    outside.mkdir()
    # 7 tokens outside: the count must never come back in a reply
    secret = _tokenizer(outside / "tokenizer.json", {f"t{i}": i for i in range(7)})
    (ws / "link-out.json").symlink_to(secret)
    (ws / "link-dir").symlink_to(outside, target_is_directory=True)
    os.mkfifo(ws / "pipe.json")
    os.link(secret, ws / "hard.json")
    _tokenizer(ws / "student.json", {f"t{i}": i for i in range(7)})
    for where in ("teacher", "student_vocab"):
        method = (_opd(vocab, student_vocab="student.json") if where == "teacher"
                  else _opd("student.json", student_vocab=vocab))
        started = time.monotonic()
        result = call(server, "prime_rl_config", {**GRPO, "method": method})
        assert time.monotonic() - started < 10                 # a FIFO never blocks
        text = error_text(result, "prime_rl_config")
        assert says in text, text
        assert "7 tokens" not in text and "unexpected internal error" not in text
        assert ("`method.teacher.vocab`" if where == "teacher" else "`student_vocab`") in text \
            or "contains '..'" in text or "outside the workspace root" in text


def test_a_tokenizer_inside_the_root_is_compared(server, ws):
    folder = ws / "tok"
    folder.mkdir()
    _tokenizer(folder / "tokenizer.json", {"a": 0, "b": 1})
    _tokenizer(ws / "other.json", {"a": 0, "c": 1})
    out = ok(call(server, "prime_rl_config", {**GRPO, "method": _opd("tok",
                                                                   student_vocab="other.json")}))
    # 'b' has id 1 in the teacher's and no id in the student's: 1 token differs
    assert any("1 teacher tokens have another id" in w for w in out["warnings"])


# --- every numeric argument has a finite range -------------------------------------------------

def _numbers(schema: dict, path: str = ""):
    if schema.get("type") in ("number", "integer"):
        yield path, schema
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key, []):
            yield from _numbers(sub, path)
    for name, sub in (schema.get("properties") or {}).items():
        yield from _numbers(sub, f"{path}.{name}" if path else name)
    if isinstance(schema.get("items"), dict):
        yield from _numbers(schema["items"], f"{path}[]")


def test_every_numeric_argument_has_a_finite_range():
    missing = []
    for spec in tool_specs():
        for path, schema in _numbers(spec.input.model_json_schema()):
            low = "minimum" in schema or "exclusiveMinimum" in schema
            high = "maximum" in schema or "exclusiveMaximum" in schema
            if not (low and high):
                missing.append(f"{spec.name}.{path}")
    assert not missing, f"numeric arguments without a finite range: {missing}"


NUMERIC = [(spec.name, path) for spec in tool_specs()
           for path, _ in _numbers(spec.input.model_json_schema()) if "." not in path]


@pytest.mark.parametrize("tool, argument", NUMERIC, ids=[f"{t}.{a}" for t, a in NUMERIC])
@pytest.mark.parametrize("value", [1e100, -1e100, 2**70, -2**70],
                         ids=["1e100", "-1e100", "2^70", "-2^70"])
def test_huge_numbers_and_wide_integers_are_input_errors(server, tool, argument, value):
    # (NaN and infinity cannot cross this in-process client: it writes them as null; the raw
    # frames in tests/test_server_wire.py send the literals NaN and 1e400 instead)
    base = {"route": {"rows": "evals/grpo.jsonl", "model": "Qwen/Qwen3-8B"},
            "rate": {"rows": "evals/grpo.jsonl"},
            "compare": {"before": "evals/grpo.jsonl", "after": "evals/after.jsonl"},
            "teacher_clears": {"teacher_rows": "evals/teacher.jsonl",
                               "student_rows": "evals/grpo.jsonl"},
            "prime_rl_config": GRPO,
            "audit_judge": {"items": [{"id": "a", "label": True, "grades": {"j": True}}]},
            "order_reversal": {"pairs": [{"id": "a", "forward": "first",
                                          "reversed": "second"}]},
            "select_sft": {"attempts": []},
            "decontaminate": {"train": [], "holdout": []}}.get(tool, {})
    text = error_text(call(server, tool, {**base, argument: value}), tool)
    assert text.startswith("invalid arguments: ") and f"`{argument}`" in text, text
    assert "unexpected internal error" not in text


# --- the tool pool -----------------------------------------------------------------------------

@pytest.fixture()
def blocking(monkeypatch):
    """rate blocks until released (a read stuck on a slow file, say)."""
    release = threading.Event()
    real = report.pass_at

    def stuck(*args, **kwargs):
        release.entered += 1
        release.wait(30)
        return real(*args, **kwargs)

    release.entered = 0
    monkeypatch.setattr(report, "pass_at", stuck)
    yield release
    release.set()


def test_stuck_calls_never_starve_the_protocol(ws, blocking):
    pool = ToolPool(workers=2, queue_wait_s=0.3, timeout_s=30)
    server = build_server(ws, skills_dir=ws / "no-skills", pool=pool)
    seen: dict = {}

    async def go():
        async with Client(server) as client:
            async def stuck_call(i):
                seen[i] = await client.call_tool("rate", {"rows": "evals/grpo.jsonl"})

            async with anyio.create_task_group() as tg:
                for i in range(2):
                    tg.start_soon(stuck_call, i)
                while blocking.entered < 2:
                    await anyio.sleep(0.01)
                # both workers are stuck: the protocol still answers at once ...
                started = anyio.current_time()
                tools = await client.list_tools()
                seen["list_s"] = anyio.current_time() - started
                seen["n_tools"] = len(tools.tools)
                # ... no tool thread took a token of the pool the stdio transport reads with
                seen["default_borrowed"] = \
                    anyio.to_thread.current_default_thread_limiter().borrowed_tokens
                # ... and a third call is answered "busy" instead of queueing forever
                seen["busy"] = await client.call_tool("holdout_size", {})
                blocking.set()

    anyio.run(go)
    assert seen["list_s"] < 1.0 and seen["n_tools"] > 10
    assert seen["default_borrowed"] == 0
    busy = error_text(seen["busy"], "holdout_size")
    assert "the server is busy: all 2 tool workers are still running" in busy and "Fix" in busy
    assert all(not seen[i].is_error for i in range(2))


def test_a_call_past_its_timeout_is_answered_and_keeps_its_worker(ws, blocking):
    pool = ToolPool(workers=1, queue_wait_s=0.5, timeout_s=0.3)
    server = build_server(ws, skills_dir=ws / "no-skills", pool=pool)

    async def go():
        async with Client(server) as client:
            result = await client.call_tool("rate", {"rows": "evals/grpo.jsonl"})
            busy_after = pool.busy          # the thread still runs and holds its slot ...
            meanwhile = await client.call_tool("holdout_size", {})   # ... so this one is busy
            blocking.set()
            while pool.busy:
                await anyio.sleep(0.01)
            # the thread gave its worker back when it ended: the one worker serves again
            after = await client.call_tool("holdout_size", {})
            return result, busy_after, meanwhile, after

    result, busy_after, meanwhile, after = anyio.run(go)
    text = error_text(result, "rate")
    assert "no answer within 0.3 s" in text and "Fix" in text
    assert busy_after == 1
    assert "the server is busy" in error_text(meanwhile, "holdout_size")
    assert not after.is_error


# --- --read-only -------------------------------------------------------------------------------

def test_read_only_serves_only_read_only_tools(ws):
    server = build_server(ws, skills_dir=ws / "no-skills", read_only=True)

    async def go():
        async with Client(server) as client:
            return (await client.list_tools()).tools, await client.call_tool(
                "launch_run", {"config_or_recipe": "grpo", "confirm": True})

    tools, launch = anyio.run(go)
    names = {t.name for t in tools}
    assert {"route_rows", "rate", "validate_config", "run_status"} <= names
    assert not names & {"launch_run", "cancel_run", "prime_rl_config", "export_sft",
                        "select_sft", "decontaminate"}
    assert all(t.annotations.read_only_hint for t in tools)
    assert "`launch_run` is disabled by --read-only" in error_text(launch, "launch_run")


# --- a locked registry -------------------------------------------------------------------------

@pytest.mark.train
def test_a_locked_registry_is_one_clear_error_and_stalls_nothing_else(ws, tmp_path, monkeypatch):
    from whileai_core.defaults import REGISTRY_LOCK_WAIT_S
    from whileai_core.runs.registry import Registry

    state = tmp_path / "state"
    monkeypatch.setenv("WHILEAI_STATE_DIR", str(state))
    Registry(state)                                   # create it
    holder = sqlite3.connect(state / "runs.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")                 # another process holds the write lock
    server = build_server(ws, skills_dir=ws / "no-skills")
    timings: dict = {}

    async def go():
        async with Client(server) as client:
            await client.call_tool("holdout_size", {})     # its module loaded: not under test

            async def launch():
                started = anyio.current_time()
                timings["launch"] = await client.call_tool(  # a launch writes the registry
                    "launch_run", {"config_or_recipe": "grpo", "backend": "local",
                                   "confirm": True})
                timings["launch_s"] = anyio.current_time() - started

            async with anyio.create_task_group() as tg:
                tg.start_soon(launch)
                await anyio.sleep(0.1)
                started = anyio.current_time()
                timings["other"] = await client.call_tool("holdout_size", {})
                timings["other_s"] = anyio.current_time() - started

    try:
        anyio.run(go)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    text = error_text(timings["launch"], "launch_run")
    assert "is locked by another process" in text and "Fix" in text
    assert timings["launch_s"] < REGISTRY_LOCK_WAIT_S * 3 + 5   # not 30 s per write
    assert not timings["other"].is_error and timings["other_s"] < 1.0


# --- folders of another system's output (the importers walk them through the door) -------------

def test_import_rows_follows_no_link_inside_a_run_folder(server, ws, tmp_path):
    """A prime-rl run folder whose step folder (or traces file) is a link to outside: refused by
    name, nothing outside read (the importers used to get the absolute path and read by name)."""
    outside = tmp_path / "elsewhere" / "step_0" / "eval" / "all"
    outside.mkdir(parents=True)
    (outside / "traces.jsonl").write_text("{}\n")
    run = ws / "run" / "rollouts"
    run.mkdir(parents=True)
    (run / "step_0").symlink_to(tmp_path / "elsewhere" / "step_0", target_is_directory=True)
    text = error_text(call(server, "import_rows", {"path": "run", "out": "rows.jsonl"}),
                      "import_rows")
    assert "symlink" in text and "Fix" in text
    assert not (ws / "rows.jsonl").exists()
