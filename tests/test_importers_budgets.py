"""The budget fields each importer fills, checked against what each fixture script says its
system wrote (tests/fixtures/*/make_*.py): never a field the source does not record."""

from __future__ import annotations

from pathlib import Path

from whileai_core import import_rows, load_rows

FIX = Path(__file__).resolve().parent / "fixtures"
GRPO = FIX / "prime_rl" / "volume" / "e2e-grpo" / "fc-grpo-new"


def test_prime_rl_rows_carry_usage_finish_reason_and_turns():
    # make_episodes.py: every reply is one call with Usage(prompt_tokens=5, completion_tokens=3)
    # and finish_reason "stop", or "length" for a reply cut at the cap (T); one sampled node
    rows = import_rows(GRPO, step=0).rows            # .25 .5 T .5
    assert [r["completion_tokens"] for r in rows] == [3, 3, 3, 3]
    assert [r["finish_reason"] for r in rows] == ["stop", "stop", "length", "stop"]
    assert [r["turns"] for r in rows] == [1, 1, 1, 1]
    assert all("max_tokens" not in r for r in rows)  # no call records its sampling settings
    # step 20: the E episode's only call failed: no usage, no good call, no sampled node
    errored = [r for r in import_rows(GRPO, step=20, keep_errored=True).rows if r["errored"]]
    assert len(errored) == 1 and "completion_tokens" not in errored[0]
    assert "finish_reason" not in errored[0] and errored[0]["turns"] == 0


def test_prime_rl_spans_have_two_turns_and_no_usage():
    # make_spans.py: two assistant turns per episode, calls without usage; e3's last call
    # finished with "length"
    rows = import_rows(FIX / "prime_rl" / "spans").rows
    assert [r["turns"] for r in rows] == [2, 2, 2, 2]
    assert all("completion_tokens" not in r for r in rows)
    assert rows[3]["finish_reason"] == "length" and rows[3]["truncated"] is True


def test_inspect_rows_carry_the_stop_reason_and_turn_count():
    # make_logs.py: q2's second epoch stops at max_tokens; mockllm records no usage and no cap;
    # the canned solver sets each reply itself, so no model generation: turn_count 0
    rows = import_rows(FIX / "inspect" / "logs" / "canned_qa.json", scorer="match").rows
    by = {(r["task_id"], r["epoch"]): r for r in rows}
    assert by[("q2", 2)]["finish_reason"] == "max_tokens" and by[("q2", 2)]["truncated"]
    assert by[("q1", 1)]["finish_reason"] == "stop"
    assert all(r["turns"] == 0 for r in rows)
    assert all("max_tokens" not in r and "completion_tokens" not in r for r in rows)


def test_lm_eval_rows_carry_the_generation_cap_only():
    # tasks/canned_gen.yaml: generation_kwargs max_gen_toks 8; lm-eval logs no reply length
    rows = import_rows(FIX / "lm_eval" / "output" / "qdpv68r5", scorer="exact_match,first").rows
    assert {r["max_tokens"] for r in rows} == {8}
    assert all("completion_tokens" not in r and "finish_reason" not in r for r in rows)
    data = load_rows(rows)
    assert data.budget is not None and set(data.budget.max_tokens.tolist()) == {8.0}
