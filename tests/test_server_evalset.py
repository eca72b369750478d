"""eval_fingerprint, freeze_holdout, failure_capable, category_table through the protocol (the
skill's MCP form is held to the tools by tests/test_skill_parity.py).

Hashes come from hashlib on canonical strings written out here; counts and rates are worked out
by hand from the literal rows.
"""

from __future__ import annotations

import hashlib

from test_server_support import call, error_text, ok, write_jsonl

TASKS = [{"task_id": "t2", "category": "b"}, {"task_id": "t1", "category": "a"}]
CANON = '{"category":"a","task_id":"t1"}\n{"category":"b","task_id":"t2"}\n'
NAME = "holdout-" + hashlib.sha256(CANON.encode()).hexdigest()[:12]


def test_freeze_then_fingerprint(server, ws):
    write_jsonl(ws / "tasks.jsonl", TASKS)
    out = ok(call(server, "freeze_holdout", {"tasks": "tasks.jsonl", "out_dir": "evals"}))
    assert out["name"] == NAME and out["written"] is True
    assert out["path"] == f"evals/{NAME}.jsonl"          # relative to the root, as given back
    assert (ws / out["path"]).read_text() == CANON
    again = ok(call(server, "freeze_holdout", {"tasks": TASKS, "out_dir": "evals"}))
    assert again["written"] is False and again["name"] == NAME
    fp = ok(call(server, "eval_fingerprint", {"tasks": out["path"]}))
    assert fp["name"] == NAME and fp["file_matches"] is True and fp["fields"] == ["category"]


def test_freeze_refuses_paths_out_of_the_root(server, ws):
    text = error_text(call(server, "freeze_holdout", {"tasks": TASKS, "out_dir": "../x"}),
                      "freeze_holdout")
    assert "contains '..'" in text
    text = error_text(call(server, "eval_fingerprint", {"tasks": TASKS, "name": "a/b"}),
                      "eval_fingerprint")
    assert "name" in text


def test_failure_capable_and_category_table(server, ws):
    write_jsonl(ws / "tasks.jsonl", TASKS)
    frozen = ok(call(server, "freeze_holdout", {"tasks": "tasks.jsonl"}))["path"]
    # t1 passes 1 of 2 (a cut-off failure), t2 passes 2 of 2
    write_jsonl(ws / "rows.jsonl", [
        {"task_id": "t1", "reward": 1.0}, {"task_id": "t1", "reward": 0.0, "truncated": True},
        {"task_id": "t2", "reward": 1.0}, {"task_id": "t2", "reward": 1.0}])
    out = ok(call(server, "failure_capable", {"rows": "rows.jsonl", "holdout": frozen}))
    assert out["pass_at_1"] == 0.75 and out["n_fail_capable"] == 1 and out["headroom"] == 0.25
    assert out["holdout"] == NAME and out["verdict"] == "ready" and out["ci"] is None
    table = ok(call(server, "category_table", {"rows": "rows.jsonl", "tasks": frozen}))
    assert [(ln["category"], ln["pass_at_1"], ln["n_tasks"]) for ln in table["lines"]] == \
        [("a", 0.5, 1), ("b", 1.0, 1)]
    text = error_text(call(server, "failure_capable", {"rows": "rows.jsonl", "effect": 1.5}),
                      "failure_capable")
    assert "effect" in text


def test_category_table_with_a_second_run(server, ws):
    # a: 0/2 -> 2/2 on three tasks; b: unchanged on three tasks
    tasks = [{"task_id": f"{c}{i}", "category": c} for c in "ab" for i in range(3)]
    before = [{"task_id": t["task_id"], "reward": 0.0 if t["category"] == "a" else 1.0}
              for t in tasks for _ in range(2)]
    after = [{"task_id": t["task_id"], "reward": 1.0} for t in tasks for _ in range(2)]
    write_jsonl(ws / "tasks.jsonl", tasks)
    write_jsonl(ws / "before.jsonl", before)
    write_jsonl(ws / "after.jsonl", after)
    out = ok(call(server, "category_table", {"rows": "before.jsonl", "after": "after.jsonl",
                                             "tasks": "tasks.jsonl"}))
    deltas = {b["name"]: b["delta"] for b in out["comparison"]["behaviours"]}
    assert deltas == {"a": 1.0, "b": 0.0}
    assert out["comparison"]["n_behaviours"] == 2
