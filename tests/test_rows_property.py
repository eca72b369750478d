"""Property tests for the rows loader: any valid file loads to the counts a naive grouping gives,
with every row's line number right; one corrupted line is named, whichever it is."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whileai_core import RowsError, load_rows

row = st.fixed_dictionaries(
    {"task_id": st.sampled_from(["a", "b", "c", "d", "e"]),
     "reward": st.sampled_from([0, 0.0, 0.5, 1, 1.0, 2.5, -1.0])},
    optional={"truncated": st.sampled_from([True, False, None]),
              "model": st.sampled_from(["m", "m@step-2", None]),
              "extra": st.text(max_size=5)})
layout = st.lists(st.tuples(row, st.integers(0, 2)), min_size=1, max_size=40)


def write(tmp_path, items, newline):
    lines, where = [], []
    for rec, blanks in items:
        lines += [""] * blanks          # blank lines before the row
        lines.append(json.dumps(rec))
        where.append(len(lines))        # 1-based line of this row
    path = tmp_path / "rows.jsonl"
    path.write_bytes((newline.join(lines) + newline).encode())
    return path, where


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=layout, newline=st.sampled_from(["\n", "\r\n"]))
def test_any_valid_file_loads_to_naive_counts(tmp_path, items, newline):
    path, where = write(tmp_path, items, newline)
    rows = load_rows(path)
    naive: dict[str, list[int]] = {}
    for rec, _ in items:
        n, c = naive.setdefault(rec["task_id"], [0, 0])
        naive[rec["task_id"]] = [n + 1, c + (rec["reward"] >= 1.0)]
    assert rows.task_ids == list(naive)                       # first-appearance order
    assert rows.rollouts.tolist() == [v[0] for v in naive.values()]
    assert rows.passes.tolist() == [v[1] for v in naive.values()]
    assert rows.truncated.tolist() == [rec.get("truncated") is True for rec, _ in items]
    assert [rows.line_of(i) for i in range(rows.n_rows)] == where


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=layout, data=st.data())
def test_a_corrupted_line_is_named(tmp_path, items, data):
    path, where = write(tmp_path, items, "\n")
    bad = data.draw(st.integers(0, len(where) - 1))
    lines = path.read_text().split("\n")
    broken = data.draw(st.sampled_from(['{"task_id": "a", "reward": }', '{"task_id": "a"}',
                                        '{"reward": 1}', '[1]', '{"task_id": "a", "reward": "1"}']))
    lines[where[bad] - 1] = broken
    path.write_text("\n".join(lines))
    try:
        load_rows(path)
    except RowsError as err:
        if broken == "[1]" and len(where) == 1:
            # the whole file is "[1]": a JSON array with one element, and read as one
            assert "array element 1" in str(err) and "Fix:" in str(err)
        else:
            assert f"line {where[bad]}:" in str(err) and "Fix:" in str(err)
    else:
        raise AssertionError("a corrupted line loaded")
