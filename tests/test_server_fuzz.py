"""Property: whatever arguments or row files a caller sends, every tool answers with a result or
a tool error that names the problem, never a crash and never an internal error, and the server
still answers the next request.

Two generators: malformed arguments for every tool in the registry (unknown keys, wrong types,
out-of-range numbers, hostile paths), and malformed row files fed to every rows argument.
"""

from __future__ import annotations

import contextlib
import json
import os
import string
import time

import anyio
import anyio.from_thread
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from server.app import build_server
from server.registry import tool_specs
from test_server_support import MODEL, make_workspace
from tool_calls import CALLS, build, merged

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

SPECS = {spec.name: spec for spec in tool_specs()}


class Session:
    """One client session on a server, held open for a whole module and driven from the
    (synchronous) hypothesis examples through a portal: each example is two tool calls, not a
    new connection and handshake (which made this module take about eight minutes)."""

    def __init__(self, server) -> None:
        self._stack = contextlib.ExitStack()
        self._portal = self._stack.enter_context(anyio.from_thread.start_blocking_portal())
        self._client = self._stack.enter_context(
            self._portal.wrap_async_context_manager(Client(server)))

    def call_tool(self, tool: str, arguments: dict):
        return self._portal.call(self._client.call_tool, tool, arguments)

    def close(self) -> None:
        self._stack.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = build(tmp_path_factory.mktemp("fuzz") / "ws")  # every file CALLS' calls read
    skills = root / "skills" / "alpha"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text("---\nname: alpha\ndescription: A.\n---\n# A\n")
    (root / "reward.py").write_text("def score(prompts, completions, **kw):\n"
                                    "    return [float(len(c) > 3) for c in completions]\n")
    session = Session(build_server(root, skills_dir=root / "skills"))
    yield root, session
    session.close()


def check(session: Session, tool: str, arguments: dict) -> None:
    result = session.call_tool(tool, arguments)
    after = session.call_tool("holdout_size", {})   # the server still answers
    assert not after.is_error and after.structured_content["n_tasks"] == 367
    if not result.is_error:
        assert isinstance(result.structured_content, dict)
        return
    text = result.content[0].text
    assert text.startswith(f"Error executing tool {tool}: "), text
    assert "unexpected internal error" not in text, text     # a bug, not a bad input
    body = text.removeprefix(f"Error executing tool {tool}: ")
    # the fix, or (a method spec's voice) the allowed values
    assert len(body) > 20 and any(w in body for w in ("Fix", "fix", "allowed:")), text


# --- malformed arguments -------------------------------------------------------------------

paths = st.sampled_from(["evals/grpo.jsonl", "../etc/passwd", "/etc/passwd", "", "evals",
                         "nope.jsonl", "evals/bad_json.jsonl", "a\x00b", "~/x", "./evals/grpo.jsonl",
                         "evals/empty.jsonl", "C:\\x", "%2e%2e/x"])
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-10**20, max_value=10**20),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20), paths)
rowish = st.lists(st.dictionaries(st.sampled_from(["task_id", "reward", "truncated", "model", "x"]),
                                  scalars, max_size=4), max_size=6)
values = st.one_of(scalars, rowish, st.lists(scalars, max_size=4),
                   st.dictionaries(st.text(max_size=5), scalars, max_size=3))


@st.composite
def arguments_for(draw, tool: str) -> dict:
    fields = list(SPECS[tool].input.model_fields)
    keys = draw(st.lists(st.one_of(st.sampled_from(fields or ["x"]),
                                   st.text(string.ascii_letters, min_size=1, max_size=8)),
                         max_size=len(fields) + 2, unique=True))
    return {key: draw(values) for key in keys}


@pytest.mark.parametrize("tool", sorted(SPECS))
def test_malformed_arguments(world, tool):
    root, session = world

    @SETTINGS
    @given(arguments=arguments_for(tool))
    def run(arguments):
        check(session, tool, arguments)

    run()


# --- malformed row files -------------------------------------------------------------------

def _file_fields(spec) -> tuple[str, ...]:
    """The arguments that take a file, from the input schema: a path or an inline list of
    records."""
    return tuple(f for f, info in spec.input.model_fields.items()
                 if "list[dict" in str(info.annotation) and "str" in str(info.annotation))


