"""Bounded answers: whatever the input size, no tool answers more than MCP_ANSWER_MAX_BYTES by
default (structured JSON plus its text summary), every cut list says how many of how many it
shows, and the text is a short summary, never the JSON again.

Found by a cold agent: pass_at (now rate) returned every task's rate twice (text and structured), 12.7 M characters in
36 s for a 589k-task file; evidence lists were cut silently ("5 tasks" shown of 6). Size and time
at 1k, 100k and 1M tasks: bench/bench_responses.py (docs/mcp-server.md, "Bounded answers").
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from server.registry import tool_specs
from test_server_support import MODEL, call, ok
from tool_calls import CALLS, build, merged
from whileai_core.defaults import LIST_SHOWN_MAX, MCP_ANSWER_MAX_BYTES, TASK_EXTREMES

N = 3000          # tasks: far past every list bound, small enough for a 2-core test run
K = 4


def _rows(path: Path, rng: random.Random, shift: float = 0.0, models: int = 1) -> None:
    """N tasks x K rollouts; 50 groups in `group`; ``models`` writers, MODEL the first (several
    are never read as one set, so only the file for the list of models has more than one)."""
    with path.open("w") as fh:
        for t in range(N):
            p = rng.random()
            for _ in range(K):
                fh.write(json.dumps({"task_id": f"t{t:05d}",
                                     "reward": float(rng.random() < min(1.0, p + shift)),
                                     "truncated": rng.random() < 0.05,
                                     "model": f"org/m-{t % models}" if t % models else MODEL,
                                     "group": f"g{t % 50}", "category": f"c{t % 7}"})
                         + "\n")


# the files of tests/tool_calls.py that the calls below read, each as one of N tasks
BIG = {"a": ("evals/grpo12.jsonl", "evals/grpo.jsonl"),             # before
       "b": ("evals/after12.jsonl", "evals/after.jsonl", "evals/teacher12.jsonl"),  # after: +0.1
       "c": ("evals/truncated.jsonl",),                              # a third run
       "traces": ("held.jsonl", "tasks.jsonl", "rollouts.jsonl"),   # holdout = train: all shared
       "items": ("pairs.jsonl",)}                                    # forward and reversed picks


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    root = build(tmp_path_factory.mktemp("big") / "ws")  # every file the calls read, then N tasks
    rng = random.Random(0)
    for name, shift in (("a", 0.0), ("b", 0.1), ("c", 0.0)):
        _rows(root / f"{name}.jsonl", rng, shift)
    _rows(root / "models.jsonl", rng, models=50)
    with (root / "traces.jsonl").open("w") as fh:
        for t in range(N):
            fh.write(json.dumps({"task_id": f"t{t:05d}", "reward": float(t % 3 == 0),
                                 "messages": [{"role": "user", "content": f"ask {t}: add {t} and "
                                               f"{t + 1}, then reply with the sum only"},
                                              {"role": "assistant", "content": str(2 * t + 1)}]})
                     + "\n")
    with (root / "items.jsonl").open("w") as fh:
        for i in range(N):
            fh.write(json.dumps({"id": f"i{i}", "label": rng.random() < 0.6,
                                 "grades": {"j1": rng.random() < 0.6, "j2": True},
                                 "grade": rng.random() < 0.6,
                                 "without": {"c1": rng.random() < 0.6, "c2": rng.random() < 0.6},
                                 "forward": "first",
                                 "reversed": rng.choice(["first", "second", "tie"])}) + "\n")
    with (root / "batch.jsonl").open("w") as fh:
        for i in range(400):
            fh.write(json.dumps({"reward": float(i % 2), "logprobs": [-0.5] * 200}) + "\n")
    for name, paths in BIG.items():
        for path in paths:
            shutil.copyfile(root / f"{name}.jsonl", root / path)
    from server.app import build_server
    return root, build_server(root, skills_dir=root / "none")


TOOLS = {spec.name for spec in tool_specs()}
# Tools whose answer does not grow with an input, and why.
FIXED_SIZE = {
    "prime_rl_config": "one config for one method: its TOML and report",
    "validate_config": "one line per problem in one config",
    "shape_group": "one group of at most 64 rollouts",
    "failures_needed": "a sample size",
    "launch_run": "one plan", "run_status": "one run", "collect_run": "one run, bounded lists",
    "cancel_run": "one run", "list_runs": "cut to the most recent runs, n of N",
    "list_skills": "cut like any list, n of N (tests/test_server_skills.py: 60 skills)",
    "get_skill": "one skill's metadata; its text once",
    "freeze_holdout": "a name and a path",
    "import_rows": "counts and paths: the rows go to `out` (tests/test_server_import.py)", "cheat_probes": "one row per probe (a fixed set)",
    "watch_run": "a verdict and the last points",
    "diagnose_run": "eight findings (20 steps each) and the last 50 steps, n of N",
    "prove_reward": "one row per probe and per check (fixed sets)",
    "write_dpo_data": "counts and paths: the pairs go to the folder",
    "register_experiment": "one registration (its sentences capped), no runs yet",
    "record_run": "five lines, each capped", "export_experiments": "counts and a path",
    "archive_experiment": "one experiment, its runs cut n of N",
}


# Every other tool's answer could grow with its input: its call of tests/tool_calls.py, on the
# files of N tasks above, changed where CALLS' call would not let it grow:
SIZE_CHANGES = {
    "describe_rows": {"fields": None},           # every field: task_id's N values among them
    "inspect_rows": {"rows": "models.jsonl"},    # 50 writers: the list of models
    "rate": {"detail": None, "limit": None},     # the default answer, not one page of 3
    "compare_many": {"by": "group"},             # 50 groups (CALLS' category has 7)
    "holdout_size": {"before": "evals/grpo12.jsonl", "after": "evals/after12.jsonl"},  # a pilot
}
SIZE_CALLS = {tool: merged(tool, SIZE_CHANGES.get(tool, {}))
              for tool in sorted(TOOLS - set(FIXED_SIZE)) if tool in CALLS}


def test_every_tool_is_either_measured_or_said_to_be_fixed_size():
    assert set(FIXED_SIZE) <= TOOLS, set(FIXED_SIZE) - TOOLS
    unmeasured = TOOLS - set(FIXED_SIZE) - set(SIZE_CALLS)
    assert not unmeasured, (f"{sorted(unmeasured)}: no call to measure; add one to CALLS in "
                            "tests/tool_calls.py, or say in FIXED_SIZE here why its answer "
                            "cannot grow")
    assert set(SIZE_CHANGES) <= set(SIZE_CALLS)


def answer_bytes(result) -> int:
    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return len(text.encode()) + len(json.dumps(result.structured_content).encode())


@pytest.mark.parametrize("tool", sorted(SIZE_CALLS))
def test_no_default_answer_exceeds_the_bound(big, tool):
    _, server = big
    result = call(server, tool, SIZE_CALLS[tool])
    assert not result.is_error, result.content[0].text
    assert answer_bytes(result) <= MCP_ANSWER_MAX_BYTES, (tool, answer_bytes(result))
    text = result.content[0].text
    assert json.dumps(result.structured_content) not in text   # the facts once, not twice


@pytest.mark.parametrize("more", [{}, {"metric": "reward"}, {"field": "truncated"}])
def test_rate_summarises_instead_of_listing_every_task(big, more):
    _, server = big
    out = ok(call(server, "rate", {"rows": "a.jsonl", **more}))
    assert "per_task" not in out
    tasks = out["tasks"]
    assert sum(b["n_tasks"] for b in tasks["histogram"]) == N
    assert len(tasks["lowest"]) == len(tasks["highest"]) == TASK_EXTREMES
    assert tasks["shown"].startswith(f"{TASK_EXTREMES} lowest and {TASK_EXTREMES} highest of {N}")
    page = ok(call(server, "rate", {"rows": "a.jsonl", "detail": True, "offset": N - 10, **more}))
    assert page["page"]["shown"] == f"tasks {N - 9}-{N} of {N}"


def test_every_cut_list_says_n_of_n(big):
    _, server = big
    held = round(0.2 * N)
    split = ok(call(server, "split_by_task", {"rows": "traces.jsonl"}))
    assert len(split["holdout_tasks"]) == LIST_SHOWN_MAX == len(split["train_tasks"])
    assert split["shown"] == (f"holdout_tasks: {LIST_SHOWN_MAX} of {held} shown; train_tasks: "
                              f"{LIST_SHOWN_MAX} of {N - held} shown")
    assert split["n_holdout"] == held and split["n_tasks"] == N
    chosen = ok(call(server, "select_sft", {"attempts": "traces.jsonl"}))
    kept = len(range(0, N, 3))                                 # t % 3 == 0 passes
    assert chosen["n_kept"] == kept and len(chosen["records"]) == LIST_SHOWN_MAX
    assert f"records: {LIST_SHOWN_MAX} of {kept} shown" in chosen["shown"]
    assert f"asks_without_pass: {LIST_SHOWN_MAX} of {N - kept} shown" in chosen["shown"]
    facts = ok(call(server, "inspect_rows", {"rows": "models.jsonl", "model": MODEL}))
    assert facts["on_policy"]["n_models"] == 50
    assert f"models: {LIST_SHOWN_MAX} of 50 shown" in facts["on_policy"]["shown"]


def test_evidence_says_how_many_tasks_it_names(tmp_path):
    # six tasks with a truncated pass: the evidence names five of them, and says "5 of 6"
    from server.app import build_server

    rows = [{"task_id": f"t{t}", "reward": 1.0, "truncated": j == 0} for t in range(6)
            for j in range(4)]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    server = build_server(tmp_path, skills_dir=tmp_path / "none")
    out = ok(call(server, "route_rows", {"rows": "r.jsonl", "model": "m"}))
    evidence = out["answers"][0]["evidence"]
    assert evidence["tasks"] == ["t0", "t1", "t2", "t3", "t4"]
    assert evidence["n_tasks_hit"] == 6 and evidence["shown"] == "5 of 6 tasks"
    assert "(5 of 6 tasks)" in out["answers"][0]["detail"]


def test_every_answer_has_a_summary_of_its_own():
    # the text content is the Result's render(): a class that kept the base one would send the
    # JSON twice
    from whileai_core.result import Result

    plain = [spec.name for spec in tool_specs() if spec.output.render is Result.render]
    assert plain == []
