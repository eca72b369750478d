"""What a cold agent with only the MCP server hit on new files (the checker's round).

Each test is one defect found by driving ``whileai-mcp`` as an agent would, on row files the
project had not seen: a message that told an MCP caller to type Python, a cut list that did not
say "n of N", an answer over the size bound, a plan that said ready for a run that cannot start.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from server.app import build_server
from test_server_support import call, ok, write_jsonl
from whileai_core.defaults import LIST_SHOWN_MAX, MCP_ANSWER_MAX_BYTES

MODEL = "Qwen/Qwen3-8B"


@pytest.fixture
def server(tmp_path):
    return tmp_path, build_server(tmp_path, skills_dir=tmp_path / "none")


def answer_bytes(result) -> int:
    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return len(text.encode()) + len(json.dumps(result.structured_content).encode())


# --- an MCP caller is told what it types, never Python ----------------------------------------

def test_the_opd_vocab_note_names_the_mcp_arguments_not_python(server):
    _, srv = server
    out = ok(call(srv, "prime_rl_config", {
        "taskset": "reverse-text", "model": MODEL,
        "method": {"name": "opd", "teacher": {"url": "http://localhost:8001/v1",
                                              "model": "Qwen/Qwen3-32B"}}}))
    note = next(n for n in out["notes"] if n.startswith("tokenizers not compared"))
    assert "Endpoint(" not in note and "vocab=)" not in note, note
    assert '"vocab"' in note and '"student_vocab"' in note, note
    # the arguments the note names are the ones the schema takes: following it clears the note
    followed = ok(call(srv, "prime_rl_config", {
        "taskset": "reverse-text", "model": MODEL,
        "method": {"name": "opd", "teacher": {"url": "http://localhost:8001/v1",
                                              "model": "Qwen/Qwen3-32B", "vocab": 151936},
                   "student_vocab": 151936}}))
    assert not any(n.startswith("tokenizers not compared") for n in followed["notes"])


# --- answers stay bounded, and every cut list says n of N -------------------------------------

N_CATEGORIES = 300   # a behaviour per 10 tasks: the bounded test's 7 categories never cut


@pytest.fixture
def categories(tmp_path):
    rng = random.Random(11)
    for name, shift in (("before", 0.0), ("after", 0.1)):
        write_jsonl(tmp_path / f"{name}.jsonl", [
            {"task_id": f"t{t}", "reward": float(rng.random() < min(1.0, (t % 10) / 10 + shift)),
             "category": f"behaviour-number-{t % N_CATEGORIES:03d}"}
            for t in range(10 * N_CATEGORIES) for _ in range(2)])
    return tmp_path, build_server(tmp_path, skills_dir=tmp_path / "none")


@pytest.mark.parametrize("after", [None, "after.jsonl"])
def test_category_table_with_hundreds_of_categories_stays_under_the_bound(categories, after):
    _, srv = categories
    args = {"rows": "before.jsonl"} | ({"after": after} if after else {})
    result = call(srv, "category_table", args)
    out = ok(result)
    assert answer_bytes(result) <= MCP_ANSWER_MAX_BYTES, answer_bytes(result)
    assert out["n_categories"] == N_CATEGORIES
    shown = len(out["lines"])
    assert shown < N_CATEGORIES and f"lines: {shown} of {N_CATEGORIES} shown" in out["shown"]
    if after:
        # the lines shown are the categories the comparison shows, in its order (smallest p)
        names = [b["name"] for b in out["comparison"]["behaviours"]]
        assert [ln["category"] for ln in out["lines"]] == names[:shown]
        assert f"of {N_CATEGORIES} shown" in out["comparison"]["shown"]


def test_the_forest_says_how_many_groups_it_left_out_and_keeps_the_smallest_p(categories):
    from whileai_core.pictures import forest_picture

    root, srv = categories
    out = forest_picture(root / "before.jsonl", root / "after.jsonl", by="category").to_dict()
    groups = [r["group"] for r in out["rows"][1:]]            # rows[0] is the overall delta
    assert out["n_groups"] == N_CATEGORIES and len(groups) < N_CATEGORIES
    assert f"{len(groups)} of {N_CATEGORIES} shown" in out["shown"]
    many = ok(call(srv, "compare_many", {"before": "before.jsonl", "after": "after.jsonl",
                                         "by": "category"}))
    # compare_many lists the smallest p first: the picture draws those (in the rows' order)
    smallest = [b["name"] for b in many["behaviours"]][:len(groups)]
    assert set(groups) == set(smallest)


def test_compare_many_split_by_one_sort_gives_each_group_its_own_rows():
    """The split that replaced a mask per group (100k groups took over 600 s): each group's
    comparison equals compare() on that group's rows picked out by hand."""
    from whileai_core import load_rows
    from whileai_core.stats import compare, compare_many

    rng = random.Random(3)
    groups = [f"g{i}" for i in range(40)]
    before, after = [], []
    for t in range(400):
        g = groups[(t * 7) % 40]
        for arm in (before, after):
            arm += [{"task_id": f"t{t}", "reward": float(rng.random() < 0.5), "group": g}
                    for _ in range(2)]
    rng.shuffle(before)   # rows of a group scattered through the file
    many = {b.name: b for b in compare_many(before, after, by="group").behaviours}
    assert set(many) == set(groups)
    for g in groups:
        alone = compare([r for r in before if r["group"] == g], [r for r in after if r["group"] == g])
        assert (many[g].n_paired, many[g].delta, many[g].ci, many[g].p_value) == \
            (alone.n_paired, alone.delta, alone.ci, alone.p_value)
    # Rows.where takes the increasing row indices as well as a mask, with the same result
    data = load_rows(before)
    mask = np.array([r["group"] == "g3" for r in before])
    by_mask, by_index = data.where(mask), data.where(np.flatnonzero(mask))
    assert by_mask.task_ids == by_index.task_ids
    assert by_mask.reward.tolist() == by_index.reward.tolist()
    assert by_mask.task_index.tolist() == by_index.task_index.tolist()