FILE_FIELDS = {name: _file_fields(spec) for name, spec in SPECS.items() if _file_fields(spec)}
# CALLS' call, changed where a fuzzed file would otherwise stop at another argument:
FUZZ_CHANGES = {
    "describe_rows": {"fields": None},              # every field of the fuzzed rows, not two
    "rate": {"detail": None, "limit": None},        # the default answer, not one page
    "compare_many": {"by": "scenario_id"},          # a field the fuzzed rows carry
    # a reward that takes any task's fields (rewards/grade.py needs `answer`): a fuzzed tasks
    # file reaches the probes
    "cheat_probes": {"reward": "reward.py:score"},
    "prove_reward": {"reward": "reward.py:score"},
}
# tool: (its file arguments, the other arguments of its valid call); "+plot": with its picture
ROWS_CALLS = {tool: (fields, {k: v for k, v in merged(tool, FUZZ_CHANGES.get(tool, {})).items()
                              if k not in fields})
              for tool, fields in FILE_FIELDS.items() if tool in CALLS}
ROWS_CALLS |= {f"{tool}+plot": (fields, {**rest, "plot": True})
               for tool, (fields, rest) in list(ROWS_CALLS.items())
               if "plot" in SPECS[tool].input.model_fields}


def _arguments(tool: str, which: str, value: str) -> dict:
    """``tool``'s call with every file argument a good rows file, ``which`` set to ``value``
    (and the other of before/after the same tasks after training)."""
    fields, rest = ROWS_CALLS[tool]
    arguments = {f: "evals/grpo.jsonl" for f in fields} | rest | {which: value}
    if {"before", "after"} <= set(fields):
        arguments["after" if which == "before" else "before"] = "evals/after.jsonl"
    return arguments


json_values = st.one_of(st.none(), st.booleans(), st.integers(-5, 5),
                        st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
                        st.lists(st.integers(), max_size=2))
row = st.fixed_dictionaries(
    {}, optional={"task_id": st.one_of(st.sampled_from(["a", "b", "c", "d"]), json_values),
                  "scenario_id": st.sampled_from(["a", "b"]),
                  "reward": st.one_of(st.sampled_from([0.0, 1.0, 0.5]), json_values),
                  "truncated": st.one_of(st.booleans(), json_values),
                  "model": st.one_of(st.just(MODEL), json_values)})


def _dump(value) -> str:
    return json.dumps(value, allow_nan=True)


# records of the judge and traces tools: conversations, labels, pairwise picks
message = st.fixed_dictionaries({}, optional={
    "role": st.one_of(st.sampled_from(["system", "user", "assistant", "tool", "bot"]), json_values),
    "content": st.one_of(st.text(max_size=12), json_values)})
record = st.fixed_dictionaries({}, optional={
    "task_id": st.one_of(st.sampled_from(["a", "b"]), json_values),
    "messages": st.one_of(st.lists(message, max_size=3), json_values),
    "reward": st.one_of(st.sampled_from([0.0, 1.0]), json_values),
    "prompt": st.one_of(st.text(max_size=12), json_values),
    "label": st.one_of(st.booleans(), st.sampled_from(["pass", "fail", "maybe"]), json_values),
    "grades": st.one_of(st.dictionaries(st.sampled_from(["j1", "j2"]),
                                        st.one_of(st.booleans(), json_values), max_size=2),
                        json_values),
    "forward": st.one_of(st.sampled_from(["first", "second", "tie"]), json_values),
    "reversed": st.one_of(st.sampled_from(["first", "second", "tie"]), json_values),
    "grade": st.one_of(st.booleans(), json_values),
    "without": st.one_of(st.dictionaries(st.sampled_from(["c1", "c2"]),
                                         st.one_of(st.booleans(), json_values), max_size=2),
                         json_values),
    "logprobs": st.one_of(st.lists(st.floats(-5, 0), max_size=4), json_values)})
# lines the standard parser fails on in other ways than JSONDecodeError (a red-team re-check):
# nesting past the recursion limit, an integer of more than 4,300 digits
hostile = st.one_of(
    st.integers(2_000, 60_000).map(lambda n: "[" * n + "]" * n),
    st.integers(2_000, 60_000).map(lambda n: '{"task_id": "a", "reward": 1, "x": '
                                   + "[" * n + "]" * n + "}"),
    st.integers(4_301, 9_000).map(lambda n: '{"task_id": "a", "reward": ' + "9" * n + "}"))
