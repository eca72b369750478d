"""The stats tools through the MCP protocol (in-process mcp.Client): numbers and errors.

Expected numbers are derived by hand from the rows in test_server_support (comments show the
arithmetic), with math.comb and scipy as the outside references; a second check compares the
structured result with a direct call of the core, which shows the server adds nothing.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
from scipy.stats import norm
from scipy.stats import t as student_t

from server.app import build_server
from test_server_support import (AFTER_OUTCOMES, GRPO_OUTCOMES, MODEL, TEACHER,
                                 TEACHER_OUTCOMES, call, error_text, make_workspace, ok,
                                 rows_of, write_jsonl)
from whileai_core import holdout_size, load_rows
from whileai_core.operations.surface import structured
from whileai_core.stats import compare, pass_at


@pytest.fixture()
def ws(tmp_path):
    root = make_workspace(tmp_path / "ws")
    # the same outcomes on 12 tasks (each of a-d three times): enough for a paired test, whose
    # smallest two-sided exact p on n tasks is 2/2^n (0.125 at the 4 tasks above)
    for name, outcomes, model in (("grpo12", GRPO_OUTCOMES, MODEL),
                                  ("after12", AFTER_OUTCOMES, MODEL),
                                  ("teacher12", TEACHER_OUTCOMES, TEACHER)):
        write_jsonl(root / "evals" / f"{name}.jsonl",
                    rows_of({f"{t}{i}": o for i in range(3) for t, o in outcomes.items()},
                            model=model))
    return root


@pytest.fixture()
def server(ws):
    return build_server(ws, skills_dir=ws / "no-skills")


# --- route --------------------------------------------------------------------------------

def test_route_reaches_grpo_with_evidence(server):
    # 12 tasks (a-d three times): the 4-task file stops before question 3 (below 6 tasks no
    # verdict can stand, ROUTE_MIN_TASKS)
    out = ok(call(server, "route_rows", {"rows": "evals/grpo12.jsonl", "model": MODEL,
                                         "taskset": "reverse-text"}))
    assert out["route"] == "grpo"
    assert out["decided_by"].startswith("6.")
    assert [a["question"] for a in out["answers"]] == [1, 2, 3, 4, 5, 6]
    by_q = {a["question"]: a for a in out["answers"]}
    assert by_q[1]["evidence"]["count"] == 0                 # no truncated row passes
    assert by_q[2]["evidence"]["k"] == 4                     # 4 rollouts on every task
    band = by_q[3]["evidence"]
    assert (band["band"], band["n_always_fail"], band["n_always_pass"], band["n_split"]) == \
        ("mixed", 3, 3, 6)                                   # d fails, c passes, a and b split
    assert band["pass_at_1"]["value"] == pytest.approx(0.5)  # (0.75 + 0.25 + 1 + 0) / 4
    assert band["pass_at_1"]["n_tasks"] == 12 and band["pass_at_1"]["n_rows"] == 48
    assert by_q[5]["evidence"]["status"] == "on_policy"
    assert by_q[6]["evidence"]["share"] == pytest.approx(0.5)  # 6 split of 12
    step = out["next_step"]
    assert step["tool"] == "prime_rl_config"
    assert step["arguments"] == {"taskset": "reverse-text", "method": "grpo", "model": MODEL}


def test_route_from_four_tasks_says_so_and_stops(server):
    out = ok(call(server, "route_rows", {"rows": "evals/grpo.jsonl", "model": MODEL}))
    assert out["route"] == "too_few_tasks" and [a["question"] for a in out["answers"]] == [1, 2]
    assert "Only 4 tasks" in out["next_step"]["say"]


def test_route_truncated_pass_decides_at_question_one(server):
    out = ok(call(server, "route_rows", {"rows": "evals/truncated.jsonl", "model": MODEL}))
    assert out["route"] == "fix_reward" and out["decided_by"].startswith("1.")
    assert out["answers"][0]["evidence"]["count"] == 1        # the one truncated row passes
    assert out["answers"][0]["evidence"]["tasks"] == ["a"]


def test_route_teacher_that_clears_routes_to_opd(server):
    # 12 shared tasks, teacher minus student per task: 0.25, 0.75, 0, 1 three times: 9 tasks
    # changed, all up -> exact sign-flip p = 2/2^9, the gap's interval is above 0 and the gap
    # 0.5 >= 0.05 -> OPD, the teacher named from its rows' model field.
    out = ok(call(server, "route_rows", {"rows": "evals/grpo12.jsonl", "model": MODEL,
                                         "teacher_rows": "evals/teacher12.jsonl"}))
    assert out["route"] == "opd" and out["decided_by"].startswith("4.")
    assert out["next_step"]["arguments"]["method"]["teacher"].startswith(TEACHER + "@")
    evidence = out["answers"][3]["evidence"]        # the gap, its interval and n, in the route
    assert evidence["gap"] == pytest.approx(0.5) and evidence["n_paired"] == 12
    assert evidence["p_value"] == pytest.approx(2 / 2 ** 9) and evidence["gap_ci"][0] > 0


def test_route_inline_rows_equal_file_rows(server):
    rows = [{"task_id": t, "reward": float(r), "model": MODEL}
            for t, rs in GRPO_OUTCOMES.items() for r in rs]
    inline = ok(call(server, "route_rows", {"rows": rows, "model": MODEL}))
    from_file = ok(call(server, "route_rows", {"rows": "evals/grpo.jsonl", "model": MODEL}))
    assert inline == from_file


def test_route_empty_model_is_the_cores_message(server):
    text = error_text(call(server, "route_rows", {"rows": "evals/grpo.jsonl", "model": " "}),
                      "route_rows")
    assert "`model` must be the id of the model you will train" in text and "Fix" in text


# --- rate ----------------------------------------------------------------------------------

def test_rate_of_passes_numbers(server, ws):
    out = ok(call(server, "rate", {"rows": "evals/grpo.jsonl", "k": 2}))
    n, cs = 4, {"a": 3, "b": 1, "c": 4, "d": 0}
    # per-task rates a 0.75, b 0.25, c 1, d 0: summarised, not listed (bins by hand)
    tasks = out["tasks"]
    assert {b["label"]: b["n_tasks"] for b in tasks["histogram"]} == {
        "0": 1, "(0, 0.25)": 0, "[0.25, 0.5)": 1, "[0.5, 0.75)": 0, "[0.75, 1)": 1, "1": 1}
    assert [r["task_id"] for r in tasks["lowest"]] == ["d", "b", "a", "c"]
    assert [r["task_id"] for r in tasks["highest"]] == ["c", "a", "b", "d"]
    assert tasks["shown"] == "all 4 tasks shown" and out["page"] is None
    assert out["rate"]["value"] == pytest.approx(0.5) and out["rate"]["metric"] == "pass"
    # pass@2 per task = 1 - C(n-c, 2) / C(n, 2); pass^2 = C(c, 2) / C(n, 2) (Chen et al. 2021)
    at2 = np.mean([1 - math.comb(n - c, 2) / math.comb(n, 2) for c in cs.values()])
    pow2 = np.mean([math.comb(c, 2) / math.comb(n, 2) for c in cs.values()])
    assert (at2, pow2) == (0.625, 0.375)
    assert out["pass_at_k"]["value"] == pytest.approx(at2)
    assert out["pass_pow_k"]["value"] == pytest.approx(pow2)
    assert (out["rate"]["n_tasks"], out["rate"]["n_rows"], out["k"]) == (4, 16, 2)
    # 4 tasks: the effective-n interval (Korn & Graubard): n_eff = m(1-m)/SE^2 (under the 16
    # rollouts), scaled by (z/t_3)^2, then Agresti-Coull; recomputed here with scipy quantiles
    p = np.array([0.75, 0.25, 1.0, 0.0])
    z, t3 = norm.ppf(0.975), student_t.ppf(0.975, 3)
    n_adj = min(16, 0.25 / (p.std(ddof=1) ** 2 / 4)) * (z / t3) ** 2
    centre = (0.5 * n_adj + z * z / 2) / (n_adj + z * z)
    half = z * math.sqrt(centre * (1 - centre) / (n_adj + z * z))
    rate = out["rate"]
    assert rate["ci"] == pytest.approx([centre - half, centre + half], abs=1e-12)
    assert rate["ci_method"] == "effective_n" and rate["ci95"] == rate["ci"]
    # and the server only wires: the core called directly gives the same numbers
    core = pass_at(load_rows(ws / "evals" / "grpo.jsonl"), k=2)
    assert (rate["value"], rate["ci"], rate["ci_method"]) == (core.pass_at_1, list(core.ci),
                                                              core.ci_method)
    assert out["pass_at_k"]["ci"] == list(core.pass_at_k_ci)
    assert out["tasks"] == core.tasks.to_dict()


def test_rate_of_rewards_and_of_a_flag(server, ws):
    # mean reward of the same rows: the per-task means are the pass rates (rewards are 0/1)
    reward = ok(call(server, "rate", {"rows": "evals/grpo.jsonl", "metric": "reward"}))
    assert reward["rate"]["metric"] == "reward" and reward["rate"]["value"] == pytest.approx(0.5)
    assert reward["pass_at_k"] is None and reward["tasks"]["metric"] == "reward"
    # truncated.jsonl: one of task a's 4 rows is truncated -> shares a 1/4, b c d 0: mean 1/16
    share = ok(call(server, "rate", {"rows": "evals/truncated.jsonl", "field": "truncated"}))
    assert share["rate"]["metric"] == "share" and share["field"] == "truncated"
    assert share["rate"]["value"] == pytest.approx(1 / 16)
    assert "share of truncated" in share["summary"]


@pytest.mark.parametrize("args, says", [
    ({"metric": "reward", "k": 2}, "`k` (pass@k) is for pass rates"),
    ({"metric": "reward", "field": "truncated"}, "give `field` (a share of rollouts) or"),
])
def test_rate_refuses_mixed_questions(server, args, says):
    assert says in error_text(call(server, "rate", {"rows": "evals/grpo.jsonl", **args}), "rate")


def test_rate_detail_pages_the_per_task_table(server):
    out = ok(call(server, "rate", {"rows": "evals/grpo.jsonl", "detail": True, "offset": 1,
                                   "limit": 2}))
    page = out["page"]
    assert [(r["task_id"], r["value"], r["rollouts"]) for r in page["tasks"]] == [
        ("b", 0.25, 4), ("c", 1.0, 4)]          # first-appearance order a, b, c, d
    assert (page["offset"], page["total"], page["next_offset"]) == (1, 4, 3)
    assert page["shown"] == "tasks 2-3 of 4; next page: offset=3"
    last = ok(call(server, "rate", {"rows": "evals/grpo.jsonl", "detail": True, "offset": 3}))
    assert [r["task_id"] for r in last["page"]["tasks"]] == ["d"]
    assert last["page"]["next_offset"] is None


@pytest.mark.parametrize("args, says", [
    ({"level": 1.5}, "`level` = 1.5: must be at most 0.999999 (0.01 to 0.999999)"),
    ({"k": 0}, "`k`"),
    ({"limit": 10_000, "detail": True}, "`limit` = 10000: must be at most 200 (1 to 200)"),
    ({"k": "two"}, "invalid arguments: `k` = 'two'"),
    ({"bogus": 1}, "`bogus`: not an argument of this tool"),
    # an integer bound is written whole (2**63 - 1), not rounded to 9.22337e+18
    ({"seed": -1}, "must be at least 0 (0 to 9223372036854775807). Fix"),
])
def test_rate_bad_arguments(server, args, says):
    text = error_text(call(server, "rate", {"rows": "evals/grpo.jsonl", **args}), "rate")
    assert says in text
    assert "Fix" in text or "fix" in text


def test_a_missing_argument_is_described_in_one_sentence(server):
    # the argument's description ends with a full stop; the message adds none of its own
    text = error_text(call(server, "route_rows", {"rows": "evals/grpo.jsonl"}), "route_rows")
    assert "`model`: is required: " in text and ".." not in text


# --- compare ------------------------------------------------------------------------------

def test_compare_numbers(server, ws):
    out = ok(call(server, "compare", {"before": "evals/grpo.jsonl",
                                           "after": "evals/after.jsonl"}))
    assert out["n_paired"] == 4 and out["n_only_before"] == 0 == out["n_only_after"]
    assert out["mean_before"] == pytest.approx(0.5)
    assert out["mean_after"] == pytest.approx((1 + 0.75 + 1 + 0.5) / 4)    # 0.8125
    assert out["delta"] == pytest.approx(0.3125)
    # 4 paired tasks: the smallest exact two-sided p is 2/2^4 = 0.125 > 0.05, so no test can
    # call a change (before 0.2 the percentile bootstrap said "moved" here)
    assert out["verdict"] == "insufficient_data" and out["ci"] is None
    assert out == structured(compare(load_rows(ws / "evals" / "grpo.jsonl"),
                                     load_rows(ws / "evals" / "after.jsonl")))


def test_compare_moves_on_twelve_tasks(server, ws):
    out = ok(call(server, "compare", {"before": "evals/grpo12.jsonl",
                                           "after": "evals/after12.jsonl"}))
    # per-task differences 0.25, 0.5, 0, 0.5 three times: 9 changed, all up; exact sign-flip
    # p = 2 / 2^9 (only the all-up and all-down patterns are as extreme)
    assert out["n_paired"] == 12 and out["delta"] == pytest.approx(0.3125)
    assert out["p_value"] == pytest.approx(2 / 2 ** 9) and out["ci_method"] == "t_sign_flip_exact"
    assert out["ci"][0] > 0 and out["verdict"] == "moved"
    # each arm's interval is rate's on the same rows: one number per question
    assert out["mean_before_ci"] == ok(call(server, "rate", {"rows": "evals/grpo12.jsonl"})
                                       )["rate"]["ci"]
    assert out == structured(compare(load_rows(ws / "evals" / "grpo12.jsonl"),
                                     load_rows(ws / "evals" / "after12.jsonl")))


def test_compare_inside_the_noise_band(server):
    # band = t_{2 df, 0.975} x sqrt(2) x 0.2 = 1.22 > |delta| 0.3125: past 0, not past re-run noise
    out = ok(call(server, "compare", {"before": "evals/grpo12.jsonl",
                                           "after": "evals/after12.jsonl", "run_std": 0.2,
                                           "noise_runs": 3}))
    assert out["noise_band"] == pytest.approx(student_t.ppf(0.975, 2) * math.sqrt(2) * 0.2)
    assert out["noise_runs"] == 3 and out["verdict"] == "within_noise"


def test_compare_many_by_task_group(server, ws):
    # tag the 12 tasks with a group: group x holds a0-a2 and b0-b2, group y the rest
    for name in ("grpo12", "after12"):
        rows = load_rows(ws / "evals" / f"{name}.jsonl").records
        write_jsonl(ws / "evals" / f"{name}g.jsonl",
                    [{**r, "group": "x" if r["task_id"][0] in "ab" else "y"} for r in rows])
    out = ok(call(server, "compare_many", {"before": "evals/grpo12g.jsonl",
                                           "after": "evals/after12g.jsonl", "by": "group"}))
    by = {b["name"]: b for b in out["behaviours"]}
    # x: differences 0.25 (a) and 0.5 (b), 6 tasks all up: p = 2/2^6; y: c 0, d 0.5: 3 changed
    assert by["x"]["p_value"] == pytest.approx(2 / 2 ** 6)
    assert by["y"]["p_value"] == pytest.approx(2 / 2 ** 3)
    # Holm over 2: 2 x 0.03125 = 0.0625 > 0.05; BH: max over ranks = 0.0625 for x as well
    assert by["x"]["p_holm"] == pytest.approx(0.0625) and not by["x"]["survives_holm"]
    assert out["n_behaviours"] == 2 and out["survive_holm"] == []


# --- holdout_size --------------------------------------------------------------------------

def test_holdout_size_planning_model_matches_miller_eq9(server):
    out = ok(call(server, "holdout_size", {}))
    # Miller 2024 Eq. 9 with the binomial planning model: Var(x) = 1/12, rho = 0.8,
    # sigma^2 = 1/6, k = 4, effect 0.05, power 0.8, two-sided alpha 0.05 (z from scipy).
    z2 = (norm.ppf(0.975) + norm.ppf(0.8)) ** 2
    bracket = 2 * (1 / 12) * (1 - 0.8) + 2 * (1 / 6) / 4
    assert out["n_tasks"] == math.ceil(z2 * bracket / 0.05 ** 2) == 367
    assert (out["k"], out["inputs_from"]) == (4, "binomial model")
    assert out["table"]["1"] == math.ceil(z2 * (2 * (1 / 12) * 0.2 + 2 * (1 / 6)) / 0.05 ** 2)
    assert out == structured(holdout_size())


def test_holdout_size_bad_effect_names_the_range(server):
    text = error_text(call(server, "holdout_size", {"effect": 0}), "holdout_size")
    assert "`effect` = 0: must be at least 1e-06 (1e-06 to 0.999999)" in text


# --- teacher_clears ------------------------------------------------------------------------

def test_teacher_clears_numbers(server):
    out = ok(call(server, "teacher_clears", {"teacher_rows": "evals/teacher12.jsonl",
                                             "student_rows": "evals/grpo12.jsonl"}))
    assert out["teacher"]["value"] == 1.0 and out["student"]["value"] == pytest.approx(0.5)
    # paired on 12 tasks: 9 changed, all up -> exact p = 2/2^9; gap 0.5 >= 0.05, interval > 0
    assert out["paired"] and out["n_paired"] == 12 and out["gap"] == pytest.approx(0.5)
    assert out["p_value"] == pytest.approx(2 / 2 ** 9) and out["gap_ci"][0] > 0
    assert out["clears"] is True


def test_teacher_on_four_tasks_does_not_clear(server):
    # 4 shared tasks are too few for a paired test (2/2^4 > 0.05): the unpaired difference of the
    # two rates' intervals (MOVER) reaches below 0, so no clear, however large the gap looks
    out = ok(call(server, "teacher_clears", {"teacher_rows": "evals/teacher.jsonl",
                                             "student_rows": "evals/grpo.jsonl"}))
    assert out["gap"] == pytest.approx(0.5) and not out["paired"]
    assert out["gap_ci_method"] == "mover_unpaired" and out["gap_ci"][0] < 0
    assert out["clears"] is False


def test_teacher_equal_to_student_does_not_clear(server):
    out = ok(call(server, "teacher_clears", {"teacher_rows": "evals/grpo.jsonl",
                                             "student_rows": "evals/grpo.jsonl"}))
    assert out["gap"] == 0.0 and out["clears"] is False
    assert "below the effect 0.05" in out["reason"]


# --- bad rows: every rows argument of every tool, one table --------------------------------

ROWS_ARGUMENTS = [
    ("route_rows", "rows", {"model": MODEL}),
    ("route_rows", "teacher_rows", {"rows": "evals/grpo.jsonl", "model": MODEL}),
    ("rate", "rows", {}),
    ("compare", "before", {"after": "evals/after.jsonl"}),
    ("compare", "after", {"before": "evals/grpo.jsonl"}),
    ("holdout_size", "before", {"after": "evals/after.jsonl"}),
    ("teacher_clears", "teacher_rows", {"student_rows": "evals/grpo.jsonl"}),
    ("teacher_clears", "student_rows", {"teacher_rows": "evals/teacher.jsonl"}),
]

BAD_ROWS = [
    # (value, what the message must say)
    ("evals/missing.jsonl", ["missing.jsonl", "no such file", "Fix"]),
    ("evals/bad_json.jsonl", ["bad_json.jsonl", "line 3", "invalid JSON", "Fix"]),
    ("evals/bad_reward.jsonl", ["bad_reward.jsonl", "line 2", '`reward` is "yes" (a string)', "Fix"]),
    ("evals/empty.jsonl", ["empty.jsonl", "is empty", "Fix"]),
    ("evals", ["is a directory", "Fix"]),
    ("../outside.jsonl", ["contains '..'", "Fix"]),
    ("evals/../../outside.jsonl", ["contains '..'"]),
    ("/etc/hostname", ["outside the workspace root", "Fix", "--root"]),
    ("link-out.jsonl", ["symlink", "outside the workspace root"]),
    ([{"task_id": "a", "reward": 1.0}] * 1001, ["1001 inline records", "Fix", ".jsonl"]),
    ([{"task_id": "a"}], ["no `reward`", "Fix"]),
    (42, ["invalid arguments", "= 42"]),
    ([], ["no rows", "Fix"]),
]


@pytest.mark.parametrize("tool, argument, rest", ROWS_ARGUMENTS,
                         ids=[f"{t}.{a}" for t, a, _ in ROWS_ARGUMENTS])
@pytest.mark.parametrize("value, says", BAD_ROWS, ids=[
    "missing", "bad-json-line-3", "bad-reward-line-2", "empty", "directory", "dotdot",
    "dotdot-inside", "absolute-outside", "symlink-out", "too-many-inline", "inline-no-reward",
    "not-rows", "inline-empty"])
def test_every_rows_argument_refuses_bad_rows(server, ws, tmp_path, tool, argument, rest, value,
                                              says):
    outside = tmp_path / "outside.jsonl"
    outside.write_text('{"task_id": "a", "reward": 1}\n')
    (ws / "link-out.jsonl").symlink_to(outside)
    text = error_text(call(server, tool, {**rest, argument: value}), tool)
    for fragment in says:
        assert fragment in text, (fragment, text)
    if isinstance(value, str) and value not in ("evals",) and "/" in value:
        assert f"`{argument}`" in text or value.split("/")[-1] in text


# --- unexpected failures -------------------------------------------------------------------

def test_a_bug_is_logged_and_reported_and_the_server_keeps_serving(ws, monkeypatch, caplog):
    import whileai_core.stats.report as report  # where rate calls pass_at

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(report, "pass_at", broken)
    srv = build_server(ws, skills_dir=ws / "no-skills")
    with caplog.at_level(logging.ERROR, logger="whileai.server"):
        text = error_text(call(srv, "rate", {"rows": "evals/grpo.jsonl"}), "rate")
    assert "unexpected internal error while computing a rate" in text
    assert "ZeroDivisionError: division by zero" in text and "still running" in text
    assert any(r.exc_info and r.exc_info[0] is ZeroDivisionError for r in caplog.records)
    # the same server answers the next call
    assert ok(call(srv, "holdout_size", {}))["n_tasks"] == 367
