"""Property: whatever arguments or row files a caller sends, every tool answers with a result or
a tool error that names the problem, never a crash and never an internal error, and the server
still answers the next request.

Two generators: malformed arguments for every tool in the registry (unknown keys, wrong types,
out-of-range numbers, hostile paths), and malformed row files fed to every rows argument.
"""

from __future__ import annotations

import json
import string

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from server.app import build_server
from server.registry import tool_specs
from test_server_support import MODEL, make_workspace

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

SPECS = {spec.name: spec for spec in tool_specs()}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = make_workspace(tmp_path_factory.mktemp("fuzz") / "ws")
    skills = root / "skills" / "alpha"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text("---\nname: alpha\ndescription: A.\n---\n# A\n")
    (root / "reward.py").write_text("def score(prompts, completions, **kw):\n"
                                    "    return [float(len(c) > 3) for c in completions]\n")
    return root, build_server(root, skills_dir=root / "skills")


def check(server, tool: str, arguments: dict) -> None:
    async def go():
        async with Client(server) as client:
            result = await client.call_tool(tool, arguments)
            after = await client.call_tool("holdout_size", {})   # the server still answers
            assert not after.is_error and after.structured_content["n_tasks"] == 367
            return result

    result = anyio.run(go)
    if not result.is_error:
        assert isinstance(result.structured_content, dict)
        return
    text = result.content[0].text
    assert text.startswith(f"Error executing tool {tool}: "), text
    assert "unexpected internal error" not in text, text     # a bug, not a bad input
    body = text.removeprefix(f"Error executing tool {tool}: ")
    assert len(body) > 20 and ("Fix" in body or "fix" in body), text


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
    root, server = world

    @SETTINGS
    @given(arguments=arguments_for(tool))
    def run(arguments):
        check(server, tool, arguments)

    run()


# --- malformed row files -------------------------------------------------------------------

ROWS_CALLS = {
    # tool: (the rows arguments, the other arguments of a valid call)
    "route_rows": (("rows", "teacher_rows"), {"model": MODEL}),
    "pass_at": (("rows",), {"k": 2}),
    "compare_runs": (("before", "after"), {}),
    "compare_many": (("before", "after"), {"by": "scenario_id"}),
    "holdout_size": (("before", "after"), {}),
    "teacher_clears": (("teacher_rows", "student_rows"), {}),
    "audit_judge": (("items",), {}),
    "order_reversal": (("pairs",), {}),
    "select_sft": (("attempts",), {}),
    "decontaminate": (("train", "holdout"), {}),
    "export_sft": (("records",), {"out": "fuzz-out.jsonl", "overwrite": True}),
    "inspect_rows": (("rows",), {"model": MODEL}),
    "mean_reward": (("rows",), {"detail": True}),
    "field_share": (("rows",), {"field": "truncated", "detail": True}),
    "task_table": (("rows",), {"out": "fuzz-table.jsonl", "overwrite": True}),
    "rubric_ablation": (("items",), {"clauses": ["c1", "c2"]}),
    "split_by_task": (("rows",), {"out": "fuzz-split.json", "train_out": "fuzz-train.jsonl",
                                  "overwrite": True}),
    "failed_asks": (("traces",), {}),
    "rollout_update": (("batch",), {"method": "flash_reinforce"}),
    "eval_fingerprint": (("tasks",), {}),
    "freeze_holdout": (("tasks",), {"out_dir": "fuzz-frozen"}),
    "failure_capable": (("rows", "holdout"), {}),
    "category_table": (("rows", "tasks"), {}),
    "cheat_probes": (("tasks", "model_rows"), {"reward": "reward.py:score", "probes": ["empty"]}),
    "hack_scan": (("rows",), {"n_shuffles": 100}),
    "plot_band": (("rows",), {}),
    "plot_forest": (("before", "after"), {}),
    "plot_judge_audit": (("items",), {}),
}

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
lines = st.one_of(row.map(_dump), record.map(_dump), json_values.map(_dump),
                  st.text(max_size=30), st.just(""), st.just("{"), st.just("[]"))
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
    root, server = world
    fields, rest = ROWS_CALLS[tool]

    @SETTINGS
    @given(text=files, which=st.sampled_from(fields), encoding=st.sampled_from(["utf-8", "utf-16"]))
    def run(text, which, encoding):
        (root / "fuzz.jsonl").write_bytes(text.encode(encoding, errors="replace"))
        arguments = {f: "evals/grpo.jsonl" for f in fields} | rest | {which: "fuzz.jsonl"}
        if tool == "compare_runs" or tool == "holdout_size":
            arguments["after" if which == "before" else "before"] = "evals/after.jsonl"
        check(server, tool, arguments)

    run()


def test_every_tool_that_reads_a_file_is_fuzzed():
    # a file argument is one that takes a path or an inline list of records
    reads = {name: {f for f, info in spec.input.model_fields.items()
                    if "list[dict" in str(info.annotation) and "str" in str(info.annotation)}
             for name, spec in SPECS.items()}
    for name, fields in reads.items():
        if fields:
            assert name in ROWS_CALLS and fields == set(ROWS_CALLS[name][0]), (name, fields)
