"""Every field read: each field's role, who graded, several writers refused or one
kept (``model_filter``), families found, other systems' output read on the fly.

Expected roles and counts are written by hand from the rows each test builds."""

from __future__ import annotations

import json
import math

import pytest

from whileai_core import RowsError, describe_rows, pass_at
from whileai_core.roles import read_fields
from whileai_core.rows import load_rows, with_threshold
from whileai_core.writers import one_writer, select_rows, select_writer

from test_server_support import call, error_text, ok, write_jsonl

MODEL = "Qwen/Qwen3-8B"


def rows(n_tasks=10, k=4, **fields):
    """n_tasks x k rows; each keyword is a function (task, rollout) -> that field's value."""
    return [{"task_id": f"t{t}", "reward": float((t + j) % 2), "model": MODEL,
             **{name: f(t, j) for name, f in fields.items()}}
            for t in range(n_tasks) for j in range(k)]


# --- a role for every field ---------------------------------------------------------------------

def test_every_field_gets_a_role_from_its_name_type_and_variation():
    data = load_rows(rows(
        repo=lambda t, j: f"org/r{t % 3}", category=lambda t, j: f"c{t % 2}",
        judge_model=lambda t, j: "gpt-4o", max_tokens=lambda t, j: 512,
        turns=lambda t, j: 1 + j % 2, completion=lambda t, j: "a long reply " * 5 + str(j),
        request_id=lambda t, j: f"req-{t}-{j}", well_formed=lambda t, j: j > 0,
        step=lambda t, j: 100, format_reward=lambda t, j: 0.2, latency_ms=lambda t, j: 40 + j))
    roles = {f.name: f.role for f in read_fields(data).fields.values()}
    assert roles == {"task_id": "task", "reward": "reward", "model": "model", "repo": "family",
                     "category": "category", "judge_model": "grader", "max_tokens": "budget",
                     "turns": "turns", "completion": "text", "request_id": "id",
                     "well_formed": "flag", "step": "step", "format_reward": "score",
                     "latency_ms": "unknown"}
    reading = read_fields(data)
    assert reading.family.name == "repo" and reading.family.n_values == 3
    assert reading.grader == "llm_judge" and "judge_model" in reading.grader_why
    assert reading.writers == []          # one model, one step: one writer


def test_the_reading_is_kept_with_the_loaded_rows():
    data = load_rows(rows())
    assert read_fields(data) is read_fields(data)
    assert read_fields(with_threshold(data, 0.5)) is read_fields(data)   # roles ignore the mark


def test_changes_the_route_only_for_fields_that_can_change_it():
    zero = describe_rows(rows(turns=lambda t, j: 0, max_tokens=lambda t, j: 4096))
    assert "turns" not in zero.route_fields and "max_tokens" in zero.route_fields
    many = describe_rows(rows(turns=lambda t, j: 1 + j, category=lambda t, j: f"c{t % 3}"))
    assert {"turns", "category"} <= set(many.route_fields)
    one = describe_rows(rows(category=lambda t, j: "all"))
    assert "category" not in one.route_fields     # one value splits nothing
    by = {f.name: f for f in many.fields}
    assert by["turns"].role == "turns" and "turns [turns]" in str(many)


@pytest.mark.parametrize("extra, grader", [
    ({"grader": "llm-judge"}, "llm_judge"),
    ({"grader": "unit-tests"}, "program"),
    ({"feedback_source": "user"}, "human"),
    ({"rubric": "helpfulness-v3"}, "llm_judge"),
    ({}, None),
])
def test_who_graded_is_read_from_the_grader_fields(extra, grader):
    data = load_rows(rows(**{k: (lambda v: lambda t, j: v)(v) for k, v in extra.items()}))
    assert read_fields(data).grader == grader


def test_a_whole_number_reward_from_1_to_10_reads_as_a_rating():
    rating = [{"task_id": f"t{t}", "reward": 1 + (t + j) % 10} for t in range(10)
              for j in range(4)]
    reading = read_fields(load_rows(rating))
    assert reading.grader == "llm_judge" and "1 to 10" in reading.grader_why
    # 0-100 percentages from a program are not a rating (they start at 0)
    percent = [{"task_id": f"t{t}", "reward": 20 * ((t + j) % 6)} for t in range(10)
               for j in range(4)]
    assert read_fields(load_rows(percent)).grader is None