lines = st.one_of(row.map(_dump), record.map(_dump), json_values.map(_dump),
                  st.text(max_size=30), st.just(""), st.just("{"), st.just("[]"), hostile)
# rows that load, so the statistics themselves meet odd data (one task, rewards off the
# 0/1 scale, every row truncated, mixed models...)
good_row = st.fixed_dictionaries(
    {"task_id": st.sampled_from(["a", "b", "c", "d", "e"]),
     "reward": st.one_of(st.sampled_from([0.0, 1.0]), st.floats(-1e6, 1e6), st.integers(-3, 3))},
    optional={"truncated": st.booleans(),
              "model": st.sampled_from([MODEL, "Qwen/Qwen3-8B@step-9", "other/Model-1B", None])})


@st.composite
def mostly_good(draw) -> str:
    body = [_dump(r) for r in draw(st.lists(good_row, min_size=1, max_size=24))]
    if draw(st.booleans()):                       # corrupt one line
        body.insert(draw(st.integers(0, len(body))), draw(lines))
    return "\n".join(body)


files = st.one_of(mostly_good(), mostly_good(),
                  st.lists(record, min_size=1, max_size=8).map(
                      lambda rs: "\n".join(_dump(r) for r in rs)),
                  st.lists(lines, max_size=12).map("\n".join),
                  st.lists(row, max_size=12).map(_dump),           # a JSON array
                  st.binary(max_size=40).map(lambda b: b.decode("latin-1")))


@pytest.mark.parametrize("tool", sorted(ROWS_CALLS))
def test_malformed_row_files(world, tool):
    root, session = world
    fields, _ = ROWS_CALLS[tool]

    @SETTINGS
    @given(text=files, which=st.sampled_from(fields), encoding=st.sampled_from(["utf-8", "utf-16"]))
    def run(text, which, encoding):
        (root / "fuzz.jsonl").write_bytes(text.encode(encoding, errors="replace"))
        check(session, tool.split("+")[0], _arguments(tool, which, "fuzz.jsonl"))

    run()


def test_every_tool_that_reads_a_file_is_fuzzed():
    # a file argument is one that takes a path or an inline list of records
    unfuzzed = sorted(set(FILE_FIELDS) - set(ROWS_CALLS))
    assert not unfuzzed, f"{unfuzzed}: no call to fuzz; add one to CALLS in tests/tool_calls.py"
    assert set(FUZZ_CHANGES) <= set(ROWS_CALLS)
    for name, fields in FILE_FIELDS.items():
        assert fields and set(ROWS_CALLS[name][0]) == set(fields), (name, fields)


# --- nested arguments and hostile files ----------------------------------------------------
# Paths nested inside other arguments (the tokenizer files of a method spec), numbers anywhere in
# a nested object (NaN cannot cross the in-process client; 1e100 and 2^70 can), overrides, and
# path values that name the workspace's own traps: a FIFO, a symlink out of the root, a hard link
# to an outside file, a device. Every answer is a result or an error naming the fix, fast.

@pytest.fixture(scope="module")
def traps(tmp_path_factory):
    base = tmp_path_factory.mktemp("traps")
    root = make_workspace(base / "ws")
    outside = base / "outside"
    outside.mkdir()
    (outside / "tokenizer.json").write_text(json.dumps({"model": {"vocab": {"a": 0, "b": 1}}}))
    (root / "tok").mkdir()
    (root / "tok" / "tokenizer.json").write_text(json.dumps({"model": {"vocab": {"a": 0}}}))
    os.mkfifo(root / "pipe.json")
    (root / "out-link.json").symlink_to(outside / "tokenizer.json")
    (root / "out-dir").symlink_to(outside, target_is_directory=True)
    (root / "zero").symlink_to("/dev/zero")
    os.link(outside / "tokenizer.json", root / "hard.json")
    session = Session(build_server(root, skills_dir=root / "no-skills"))
    yield root, session
    session.close()


trap_paths = st.sampled_from(["pipe.json", "out-link.json", "out-dir/tokenizer.json", "zero",
                              "hard.json", "tok", "tok/tokenizer.json", "/etc/shadow",
                              "/proc/self/environ", "/dev/zero", "../outside/tokenizer.json",
                              "", "a\x00b", "evals", "missing.json"])
