"""whileai_core.traces: the split never leaks, decontamination counts by hand, the export loads."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whileai_core.errors import ArgumentError, ConfigError, RowsError
from whileai_core.traces import (decontaminate, export_sft, failed_asks, load_traces, ngrams,
                                 rejection_sample, select_sft, split_by_task)


def _trace(tid, ask, reply=None, reward=None):
    msgs = [{"role": "user", "content": ask}]
    if reply is not None:
        msgs.append({"role": "assistant", "content": reply})
    out = {"task_id": tid, "messages": msgs}
    if reward is not None:
        out["reward"] = reward
    return out


def _traces(n_tasks=30, per_task=3):
    return [_trace(f"t{t}", f"ask number {t}: please compute {t} plus {t} for the ledger",
                   f"reply {r}", float((t + r) % 3 == 0))
            for t in range(n_tasks) for r in range(per_task)]


def test_split_is_by_task_and_ignores_row_order():
    rows = _traces()
    split = split_by_task(rows, share=0.2, seed=0)
    assert len(split.holdout_tasks) == 6 and len(split.train_tasks) == 24   # round(0.2 * 30)
    assert not set(split.holdout_tasks) & set(split.train_tasks)
    held, train = split.holdout(rows), split.train(rows)
    assert len(held) + len(train) == len(rows)
    assert {r["task_id"] for r in held} == set(split.holdout_tasks)
    again = split_by_task(list(reversed(rows)), share=0.2, seed=0)
    assert set(again.holdout_tasks) == set(split.holdout_tasks)
    assert set(split_by_task(rows, share=0.2, seed=1).holdout_tasks) != set(split.holdout_tasks)
    with pytest.raises(ArgumentError, match="at least 2 tasks"):
        split_by_task(rows[:3])
    with pytest.raises(ArgumentError, match="share"):
        split_by_task(rows, share=1.0)


def test_split_note_compares_with_holdout_size():
    from whileai_core.stats import holdout_size

    split = split_by_task(_traces())
    assert str(holdout_size().n_tasks) in split.note


@settings(max_examples=40, deadline=None)
@given(n_tasks=st.integers(2, 40), per_task=st.integers(1, 4), seed=st.integers(0, 10**6),
       share=st.floats(0.05, 0.95))
def test_held_out_tasks_never_reach_the_sft_set(n_tasks, per_task, seed, share):
    rows = _traces(n_tasks, per_task)
    split = split_by_task(rows, share=share, seed=seed)
    # even if someone feeds every trace (held-out ones included) to selection, decontamination
    # against the held-out side removes them
    chosen = select_sft(rows).records
    clean = decontaminate(chosen, split.holdout(rows)).records
    assert not {r["task_id"] for r in clean} & set(split.holdout_tasks)
    assert 1 <= len(split.holdout_tasks) <= n_tasks - 1


HELD = ("write a python function that merges two sorted lists of integers into one sorted "
        "list without using the builtin sort")                       # 20 words -> 13 8-grams


def test_eight_gram_rule_catches_a_constructed_near_copy():
    words = HELD.split()
    assert len(words) == 20 and len(ngrams(HELD)) == 13
    # change the last word: only the last 8-gram breaks -> 12/13 = 0.923 >= 0.8: dropped
    near = " ".join(words[:-1] + ["sorted"])
    # change word 11 (index 10): the 8 grams starting at indices 3..10 break -> 5/13 = 0.385: kept
    far = " ".join(words[:10] + ["strings"] + words[11:])
    train = [_trace("a", near, "x"), _trace("b", far, "x"), _trace("c", "unrelated ask", "x")]
    res = decontaminate(train, [{"task_id": "h1", "prompt": HELD}])
    by = {d.task_id: d for d in res.dropped}
    assert set(by) == {"a"}
    assert by["a"].reason == "ngram_overlap" and by["a"].overlap == pytest.approx(12 / 13)
    assert by["a"].matched_task == "h1"
    assert [r["task_id"] for r in res.records] == ["b", "c"]


def test_verbatim_and_same_task_are_dropped():
    held = [_trace("h1", "Sum the column!"), _trace("h2", "short ask")]
    train = [_trace("x", "sum   the COLUMN", "r"),      # verbatim after normalising
             _trace("h2", "a different ask entirely", "r"),
             _trace("y", "sum the column twice", "r")]  # 4 words: one gram, not in held out
    res = decontaminate(train, held)
    assert {d.task_id: d.reason for d in res.dropped} == {"x": "verbatim_prompt",
                                                          "h2": "held_out_task"}
    assert res.reasons == {"verbatim_prompt": 1, "held_out_task": 1}
    assert [r["task_id"] for r in res.records] == ["y"]


def test_failed_asks_rejection_sampling_and_selection():
    traces = [_trace("a", "ask a", "no", 0.0), _trace("a", "ask a", "no", 0.0),
              _trace("b", "ask b", "yes", 1.0), _trace("c", "ask c", "no", 0.0)]
    asks = failed_asks(traces)
    assert [a["task_id"] for a in asks] == ["a", "c"]
    assert asks[0]["messages"] == [{"role": "user", "content": "ask a"}]

    def attempt(messages, i):
        return "ok " + "padding " * (5 - i) if i % 2 else "wrong"

    def grade(ask, reply):  # a program grader: task c can never pass
        return float(reply.startswith("ok") and ask["task_id"] != "c")

    graded = rejection_sample(asks, attempt, grade, attempts=4)
    assert len(graded) == 8 and {g["attempt"] for g in graded} == {0, 1, 2, 3}
    sel = select_sft(graded)
    assert sel.n_asks == 2 and sel.n_kept == 1 and sel.asks_without_pass == ["c"]
    # attempts 1 and 3 pass on task a; the shorter reply (attempt 3, 2 paddings) is kept
    assert sel.records[0]["attempt"] == 3
    # attempt pass@1: task a 2/4, task c 0/4 -> mean 0.25 (hand count)
    assert sel.attempt_pass_at_1 == pytest.approx(0.25)
    with pytest.raises(ArgumentError, match="attempts"):
        rejection_sample(asks, attempt, grade, attempts=0)


def test_bad_traces_name_the_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(_trace("a", "q", "r")) + "\n"
                    + json.dumps({"task_id": "b", "messages": [{"role": "bot", "content": "x"}]}))
    with pytest.raises(RowsError, match=r"t.jsonl, line 2.*role in"):
        load_traces(str(path))
    with pytest.raises(RowsError, match=r"`reward`"):
        select_sft([_trace("a", "q", "r")])


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["[UNK]", "<eos>", "<|user|>", "<|assistant|>", "<|system|>"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", eos_token="<eos>")
    fast.chat_template = ("{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} <eos> "
                          "{% endfor %}")
    return fast


def test_export_loads_with_datasets_and_renders_with_a_chat_template(tmp_path):
    import datasets
    from trl.data_utils import apply_chat_template, is_conversational

    records = [_trace("a", "add 2 and 2", "4", 1.0) | {"extra": 1},
               {"task_id": "b", "messages": [{"role": "system", "content": "be terse"},
                                             {"role": "user", "content": "capital of France"},
                                             {"role": "assistant", "content": "Paris"}]}]
    out = tmp_path / "sft.jsonl"
    res = export_sft(records, out)
    assert res.n_records == 2 and res.n_assistant_turns == 2
    assert "assistant_only_loss" in res.trains_on
    ds = datasets.load_dataset("json", data_files=str(out), split="train",
                               cache_dir=str(tmp_path / "cache"))
    assert ds.column_names == ["messages"]
    assert ds[1]["messages"][2] == {"role": "assistant", "content": "Paris"}
    assert all(is_conversational(row) for row in ds)
    tok = _tokenizer()
    text = apply_chat_template(ds[1], tok)["text"]
    assert text == ("<|system|> be terse <eos> <|user|> capital of France <eos> "
                    "<|assistant|> Paris <eos> ")
    ids = tok.apply_chat_template(ds[0]["messages"], tokenize=True)
    ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
    assert tok.convert_tokens_to_ids("<|assistant|>") in ids
    with pytest.raises(ConfigError, match="already exists"):
        export_sft(records, out)
    with pytest.raises(RowsError, match="assistant turn"):
        export_sft([_trace("a", "q")], tmp_path / "other.jsonl")


def test_split_reads_graded_rows_and_partitions_them(tmp_path):
    from whileai_core import load_rows

    rows = [{"task_id": f"t{t}", "reward": float(j % 2)} for t in range(10) for j in range(4)]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    by_path = split_by_task(str(path), share=0.3)
    by_rows = split_by_task(load_rows(rows), share=0.3)
    by_dicts = split_by_task(rows, share=0.3)
    assert by_path.holdout_tasks == by_rows.holdout_tasks == by_dicts.holdout_tasks
    assert len(by_path.holdout_tasks) == 3                       # round(0.3 * 10)
    assert sorted(by_path.holdout_tasks + by_path.train_tasks) == sorted(f"t{t}" for t in range(10))


def test_grade_must_return_a_finite_number():
    asks = [_trace("a", "q")]
    with pytest.raises(ArgumentError, match="grade\\(\\) returned nan"):
        rejection_sample(asks, lambda m, i: "r", lambda a, r: float("nan"), attempts=2)
    with pytest.raises(ArgumentError, match="attempt\\(\\) returned a int"):
        rejection_sample(asks, lambda m, i: 3, lambda a, r: 1.0, attempts=2)


_WORDS = st.sampled_from("the a list sort merge value key index total add two one file row".split())


@settings(max_examples=60, deadline=None)
@given(held=st.lists(st.lists(_WORDS, min_size=1, max_size=20), min_size=1, max_size=4),
       ask=st.lists(_WORDS, min_size=1, max_size=20))
def test_overlap_matches_a_brute_force_count(held, ask):
    # definition: share of the ask's distinct 8-word windows (the whole text if shorter) that
    # appear as a window of some held-out prompt; recomputed here with plain slicing
    def windows(words):
        return {tuple(words)} if len(words) < 8 else \
            {tuple(words[i:i + 8]) for i in range(len(words) - 7)}

    held_windows = set().union(*(windows(h) for h in held))
    mine = windows(ask)
    expected = len(mine & held_windows) / len(mine)
    holdout = [{"task_id": f"h{i}", "prompt": " ".join(h)} for i, h in enumerate(held)]
    res = decontaminate([_trace("x", " ".join(ask), "r")], holdout)
    verbatim = any(h == ask for h in held)
    if verbatim:
        assert res.dropped[0].reason == "verbatim_prompt"
    elif expected >= 0.8:
        assert res.dropped[0].reason == "ngram_overlap"
        assert res.dropped[0].overlap == pytest.approx(expected)
    else:
        assert res.n_kept == 1 and not res.dropped


def test_errors_name_the_file_and_line_past_blank_lines(tmp_path):
    from whileai_core import RowsError, audit_judge, export_sft
    src = tmp_path / "attempts.jsonl"
    good = {"task_id": "a", "messages": [{"role": "user", "content": "hi"},
                                         {"role": "assistant", "content": "hello"}]}
    no_reply = {"task_id": "b", "messages": [{"role": "user", "content": "hi"}]}
    src.write_text(json.dumps(good) + "\n\n\n" + json.dumps(no_reply) + "\n")
    with pytest.raises(RowsError, match=r"attempts.jsonl, line 4: the conversation does not end"):
        export_sft(src, tmp_path / "out.jsonl")
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": 1, "label": true, "grades": {"j": true}}\n\n'
                     '{"id": 2, "label": "maybe", "grades": {"j": true}}\n')
    with pytest.raises(RowsError, match=r"items.jsonl, line 3: `label` is 'maybe'"):
        audit_judge(items)
