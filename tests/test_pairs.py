"""dpo_pairs and write_dpo_data: pairs only where a task has contrast, every category's line,
constructed pairs only when asked and labelled so, and the DPO recipe's smoke trained on the
folder write_dpo_data wrote. Expected counts are made by hand from the rows written here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from whileai_core import dpo_pairs, eval_fingerprint, write_dpo_data
from whileai_core.errors import ArgumentError, RowsError

ROOT = Path(__file__).resolve().parents[1]


def _roll(task: str, category: str, rewards_and_replies, model: str = "m") -> list[dict]:
    return [{"task_id": task, "category": category, "model": model, "reward": float(r),
             "messages": [{"role": "user", "content": f"ask of {task}"},
                          {"role": "assistant", "content": reply}]}
            for r, reply in rewards_and_replies]


def three_categories() -> list[dict]:
    """a: mixed (4 tasks, 3 with contrast); b: always passes (3 tasks); c: mixed (2 tasks)."""
    rows = []
    rows += _roll("a1", "a", [(1, "yes"), (0, "no!"), (0, "nope nope")])
    rows += _roll("a2", "a", [(1, "ok"), (1, "okay"), (0, "x"), (0, "xxxxxx")])
    rows += _roll("a3", "a", [(0, "no"), (0, "no no")])                       # never passes
    rows += _roll("a4", "a", [(1, "good"), (0, "bad")])
    for t in ("b1", "b2", "b3"):
        rows += _roll(t, "b", [(1, "asks"), (1, "asks too")])
    rows += _roll("c1", "c", [(1, "c-yes"), (0, "c-no")])
    rows += _roll("c2", "c", [(1, "c-yes"), (0.6, "almost")])   # 1.0 - 0.6 < margin 0.5
    return rows


def test_pairs_only_where_a_task_has_a_pass_and_a_fail():
    found = dpo_pairs(three_categories(), model="m")
    # contrast by hand: a1, a2, a4, c1 (c2's fail is within the margin; a3 never passes; b never
    # fails): 4 of 9 tasks
    assert found.n_tasks == 9 and found.n_contrast == 4
    assert found.contrast.value == pytest.approx(4 / 9) and found.contrast.n_tasks == 9
    # pairs: a1 1, a2 2 (two passes, two fails), a4 1, c1 1 = 5
    assert found.n_pairs == found.n_on_policy == 5 and found.n_constructed == 0
    assert all(p["source"] == "on_policy" for p in found.pairs)
    assert found.no_contrast == ["b"]
    line = {c.category: c for c in found.by_category}
    assert (line["a"].n_pairs, line["b"].n_pairs, line["c"].n_pairs) == (4, 0, 1)
    assert "passed every rollout" in line["b"].why_none and line["b"].how_to_construct
    assert line["c"].contrast.value == pytest.approx(1 / 2)
    # b: 0 of 5 pairs for 3 of 9 tasks -> outvoted; a: 4/5 of pairs for 4/9 of tasks -> not
    assert line["b"].outvoted and not line["a"].outvoted


def test_each_pass_meets_the_fail_closest_in_length():
    found = dpo_pairs(three_categories(), model="m")
    a2 = [(p["chosen"][0]["content"], p["rejected"][0]["content"])
          for p in found.pairs if p["task_id"] == "a2"]
    # passes best first, shortest first: "ok" (2) then "okay" (4); fails "x" (1), "xxxxxx" (6):
    # "ok" takes "x" (|2-1| = 1), "okay" the remaining "xxxxxx"
    assert a2 == [("ok", "x"), ("okay", "xxxxxx")]
    one = dpo_pairs(three_categories(), model="m", per_task=1)
    assert [p["task_id"] for p in one.pairs].count("a2") == 1 and one.n_pairs == 4


def test_constructed_pairs_only_when_asked_labelled_and_checked():
    rows = three_categories()
    constructed = [{"task_id": "b1", "rejected": "invented call", "reward": 0.0},
                   {"task_id": "b2", "rejected": "invented call"},            # no reward given
                   {"task_id": "b3", "rejected": "still right", "reward": 1.0},  # not a failure
                   {"task_id": "a1", "rejected": "x", "reward": 0.0},         # has contrast
                   {"task_id": "a3", "rejected": "x", "reward": 0.0}]         # never passed
    found = dpo_pairs(rows, model="m", constructed=constructed)
    made = [p for p in found.pairs if p["source"] == "constructed"]
    assert [p["task_id"] for p in made] == ["b1", "b2"]
    assert all(p["chosen"][0]["content"] == "asks" for p in made)   # the policy's own best
    assert found.n_constructed == 2 and found.n_constructed_skipped == 3
    assert found.n_on_policy == 5 and found.no_contrast == ["b"]
    assert any("not 0.5 below" in n for n in found.notes)
    assert any("carry no reward" in n for n in found.notes)


def test_bad_rollouts_are_refused_with_the_line():
    rows = three_categories()
    with pytest.raises(RowsError, match="not the policy 'm'"):
        dpo_pairs(rows + _roll("a1", "a", [(1, "z")], model="other"), model="m")
    changed = rows + [dict(rows[0], messages=[{"role": "user", "content": "another ask"},
                                              {"role": "assistant", "content": "z"}])]
    with pytest.raises(RowsError, match="another prompt"):
        dpo_pairs(changed)
    with pytest.raises(RowsError, match="does not end with the policy's reply"):
        dpo_pairs([dict(rows[0], messages=rows[0]["messages"][:1])])
    with pytest.raises(ArgumentError, match="per_task"):
        dpo_pairs(rows, per_task=0)


def _folder(tmp_path: Path, rows: list[dict], held: list[dict]) -> Path:
    (tmp_path / "grader.py").write_text("def grade(ask, reply):\n"
                                        "    return 1.0 if reply.startswith('good') else 0.0\n")
    found = dpo_pairs(rows, model="m")
    data = write_dpo_data(found, tmp_path / "dpo-data", holdout=held,
                          grader=tmp_path / "grader.py", settings={"beta": 0.1})
    assert data.n_pairs == found.n_pairs and data.settings == {"beta": 0.1}
    return tmp_path / "dpo-data"


def _train_and_held() -> tuple[list[dict], list[dict]]:
    rows = []
    for i in range(8):
        rows += _roll(f"t{i}", "a" if i % 2 else "b",
                      [(1, f"good answer {i}"), (0, f"bad {i}"), (0, f"bad answer {i}!")])
    held = []
    for i in range(8, 11):
        held += _roll(f"t{i}", "a" if i % 2 else "b", [(1, "good"), (0, "bad")])
    return rows, held


def test_the_folder_holds_what_the_recipe_reads(tmp_path):
    rows, held = _train_and_held()
    folder = _folder(tmp_path, rows, held)
    frozen = [p for p in folder.iterdir() if p.name.startswith("holdout-")]
    assert len(frozen) == 1 and eval_fingerprint(frozen[0]).file_matches is True
    asks = [json.loads(line) for line in frozen[0].read_text().splitlines()]
    # one ask per held-out task, its prompt only, its category kept for the grader
    assert [a["task_id"] for a in asks] == ["t10", "t8", "t9"]
    assert all(a["messages"] == [{"role": "user", "content": f"ask of {a['task_id']}"}]
               for a in asks)
    assert {a["category"] for a in asks} == {"a", "b"} and "reward" not in asks[0]
    from recipes.dpo.data import read_dpo_data

    data = read_dpo_data(folder)
    assert data.counts()["pairs"] == 8 and data.counts()["by_source"]["on_policy"] == 8
    assert data.holdout_name == frozen[0].stem and data.settings == {"beta": 0.1}
    with pytest.raises(ArgumentError, match="held out"):
        write_dpo_data(dpo_pairs(rows, model="m"), tmp_path / "x", holdout=rows[:3],
                       grader=tmp_path / "grader.py")


@pytest.mark.slow
def test_the_dpo_smoke_trains_on_what_write_dpo_data_wrote(tmp_path):
    """Two real DPO steps of the recipe's tiny model on the folder's first 4 pairs, the held-out
    asks graded by the folder's grader before and after (2 samples each)."""
    pytest.importorskip("trl")
    rows, held = _train_and_held()
    folder = _folder(tmp_path, rows, held)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(ROOT / "recipes" / "dpo" / "run.py"), "--smoke",
                           "--out", str(out), "--data", str(folder)], capture_output=True,
                          text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads((out / "results.json").read_text())
    assert results["train_steps"] == 2 and results["data"]["trained_pairs"] == 4
    assert results["data"]["pairs"] == 8 and results["settings"]["beta"] == 0.1
    assert results["updates"]["changed_tensors"] > 0
    assert len(results["before_rows"]) == len(results["after_rows"]) == 2 * 3
    assert {r["category"] for r in results["before_rows"]} == {"a", "b"}
    assert results["data"]["holdout_name"].startswith("holdout-")