wild_numbers = st.one_of(st.integers(-2**70, 2**70), st.floats(-1e100, 1e100, allow_nan=False),
                         st.sampled_from([0, -1, 1e100, 2**64, -2**63 - 1]))
nested_value = st.one_of(wild_numbers, trap_paths, st.text(max_size=12), st.none(),
                         st.booleans())
teacher = st.fixed_dictionaries(
    {}, optional={"url": st.one_of(st.just("http://localhost:8001/v1"), st.text(max_size=20),
                                   st.just("http://<host>/v1")),
                  "model": st.one_of(st.just("Qwen/Qwen3-1.7B"), st.text(max_size=12)),
                  "vocab": st.one_of(trap_paths, wild_numbers),
                  "api_key_var": st.text(max_size=8)})
method = st.one_of(
    st.sampled_from(["grpo", "max_rl", "rae", "opsd", "opd", "async", "sorcery", ""]),
    st.fixed_dictionaries({"name": st.sampled_from(["opd", "async", "opsd", "rae", "grpo"])},
                          optional={"teacher": st.one_of(teacher, nested_value),
                                    "student_vocab": st.one_of(trap_paths, wild_numbers),
                                    "samples": wild_numbers, "temperature": wild_numbers,
                                    "max_tokens": wild_numbers, "decay": wild_numbers,
                                    "method": st.sampled_from(["grpo", "opd", "x"]),
                                    "correction": st.sampled_from(["ipo", "icepop", "tis", "?"]),
                                    "template": st.text(max_size=20),
                                    "privileged": st.text(max_size=10)}))
overrides = st.dictionaries(st.one_of(st.sampled_from(["trainer.optim.lr", "a.b", "max_steps",
                                                       "orchestrator.group_size", "", "x..y"]),
                                      st.text(max_size=10)),
                            st.one_of(nested_value, st.dictionaries(st.text(max_size=4),
                                                                     nested_value, max_size=2)),
                            max_size=3)


def test_nested_method_specs_and_overrides(traps):
    root, session = traps

    @SETTINGS
    @given(method=method, overrides=st.one_of(st.none(), overrides),
           student_vocab=st.one_of(st.none(), st.integers(-2**70, 2**70)))
    def run(method, overrides, student_vocab):
        arguments = {"taskset": "reverse-text", "model": MODEL, "method": method}
        if overrides is not None:
            arguments["overrides"] = overrides
        if student_vocab is not None:
            arguments["student_vocab"] = student_vocab
        started = time.monotonic()
        check(session, "prime_rl_config", arguments)
        assert time.monotonic() - started < 30          # no read blocks (FIFO, /dev/zero)

    run()


@pytest.mark.parametrize("tool", sorted(ROWS_CALLS))
def test_trap_paths_in_every_file_argument(traps, tool):
    root, session = traps
    fields, _ = ROWS_CALLS[tool]

    @SETTINGS
    @given(value=trap_paths, which=st.sampled_from(fields))
    def run(value, which):
        started = time.monotonic()
        check(session, tool.split("+")[0], _arguments(tool, which, value))
        assert time.monotonic() - started < 30

    run()


def test_files_over_the_size_limit(tmp_path_factory):
    """A server with a 2 KB limit on rows files: a bigger file is one clear error (with the
    limit, the size and the flag that raises it), a smaller one reads."""
    from whileai_core.safepath import Limits

    root = make_workspace(tmp_path_factory.mktemp("limits") / "ws")
    server = build_server(root, skills_dir=root / "no-skills",
                          limits=Limits(max_mb={"rows": 2 / 1024, "tokenizer": 1, "config": 1}))

    @SETTINGS
    @given(n=st.integers(1, 200))
    def run(n):
        body = "".join(json.dumps({"task_id": f"t{i % 7}", "reward": float(i % 2)}) + "\n"
                       for i in range(n))
        (root / "sized.jsonl").write_text(body)
        result = anyio.run(_rate, server)
        if len(body.encode()) > 2048:
            text = result.content[0].text
            assert result.is_error and "over the 0.00195312 MB limit for rows" in text, text
            assert "--max-file-mb rows=" in text and "WHILEAI_MAX_ROWS_MB=" in text
        else:
            assert not result.is_error, result.content[0].text

    run()


async def _rate(server):
    async with Client(server) as client:
        return await client.call_tool("rate", {"rows": "sized.jsonl"})
