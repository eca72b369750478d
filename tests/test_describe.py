"""describe_rows: every field with its type, coverage, values or range and whether it varies
within a task; the fields that change the route named; a bounded MCP answer at any size."""

from __future__ import annotations

import json

import pytest

from whileai_core import ArgumentError, describe_rows, route
from whileai_core.defaults import DESCRIBE_FIELDS_SHOWN, MCP_ANSWER_MAX_BYTES


def budget_rows() -> list[dict]:
    """10 tasks x 4: completion_tokens differs per rollout, max_tokens is 512 throughout, turns
    goes 1..3 within a task, `note` is carried by the first rollout of each task only."""
    rows = []
    for t in range(10):
        for j in range(4):
            row = {"task_id": f"t{t}", "reward": float(j < 2), "completion_tokens": 100 * j + t,
                   "max_tokens": 512, "turns": 1 + j % 3, "category": f"c{t % 2}"}
            if j == 0:
                row["note"] = "first"
            rows.append(row)
    return rows


def test_each_budget_field_with_its_type_coverage_and_variation():
    d = describe_rows(budget_rows())
    by = {f.name: f for f in d.fields}
    assert (d.n_rows, d.n_tasks, d.n_fields) == (40, 10, 7)   # task_id ... note
    tokens = by["completion_tokens"]
    assert tokens.types == ["integer"] and tokens.share == 1.0 and tokens.within_task == "varies"
    assert (tokens.low, tokens.high) == (0, 309)                 # 100*0+0 .. 100*3+9
    cap = by["max_tokens"]
    assert cap.types == ["integer"] and cap.within_task == "constant" and cap.values == ["512"]
    turns = by["turns"]
    assert turns.within_task == "varies" and (turns.low, turns.high) == (1, 3)
    assert by["category"].within_task == "constant" and by["category"].n_distinct == 2
    assert by["note"].share == pytest.approx(10 / 40) and by["note"].n_rows == 10
    assert d.route_fields == ["completion_tokens", "max_tokens", "turns", "category"]  # as seen
    # the route's fields come first, each with what reads it
    assert [f.name for f in d.fields][:3] == ["task_id", "reward", "max_tokens"]
    assert "teacher_clears" in cap.reads


def test_asking_for_a_field_no_row_carries_names_the_fields():
    with pytest.raises(ArgumentError, match="no row carries 'family'.*task_id, reward"):
        describe_rows(budget_rows(), fields=["family"])
    only = describe_rows(budget_rows(), fields=["turns"])
    assert [f.name for f in only.fields] == ["turns"]


def test_the_route_names_the_fields_that_change_its_answer():
    rows = [{**r, "family": f"f{i // 8}"} for i, r in enumerate(budget_rows())]
    text = "\n".join(route(rows, model="m").fields)
    assert "max_tokens" in text and "turns [turns]: 20 of 40 rows have more than one turn" in text
    assert "category" in text and "cluster='family'" in text
    clustered = route(rows, model="m", cluster="family")
    assert any("resamples families" in f for f in clustered.fields)


def test_the_mcp_answer_stays_under_8_kb_at_a_million_rows_and_200_fields():
    from server.tooling import op_answer as answer  # the MCP answer of any result
    from whileai_core import load_rows

    # 1,000 distinct rows of 200 fields (long names and values), each 1,000 times: 1M rows
    base = [{"task_id": f"t{i}", "reward": float(i % 2), "max_tokens": 512,
             "completion_tokens": 100 + i, "turns": 1 + i % 3,
             **{f"field_{j:03d}_{'x' * 60}": f"value {j} of row {i} " * 5 for j in range(195)}}
            for i in range(1000)]
    data = load_rows(base * 1000)
    assert data.n_rows == 1_000_000
    result = answer(describe_rows(data))
    text = "".join(c.text for c in result.content)
    size = len(text.encode()) + len(json.dumps(result.structured_content).encode())
    assert size <= MCP_ANSWER_MAX_BYTES, size
    out = result.structured_content
    assert out["n_fields"] == 200 and len(out["fields"]) == DESCRIBE_FIELDS_SHOWN
    assert out["shown"] == f"fields: {DESCRIBE_FIELDS_SHOWN} of 200 shown"
    assert "sampled" in out["read_from"]


def test_a_file_is_described_from_its_columns_alike_and_no_row_dict_is_built(tmp_path):
    from whileai_core import field_share, load_rows, pass_at
    from whileai_core.stats.clustered import families_of

    rows = [{**r, "family": f"f{i // 8}", "flag": i % 3 == 0} for i, r in enumerate(budget_rows())]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = load_rows(path)
    # the same description as from the list of dicts (whose values the first test checks)
    assert describe_rows(data) == describe_rows(rows)
    assert data.has_field("max_tokens") and not data.has_field("absent")
    # families by hand: rows 8f..8f+7 are tasks 2f and 2f+1, so 10 tasks in 5 families
    assert families_of(data, "family").codes.tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    # flag true on rows 0, 3, 6, ..., 39: per task (4 rows each) the count is 2,1,1,2,1,1,...
    shares = [sum(1 for j in range(4) if (4 * t + j) % 3 == 0) / 4 for t in range(10)]
    assert field_share(data, "flag").value == pytest.approx(sum(shares) / 10)
    pass_at(data, cluster="family")
    route(data, model="m", cluster="family")
    assert data._records is None   # every reader above read columns
