"""Loading graded rows: formats, aliases, the grouped view, and every bad-input message."""

from __future__ import annotations

import json

import numpy as np
import pytest

from whileai_core import RowsError, load_rows


def write(tmp_path, text, name="rows.jsonl"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_jsonl_blank_lines_alias_and_grouping(tmp_path):
    path = write(tmp_path, '{"task_id": "a", "reward": 1}\n\n  \n'
                           '{"scenario_id": "b", "reward": 0.5, "truncated": true, "model": "m"}\n'
                           '{"task_id": "a", "reward": 0, "note": "kept"}\n')
    rows = load_rows(path)
    assert rows.n_rows == 3 and rows.task_ids == ["a", "b"]
    assert rows.rollouts.tolist() == [2, 1]
    assert rows.passes.tolist() == [1, 0]          # 0.5 < 1.0 is a fail
    assert rows.truncated.tolist() == [False, True, False]
    assert rows.model == [None, "m", None]
    assert rows.records[2]["note"] == "kept"
    assert rows.line_of(2) == 5                     # blank lines count toward line numbers


def test_json_array_and_list_and_threshold(tmp_path):
    data = [{"task_id": "a", "reward": 0.7}, {"task_id": "a", "reward": 0.2},
            {"task_id": 3, "reward": 1}]
    path = write(tmp_path, json.dumps(data, indent=1), "rows.json")
    for source in (path, data):
        rows = load_rows(source, threshold=0.5)
        assert rows.task_ids == ["a", "3"]         # int ids become strings
        assert rows.pass_rate().tolist() == [0.5, 1.0]


def test_where_keeps_first_appearance_order():
    rows = load_rows([{"task_id": t, "reward": r} for t, r in
                      [("z", 1), ("y", 0), ("z", 0), ("x", 1)]])
    sub = rows.where(np.array([False, True, True, True]))
    assert sub.task_ids == ["y", "z", "x"]
    assert sub.rollouts.tolist() == [1, 1, 1] and sub.passes.tolist() == [0, 0, 1]


@pytest.mark.parametrize("text, needle", [
    ('{"task_id": "a", "reward": 1}\n{"task_id": "b", "reward": 1,}\n', "line 2: invalid JSON"),
    ('{"task_id": "a", "reward": 1}\n{"reward": 1}\n', "line 2: row has no `task_id`"),
    ('{"task_id": "a"}\n', "line 1: row has no `reward`"),
    ('{"task_id": "a", "reward": null}\n', "`reward` is null"),
    ('{"task_id": "a", "reward": "1.0"}\n', "`reward` is \"1.0\" (a string)"),
    ('{"task_id": "a", "reward": true}\n', "`reward` is true"),
    ('{"task_id": "a", "reward": 1}\n{"task_id": "a", "reward": NaN}\n', "line 2: `reward` is nan"),
    ('{"task_id": "a", "reward": Infinity}\n', "not a finite number"),
    ('{"task_id": "a", "reward": 1, "truncated": "yes"}\n', '`truncated` is "yes" (a string)'),
    ('{"task_id": "a", "reward": 1, "model": 7}\n', "`model` is 7"),
    ('{"task_id": ["a"], "reward": 1}\n', '`task_id` is ["a"]'),
    ('[1, 2]\n', "array element 1 is a number"),
    ('"just a string"\n', "line 1: a string, expected a JSON object"),
    ('{"task_id": "a", "reward": 1}, {"task_id": "b", "reward": 1}\n', "line 1"),
    ('\n\n  \n', "is empty"),
])
def test_bad_files_name_file_line_and_fix(tmp_path, text, needle):
    path = write(tmp_path, text)
    with pytest.raises(RowsError) as err:
        load_rows(path)
    message = str(err.value)
    assert str(path) in message and needle in message and "Fix:" in message


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(RowsError, match="no such file. Fix"):
        load_rows(tmp_path / "nope.jsonl")
    with pytest.raises(RowsError, match="is a directory"):
        load_rows(tmp_path)


def test_bad_inline_rows():
    with pytest.raises(RowsError, match="row 2 is a str"):
        load_rows([{"task_id": "a", "reward": 1}, "oops"])
    with pytest.raises(RowsError, match="no rows"):
        load_rows([])
    with pytest.raises(RowsError, match=r"<rows> row 2.*`reward`"):
        load_rows([{"task_id": "a", "reward": 1}, {"task_id": "b"}])
    with pytest.raises(RowsError, match="wrap it in a list"):
        load_rows({"task_id": "a", "reward": 1})


def test_json_array_errors_name_the_element(tmp_path):
    path = write(tmp_path, json.dumps([{"task_id": "a", "reward": 1}, {"task_id": "b"}]), "r.json")
    with pytest.raises(RowsError, match=r"r.json array element 2: row has no `reward`"):
        load_rows(path)


def test_fast_path_refuses_two_objects_split_across_lines(tmp_path):
    # Joined, these two lines are two valid objects; line by line, line 1 is not one object.
    path = write(tmp_path, '{"task_id": "a", "reward": 1}, {"task_id": "b"\n"reward": 0}\n')
    with pytest.raises(RowsError, match="line 1: invalid JSON"):
        load_rows(path)


def test_crlf_and_whitespace_lines(tmp_path):
    path = write(tmp_path, '{"task_id": "a", "reward": 1}\r\n   \r\n{"task_id": "b", "reward": 0}\r\n')
    rows = load_rows(path)
    assert rows.task_ids == ["a", "b"] and rows.line_of(1) == 3


def test_jsonl_whose_first_line_is_an_array_names_line_1(tmp_path):
    path = write(tmp_path, '[1]\n{"task_id": "a", "reward": 1}\n')
    with pytest.raises(RowsError, match=r"line 1: an array, expected a JSON object"):
        load_rows(path)
