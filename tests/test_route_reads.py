"""The route reads every field: a judge's score goes to the judge's audit first, a
reward that pays for being cut off is a hole, no smaller model is proposed to distil from, and
the next call runs as given (its budget from the rows, what it still needs named).

Numbers are counted by hand from the rows each test builds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from whileai_core import RowsError, route
from whileai_core.judge import failures_needed

MODEL = "Qwen/Qwen3-8B"


def mixed(model=MODEL, n=12, k=4, **extra):
    """n tasks x k rollouts, task t passing (t % 3 + 1) of k: every task splits."""
    return [{"task_id": f"t{t}", "reward": float(j < t % 3 + 1), "model": model, **extra}
            for t in range(n) for j in range(k)]


# --- 0. who graded ---------------------------------------------------------------------------

def test_a_judges_rating_routes_to_its_audit_with_what_to_label():
    # 20 tasks x 4, the judge's 1-10 score (t + j) % 10 + 1: every score appears 8 times
    rows = [{"task_id": f"t{t}", "reward": (t + j) % 10 + 1, "grader": "llm-judge",
             "judge_model": "gpt-4o", "model": MODEL} for t in range(20) for j in range(4)]
    got = route(rows, model=MODEL)
    assert got.route == "audit_judge" and got.decided_by == "0. Who graded the rows?"
    assert got.answers[0].question == 0 and got.answers[0].decides
    assert not any(a.decides for a in got.answers[1:])
    label = got.answers[0].evidence["label"]
    # no pass mark given on a 1-10 rating: the convention 7 (70% of the top); below it 6 of
    # the 10 scores fail, 48 of 80 replies; 97 failures needed (z^2 / 4 / 0.1^2, rounded up)
    assert failures_needed() == math.ceil(1.959964 ** 2 * 0.25 / 0.01) == 97
    assert (label["pass_mark"], label["pass_mark_given"]) == (7, False)
    assert label["fail_share"] == pytest.approx(48 / 80)
    assert label["items"] == min(80, math.ceil(97 / 0.6))        # every reply there is
    assert sum(label["by_score"].values()) >= 10 and set(label["by_score"]) == {
        str(s) for s in range(1, 11)}
    assert got.next_step.tool == "enable_toolset" and got.next_step.arguments == {
        "toolset": "judge"}
    assert "audit_judge" in got.next_step.say and "blind" in got.next_step.say
    # the call once it clears carries the pass mark or the rescaling in what it says
    assert "threshold=7" in got.then.say and "(score - 1) / 9" in got.then.say
    assert "program grader" not in got.method


def test_a_program_grader_routes_as_before():
    got = route(mixed(grader="unit-tests"), model=MODEL)
    assert got.route == "grpo" and any("graded by program" in f for f in got.fields)


# --- 1. a reward that pays for being cut off -----------------------------------------------------

def test_cut_off_replies_that_earn_more_route_fix_reward_paired_within_task():
    # 10 tasks x 4: two cut-off replies per task at 0.6 + (t % 3) / 100 + t / 100, two
    # finished at 0.3 + t / 100; the gap of task t is 0.3 + (t % 3) / 100, mean 0.309 (the
    # t % 3 of t = 0..9 sum to 9); no reply reaches 1.0
    rows = [{"task_id": f"t{t}", "reward": (0.6 + t % 3 / 100 if j < 2 else 0.3) + t / 100,
             "truncated": j < 2, "model": MODEL} for t in range(10) for j in range(4)]
    got = route(rows, model=MODEL)
    assert got.route == "fix_reward" and got.decided_by.startswith("1.")
    pay = got.answers[0].evidence["pay"]
    assert pay["paired"] and pay["n_tasks"] == 10 and pay["gap"] == pytest.approx(0.309)
    assert pay["ci"][0] > 0
    assert "passes say nothing here" in got.answers[0].detail
    # every task the same gap: no paired spread, so the two groups' means are compared
    same = [{**r, "reward": (0.6 if r["truncated"] else 0.3) + int(r["task_id"][1:]) / 100}
            for r in rows]
    flat = route(same, model=MODEL)
    assert flat.route == "fix_reward" and not flat.answers[0].evidence["pay"]["paired"]
    # the same rows with the cut-off replies earning less: no hole
    fair = [{**r, "reward": r["reward"] - 0.5 if r["truncated"] else r["reward"]} for r in rows]
    assert route(fair, model=MODEL).route != "fix_reward"


# --- 4 and 5. no smaller model to distil from ----------------------------------------------------

def test_a_smaller_writer_is_never_proposed_to_distil_from():
    small = route(mixed("Qwen/Qwen3-1.7B"), model=MODEL)
    assert small.route == "off_policy" and "smaller" in small.next_step.say
    assert "OPD" not in small.method and "SFT" not in small.method
    big = route(mixed("Qwen/Qwen3-32B"), model=MODEL)
    assert big.route == "off_policy" and "larger" in big.next_step.say


def test_a_smaller_teacher_that_clears_is_not_proposed():
    student = mixed(n=12)
    teacher = [{**r, "reward": 1.0, "model": "acme/Qwen3-1.7B-sft"} for r in student]
    got = route(student, model=MODEL, teacher_rows=teacher)
    assert got.route == "grpo" and "smaller" in got.answers[3].answer
    bigger = [{**r, "model": "Qwen/Qwen3-32B"} for r in teacher]
    assert route(student, model=MODEL, teacher_rows=bigger).route == "opd"


# --- several models in the rows ------------------------------------------------------------------

def test_rows_of_two_models_are_routed_on_the_trained_models_own_rows():
    rows = mixed(MODEL) + [{**r, "model": "Qwen/Qwen3-1.7B", "reward": 0.0} for r in mixed()]
    got = route(rows, model=MODEL)
    assert got.answers[1].evidence["k"] == 4 and got.route == "grpo"
    assert any("routed on the 48 rows of Qwen/Qwen3-8B" in f and "Qwen/Qwen3-1.7B (48 rows)"
               in f for f in got.fields)
    with pytest.raises(RowsError, match=r"2 models .*none of them 'Qwen/Qwen3-4B'.*"
                                        r"model_filter"):
        route(rows, model="Qwen/Qwen3-4B")


# --- the next call runs as given -------------------------------------------------------------------

def test_the_next_call_names_what_it_needs_and_takes_the_rows_budget():
    got = route(mixed(), model=MODEL)
    step = got.next_step
    assert step.tool == "prime_rl_config" and step.needs == ["taskset"]
    assert "taskset" not in step.arguments and "max_tokens" not in step.arguments
    assert not any("<" in str(v) for v in step.arguments.values())
    assert "a guess" in step.say
    given = route(mixed(max_tokens=2048), model=MODEL, taskset="reverse-text").next_step
    assert given.needs == [] and given.arguments["taskset"] == "reverse-text"
    assert given.arguments["max_tokens"] == 2048 and "the rows' own cap" in given.say


def test_the_grpo_step_sizes_the_held_out_test_within_the_pool():
    from whileai_core import holdout_size

    rows = mixed(n=30)
    need = holdout_size(0.05, before=rows).n_tasks
    assert need > 30                       # a pilot of 30 tasks cannot hold that test
    say = route(rows, model=MODEL).next_step.say
    share = math.ceil(0.2 * 30)
    assert f"the pool of 30 tasks is too small" in say and f"needs {need}" in say
    assert f"holding out {share} (20%) leaves {30 - share} to train on" in say
    assert f"detects about {0.05 * math.sqrt(need / share):.2f}" in say


def test_a_config_says_when_its_completion_budget_is_a_guess():
    from whileai_core import prime_rl_config

    teacher = {"name": "opd", "teacher": "Qwen/Qwen3-32B@http://localhost:8001/v1"}
    guessed = prime_rl_config("reverse-text", teacher, model=MODEL)
    assert any("is the method's default, not the budget the model was graded on" in n
               for n in guessed.notes)
    given = prime_rl_config("reverse-text", teacher, model=MODEL, max_tokens=2048)
    assert not any("default, not the budget" in n for n in given.notes)