# --- the SFT plan reads the data folder: what it trains, or why it cannot --------------------

def _sft_folder(root: Path, *, grader: bool = True, settings: dict | None = None) -> None:
    ask = [{"role": "user", "content": "what is the refund window for an opened item"}]
    write_jsonl(root / "sft" / "train.jsonl", [
        {"messages": [{"role": "user", "content": f"question number {i} about shipping"},
                      {"role": "assistant", "content": f"answer {i}"}]} for i in range(3)])
    write_jsonl(root / "sft" / "holdout.jsonl", [{"task_id": "h1", "messages": ask}])
    if grader:
        (root / "sft" / "grader.py").write_text("def grade(ask, reply):\n    return 1.0\n")
    if settings is not None:
        (root / "sft" / "settings.json").write_text(json.dumps(settings))


def test_launch_run_data_names_every_file_the_recipe_reads_and_the_default_model():
    from recipes.sft.data import DATA_FILES, SETTINGS_FILE
    from server.registry import tool_specs
    from whileai_core.defaults import SFT_MODEL

    spec = next(s for s in tool_specs() if s.name == "launch_run")
    described = spec.input.model_json_schema()["properties"]["data"]["description"]
    for name in (*DATA_FILES, SETTINGS_FILE, SFT_MODEL):
        assert name in described, name


@pytest.mark.parametrize("backend", ["local", "modal"])
def test_an_sft_plan_names_the_model_it_trains(server, backend, monkeypatch, tmp_path):
    root, srv = server
    monkeypatch.setenv("WHILEAI_STATE_DIR", str(tmp_path / "state"))
    _sft_folder(root, settings={"model": "Qwen/Qwen3-8B"})
    out = ok(call(srv, "launch_run", {"config_or_recipe": "sft", "data": "sft",
                                      "backend": backend}))
    note = next(n for n in out["plan"]["notes"] if n.startswith("data: "))
    if backend == "modal":
        assert "trains Qwen/Qwen3-8B (settings.json) on 3 conversations" in note
    else:  # the CPU smoke trains a tiny model, and says which the GPU run would train
        assert "trains tiny-random-qwen2 (the CPU smoke's" in note
        assert 'backend="modal" trains Qwen/Qwen3-8B, from settings.json) on 3 conversations' in note
    assert "1 held-out asks" in note
    assert not (tmp_path / "state").exists()            # a plan writes nothing