# --- several writers ----------------------------------------------------------------------------

def two_models():
    return (rows(6) + [{**r, "model": "Qwen/Qwen3-1.7B", "reward": 0.0} for r in rows(6)])


def test_rows_of_two_models_are_never_one_pass_rate():
    with pytest.raises(RowsError, match=r"2 models in `model` \(Qwen/Qwen3-8B: 24 rows, "
                                        r"Qwen/Qwen3-1.7B: 24 rows\).*model_filter"):
        pass_at(two_models())
    small = select_writer(load_rows(two_models()), "Qwen/Qwen3-1.7B")
    assert small.n_rows == 24 and pass_at(small).pass_at_1 == 0.0


@pytest.mark.parametrize("field, values, what", [
    ("checkpoint", ("base", "step-100"), "checkpoints"),
    ("step", (50, 100), "training steps"),
])
def test_checkpoints_and_training_steps_are_writers(field, values, what):
    data = load_rows([{**r, field: v} for v in values for r in rows(4)])
    [w] = read_fields(data).writers
    assert (w.field, w.what, w.counts) == (field, what, {str(v): 16 for v in values})
    with pytest.raises(RowsError, match=f"2 {what} in `{field}`"):
        one_writer(data)
    assert select_writer(data, str(values[1])).n_rows == 16


def test_a_repeat_index_and_a_sampler_version_are_not_writers():
    # Inspect's epoch numbers a task's rollouts; prime-rl's policy_version is the async lag
    data = load_rows(rows(4, epoch=lambda t, j: j + 1, policy_version=lambda t, j: j % 2))
    assert read_fields(data).writers == []


def test_select_rows_per_argument_and_a_plain_id_where_the_rows_carry_it():
    before = load_rows(two_models())
    teacher = load_rows([{**r, "model": "Qwen/Qwen3-32B"} for r in rows(6)])
    got = select_rows({"rows": before, "teacher_rows": teacher}, MODEL,
                      ["rows", "teacher_rows"], None)
    assert set(got) == {"rows"} and got["rows"].n_rows == 24   # the teacher's one model stays
    got = select_rows({"before": before, "after": before},
                      {"before": MODEL, "after": "Qwen/Qwen3-1.7B"}, ["before", "after"], None)
    assert got["before"].models() == {MODEL: 24}
    assert got["after"].models() == {"Qwen/Qwen3-1.7B": 24}
    with pytest.raises(RowsError, match="not a rows argument"):
        select_rows({"before": before}, {"teacher": MODEL}, ["before"], None)
    with pytest.raises(RowsError, match="no row of `before` was written by 'nope'.*Qwen3-1.7B"):
        select_rows({"before": before}, "nope", ["before"], None)


