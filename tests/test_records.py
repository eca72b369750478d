"""The one reader of records (``whileai_core.records``): what it reads, against an oracle.

The oracle is the format's definition, written here apart from the reader: Python's ``json`` on
each non-blank line (a line break being ``\n``, ``\r\n`` or a lone ``\r``), or on the whole
file when it is one JSON array. Any valid file loads to the oracle's records, at the oracle's
lines, with every value of its JSON type, at any chunk size, with a byte-order mark or gzipped.
Fifty malformed files fail with the words the removed exact reader used
(``tests/golden/records_messages.json``), naming the line each was written to break.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whileai_core import RowsError, load_rows
from whileai_core import records
from whileai_core.records import read_records

GOOD = '{"task_id": "t%d", "reward": %s}'
GOLDEN = json.loads((Path(__file__).parent / "golden" / "records_messages.json").read_text(
    encoding="utf-8"))


def oracle(text: str) -> tuple[list[dict], list[int] | None]:
    """The records of ``text`` as Python's json reads them, and each one's line (None: a JSON
    array)."""
    text = text.removeprefix("\ufeff")
    if text.lstrip().startswith("["):
        return json.loads(text), None
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    found = [(i, json.loads(ln)) for i, ln in enumerate(lines, 1) if ln.strip()]
    return [rec for _, rec in found], [i for i, _ in found]


def error(path, **kw) -> str:
    with pytest.raises(RowsError) as err:
        load_rows(path, **kw)
    return str(err.value)


def dumped(values) -> str:
    """Values as JSON text, where 1 and 1.0 differ."""
    return json.dumps(values, sort_keys=True)


# --- valid files: the same rows either way --------------------------------------------------

extra = st.one_of(st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False),
                  st.text(max_size=4), st.booleans(), st.none(),
                  st.lists(st.integers(0, 3), max_size=3),
                  st.dictionaries(st.sampled_from(["k", "é"]), st.integers(), max_size=2))
row = st.fixed_dictionaries(
    {"task_id": st.sampled_from(["a", "b", "c", "ü😀", 3]),
     "reward": st.sampled_from([0, 1, 0.0, 1.0, 0.5, -2, 2.5, 10**20])},
    optional={"truncated": st.sampled_from([True, False, None]),
              "model": st.sampled_from(["m", "m@step-2", None]),
              "scenario_id": st.sampled_from(["s1", "s2"]),
              "max_tokens": st.sampled_from([1, 512, 512.0, None]),
              "completion_tokens": st.sampled_from([0, 40, 700, None]),
              "finish_reason": st.sampled_from(["stop", "length", None]),
              "note": extra, "tags": extra})
layout = st.lists(st.tuples(row, st.sampled_from(["", "", "", "\n", "  \n", "\t\n\n"])),
                  min_size=1, max_size=30)


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=layout, newline=st.sampled_from(["\n", "\r\n"]), last=st.booleans(),
       array=st.booleans(), chunk=st.sampled_from([7, 64, records.CHUNK]),
       wrap=st.sampled_from(["", "", "bom", "gzip", "bom+gzip"]))
def test_any_valid_file_reads_as_pythons_json_reads_it(tmp_path, monkeypatch, items, newline,
                                                       last, array, chunk, wrap):
    if array:
        text = json.dumps([rec for rec, _ in items], indent=1, ensure_ascii=False)
    else:
        lines = []
        for rec, blanks in items:
            lines.append(blanks.replace("\n", newline))
            lines.append(json.dumps(rec, ensure_ascii=False) + newline)
        text = "".join(lines)
        if not last:
            text = text[:-len(newline)]
    path = tmp_path / ("rows.json" if array else "rows.jsonl")
    path.write_bytes(_wrapped(text.encode("utf-8"), wrap))
    monkeypatch.setattr(records, "CHUNK", chunk)
    expected, lines = oracle(text)
    rows = load_rows(path)
    assert dumped(rows.records) == dumped(expected)
    fields = list(dict.fromkeys(k for rec in expected for k in rec))
    assert sorted(rows.fields) == sorted(fields)
    for f in fields:
        assert dumped(rows.column(f)) == dumped([rec.get(f) for rec in expected]), f
        assert rows.present(f).tolist() == [f in rec for rec in expected], f
        assert rows.kinds(f) == {type(rec[f]) for rec in expected if f in rec}, f
    assert [rows.line_of(i) for i in range(rows.n_rows)] == (
        lines or list(range(1, len(expected) + 1)))
    # the typed columns, from the oracle's records by hand
    ids = [str(rec.get("task_id", rec.get("scenario_id"))) for rec in expected]
    assert rows.task_ids == list(dict.fromkeys(ids))
    assert rows.reward.tolist() == [float(rec["reward"]) for rec in expected]
    got = read_records(path, noun="trace")
    assert dumped(got.items) == dumped(expected)
    assert [got.where(i).get("line") for i in range(len(got))] == (lines or [None] * len(got))


def _wrapped(data: bytes, wrap: str) -> bytes:
    """``data`` after a UTF-8 byte-order mark and/or gzip-packed (both readers take both)."""
    import gzip

    if "bom" in wrap:
        data = b"\xef\xbb\xbf" + data
    return gzip.compress(data) if "gzip" in wrap else data


def test_a_line_longer_than_a_chunk_and_a_field_seen_late(tmp_path, monkeypatch):
    long = "x" * 500
    text = (GOOD % (1, 1) + "\n" + '{"task_id": "t2", "reward": 0, "note": "%s"}\n' % long
            + GOOD % (3, 0.5) + "\n")
    path = tmp_path / "rows.jsonl"
    path.write_text(text)
    monkeypatch.setattr(records, "CHUNK", 64)
    rows = load_rows(path)
    assert rows.column("note") == [None, long, None]
    assert rows.present("note").tolist() == [False, True, False]
    assert rows.records[1] == {"task_id": "t2", "reward": 0, "note": long}


# --- fifty malformed files: the same error, at the same line --------------------------------

def _file(*lines: str, newline: str = "\n", last: bool = True) -> str:
    return newline.join(lines) + (newline if last else "")


OK1, OK2 = GOOD % (1, 1), GOOD % (2, 0)
DEEP = "[" * 3000 + "]" * 3000
MALFORMED: list[tuple[str, str, int | None]] = [
    # (name, text, the line the error must name; None: the file as a whole)
    ("trailing comma", _file(OK1, '{"task_id": "t", "reward": 1,}'), 2),
    ("NaN reward", _file(OK1, OK2, '{"task_id": "t", "reward": NaN}'), 3),
    ("Infinity reward", _file('{"task_id": "t", "reward": Infinity}'), 1),
    ("-Infinity reward", _file(OK1, '{"task_id": "t", "reward": -Infinity}'), 2),
    ("no reward", _file(OK1, '{"task_id": "t"}'), 2),
    ("no reward after blanks", _file(OK1, "", "  ", '{"task_id": "t"}'), 4),
    ("null reward", _file('{"task_id": "t", "reward": null}'), 1),
    ("string reward", _file(OK1, OK2, OK1, '{"task_id": "t", "reward": "1.0"}'), 4),
    ("bool reward", _file('{"task_id": "t", "reward": true}'), 1),
    ("list reward", _file(OK1, '{"task_id": "t", "reward": [1]}'), 2),
    ("object reward", _file(OK1, '{"task_id": "t", "reward": {"v": 1}}'), 2),
    ("reward past a float", _file(OK1, '{"task_id": "t", "reward": %s}' % ("9" * 400)), 2),
    ("reward 1e400", _file(OK1, '{"task_id": "t", "reward": 1e400}'), 2),
    ("no task_id", _file(OK1, '{"reward": 1}'), 2),
    ("null task_id", _file('{"task_id": null, "reward": 1}'), 1),
    ("list task_id", _file(OK1, '{"task_id": ["a"], "reward": 1}'), 2),
    ("bool task_id", _file(OK1, OK2, '{"task_id": true, "reward": 1}'), 3),
    ("float task_id", _file('{"task_id": 1.5, "reward": 1}'), 1),
    ("string truncated", _file(OK1, '{"task_id": "t", "reward": 1, "truncated": "yes"}'), 2),
    ("int truncated", _file('{"task_id": "t", "reward": 1, "truncated": 1}'), 1),
    ("int model", _file(OK1, '{"task_id": "t", "reward": 1, "model": 7}'), 2),
    ("list model", _file(OK1, OK2, '{"task_id": "t", "reward": 1, "model": ["m"]}'), 3),
    ("a list line", _file(OK1, "[1, 2]"), 2),
    ("a string line", _file(OK1, '"just text"'), 2),
    ("a number line", _file(OK1, OK2, "42"), 3),
    ("a null line", _file("null", OK1), 1),
    ("two objects on a line", _file(OK1 + " " + OK2), 1),
    ("an object split over two lines", _file('{"task_id": "t",', '"reward": 1}'), 1),
    ("missing brace", _file(OK1, '{"task_id": "t", "reward": 1'), 2),
    ("single quotes", _file(OK1, "{'task_id': 't', 'reward': 1}"), 2),
    ("unquoted key", _file(OK1, '{task_id: "t", "reward": 1}'), 2),
    ("a raw tab in a string", _file(OK1, '{"task_id": "a\tb", "reward": 1}'), 2),
    ("a bad escape", _file(OK1, '{"task_id": "a\\x", "reward": 1}'), 2),
    ("a leading zero", _file(OK1, '{"task_id": "t", "reward": 01}'), 2),
    ("a bare minus", _file(OK1, '{"task_id": "t", "reward": -}'), 2),
    ("a first line that is an array", _file("[1]", OK1), 1),
    ("nesting past the limit", _file(OK1, '{"task_id": "t", "reward": 1, "x": %s}' % DEEP), 2),
    ("an integer of 5000 digits", _file(OK1, '{"task_id": "t", "reward": 1, "x": %s}'
                                        % ("9" * 5000)), 2),
    ("a form feed line", _file(OK1, "\f", '{"task_id": "t"}'), 3),
    ("a lone CR splits a line", _file(OK1 + '\r{"task_id": "t"}'), 2),
    ("CRLF and no reward", _file(OK1, "", '{"task_id": "t"}', newline="\r\n"), 3),
    ("CRLF and invalid JSON", _file(OK1, OK2, "{", newline="\r\n"), 3),
    ("a lone surrogate and no reward", _file(OK1, '{"task_id": "\\ud800"}'), 2),
    ("no final newline, no reward", _file(OK1, '{"task_id": "t"}', last=False), 2),
    ("a new field, then no reward", _file(OK1, '{"task_id": "t", "reward": 1, "z": 1}',
                                          '{"task_id": "t", "z": 2}'), 3),
    ("a field null then no task", _file('{"task_id": "t", "reward": 1, "z": null}',
                                        '{"reward": 1, "z": 1}'), 2),
    ("an array with a bad element", json.dumps([{"task_id": "t", "reward": 1},
                                                {"task_id": "u"}]), None),
    ("an array of numbers", "[1, 2, 3]\n", None),
    ("an array then more", '[{"task_id": "t", "reward": 1}]\n' + OK1 + "\n", 1),
    ("only blank lines", "\n  \n\n", None),
]


def test_there_are_fifty_malformed_files():
    assert len(MALFORMED) == 50 and len({name for name, _, _ in MALFORMED}) == 50


def _said(path, text) -> list[str | None]:
    out = []
    for read in (load_rows, lambda p: read_records(p, noun="trace")):
        try:
            read(path)
            out.append(None)
        except RowsError as err:
            out.append(str(err).replace(str(path), "{path}"))
    return out


@pytest.mark.parametrize("chunk", [16, records.CHUNK])
@pytest.mark.parametrize("name, text, line", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_file_fails_in_the_words_it_always_did(tmp_path, monkeypatch, name, text,
                                                           line, chunk):
    path = tmp_path / ("rows.json" if text.startswith("[") else "rows.jsonl")
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    monkeypatch.setattr(records, "CHUNK", chunk)
    said = _said(path, text)
    if name == "nesting past the limit":  # the one limit (JSON_MAX_DEPTH), not Python's
        assert said[0] == said[1] and f"more than {records.JSON_MAX_DEPTH} levels" in said[0]
    else:
        assert said == GOLDEN[name]
    fast = said[0]
    assert "{path}" in fast and "Fix:" in fast
    if line is not None:
        assert f", line {line}:" in fast, fast
    else:
        assert ", line " not in fast, fast


@pytest.mark.parametrize("wrap", ["bom", "gzip", "bom+gzip"])
@pytest.mark.parametrize("name, text, line", MALFORMED[::5], ids=[m[0] for m in MALFORMED[::5]])
def test_a_malformed_file_with_a_bom_or_gzipped_fails_alike(tmp_path, monkeypatch, name, text,
                                                            line, wrap):
    path = tmp_path / ("rows.json" if text.startswith("[") else "rows.jsonl")
    path.write_bytes(_wrapped(text.encode("utf-8", "surrogatepass"), wrap))
    monkeypatch.setattr(records, "CHUNK", 16)
    assert _said(path, text) == GOLDEN[name]


def test_where_keeps_every_field_of_the_kept_rows(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(_file(GOOD % (1, 1), '{"task_id": "t2", "reward": 0, "note": "n"}',
                          "", GOOD % (1, 0)))
    rows = load_rows(path)
    part = rows.where(np.array([False, True, True]))
    assert part.task_ids == ["t2", "t1"] and part.column("note") == ["n", None]
    assert part.present("note").tolist() == [True, False]
    assert [part.line_of(i) for i in range(2)] == [2, 4]
    assert part.records == [{"task_id": "t2", "reward": 0, "note": "n"},
                            {"task_id": "t1", "reward": 0}]


# token budgets, refused at the line either way (the rows written here, the line known from it)
BUDGET_MALFORMED: list[tuple[str, str, int, str]] = [
    ("string max_tokens", _file(OK1, '{"task_id": "t", "reward": 1, "max_tokens": "512"}'), 2,
     '`max_tokens` is "512" (a string)'),
    ("zero max_tokens", _file('{"task_id": "t", "reward": 1, "max_tokens": 0}'), 1,
     "`max_tokens` is 0"),
    ("fractional tokens", _file(OK1, OK2, '{"task_id": "t", "reward": 1, '
                                          '"completion_tokens": 2.5}'), 3,
     "`completion_tokens` is 2.5"),
    ("negative tokens", _file(OK1, "", '{"task_id": "t", "reward": 1, "completion_tokens": -1}'),
     3, "`completion_tokens` is -1"),
    ("bool max_tokens", _file(OK1, '{"task_id": "t", "reward": 1, "max_tokens": true}'), 2,
     "`max_tokens` is true"),
    ("max_tokens past a float", _file(OK1, '{"task_id": "t", "reward": 1, "max_tokens": %s}'
                                      % ("9" * 400)), 2, "`max_tokens` is an integer of 400 digits"),
    ("numeric finish_reason", _file(OK1, '{"task_id": "t", "reward": 1, "finish_reason": 3}'), 2,
     "`finish_reason` is 3"),
]


@pytest.mark.parametrize("name, text, line, said", BUDGET_MALFORMED,
                         ids=[m[0] for m in BUDGET_MALFORMED])
def test_a_bad_budget_fails_at_its_line(tmp_path, name, text, line, said):
    path = tmp_path / "rows.jsonl"
    path.write_text(text)
    message = error(path)
    assert message.replace(str(path), "{path}") == GOLDEN[name][0]
    assert f", line {line}:" in message and said in message and "Fix:" in message, message


def test_finish_reason_length_marks_a_row_truncated_that_does_not_say(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(_file('{"task_id": "t", "reward": 1, "finish_reason": "length"}',
                          '{"task_id": "t", "reward": 1, "finish_reason": "length", '
                          '"truncated": false}',
                          '{"task_id": "t", "reward": 1, "finish_reason": "stop"}',
                          '{"task_id": "u", "reward": 0, "max_tokens": 64}'))
    rows = load_rows(path)
    # row 1 says nothing (cut off: truncated); row 2 says false (kept); row 3 stopped
    assert rows.truncated.tolist() == [True, False, False, False]
    assert rows.column("truncated") == [None, False, None, None]   # as the file holds it
    assert rows.budget.finish_reason == ["length", "length", "stop", None]
    assert rows.budget.max_tokens[3] == 64 and np.isnan(rows.budget.max_tokens[:3]).all()
    part = rows.where(np.array([False, True, False, True]))
    assert part.budget.finish_reason == ["length", None] and part.budget.max_tokens[1] == 64
