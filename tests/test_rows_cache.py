"""Load once: the rows cache parses an unchanged file once, a changed file again (however it was
changed: rewritten, its time put back, written through a mapping, swapped mid-parse), one file
once for calls that arrive together, and holds no more than its bound, as it reports it and as
``tracemalloc`` measures it. Parses are counted, never timed."""

from __future__ import annotations

import os
import threading

import pytest

from test_server_support import GRPO_OUTCOMES, MODEL, call, ok, rows_of, write_jsonl
from whileai_core import RowsError, rows as rows_module
from whileai_core import rows_cache
from whileai_core.rows_cache import RowsCache


@pytest.fixture()
def parses(monkeypatch):
    """Every parse of a rows file, by path."""
    seen: list[str] = []
    read = rows_module.read_rows

    def counting(fh, *args, **kw):
        seen.append(str(fh.path))
        return read(fh, *args, **kw)

    monkeypatch.setattr(rows_module, "read_rows", counting)
    return seen


def test_an_unchanged_file_is_parsed_once(tmp_path, parses):
    path = write_jsonl(tmp_path / "r.jsonl", rows_of(GRPO_OUTCOMES))
    cache = RowsCache()
    first, second = cache.load(path), cache.load(str(path))
    assert len(parses) == 1 and cache.parses == 1 and cache.hits == 1
    assert second.reward is first.reward and second.task_index is first.task_index
    # the pass rates of GRPO_OUTCOMES, by hand: a 3/4, b 1/4, c 4/4, d 0/4
    assert second.pass_rate().tolist() == [0.75, 0.25, 1.0, 0.0]


def test_another_threshold_reads_the_same_load(tmp_path, parses):
    path = write_jsonl(tmp_path / "r.jsonl", [{"task_id": "a", "reward": r}
                                              for r in (0.2, 0.6, 0.9, 1.0)])
    cache = RowsCache()
    assert cache.load(path).passes.tolist() == [1]            # only 1.0 >= 1.0
    assert cache.load(path, threshold=0.5).passes.tolist() == [3]
    assert cache.load(path).passes.tolist() == [1]
    assert len(parses) == 1


def test_a_kept_load_keeps_its_budgets_and_reads_the_reward_at_each_threshold(tmp_path, parses):
    # a 0-10 grade: at the default mark 1.0 nearly every reply passes (a warning); at 5 it reads
    path = write_jsonl(tmp_path / "r.jsonl", [
        {"task_id": "a", "reward": 7.0, "max_tokens": 256, "finish_reason": "length"},
        {"task_id": "a", "reward": 2.0, "max_tokens": 256, "completion_tokens": 90}])
    cache = RowsCache()
    plain, at_five = cache.load(path), cache.load(path, threshold=5)
    assert len(parses) == 1 and at_five.budget is plain.budget
    assert plain.budget.max_tokens.tolist() == [256.0, 256.0]
    assert not plain.budget.max_tokens.flags.writeable   # shared by every caller
    assert plain.truncated.tolist() == [True, False]     # `length` and nothing said
    assert at_five.truncated.tolist() == [True, False] and at_five.passes.tolist() == [1]
    assert plain.reward_scale.looks_like == "0-10" and plain.reward_scale.threshold == 1.0
    assert "threshold=10" in plain.reward_scale.warning
    assert at_five.reward_scale.threshold == 5.0 and "as given" in at_five.reward_scale.warning
    assert cache.load(path).reward_scale is plain.reward_scale   # read once per load


@pytest.mark.parametrize("change", ["rewrite", "same size, time put back", "append"])
def test_a_changed_file_is_parsed_again(tmp_path, parses, change):
    path = write_jsonl(tmp_path / "r.jsonl", [{"task_id": "a", "reward": 1.0}])
    cache = RowsCache()
    assert cache.load(path).reward.tolist() == [1.0]
    st = os.stat(path)
    if change == "append":
        with open(path, "a") as fh:
            fh.write('{"task_id": "b", "reward": 0.0}\n')
    else:
        path.write_text(path.read_text().replace("1.0", "0.0"))  # the same number of bytes
        if change == "same size, time put back":
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    rows = cache.load(path)
    assert len(parses) == 2
    assert rows.reward.tolist() == ([1.0, 0.0] if change == "append" else [0.0])