def test_a_local_sft_plan_of_a_folder_without_its_grader_is_not_ready(server, monkeypatch,
                                                                      tmp_path):
    root, srv = server
    monkeypatch.setenv("WHILEAI_STATE_DIR", str(tmp_path / "state"))
    _sft_folder(root, grader=False)
    out = ok(call(srv, "launch_run", {"config_or_recipe": "sft", "data": "sft",
                                      "backend": "local"}))
    assert out["plan"]["ready"] is False
    assert any("no grader.py" in n for n in out["plan"]["notes"]), out["plan"]["notes"]
    assert "confirm" not in out["next_step"]


def test_every_inspector_command_in_the_readme_runs_without_a_prompt():
    """npx without -y asks before it installs a package; in an agent's shell (no terminal) it
    refuses: 'npx canceled due to missing packages and no YES option'."""
    root = Path(__file__).resolve().parents[1]
    text = "\n".join(p.read_text(encoding="utf-8")
                     for p in [root / "README.md", *sorted((root / "docs").glob("*.md"))])
    lines = [ln for ln in text.splitlines() if ln.startswith("npx ") and "inspector" in ln]
    assert lines and all(ln.startswith("npx -y ") for ln in lines), lines


# --- configs that run, or say why not ----------------------------------------------------------

@pytest.mark.parametrize("taskset", ["your-taskset", "your_taskset", "YOUR-TASKSET"])
def test_a_your_something_taskset_is_a_placeholder(server, taskset):
    from test_server_support import error_text

    _, srv = server
    text = error_text(call(srv, "prime_rl_config", {"taskset": taskset, "method": "grpo",
                                                    "model": MODEL}), "prime_rl_config")
    assert "placeholder" in text and "Fix: give the real one" in text
    good = ok(call(srv, "prime_rl_config", {"taskset": "reverse-text", "method": "grpo",
                                            "model": MODEL}))
    checked = ok(call(srv, "validate_config", {"text": good["text"].replace(
        '"reverse-text"', f'"{taskset}"')}))
    assert checked["ok"] is False and any("placeholder" in e for e in checked["errors"])


def test_an_unsized_teacher_is_said_once_as_a_warning(server):
    _, srv = server
    out = ok(call(srv, "prime_rl_config", {
        "taskset": "reverse-text", "model": MODEL,
        "method": {"name": "opd", "teacher": {"url": "http://localhost:8001/v1",
                                              "model": "my-org/teacher-ckpt"}}}))
    said = [m for m in out["warnings"] + out["notes"] if "size unknown" in m]
    assert len(said) == 1 and said[0] in out["warnings"], said


def test_a_teacher_that_overflows_one_node_is_warned_with_the_fix(server):
    _, srv = server
    # 235B at fp8: 235 GB; per GPU 0.5 x 0.9 x 80 = 36 GB -> tp 8, after prime-rl's 8 GPUs: 16
    out = ok(call(srv, "prime_rl_config", {
        "taskset": "reverse-text", "model": MODEL, "gpus": 8,
        "method": {"name": "opd", "teacher": {"url": "http://localhost:8001/v1",
                                              "model": "Qwen/Qwen3-235B-A22B", "dtype": "fp8"}}}))
    assert out["teacher"]["gpus"] == 8
    warning = next(w for w in out["warnings"] if "node of 16 GPUs" in w)
    assert "teacher_served=true" in warning
    # 32B in bfloat16 beside 2 prime-rl GPUs: 64 GB -> tp 2, a node of 4: no warning
    fits = ok(call(srv, "prime_rl_config", {
        "taskset": "reverse-text", "model": MODEL,
        "method": {"name": "opd", "teacher": {"url": "http://localhost:8001/v1",
                                              "model": "Qwen/Qwen3-32B"}}}))
    assert fits["teacher"]["gpus"] == 2 and not any("node of" in w for w in fits["warnings"])
