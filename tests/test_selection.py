"""compare(..., selected_on=...): was the compared checkpoint chosen on the tasks it is scored
on? The cases are counted by hand from the task ids below."""

from __future__ import annotations

import json

import pytest

from whileai_core.cli import main
from whileai_core.errors import RowsError
from whileai_core.stats import compare


def rows(ids, passes):
    return [{"task_id": t, "reward": 1.0 if j < passes else 0.0} for t in ids for j in range(4)]


IDS = [f"t{i}" for i in range(12)]
BEFORE, AFTER = rows(IDS, 1), rows(IDS, 3)


def test_chosen_on_the_scored_set_says_so_and_gives_the_fix():
    plain = compare(BEFORE, AFTER)
    same = compare(BEFORE, AFTER, selected_on=IDS)
    # the comparison itself is untouched; only `selection` is added
    assert same.model_dump(exclude={"selection"}) == plain.model_dump(exclude={"selection"})
    assert plain.selection is None
    sel = same.selection
    assert (sel.case, sel.n_scored, sel.n_selection, sel.n_shared) == ("same_set", 12, 12, 12)
    assert "winner's curse" in sel.note and "select on one split, confirm on a frozen one" in sel.note
    assert "selection: same_set (12 of 12 scored tasks" in same.render()
    # 4 of the 12 scored tasks were among the 10 it was chosen on (6 others were not scored)
    part = compare(BEFORE, AFTER, selected_on=IDS[8:] + [f"s{i}" for i in range(6)]).selection
    assert (part.case, part.n_shared, part.n_selection) == ("overlapping", 4, 10)
    assert "partly scored on (4 of 12)" in part.note
    apart = compare(BEFORE, AFTER, selected_on=[f"s{i}" for i in range(6)]).selection
    assert apart.case == "separate" and "Fix" not in apart.note


def test_selected_on_reads_a_task_file_and_rows(tmp_path):
    # a split as freeze_holdout writes it: one task record a line
    split = tmp_path / "select-0123456789ab.jsonl"
    split.write_text("".join(json.dumps({"task_id": t, "prompt": "p"}) + "\n" for t in IDS[:6]))
    assert compare(BEFORE, AFTER, selected_on=split).selection.n_shared == 6
    # graded rows repeat a task: counted once
    assert compare(BEFORE, AFTER, selected_on=rows(IDS[:3], 2)).selection.n_selection == 3
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "t0"}\n{"prompt": "no id"}\n')
    with pytest.raises(RowsError, match="has no usable `task_id`") as err:
        compare(BEFORE, AFTER, selected_on=bad)
    assert "line 2" in str(err.value)


def test_compare_cli_and_tool(tmp_path, capsys, server, ws):
    from test_server_support import call, ok

    for name, data in (("before", BEFORE), ("after", AFTER)):
        (ws / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in data))
    (ws / "chosen.jsonl").write_text("".join(json.dumps({"task_id": t}) + "\n" for t in IDS))
    assert main(["compare", str(ws / "before.jsonl"), str(ws / "after.jsonl"), "--selected-on",
                 str(ws / "chosen.jsonl"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["selection"]["case"] == "same_set"
    out = ok(call(server, "compare", {"before": "before.jsonl", "after": "after.jsonl",
                                           "selected_on": "chosen.jsonl"}))
    assert out["selection"]["case"] == "same_set" and out["selection"]["n_shared"] == 12
    out = ok(call(server, "compare", {"before": "before.jsonl", "after": "after.jsonl",
                                           "selected_on": ["x1", "x2"]}))
    assert out["selection"]["case"] == "separate"