def test_calls_at_once_share_one_parse(tmp_path, monkeypatch):
    path = write_jsonl(tmp_path / "r.jsonl", rows_of(GRPO_OUTCOMES))
    cache = RowsCache()
    callers = 6
    looked = threading.Semaphore(0)
    key = rows_cache._key

    def counting_key(fh):
        looked.release()
        return key(fh)

    read = rows_module.read_rows
    parsed = []

    def slow_read(fh, *args, **kw):
        parsed.append(fh)
        # hold the parse until every caller has looked the file up (each looks once before
        # it waits, and once more after), so all of them arrive while it is under way
        for _ in range(callers):
            assert looked.acquire(timeout=60)
        return read(fh, *args, **kw)

    monkeypatch.setattr(rows_cache, "_key", counting_key)
    monkeypatch.setattr(rows_module, "read_rows", slow_read)
    got: list = []
    threads = [threading.Thread(target=lambda: got.append(cache.load(path)))
               for _ in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(got) == callers and len(parsed) == 1 and cache.parses == 1
    assert all(r.reward is got[0].reward for r in got)  # one load, a view for each caller


def test_bounded_by_count_least_recently_used_first(tmp_path, parses):
    cache = RowsCache(max_files=2)
    paths = [write_jsonl(tmp_path / f"{i}.jsonl", [{"task_id": "a", "reward": float(i)}])
             for i in range(3)]
    for p in paths:
        cache.load(p)
    cache.load(paths[1])           # used again: the most recent
    assert len(cache) == 2 and len(parses) == 3
    cache.load(paths[1])
    cache.load(paths[2])
    assert len(parses) == 3        # both still kept
    cache.load(paths[0])           # was dropped first
    assert len(parses) == 4 and len(cache) == 2


def test_bounded_by_memory(tmp_path, parses):
    path = write_jsonl(tmp_path / "r.jsonl", rows_of(GRPO_OUTCOMES))
    cache = RowsCache(max_mb=1e-6)  # smaller than any file's rows: nothing is kept
    cache.load(path)
    cache.load(path)
    assert len(parses) == 2 and len(cache) == 0


def test_cached_rows_are_read_only(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", rows_of(GRPO_OUTCOMES))
    rows = RowsCache().load(path)
    with pytest.raises(ValueError):
        rows.reward[0] = 5.0


def test_errors_are_the_loaders_and_nothing_is_kept(tmp_path, parses):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"task_id": "a", "reward": 1}\n{"task_id": "b"}\n')
    cache = RowsCache()
    for _ in range(2):
        with pytest.raises(RowsError, match="line 2: row has no `reward`"):
            cache.load(path)
    assert len(parses) == 2 and len(cache) == 0
    with pytest.raises(RowsError, match="no such file"):
        cache.load(tmp_path / "missing.jsonl")


def test_a_second_route_in_one_server_session_does_not_parse(server, ws, parses,
                                                                  monkeypatch):
    monkeypatch.setattr(rows_cache, "SHARED", RowsCache())
    # 12 tasks (a-d three times): the route needs 6 before it answers question 3
    twelve = {f"{t}{i}": o for i in range(3) for t, o in GRPO_OUTCOMES.items()}
    write_jsonl(ws / "runs" / "r.jsonl", rows_of(twelve))
    first = ok(call(server, "route_rows", {"rows": "runs/r.jsonl", "model": MODEL}))
    second = ok(call(server, "route_rows", {"rows": "runs/r.jsonl", "model": MODEL}))
    assert first == second and first["route"] == "grpo"
    assert len(parses) == 1
    ok(call(server, "rate", {"rows": "runs/r.jsonl"}))
    assert len(parses) == 1
