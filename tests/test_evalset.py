"""The eval set: content names (eval_fingerprint, freeze_holdout), what a baseline can show
(failure_capable) and pass@1 per behaviour (category_table).

Hashes are recomputed here with hashlib from canonical strings written out by hand; counts,
pass rates and headroom are worked out by hand from the small files below; the per-category
intervals are checked against pass_at on each category's rows alone.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from whileai_core import pass_at
from whileai_core.categories import category_table
from whileai_core.cli import main
from whileai_core.errors import ArgumentError, ConfigError, RowsError
from whileai_core.evalset import eval_fingerprint, failure_capable, freeze_holdout

TASKS = [{"task_id": "b", "prompt": "Two?", "category": "math"},
         {"task_id": "a", "prompt": "One?", "category": "chat"}]
# canonical by hand: keys sorted, no spaces, tasks sorted by id, one per line, final newline
CANON = ('{"category":"chat","prompt":"One?","task_id":"a"}\n'
         '{"category":"math","prompt":"Two?","task_id":"b"}\n')
SHA = hashlib.sha256(CANON.encode()).hexdigest()


def _jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _row(task, reward, truncated=False, **extra):
    return {"task_id": task, "reward": reward, "truncated": truncated, **extra}


# --- eval_fingerprint --------------------------------------------------------------------------

def test_name_is_the_hash_of_the_canonical_content(tmp_path):
    fp = eval_fingerprint(TASKS)
    assert fp.sha256 == SHA and fp.name == f"holdout-{SHA[:12]}"
    assert fp.n_tasks == 2 and fp.fields == ["category", "prompt"] and fp.note is None
    # order, spacing and key order in the file do not change it; the prefix is only a prefix
    messy = tmp_path / "t.jsonl"
    messy.write_text('\n{ "prompt" : "One?", "task_id": "a", "category": "chat" }\n\n'
                     + json.dumps(TASKS[0], indent=None, separators=(" ,", " : ")) + "\n")
    assert eval_fingerprint(messy).sha256 == SHA
    assert eval_fingerprint(TASKS, name="ledger-v2").name == f"ledger-v2-{SHA[:12]}"


def test_any_edit_changes_the_name():
    edited = [dict(TASKS[0], prompt="Two? "), TASKS[1]]        # one trailing space
    fewer = TASKS[:1]
    assert len({eval_fingerprint(t).name for t in (TASKS, edited, fewer)}) == 3


def test_int_ids_and_id_lists():
    assert eval_fingerprint([{"task_id": 7}]).sha256 == \
        hashlib.sha256(b'{"task_id":"7"}\n').hexdigest()
    ids = eval_fingerprint(["b", "a"])
    assert ids.sha256 == hashlib.sha256(b'{"task_id":"a"}\n{"task_id":"b"}\n').hexdigest()
    assert ids.fields == ["task_id"] and "ids only" in ids.note


def test_repeated_task_is_refused_naming_both_lines(tmp_path):
    path = _jsonl(tmp_path / "rows.jsonl", [_row("a", 1.0), _row("b", 0.0), _row("a", 0.0)])
    with pytest.raises(RowsError, match=r"rows\.jsonl, line 3: task_id 'a' appears again "
                                        r"\(first at line 1\)"):
        eval_fingerprint(path)


@pytest.mark.parametrize("tasks, match", [
    ([{"prompt": "x"}], "task 1: task has no usable `task_id`"),
    ([{"task_id": True}], "`task_id` is true"),
    ([{"task_id": "a", "x": float("nan")}], "cannot be written as plain JSON"),
    ([], "no tasks"),
])
def test_bad_task_sets(tasks, match):
    with pytest.raises(RowsError, match=match):
        eval_fingerprint(tasks)


@pytest.mark.parametrize("name", ["", "a/b", "-x", "x" * 65, 3])
def test_bad_names(name):
    with pytest.raises(ArgumentError, match="`name` must be"):
        eval_fingerprint(TASKS, name=name)


# --- freeze_holdout ----------------------------------------------------------------------------

def test_freeze_writes_once_and_checks_itself(tmp_path):
    frozen = freeze_holdout(TASKS, tmp_path / "evals")
    path = tmp_path / "evals" / f"holdout-{SHA[:12]}.jsonl"
    assert frozen.path == str(path) and frozen.written and path.read_text() == CANON
    mtime = path.stat().st_mtime_ns
    again = freeze_holdout(list(reversed(TASKS)), tmp_path / "evals")
    assert not again.written and again.name == frozen.name and path.stat().st_mtime_ns == mtime
    assert eval_fingerprint(path).file_matches is True
    # edited after freezing: the file no longer matches its name, and freezing will not clobber it
    path.write_text(CANON.replace("One?", "One!"))
    assert eval_fingerprint(path).file_matches is False
    assert "MISMATCH" in str(eval_fingerprint(path))
    with pytest.raises(ConfigError, match="edited after it was frozen"):
        freeze_holdout(TASKS, tmp_path / "evals")
    assert path.read_text() == CANON.replace("One?", "One!")


def test_freeze_into_a_file_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(ArgumentError, match="is a file"):
        freeze_holdout(TASKS, tmp_path / "f")


# --- failure_capable ---------------------------------------------------------------------------

def _baseline(tmp_path) -> Path:
    # a: 2/2 always passes; b: 1/2; c: 0/2 never passes; d: 1/2 with a cut-off failure
    return _jsonl(tmp_path / "base.jsonl", [
        _row("a", 1.0), _row("a", 1.0), _row("b", 1.0), _row("b", 0.0),
        _row("c", 0.0), _row("c", 0.0), _row("d", 0.0, truncated=True), _row("d", 1.0)])


def test_counts_and_ceiling_by_hand(tmp_path):
    r = failure_capable(_baseline(tmp_path))
    # pass@1 = (1 + 0.5 + 0 + 0.5) / 4 = 0.5; b, c, d ever fail; headroom 1 - 0.5
    assert r.pass_at_1 == 0.5 and r.n_tasks == 4 and r.n_rows == 8 and r.k == 2
    assert (r.n_fail_capable, r.n_always_pass, r.n_never_pass) == (3, 1, 1)
    assert r.headroom == 0.5 and r.truncated_passes == 0 and r.n_truncated == 1
    assert r.verdict == "ready" and r.ci == pass_at(tmp_path / "base.jsonl").ci
    assert "k >= 4" in r.note  # 2 rollouts are too few to call a task "always passes"


def test_truncation_trap_comes_first(tmp_path):
    rows = [json.loads(ln) for ln in _baseline(tmp_path).read_text().splitlines()]
    rows[6]["reward"] = 1.0  # the cut-off reply in d now passes
    r = failure_capable(_jsonl(tmp_path / "lenient.jsonl", rows))
    assert r.truncated_passes == 1 and r.verdict == "truncation_trap"
    assert r.examples["cut_off_pass"].ids == ["d"] and r.examples["cut_off_pass"].total == 1
    assert "e.g. tasks with a cut-off pass (1 of 1: d)" in str(r)


def test_cannot_fail_and_little_headroom(tmp_path):
    always = [_row(t, 1.0) for t in "abc" for _ in range(4)]
    assert failure_capable(always).verdict == "cannot_fail"
    # 20 tasks, one of them fails 1 of 4: headroom 0.25 / 20 = 0.0125 < 0.05
    rows = [_row(f"t{i}", 0.0 if (i, j) == (0, 0) else 1.0) for i in range(20) for j in range(4)]
    r = failure_capable(rows)
    assert r.verdict == "little_headroom" and r.n_fail_capable == 1
    assert abs(r.headroom - 0.0125) < 1e-15
    assert failure_capable(rows, effect=0.01).verdict == "ready"


def test_off_the_frozen_set(tmp_path):
    frozen = freeze_holdout([{"task_id": t} for t in "abcz"], tmp_path)
    r = failure_capable(_baseline(tmp_path), holdout=frozen.path)
    assert r.verdict == "off_the_frozen_set" and (r.n_missing, r.n_extra) == (1, 1)
    assert r.holdout == frozen.name
    assert {k: (v.ids, v.total) for k, v in r.examples.items()} == {
        "unscored": (["z"], 1), "not_frozen": (["d"], 1)}
    ok = freeze_holdout([{"task_id": t} for t in "dcba"], tmp_path)
    assert failure_capable(_baseline(tmp_path), holdout=ok.path).verdict == "ready"


@pytest.mark.parametrize("effect", [0, 1, -0.1, True, "0.05"])
def test_bad_effect(tmp_path, effect):
    with pytest.raises(ArgumentError, match="`effect`.* must be"):
        failure_capable(_baseline(tmp_path), effect=effect)


# --- category_table ----------------------------------------------------------------------------

def _categorised(tmp_path):
    # chat: a (3/4), b (1/4), c (0/4); math: d (4/4), e (2/4), f (2/4); tool: g (1/2)
    plan = {"a": ("chat", 3, 4), "b": ("chat", 1, 4), "c": ("chat", 0, 4), "d": ("math", 4, 4),
            "e": ("math", 2, 4), "f": ("math", 2, 4), "g": ("tool", 1, 2)}
    rows, tasks = [], []
    for t, (cat, c, n) in plan.items():
        rows += [_row(t, 1.0 if j < c else 0.0) for j in range(n)]
        tasks.append({"task_id": t, "category": cat})
    return _jsonl(tmp_path / "rows.jsonl", rows), _jsonl(tmp_path / "tasks.jsonl", tasks), plan


def test_each_category_by_hand_and_equal_to_pass_at_on_its_rows(tmp_path):
    rows, tasks, plan = _categorised(tmp_path)
    table = category_table(rows, tasks=tasks)
    by = {ln.category: ln for ln in table.lines}
    assert list(by) == ["chat", "math", "tool"] and table.n_categories == 3
    assert abs(by["chat"].pass_at_1 - (0.75 + 0.25 + 0) / 3) < 1e-15
    assert abs(by["math"].pass_at_1 - (1 + 0.5 + 0.5) / 3) < 1e-15
    assert by["tool"].pass_at_1 == 0.5 and by["tool"].ci is None  # one task: no interval
    assert (by["chat"].n_tasks, by["chat"].n_rows) == (3, 12)
    all_rows = [json.loads(ln) for ln in rows.read_text().splitlines()]
    for cat in ("chat", "math"):
        own = [r for r in all_rows if plan[r["task_id"]][0] == cat]
        assert by[cat].ci == pass_at(own).ci
    assert table.overall.pass_at_1 == pass_at(rows).pass_at_1 and table.overall.n_tasks == 7
    assert "fewer than 3 tasks" in table.note and "'tool'" in table.note


def test_category_from_the_rows(tmp_path):
    rows, tasks, plan = _categorised(tmp_path)
    tagged = [dict(json.loads(ln), behaviour=plan[json.loads(ln)["task_id"]][0])
              for ln in rows.read_text().splitlines()]
    from_rows = category_table(tagged, field="behaviour")
    assert from_rows.lines == category_table(rows, tasks=tasks).lines
    assert from_rows.field == "behaviour"


def test_category_errors_name_the_line(tmp_path):
    rows, tasks, _ = _categorised(tmp_path)
    with pytest.raises(RowsError, match=r"rows\.jsonl, line 1: row has no `category`"):
        category_table(rows)
    mixed = _jsonl(tmp_path / "mixed.jsonl", [_row("a", 1.0, category="x"),
                                              _row("a", 0.0, category="y")])
    with pytest.raises(RowsError, match=r"mixed\.jsonl, line 2: task 'a' is `category` 'y' here "
                                        r"but 'x' at line 1"):
        category_table(mixed)
    short = _jsonl(tmp_path / "short.jsonl", [{"task_id": "a", "category": "chat"}])
    with pytest.raises(RowsError, match=r"short\.jsonl: 6 scored task\(s\) have no record"):
        category_table(rows, tasks=short)
    untagged = _jsonl(tmp_path / "untagged.jsonl", [{"task_id": "a"}])
    with pytest.raises(RowsError, match=r"untagged\.jsonl, line 1: task has no `category`"):
        category_table(rows, tasks=untagged)


def test_many_categories_are_cut_and_say_so(tmp_path):
    from whileai_core.defaults import CATEGORY_LINES_MAX

    n = CATEGORY_LINES_MAX + 5
    rows = [_row(f"t{i}", float(i % 2), category=f"c{i:03d}") for i in range(n)]
    table = category_table(rows)
    # the library keeps every line; its printed table is cut and says so (the MCP answer is cut
    # further, "n of N" in `shown`: tests/test_cold_agent.py)
    assert len(table.lines) == table.n_categories == n
    assert f"{CATEGORY_LINES_MAX} of {n} shown" in str(table)
    assert str(table).count("\nc0") == CATEGORY_LINES_MAX


# --- CLI -----------------------------------------------------------------------------------

def test_cli(tmp_path, capsys):
    tasks = _jsonl(tmp_path / "t.jsonl", TASKS)
    assert main(["freeze", str(tasks), "--out-dir", str(tmp_path / "e"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["name"] == f"holdout-{SHA[:12]}" and out["written"] is True
    assert main(["fingerprint", out["path"]]) == 0
    assert f"holdout-{SHA[:12]}" in capsys.readouterr().out
    base = _baseline(tmp_path)
    # little headroom is not ready: exit 1 (the README's exit-code table)
    assert main(["failure-capable", str(base), "--effect", "0.6", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["verdict"] == "little_headroom"  # 0.5 < 0.6
    rows, cats, _ = _categorised(tmp_path)
    assert main(["by-category", str(rows), "--tasks", str(cats)]) == 0
    assert "math" in capsys.readouterr().out
    assert main(["by-category", str(rows)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 1: row has no `category`" in err


def test_examples_are_cut_and_counted(tmp_path):
    # 8 tasks each with a cut-off pass: 5 ids shown, 8 counted
    rows = [_row(f"t{i}", 1.0, truncated=True) for i in range(8)] + [_row("t0", 0.0)]
    r = failure_capable(rows)
    assert r.examples["cut_off_pass"].ids == [f"t{i}" for i in range(5)]
    assert r.examples["cut_off_pass"].total == 8 and r.truncated_passes == 8


# --- category_table with a second run: compare_many's correction ---------------------------

def _two_runs(tmp_path):
    """40 tasks in each of three categories, 4 rollouts. `fixed`: every task goes from 1 of 4 to
    4 of 4; `same` and `other`: identical before and after."""
    before, after, tasks = [], [], []
    for cat in ("fixed", "same", "other"):
        for i in range(40):
            tid = f"{cat}-{i}"
            tasks.append({"task_id": tid, "category": cat})
            c = 1 if cat == "fixed" else i % 5
            before += [_row(tid, 1.0 if j < min(c, 4) else 0.0) for j in range(4)]
            c_after = 4 if cat == "fixed" else min(c, 4)
            after += [_row(tid, 1.0 if j < c_after else 0.0) for j in range(4)]
    return (_jsonl(tmp_path / "before.jsonl", before), _jsonl(tmp_path / "after.jsonl", after),
            _jsonl(tmp_path / "tasks.jsonl", tasks))


def test_second_run_is_compared_and_corrected(tmp_path):
    before, after, tasks = _two_runs(tmp_path)
    table = category_table(before, after, tasks=tasks)
    many = table.comparison
    by = {b.name: b for b in many.behaviours}
    assert set(by) == {"fixed", "same", "other"} and many.n_tested <= 3
    assert by["fixed"].delta == 0.75 and by["fixed"].n_paired == 40     # 1/4 -> 4/4 on every task
    assert by["same"].delta == 0.0 and by["other"].delta == 0.0
    assert many.survive_holm == ["fixed"] and many.survive_bh == ["fixed"]
    # Holm by hand over the tested behaviours' own p-values
    tested = sorted((b.p_value, b.name) for b in many.behaviours if b.p_value is not None)
    running, m = 0.0, len(tested)
    for i, (p, name) in enumerate(tested):
        running = max(running, min(1.0, (m - i) * p))
        assert abs(by[name].p_holm - running) < 1e-12
    # the same comparison as compare_many on rows that carry the category themselves
    from whileai_core.stats import compare_many

    cat = {t["task_id"]: t["category"] for t in map(json.loads, tasks.read_text().splitlines())}
    tag = lambda path: [dict(r, category=cat[r["task_id"]])  # noqa: E731
                        for r in map(json.loads, path.read_text().splitlines())]
    direct = compare_many(tag(before), tag(after), by="category")
    assert [(b.name, b.delta, b.p_holm) for b in direct.behaviours] == \
        [(b.name, b.delta, b.p_holm) for b in many.behaviours]
    assert "second run against the first" in str(table) and "survive Holm" in str(table)
    assert "survives the correction" in table.note


def test_second_run_must_agree_on_categories(tmp_path):
    first = [_row("a", 1.0, category="x"), _row("b", 0.0, category="y"), _row("c", 1.0, category="y")]
    second = [_row("a", 1.0, category="y"), _row("b", 0.0, category="y"), _row("c", 1.0, category="y")]
    with pytest.raises(RowsError, match="task 'a' is `category` 'y' in the second run but 'x'"):
        category_table(first, second)


def test_cli_by_category_after(tmp_path, capsys):
    before, after, tasks = _two_runs(tmp_path)
    assert main(["by-category", str(before), "--after", str(after), "--tasks", str(tasks),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["comparison"]["survive_holm"] == ["fixed"]