def test_model_filter_over_mcp_and_at_the_shell(tmp_path, capsys):
    from server.app import build_server
    from whileai_core.cli import main

    write_jsonl(tmp_path / "two.jsonl", two_models())
    srv = build_server(tmp_path, skills_dir=tmp_path / "none")
    assert "2 models in `model`" in error_text(call(srv, "rate", {"rows": "two.jsonl"}), "rate")
    out = ok(call(srv, "rate", {"rows": "two.jsonl", "model_filter": MODEL}))
    assert out["rate"]["n_rows"] == 24 and out["rate"]["value"] == 0.5   # (t + j) % 2: half
    both = ok(call(srv, "compare", {"before": "two.jsonl", "after": "two.jsonl", "model_filter": {
        "before": "Qwen/Qwen3-1.7B", "after": MODEL}}))
    assert both["n_paired"] == 6 and both["delta"] == 0.5
    assert main(["pass-at", str(tmp_path / "two.jsonl"), "--model-filter",
                 "Qwen/Qwen3-1.7B", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rate"]["value"] == 0.0
    assert main(["pass-at", str(tmp_path / "two.jsonl")]) == 2
    assert "--model-filter Qwen/Qwen3-8B" in capsys.readouterr().err


# --- a pass mark no reward reaches ----------------------------------------------------------------

@pytest.mark.parametrize("threshold, what", [(5, "above every reward"),
                                             (-1, "at or below every reward")])
def test_a_threshold_outside_the_rewards_is_an_error_naming_their_range(tmp_path, capsys,
                                                                        threshold, what):
    from whileai_core import route
    from whileai_core.cli import main

    data = rows(12)
    with pytest.raises(RowsError, match=f"{what}.*run from 0 to 1.*Fix: give a pass mark in "
                                        r"\(0, 1\]"):
        route(data, model=MODEL, threshold=threshold)
    path = write_jsonl(tmp_path / "r.jsonl", data)
    assert main(["route", str(path), "--model", MODEL, "--threshold", str(threshold)]) == 2
    assert "--threshold 1" in capsys.readouterr().err
    assert route(data, model=MODEL, threshold=0.5).route == "grpo"   # a mark inside the range


# --- families without being asked ---------------------------------------------------------------

def test_a_family_field_is_read_beside_the_task_interval_and_can_be_turned_off(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent / "shapes"))
    import make_shapes
    from whileai_core import compare

    before, after = make_shapes.families(tmp_path)
    facts = make_shapes.FACTS["families"]
    got = compare(str(before), str(after))
    assert got.families.field == "repo" and got.families.n_families == 10
    # the CR1 interval by hand (make_shapes: the repos' mean deltas, t with 9 df) within the
    # two-level resample's Monte Carlo error
    assert got.families.ci == pytest.approx(facts["clustered_ci"], abs=0.01)
    assert got.ci[0] > 0 and got.verdict == "no_detectable_change"   # no stronger than by repo
    assert "cluster" in got.families.note and "`repo`" in got.summary()
    off = compare(str(before), str(after), cluster=None)
    assert off.verdict == "moved" and off.families is None
    by_repo = compare(str(before), str(after), cluster="repo")
    assert by_repo.cluster == "repo" and by_repo.ci == pytest.approx(got.families.ci, abs=0.01)


@pytest.mark.parametrize("task, family, want", [
    ("moved", "no_detectable_change", "no_detectable_change"),
    ("moved", "moved", "moved"),
    ("flat", "no_detectable_change", "no_detectable_change"),
    ("no_detectable_change", "moved", "no_detectable_change"),
    ("moved", None, "moved"),
    ("moved", "flat", "no_detectable_change"),
])
def test_the_verdict_is_no_stronger_than_either_interval(task, family, want):
    from whileai_core.stats.families import weaker

    assert weaker(task, family) == want


# --- answers cut at a sentence --------------------------------------------------------------------

def test_a_cut_string_ends_at_a_sentence_when_one_ends_in_reach():
    from whileai_core.result import cut_text

    text = "First sentence here. Second one goes on and on and on; third clause."
    assert cut_text(text, 30) == "First sentence here....(20 of 68 characters)"
    assert cut_text(text, 45) == "First sentence here. Second one goes on and...(43 of 68 characters)"
    assert cut_text("x" * 50, 10) == "x" * 10 + "...(10 of 50 characters)"   # no end: cut


# --- other systems' output as it is -----------------------------------------------------------------

def test_an_lm_eval_output_path_and_vf_eval_results_read_as_they_are(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent / "shapes"))
    import make_shapes

    base, _ = make_shapes.lm_eval_pair(tmp_path)
    for folder in (base, base.parent):   # the model's folder, or the --output_path above it
        data = load_rows(folder)
        assert data.n_tasks == 250 and "`exact_match`" in data.origin
        assert "import_rows" in data.origin
    vf = load_rows(make_shapes.verifiers_results(tmp_path))
    assert vf.n_tasks == 40 and set(vf.rollouts.tolist()) == {3}
    roles = {f.name: f.role for f in read_fields(vf).fields.values()}
    assert roles["example_id"] == "task" and roles["correct_answer_reward_func"] == "score"
    assert math.isclose(pass_at(vf).pass_at_1, sum(
        json.loads(line)["reward"] for line in
        (tmp_path / "verifiers_results.jsonl").read_text().splitlines()) / 120)
