"""Rows files as they arrive: from standard input or a pipe, with a byte-order mark, gzip-packed,
in another format (named, with a command that converts it), with fields under other names; and
pass@k / noise-floor saying what they could not compute. Every expected number is worked by hand
in the test; every converting command an error suggests is run and its output loaded.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from whileai_core import RowsError, load_rows
from whileai_core.errors import ArgumentError, ConfigError
from whileai_core.rows import read_records
from whileai_core.safepath import Limits, StreamPath, user_path, write_text
from whileai_core.stats import noise_floor, pass_at
from whileai_core.traces import load_traces
from whileai_core.voice import CLI as SHELL, speaking

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "whileai_core.cli"]

# 3 tasks: a passes 2 of 4, b 4 of 4, c 0 of 2 -> pass@1 = (0.5 + 1 + 0) / 3 = 0.5
ROWS = ([{"task_id": "a", "reward": r, "model": "m"} for r in (1.0, 0.0, 1.0, 0.0)]
        + [{"task_id": "b", "reward": 1.0, "model": "m"}] * 4
        + [{"task_id": "c", "reward": 0.0, "model": "m"}] * 2)
JSONL = "".join(json.dumps(r) + "\n" for r in ROWS)


def _cli(*args: str, stdin=None, input: bytes | None = None, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([*CLI, *args], input=input, stdin=stdin, capture_output=True,
                          env=env, cwd=cwd, timeout=120)


def _pipe(data: bytes, *, close: bool = True) -> int:
    """A pipe holding ``data``; its read end (the writer closed unless ``close`` is False)."""
    r, w = os.pipe()

    def write() -> None:
        try:
            os.write(w, data)
        except BrokenPipeError:  # the reader stopped early (the size limit): nothing to do
            pass
        if close:
            os.close(w)

    threading.Thread(target=write, daemon=True).start()
    return r


def _fix_command(message: str) -> str:
    """The shell command of an error's fix (from its `python3 -c` or `whileai-skills` to the
    end)."""
    start = min(i for i in (message.find("python3 -c "), message.find("whileai-skills "))
                if i >= 0)
    return message[start:]


def _run_fix(message: str, cwd: Path) -> Path:
    """Run the fix's command in ``cwd``; the file it wrote (its last word), which did not exist
    before: a fix never writes over a file."""
    command = _fix_command(message)
    written = cwd / shlex.split(command)[-1]
    assert not written.exists(), f"the fix names {written.name}, which exists: {command}"
    command = command.replace("python3", shlex.quote(sys.executable), 1).replace(
        "whileai-skills", " ".join(shlex.quote(w) for w in CLI), 1)
    subprocess.run(["bash", "-c", command], cwd=cwd, check=True, timeout=60)
    return written


def test_dash_dev_stdin_and_a_process_substitution_read_what_the_file_reads(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(JSONL)
    want = _cli("pass-at", str(path))
    assert want.returncode == 0 and "pass@1  0.500" in want.stdout.decode()
    for name in ("-", "/dev/stdin"):
        got = _cli("pass-at", name, input=JSONL.encode())
        assert got.returncode == 0, got.stderr
        assert got.stdout == want.stdout
    quoted = " ".join(shlex.quote(w) for w in CLI)
    sub = subprocess.run(["bash", "-c", f"{quoted} pass-at <(cat {shlex.quote(str(path))})"],
                         capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         timeout=120)
    assert sub.returncode == 0, sub.stderr
    assert sub.stdout == want.stdout


def test_empty_stdin_and_a_terminal_are_named(tmp_path):
    empty = _cli("pass-at", "-", input=b"")
    assert empty.returncode == 2
    assert "<stdin>: is empty: nothing was piped in" in empty.stderr.decode()
    import pty

    leader, follower = pty.openpty()
    try:
        tty = _cli("pass-at", "-", stdin=follower)
    finally:
        os.close(leader)
        os.close(follower)
    assert tty.returncode == 2
    assert "<stdin>: is a terminal: nothing is piped in" in tty.stderr.decode()


def test_a_pipe_is_read_once_and_every_later_read_gets_the_same_bytes():
    fd = _pipe(JSONL.encode())
    try:
        first = load_rows(f"/dev/fd/{fd}")
        again = load_rows(f"/dev/fd/{fd}")  # the pipe is drained: the bytes read first
    finally:
        os.close(fd)
    assert first.pass_rate().tolist() == again.pass_rate().tolist() == [0.5, 1.0, 0.0]
    assert first.source == f"/dev/fd/{fd}"


def test_a_stream_keeps_the_size_and_time_limits():
    small = Limits.from_env({}, max_mb={"rows": 0.0001})  # 104 bytes
    fd = _pipe(JSONL.encode())
    try:
        with pytest.raises(RowsError, match=r"over the 0\.0001 MB limit"):
            user_path(f"/dev/fd/{fd}", limits=small, error=RowsError).read_bytes(
                "rows", error=RowsError)
    finally:
        os.close(fd)
    slow = Limits.from_env({}, timeout_s=0.2)
    fd = _pipe(b'{"task_id": "a", "reward": 1}\n', close=False)  # the writer never ends
    try:
        with pytest.raises(RowsError, match="reading took longer than 0.2 s"):
            user_path(f"/dev/fd/{fd}", limits=slow, error=RowsError).read_bytes(
                "rows", error=RowsError)
    finally:
        os.close(fd)


def test_no_writer_takes_a_stream_as_its_output(tmp_path):
    for name in ("-", "/dev/stdin", "/dev/stdout", "/dev/fd/1"):
        with pytest.raises(ConfigError, match="is a stream; results are written to files"):
            write_text(name, "x")
    assert isinstance(user_path("-"), StreamPath)
    with pytest.raises(ConfigError, match="is a stream"):
        user_path("-").write_text("x")
    split = _cli("split", str(ROOT / "examples" / "graded.jsonl"), "--out", "-", cwd=tmp_path)
    assert split.returncode == 2 and "is a stream" in split.stderr.decode(), split.stderr


# --- a byte-order mark and gzip ---------------------------------------------------------------

def test_a_bom_is_dropped_and_no_line_moves(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + JSONL.encode())
    rows = load_rows(path)
    assert rows.task_ids == ["a", "b", "c"] and rows.pass_rate().tolist() == [0.5, 1.0, 0.0]
    assert rows.line_of(0) == 1 and rows.line_of(9) == 10
    assert read_records(path).items == ROWS


def test_gzip_is_read_as_it_is_in_one_member_or_several(tmp_path):
    one = tmp_path / "rows.jsonl.gz"
    one.write_bytes(gzip.compress(JSONL.encode()))
    assert load_rows(one).pass_rate().tolist() == [0.5, 1.0, 0.0]
    half = JSONL.encode().split(b'{"task_id": "b"', 1)
    two = tmp_path / "two.gz"  # `cat a.gz b.gz`: one file of two members
    two.write_bytes(gzip.compress(half[0]) + gzip.compress(b'{"task_id": "b"' + half[1]))
    rows = load_rows(two)
    assert rows.n_rows == 10 and rows.pass_rate().tolist() == [0.5, 1.0, 0.0]
    traces = tmp_path / "t.jsonl.gz"
    traces.write_bytes(gzip.compress(b'{"task_id": "a", "messages": [{"role": "user", '
                                     b'"content": "hi"}]}\n'))
    assert load_traces(traces)[0]["task_id"] == "a"


def test_a_gzip_bomb_stops_at_the_limit_and_a_cut_file_is_named(tmp_path, monkeypatch):
    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(gzip.compress(b" " * (3 << 20)))  # 3 MB of spaces in about 3 KB
    assert bomb.stat().st_size < 10_000
    monkeypatch.setenv("WHILEAI_MAX_ROWS_MB", "1")
    # stopped within one unpacking step (1 MB) past the limit, not at the 3 MB it holds
    with pytest.raises(RowsError, match=r"unpacks to (1\.\d|2\.0) MB, over the 1 MB limit"):
        load_rows(bomb)
    monkeypatch.delenv("WHILEAI_MAX_ROWS_MB")
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(JSONL.encode())[:-12])
    with pytest.raises(RowsError, match="is a gzip file cut short"):
        load_rows(cut)


# --- files that are not JSONL -----------------------------------------------------------------

def test_csv_is_named_with_its_columns_and_its_command_converts_it(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("task_id,reward,truncated\n"
                    + "".join(f"{r['task_id']},{int(r['reward'])},false\n" for r in ROWS))
    with pytest.raises(RowsError) as err, speaking(SHELL):  # the fix as typed at a shell
        load_rows(path)
    message = str(err.value)
    assert "looks like CSV with columns task_id, reward, truncated, not JSONL" in message
    rows = load_rows(_run_fix(message, tmp_path))
    assert rows.pass_rate().tolist() == [0.5, 1.0, 0.0]
    assert rows.truncated.tolist() == [False] * 10


def test_tsv_with_other_names_is_converted_with_the_renames(tmp_path):
    path = tmp_path / "scores.tsv"
    path.write_text("problem_id\tscore\n" + "".join(f"{r['task_id']}\t{r['reward']}\n"
                                                     for r in ROWS))
    with pytest.raises(RowsError) as err, speaking(SHELL):  # the fix as typed at a shell
        load_rows(path)
    message = str(err.value)
    assert "looks like TSV (tab-separated) with columns problem_id, score" in message
    assert "`problem_id` is read as `task_id`" in message
    assert "`score` is read as `reward`" in message
    assert load_rows(_run_fix(message, tmp_path)).pass_rate().tolist() == [0.5, 1.0, 0.0]


@pytest.mark.parametrize("data, named", [
    (b"PAR1\x15\x04\x15\x00", "is a Parquet file, not JSONL"),
    (b"PK\x03\x04\x14\x00", "is a zip archive"),
    (b"BZh91AY&SY", "is bzip2-compressed"),
    (b"\xfd7zXZ\x00\x00", "is xz-compressed"),
    (b"\x28\xb5\x2f\xfd\x00", "is zstd-compressed"),
    ('{"task_id": "a", "reward": 1}\n'.encode("utf-16"), "is UTF-16 text"),
    (b"", "is empty: no rows"),
    (b"task_id reward\na 1\n", 'is not JSON: line 1 begins "task_id reward"'),
    (b"1,0.5\n2,1\n", "looks like CSV without a header line"),
])
def test_a_file_of_another_kind_is_named(tmp_path, data, named):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(data)
    with pytest.raises(RowsError) as err:
        load_rows(path)
    assert named in str(err.value) and "Fix:" in str(err.value)


def test_a_json_document_is_named_and_rows_under_a_key_are_unpacked(tmp_path):
    doc = tmp_path / "results.json"
    doc.write_text(json.dumps({"version": 2, "samples": ROWS}, indent=2))
    with pytest.raises(RowsError) as err, speaking(SHELL):  # the fix as typed at a shell
        load_rows(doc)
    message = str(err.value)
    assert "is one JSON document (keys `version`, `samples`)" in message
    assert "its `samples` holds a list of 10 objects" in message
    assert load_rows(_run_fix(message, tmp_path)).pass_rate().tolist() == [0.5, 1.0, 0.0]
    one_line = tmp_path / "one.json"  # the same document on one line: read as one row first
    one_line.write_text(json.dumps({"samples": ROWS}))
    with pytest.raises(RowsError, match="its `samples` holds a list of 10 objects"):
        load_rows(one_line)
    pretty = tmp_path / "row.json"
    pretty.write_text(json.dumps(ROWS[0], indent=2) + "\n")
    with pytest.raises(RowsError, match=r"line 1: a JSON object spread over 5 lines"):
        load_rows(pretty)


# --- fields under other names -----------------------------------------------------------------

@pytest.mark.parametrize("name, why", [
    ("score", "a name other tools use for `reward`"),
    ("Reward", "the same name written differently"),
    ("rewrad", "a close spelling"),
    ("correct", "a name other tools use for `reward`"),
])
def test_a_reward_under_another_name_is_named_with_its_rename(tmp_path, name, why):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"task_id": r["task_id"], name: r["reward"]}) + "\n"
                            for r in ROWS))
    with pytest.raises(RowsError) as err, speaking(SHELL):  # the fix as typed at a shell
        load_rows(path)
    message = str(err.value)
    assert f"line 1: row has no `reward`; a field the rows carry looks like it: `{name}` ({why})" \
        in message
    assert "is None" not in message
    assert load_rows(_run_fix(message, tmp_path)).pass_rate().tolist() == [0.5, 1.0, 0.0]


def test_passed_true_false_becomes_a_reward_and_both_fields_are_renamed_at_once(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps({"problem_id": r["task_id"], "passed": r["reward"] == 1.0})
                            + "\n" for r in ROWS))
    with pytest.raises(RowsError) as err, speaking(SHELL):  # the fix as typed at a shell
        load_rows(path)
    message = str(err.value)
    assert "row has no `task_id`; a field the rows carry looks like it: `problem_id`" in message
    assert "rename `problem_id` to `task_id` and `passed` to `reward`" in message
    rows = load_rows(_run_fix(message, tmp_path))
    assert rows.reward.tolist() == [r["reward"] for r in ROWS]  # true -> 1.0, false -> 0.0
    assert rows.pass_rate().tolist() == [0.5, 1.0, 0.0]


def test_no_look_alike_no_guess():
    with pytest.raises(RowsError) as err:
        load_rows([{"task_id": "a", "forward": 1.0, "record": 2}])
    assert str(err.value) == ('<rows> row 1: row has no `reward`. Fix: add "reward": <a number; '
                              'a pass is >= the threshold (1.0)>')


def test_a_trace_without_messages_is_named_never_as_none(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps({"task_id": "a", "conversations": [
        {"role": "user", "content": "hi"}]}) + "\n")
    with pytest.raises(RowsError) as err, speaking(SHELL):  # the fix as typed at a shell
        load_traces(path)
    message = str(err.value)
    assert "line 1: trace has no `messages`; a field the traces carry looks like it: " \
           "`conversations`" in message and "None" not in message
    assert load_traces(_run_fix(message, tmp_path))[0]["messages"][0]["content"] == "hi"
    with pytest.raises(RowsError) as err:
        load_traces([{"task_id": "a"}])
    assert "trace has no `messages`" in str(err.value) and "None" not in str(err.value)


# --- pass@k and the noise floor say what they could not do ------------------------------------

def test_pass_at_k_names_the_k_it_could_not_compute():
    result = pass_at(ROWS, k=3)  # c has 2 rollouts: pass@3 needs 3 of them
    assert result.pass_at_k is None and result.pass_pow_k is None
    assert result.k_not_computed == (
        "it needs at least 3 rollouts per task, and 1 of 3 tasks have fewer (2 rollouts each). "
        "Fix: sample 3 or more rollouts per task, or ask for k=2 (every task has 2)")
    assert "pass@3, pass^3  not computed: it needs at least 3 rollouts per task" in \
        result.render()
    two = pass_at(ROWS, k=2)
    # a: 1 - C(2,2)/C(4,2) = 5/6; b: 1; c: 1 - C(2,2)/C(2,2) = 0 -> (5/6 + 1 + 0) / 3
    assert two.k_not_computed is None
    assert two.pass_at_k == pytest.approx((5 / 6 + 1 + 0) / 3)


def test_pass_at_k_at_the_shell_names_the_flag(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(JSONL)
    out = _cli("pass-at", str(path), "-k", "10").stdout.decode()
    assert "pass@10, pass^10  not computed: it needs at least 10 rollouts per task, and 3 of 3 " \
           "tasks have fewer (2 to 4 rollouts)" in out
    assert "ask for -k 2" in out


def test_noise_floor_refuses_one_file_twice_however_spelled(tmp_path, monkeypatch):
    path = tmp_path / "run.jsonl"
    path.write_text(JSONL)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ArgumentError, match=r"runs 1 and 2 are the same file \(\./run\.jsonl\)"):
        noise_floor(str(path), "./run.jsonl")
    rows = load_rows(path)
    with pytest.raises(ArgumentError, match="runs 1 and 3 are the same rows"):
        noise_floor(rows, ROWS, rows)
    copy = tmp_path / "copy.jsonl"
    copy.write_text(JSONL)
    assert noise_floor(path, copy).run_std == 0.0  # a second file is a second run
    fd = _pipe(JSONL.encode())
    try:
        with pytest.raises(ArgumentError, match="runs 1 and 2 are the same file"):
            noise_floor(f"/dev/fd/{fd}", f"/dev/fd/{fd}")
    finally:
        os.close(fd)


def test_noise_floor_warns_when_the_runs_are_of_different_models():
    other = [dict(r, model="n") for r in ROWS]
    result = noise_floor(ROWS, other, [dict(r) for r in ROWS])
    assert result.warning is not None
    assert result.warning.startswith("the runs are of different models (run 1: m; run 2: n; "
                                     "run 3: m)")
    assert result.render().splitlines()[0].startswith("warning: the runs are of different models")
    assert noise_floor(ROWS, [dict(r) for r in ROWS]).warning is None
    unnamed = [{k: v for k, v in r.items() if k != "model"} for r in ROWS]
    assert noise_floor(ROWS, unnamed).warning is None  # a run that names no model says nothing


def test_every_message_here_names_its_file(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(RowsError) as err:
        load_rows(path)
    assert re.match(re.escape(str(path)) + r": looks like CSV with columns a, b", str(err.value))
    assert "no column is `task_id`; no column is `reward`" in str(err.value)
