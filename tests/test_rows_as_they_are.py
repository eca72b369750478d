"""Rows read as they are: continuous rewards, other scales, token budgets, k = 1, too few tasks,
near-miss model ids and field errors. Every shape is built here from its definition (the
reverse-text run: 128 prompts x 16 rollouts, an LCS reward in [0, 1) that never reaches 1) and
every expected number is counted by hand from the rows, never read off the code."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pytest

from whileai_core import (ArgumentError, RowsError, band, compare, field_share, load_rows,
                          pass_at, rollouts_per_task, route, split_share, teacher_clears)
from whileai_core.defaults import REWARD_SPREAD_TOLERANCE, ROUTE_MIN_TASKS

SFT = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"
MODEL = "Qwen/Qwen3-8B"


def reverse_text(spread: bool, seed: int = 3) -> list[dict]:
    """128 prompts x 16 rollouts of an LCS reward in [0, 1) (none reaches 1), nine in ten replies
    cut at the cap (the recipe's step 1). With ``spread``, each prompt's rewards are drawn
    around its own level; without, all 16 rollouts of a prompt score the same."""
    rng = random.Random(seed)
    rows = []
    for t in range(128):
        level = rng.uniform(0.02, 0.6)
        for j in range(16):
            r = level + (rng.uniform(0.0, 0.35) if spread else 0.0)
            rows.append({"task_id": f"rt-{t}", "reward": round(min(r, 0.99), 4), "model": SFT,
                         "truncated": j % 10 != 0})
    return rows


# --- 1. the reward as it is ---------------------------------------------------------------------

def test_reverse_text_rows_route_to_grpo_on_the_reward():
    rows = reverse_text(spread=True)
    assert max(r["reward"] for r in rows) < 1.0                   # no exact reversal: pass@1 is 0
    by_task: dict[str, list[float]] = {}
    for r in rows:
        by_task.setdefault(r["task_id"], []).append(r["reward"])
    spreads = [max(v) - min(v) for v in by_task.values()]
    assert min(spreads) > REWARD_SPREAD_TOLERANCE                 # spread within every task
    result = route(rows, model=SFT, taskset="reverse-text")
    assert result.route == "grpo" and result.decided_by.startswith("6.")
    assert result.reward.kind == "bounded"
    q3 = result.answers[2]
    assert q3.evidence["n_signal"] == 128 and q3.evidence["band"] == "mixed"
    assert q3.evidence["pass_at_1"]["value"] == 0.0
    # the headline is the mean reward, by hand: mean of per-task means
    assert q3.evidence["mean_reward"]["value"] == pytest.approx(
        np.mean([np.mean(v) for v in by_task.values()]))
    q6 = result.answers[-1].answer
    assert "pass@1 is 0.000" in q6 and "does not matter for a grouped method" in q6
    assert "group's mean" in q6


def test_the_same_rows_with_no_spread_within_any_task_do_not_route_to_grpo():
    rows = reverse_text(spread=False)
    result = route(rows, model=SFT)
    assert result.route == "floor" and result.route != "grpo"
    assert "no signal in the reward either" in result.answers[2].answer
    # 0.6B is under OPSD's ~7B: SFT on a stronger model's completions
    assert "SFT" in result.method and result.next_step.tool is None
    assert "temperature" in result.next_step.say


def test_binary_rows_where_no_task_splits_are_floor_not_grpo():
    # 10 tasks always pass, 10 always fail, none split: no group has a gradient
    rows = [{"task_id": f"t{i}", "reward": float(i < 10), "model": MODEL}
            for i in range(20) for _ in range(4)]
    result = route(rows, model=MODEL)
    assert result.route == "floor" and "10 always pass" in result.answers[2].answer
    assert band(rows).n_signal == 0 and band(rows).n_split == 0


def test_a_zero_to_hundred_scale_is_warned_about_in_route_pass_at_and_compare():
    rng = random.Random(5)
    rows = [{"task_id": f"t{i}", "reward": float(rng.randint(40, 100)), "model": MODEL}
            for i in range(20) for _ in range(4)]
    after = [{**r, "reward": min(100.0, r["reward"] + 5)} for r in rows]
    for answer in (route(rows, model=MODEL), pass_at(rows), compare(rows, after)):
        text = str(answer)
        assert text.startswith("warning: rewards run from") and "0-100" in text
        assert "threshold=100" in text and "rescale" in text
    assert pass_at(rows).reward.warning and compare(rows, after).reward_warning
    assert route(rows, model=MODEL).reward.looks_like == "0-100"
    # a pass mark given on the scale: said, not warned as a default
    given = pass_at(rows, threshold=70)
    assert "as given" in given.reward.warning



def test_a_scale_warning_gives_the_pass_mark_as_the_reader_types_it(tmp_path, capsys):
    # 0-100 rewards: the pass mark on that scale is 100; at the shell it is `--threshold 100`
    # (pass-at --help), over MCP and in Python `threshold=100`
    from whileai_core.cli import main
    from whileai_core.voice import MCP, speaking
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(f'{{"task_id": "t{i}", "reward": {40 + 3 * i + j}}}\n'
                            for i in range(20) for j in range(4)))
    assert main(["pass-at", str(path)]) == 0
    out = capsys.readouterr().out
    assert "--threshold 100" in out and "threshold=" not in out
    with speaking(MCP):
        assert "threshold=100" in pass_at(str(path)).reward.warning
    # a mark no reward in [0, 1] reaches is refused, naming the range; the fix is a flag too
    small = tmp_path / "small.jsonl"
    small.write_text("".join(f'{{"task_id": "t{i}", "reward": {i % 2}}}\n' for i in range(12)))
    assert main(["pass-at", str(small), "--threshold", "2"]) == 2
    err = capsys.readouterr().err
    assert "run from 0 to 1" in err and "--threshold 1" in err and "threshold=" not in err


def test_notes_on_the_metric_and_families_name_the_flags_at_the_shell(tmp_path, capsys):
    # an LCS-like reward in [0, 1] with a family field: compare reads the mean reward and says
    # how to compare passes instead (--metric pass, compare --help); the route says the family
    # field is not used and how to use it (--cluster family, route --help)
    from whileai_core.cli import main
    rows = [{"task_id": f"t{i}", "reward": round(0.1 + 0.01 * i + 0.1 * j, 3),
             "family": f"f{i % 4}", "model": MODEL} for i in range(20) for j in range(4)]
    before = tmp_path / "before.jsonl"
    before.write_text("".join(json.dumps(r) + "\n" for r in rows))
    after = tmp_path / "after.jsonl"
    after.write_text("".join(json.dumps({**r, "reward": r["reward"] + 0.05}) + "\n"
                             for r in rows))
    main(["compare", str(before), str(after)])
    out = capsys.readouterr().out
    assert "--metric pass" in out and "metric='pass'" not in out
    main(["compare", str(before), str(after), "--metric", "pass"])
    out = capsys.readouterr().out
    assert "--metric reward" in out and "metric='reward'" not in out
    main(["route", str(before), "--model", MODEL])
    out = capsys.readouterr().out
    assert "--cluster family" in out and "cluster='family'" not in out
    assert main(["pass-at", str(before), "--cluster", " "]) == 2
    err = capsys.readouterr().err
    assert "--cluster family" in err and "cluster='family'" not in err


@pytest.mark.parametrize("high, signal", [(0.51, False), (0.511, True), (0.52, True)])
def test_a_spread_of_exactly_the_tolerance_is_not_signal(high, signal):
    # "differ by more than 0.01": rewards 0.50 and 0.51 differ by exactly 0.01 (in floats
    # 0.51 - 0.5 = 0.010000000000000009, which read as more); 0.511 and 0.52 differ by more
    assert REWARD_SPREAD_TOLERANCE == 0.01
    rows = [{"task_id": f"t{i}", "reward": r, "model": MODEL}
            for i in range(8) for r in (0.5, high, 0.5, 0.5)]
    assert band(rows).n_signal == (8 if signal else 0)
    assert (route(rows, model=MODEL).route == "grpo") == signal


def test_one_task_is_one_task_and_an_array_field_shows_no_empty_values():
    # the one task with two rows: too few tasks, said in the singular
    one = route([{"task_id": "a", "reward": 1.0}, {"task_id": "a", "reward": 0.0}], model=MODEL)
    assert one.route == "too_few_tasks" and one.method == "none yet: 1 task"
    assert "Only 1 task:" in one.next_step.say and "1 tasks" not in str(one)
    # a field holding lists has no values or range to show: its line has no empty "; ;"
    from whileai_core import describe_rows
    text = str(describe_rows([{"task_id": "a", "reward": 1.0, "tags": [1, 2]},
                              {"task_id": "a", "reward": 0.0, "tags": [3]}]))
    line = next(l for l in text.splitlines() if l.strip().startswith("tags"))
    assert line.strip() == "tags [category]: array, 100% of rows; not comparable within tasks"


@pytest.mark.parametrize("low, high, passes", [(-1.0, 1.0, 0.25), (-0.5, 0.5, 0.0),
                                               (0.0, 1.2, 0.25)])
def test_a_scale_warning_says_what_the_default_mark_does_on_these_rows(low, high, passes):
    # one reward in four at `high`, the rest at `low`: at the default threshold 1 the pass rate
    # is 1/4 when high >= 1 and 0 when high < 1; never "almost every reply"
    rows = [{"task_id": f"t{i}", "reward": high if j == 0 else low}
            for i in range(10) for j in range(4)]
    answer = pass_at(rows)
    assert answer.pass_at_1 == pytest.approx(passes)
    warning = answer.reward.warning
    assert "almost every" not in warning
    assert ("nothing passes" in warning) == (passes == 0.0)

@pytest.mark.parametrize("low, high, kind, looks", [
    (0.0, 1.0, "binary", None), (0.0, 0.9, "bounded", None), (0.0, 7.0, "scale", "0-10"),
    (1.0, 80.0, "scale", "0-100"), (-1.0, 1.0, "scale", "signed"), (0.0, 4.5, "scale", "0-5"),
])
def test_reward_kinds(low, high, kind, looks):
    rows = [{"task_id": "a", "reward": low}, {"task_id": "b", "reward": high}]
    if kind == "bounded":
        rows.append({"task_id": "c", "reward": 0.5})
    scale = load_rows(rows).reward_scale
    assert scale.kind == kind and scale.looks_like == looks
    assert (scale.warning is None) == (kind != "scale")


def test_compare_reads_the_mean_reward_of_a_continuous_reward():
    before = reverse_text(spread=True, seed=1)
    after = [{**r, "reward": min(0.99, r["reward"] + 0.3)} for r in before]
    c = compare(before, after)
    assert c.metric == "reward" and c.verdict == "moved"
    # by hand: each task's mean rises by its rewards' mean capped rise
    per_task: dict[str, list[float]] = {}
    for b, a in zip(before, after):
        per_task.setdefault(b["task_id"], []).append(a["reward"] - b["reward"])
    assert c.delta == pytest.approx(np.mean([np.mean(v) for v in per_task.values()]))
    assert compare(before, after, metric="pass").delta == 0.0     # pass@1 stays 0


# --- 2. budgets ---------------------------------------------------------------------------------

def budget_rows(with_budget: bool) -> tuple[list[dict], list[dict]]:
    """60 held-out tasks x 4: a student capped at 512 tokens (pass rate 0.4 by construction), a
    teacher scored at 2048 that passes 3 of 4 but writes more than 512 tokens on most replies."""
    student, teacher = [], []
    for t in range(60):
        for j in range(4):
            s = {"task_id": f"h{t}", "reward": float((t + j) % 5 < 2), "model": MODEL}
            long = (t * 4 + j) % 10 != 0                         # 9 in 10 replies run long
            te = {"task_id": f"h{t}", "reward": float(j != 3), "model": "Qwen/Qwen3-32B"}
            if with_budget:
                s.update(max_tokens=512, completion_tokens=200 + 50 * j)
                te.update(max_tokens=2048, completion_tokens=1500 if long else 400)
            student.append(s)
            teacher.append(te)
    return student, teacher


def test_a_teacher_scored_with_a_longer_budget_does_not_clear():
    student, teacher = budget_rows(with_budget=True)
    verdict = teacher_clears(teacher, student)
    assert not verdict and verdict.budget.status == "teacher_longer"
    assert verdict.budget.student_cap == 512 and verdict.budget.teacher_cap == 2048
    # by hand: at the student's cap a teacher reply counts only if it passed in <= 512 tokens
    per_task = {}
    for r in teacher:
        kept = r["reward"] >= 1.0 and r["completion_tokens"] <= 512
        per_task.setdefault(r["task_id"], []).append(kept)
    at_cap = np.mean([np.mean(v) for v in per_task.values()])
    over = sum(r["completion_tokens"] > 512 for r in teacher)
    assert verdict.at_student_cap.teacher.value == pytest.approx(at_cap)
    assert verdict.at_student_cap.replies_over_cap == over == 216
    assert "max_tokens=512" in verdict.reason and "Fix: re-score the teacher" in verdict.reason
    decided = route(student, model=MODEL, teacher_rows=teacher)
    assert decided.route != "opd" and decided.answers[3].decides is False



def test_teacher_rows_without_token_counts_are_not_silently_within_the_cap():
    # 60 tasks x 4: every teacher reply passes at max_tokens 2048; rollouts 0-1 of each task
    # carry completion_tokens 900 (past the student's 512), rollouts 2-3 carry none. Held to the
    # cap, 0-1 fail and 2-3 are unknown: counted as within the cap they give 0.5 per task, which
    # is at most what the teacher scores there, and the answer must say that 120 rows are unknown
    student, _ = budget_rows(with_budget=True)
    teacher = [{"task_id": f"h{t}", "reward": 1.0, "max_tokens": 2048,
                **({"completion_tokens": 900} if j < 2 else {})}
               for t in range(60) for j in range(4)]
    verdict = teacher_clears(teacher, student)
    assert not verdict and verdict.budget.teacher_rows_with_tokens == 120
    assert verdict.at_student_cap.teacher.value == pytest.approx(0.5)
    assert "120 of the 120 teacher rows that carry completion_tokens" in verdict.budget.note
    assert "120 of 240 carry none" in verdict.budget.note
    assert "at most" in verdict.reason and "120 of 240 teacher rows carry no completion_tokens" \
        in verdict.reason


def test_a_teacher_whose_replies_all_fit_the_cap_is_told_so():
    # every teacher reply (at max_tokens 2048) wrote 400 tokens: none ran past 512, so nothing
    # was cut, and the reason must not say a cut reply is not what it would write
    student, teacher = budget_rows(with_budget=True)
    teacher = [{**r, "completion_tokens": 400} for r in teacher]
    verdict = teacher_clears(teacher, student)
    assert verdict.at_student_cap.replies_over_cap == 0 and verdict.at_student_cap.clears
    assert "cut reply" not in verdict.reason
    assert "no reply ran past the cap" in verdict.reason

def test_the_same_rows_without_budget_fields_say_the_budget_was_not_checked():
    student, teacher = budget_rows(with_budget=False)
    verdict = teacher_clears(teacher, student)
    assert verdict.clears and verdict.budget.status == "not_checked"
    assert "budget not checked" in verdict.reason
    assert route(student, model=MODEL, teacher_rows=teacher).route == "opd"


def test_matched_budgets_pass_the_check():
    student, teacher = budget_rows(with_budget=True)
    teacher = [{**r, "max_tokens": 512, "completion_tokens": 300} for r in teacher]
    verdict = teacher_clears(teacher, student)
    assert verdict.budget.status == "matched" and verdict.clears


def test_budget_fields_are_checked_where_rows_load():
    with pytest.raises(RowsError, match='row 2.*`max_tokens` is "lots"'):
        load_rows([{"task_id": "a", "reward": 1.0, "max_tokens": 512},
                   {"task_id": "a", "reward": 0.0, "max_tokens": "lots"}])
    with pytest.raises(RowsError, match="`completion_tokens` is -3"):
        load_rows([{"task_id": "a", "reward": 1.0, "completion_tokens": -3}])
    # a reply the cap cut off is truncated when the row does not say otherwise
    rows = load_rows([{"task_id": "a", "reward": 0.0, "finish_reason": "length"},
                      {"task_id": "a", "reward": 0.0, "finish_reason": "stop"},
                      {"task_id": "a", "reward": 0.0, "finish_reason": "length",
                       "truncated": False}])
    assert rows.truncated.tolist() == [True, False, False]


# --- 4. errors instead of guesses ---------------------------------------------------------------

def test_field_share_of_a_missing_field_names_the_fields_that_exist():
    rows = [{"task_id": "a", "reward": 1.0, "tool_call": True, "turns": 2}]
    with pytest.raises(ArgumentError) as err:
        field_share(rows, "no_such_field")
    assert "no_such_field" in str(err.value)
    assert "task_id, reward, tool_call, turns" in str(err.value)


def test_field_share_of_a_non_boolean_field_says_which_tool_reads_it():
    rows = [{"task_id": "a", "reward": 1.0, "turns": 3, "category": "refund"}]
    with pytest.raises(ArgumentError, match="`turns` holds whole numbers.*describe_rows"):
        field_share(rows, "turns")
    with pytest.raises(ArgumentError, match="`category` holds strings.*category_table"):
        field_share(rows, "category")
    # a flag some rows leave out counts those rows as false: 1 of 2 per task
    flags = [{"task_id": "a", "reward": 1.0, "tool_call": True}, {"task_id": "a", "reward": 1.0}]
    assert field_share(flags, "tool_call").value == 0.5



@pytest.mark.parametrize("reader, names, never", [
    # the CLI's command `pass-at --field`, `describe`, `by-category` (its --help); the MCP tool
    # `rate` with `field`, `describe_rows`, `category_table` (the server's tool list)
    ("cli", ["--field", "`whileai-skills describe`", "`whileai-skills by-category`"],
     ["field_share", "describe_rows", "category_table"]),
    ("mcp", ["`describe_rows`", "`category_table`"], ["field_share"]),
])
def test_a_field_error_names_what_the_reader_types(reader, names, never):
    from whileai_core.voice import speaking
    rows = [{"task_id": "a", "reward": 1.0, "turns": 3, "category": "refund"}]
    said = []
    with speaking(reader):
        for field in ("no_such_field", "turns", "category"):
            with pytest.raises(ArgumentError) as err:
                field_share(rows, field)
            said.append(str(err.value))
    text = "\n".join(said)
    for name in names:
        assert name in text
    for name in never:
        assert name not in text

def mixed(model=MODEL, n=8):
    return [{"task_id": f"t{i}", "reward": float(j < 1 + i % 3), "model": model}
            for i in range(n) for j in range(4)]


@pytest.mark.parametrize("given, why", [
    ("Qwen/Qwen3-8b", "letter case"), ("Qwen/Qwen3-8B ", "spaces"),
    ("Qwen/Qwen3-8B@main", "revision suffix"), ("Qwen/Qwem3-8B", "one character"),
    ("Qwen3-8B", "organisation"),  # the hub id without its owner: routed other_model before
])
def test_a_model_id_that_nearly_matches_the_rows_is_an_error(given, why):
    with pytest.raises(ArgumentError, match=why) as err:
        route(mixed(), model=given)
    assert "the rows' model is 'Qwen/Qwen3-8B'" in str(err.value)


@pytest.mark.parametrize("given, status", [
    ("Qwen/Qwen3-4B", "other_model"),     # a digit changes the model, not a typo
    ("my-org/Qwen3-8B", "other_model"),   # another owner's copy may be a fine-tune: not a typo
    ("Qwen/Qwen3-8B", "on_policy"),
])
def test_real_model_ids_are_not_near_misses(given, status):
    assert route(mixed(), model=given).answers[4].evidence["status"] == status


def test_cli_near_miss_model_is_one_line_naming_the_rows_model(tmp_path):
    import json

    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in mixed()))
    proc = subprocess.run([sys.executable, "-m", "whileai_core.cli", "route", str(path),
                           "--model", "Qwen/Qwen3-8b"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Qwen/Qwen3-8B" in proc.stderr and "--model Qwen/Qwen3-8B" in proc.stderr


@pytest.mark.parametrize("n_tasks, code", [(1, "too_few_tasks"), (ROUTE_MIN_TASKS - 1,
                                                                  "too_few_tasks"),
                                           (ROUTE_MIN_TASKS, "grpo")])
def test_a_route_from_too_few_tasks_says_so_and_stops(n_tasks, code):
    # 2^-n: the smallest two-sided exact p on n tasks is 2/2^n, over 0.05 below 6 tasks
    assert (2 / 2 ** (ROUTE_MIN_TASKS - 1) > 0.05) and (2 / 2 ** ROUTE_MIN_TASKS <= 0.05)
    rows = [{"task_id": f"t{i}", "reward": float(j == 0), "model": MODEL}
            for i in range(n_tasks) for j in range(2)]
    result = route(rows, model=MODEL)
    assert result.route == code
    if code == "too_few_tasks":
        assert [a.question for a in result.answers] == [1, 2]
        assert f"Only {n_tasks} task" in result.next_step.say


# --- 5. k = 1 -----------------------------------------------------------------------------------

def test_one_rollout_per_task_says_what_it_can_and_cannot_estimate():
    rows = [{"task_id": f"t{i}", "reward": float(i % 4 == 0), "model": MODEL} for i in range(40)]
    rp = rollouts_per_task(rows)
    assert rp.k == 1 and rp.n_single == 40
    assert rp.mean.value == pytest.approx(10 / 40)                # the mean is estimable
    assert "cannot be read from one rollout" in rp.note and "k >= 4" in rp.note
    ss = split_share(rows)
    assert ss.expected_by_k is None and "cannot be read" in ss.note  # never "0.00 at k=4..16"
    assert band(rows).band == "unseen"
    r = route(rows, model=MODEL, taskset="reverse-text")
    assert r.route == "single_rollout"
    assert "prime-rl samples its own group" in r.next_step.say and "group_size" in r.next_step.say


def test_the_eval_checks_say_what_the_reward_is_first():
    from whileai_core import category_table, failure_capable

    rng = random.Random(6)
    scale = [{"task_id": f"t{i}", "reward": float(rng.randint(0, 100)), "category": f"c{i % 2}"}
             for i in range(20) for _ in range(4)]
    for answer in (failure_capable(scale), category_table(scale)):
        assert answer.note.startswith("warning: rewards run from") and "0-100" in answer.note
    lcs = [{**r, "reward": r["reward"] / 101} for r in scale]
    assert failure_capable(lcs).note.startswith("the reward is continuous")


def test_a_budget_field_on_one_row_is_found_whatever_the_other_rows_carry():
    # the last row trades `model` for `max_tokens`: same number of fields as the others
    rows = [{"task_id": f"t{i}", "reward": 1.0, "model": MODEL} for i in range(3)]
    rows.append({"task_id": "t3", "reward": 0.0, "max_tokens": 5})
    data = load_rows(rows)
    assert data.budget is not None and data.budget.max_tokens[3] == 5.0
    assert np.isnan(data.budget.max_tokens[:3]).all() and data.has_field("max_tokens")
    assert not load_rows(rows[:3]).has_field("max_tokens") and load_rows(rows[:3]).budget is None


def test_task_spread_grouped_or_interleaved_is_max_minus_min_per_task():
    from whileai_core.rewards import task_spread

    # by hand: task 0 rewards 0.2, 0.9 -> 0.7; task 1 0.5 -> 0; task 2 1.0, 0.0, 0.4 -> 1.0
    grouped = task_spread(np.array([0.2, 0.9, 0.5, 1.0, 0.0, 0.4]),
                          np.array([0, 0, 1, 2, 2, 2]), 3)
    mixed = task_spread(np.array([0.2, 0.5, 1.0, 0.9, 0.0, 0.4]),
                        np.array([0, 1, 2, 0, 2, 2]), 3)
    assert grouped.tolist() == pytest.approx([0.7, 0.0, 1.0])
    assert mixed.tolist() == pytest.approx([0.7, 0.0, 1.0])


def test_teacher_clears_reads_its_default_effect_in_the_rewards_units():
    """On 0-100 grades the default effect is 0.05 of the span, 5 points (as compare reads it),
    not 0.05 reward units: a teacher 3 points better on every task, tightly, would have cleared
    a 0.05 bar; 3 < 5 does not clear, and a teacher 10 points better does."""
    from whileai_core import teacher_clears

    grades = [20.0 + 1.5 * t for t in range(40)]          # 20.0 .. 78.5, a 0-100 grade
    student = [{"task_id": f"t{t}", "reward": g + 0.5 * (k % 2), "model": "s"}
               for t, g in enumerate(grades) for k in range(4)]
    plus = lambda d: [{**r, "model": "t", "reward": r["reward"] + d + 0.25 * (int(r["task_id"][1:]) % 3)}
                      for r in student]
    near = teacher_clears(plus(3.0), student)
    assert near.effect == pytest.approx(5.0) and not near.clears
    assert near.gap == pytest.approx(3.0 + 0.25 * (sum(t % 3 for t in range(40)) / 40))
    assert "read as 0.05 of the span 100: 5 reward units" in near.reason
    assert teacher_clears(plus(10.0), student).clears
    assert teacher_clears(plus(3.0), student, effect=2.0).clears  # given: in reward units
