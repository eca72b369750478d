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
             _trace("y", "sum the rows twice", "r")]    # 4 words, not inside a held-out prompt
    res = decontaminate(train, held)
    assert {d.task_id: d.reason for d in res.dropped} == {"x": "verbatim_prompt",
                                                          "h2": "held_out_task"}
    assert res.reasons == {"verbatim_prompt": 1, "held_out_task": 1}
    assert [r["task_id"] for r in res.records] == ["y"]


def test_a_held_out_prompt_embedded_in_a_longer_ask_is_dropped():
    # HELD (20 words, 13 8-grams) pasted whole into a 60-word ask: the ask has 53 8-grams, 13 of
    # them held out (overlap 13/53 = 0.245, kept before 0.2), but all 13 of the held-out
    # prompt's grams are inside the ask: contained 13/13 = 1.0 >= 0.8.
    pad = [f"w{i}" for i in range(40)]
    ask = " ".join(pad[:20] + HELD.split() + pad[20:])
    res = decontaminate([_trace("a", ask, "x")], [{"task_id": "h1", "prompt": HELD}])
    (drop,) = res.dropped
    assert drop.reason == "embedded_prompt" and drop.matched_task == "h1"
    assert drop.overlap == pytest.approx(13 / 53) and drop.contained == 1.0


def test_training_prompts_under_eight_words_are_matched():
    held = [{"task_id": "h1", "prompt": "What is the capital of France?"},        # 6 words
            {"task_id": "h2", "prompt": "list every file in the build directory then "
                                        "delete the ones older than a week"}]
    train = [_trace("a", "what is the capital of france please", "r"),  # 7 words: h1 inside it
             _trace("b", "delete the ones older than a week", "r"),     # 7 words: inside h2
             _trace("c", "what is the capital of spain", "r"),          # 6 words: no match
             _trace("d", "hello there", "r")]                           # under 3 words: verbatim only
    res = decontaminate(train, held)
    by = {d.task_id: d for d in res.dropped}
    # a: h1's one 6-word gram is a window of a -> contained 1.0; a's own 7-word gram is not a
    # window of any held-out prompt -> overlap 0
    assert by["a"].reason == "embedded_prompt" and by["a"].matched_task == "h1"
    assert (by["a"].overlap, by["a"].contained) == (0.0, 1.0)
    # b: its whole 7-word sequence is a window of h2 -> overlap 1.0
    assert by["b"].reason == "ngram_overlap" and by["b"].matched_task == "h2"
    assert [r["task_id"] for r in res.records] == ["c", "d"]


def test_a_near_copy_is_credited_to_the_held_out_task_it_copies():
    # h1 and h2 share their first 20 words and differ in the last 3; the ask copies h2 with its
    # first word changed. Before 0.2 each shared 8-gram was owned by h1 (first seen), so the
    # 12 shared grams outvoted h2's 3 own ones and the drop named h1.
    stem = ("compute the running median of a stream of integers using two heaps and keep both "
            "heaps balanced after each value").split()
    h1, h2 = stem + "print the median".split(), stem + "return the median".split()
    ask = ["please"] + h2[1:]
    held = [{"task_id": "h1", "prompt": " ".join(h1)}, {"task_id": "h2", "prompt": " ".join(h2)}]
    (drop,) = decontaminate([_trace("a", " ".join(ask), "x")], held).dropped
    # hand count: 23 words -> 16 8-grams; the first is broken; 12 lie inside the shared stem and
    # 3 reach into h2's own tail: 15 of h2's grams, 12 of h1's
    ask_grams = ngrams(" ".join(ask))
    assert len(ask_grams) == 16 and len(stem) == 20
    assert len(ask_grams & ngrams(" ".join(h2))) == 15
    assert len(ask_grams & ngrams(" ".join(h1))) == 12
    assert drop.reason == "ngram_overlap" and drop.overlap == pytest.approx(15 / 16)
    assert drop.matched_task == "h2"


def test_failed_asks_rejection_sampling_and_selection():
    traces = [_trace("a", "ask a", "no", 0.0), _trace("a", "ask a", "no", 0.0),
              _trace("b", "ask b", "yes", 1.0), _trace("c", "ask c", "no", 0.0)]
    asks = failed_asks(traces).asks
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
    datasets = pytest.importorskip("datasets")
    pytest.importorskip("trl")
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
    # definitions, recomputed here with plain slicing: a text of at least 8 words has its 8-word
    # windows; a shorter one (3+ words) is one gram of its own length, matched against windows of
    # that length on the other side. overlap = share of the ask's grams found in held-out
    # prompts; contained = the largest share of one held-out prompt's grams found in the ask.
    def windows(words, size):
        return {tuple(words[i:i + size]) for i in range(len(words) - size + 1)}

    def grams(words):
        if len(words) >= 8:
            return windows(words, 8), 8
        return ({tuple(words)}, len(words)) if len(words) >= 3 else (set(), 0)

    mine, size = grams(ask)
    found = {g for g in mine if any(g in windows(h, size) for h in held)}
    overlap = len(found) / len(mine) if mine else 0.0
    contained = 0.0
    for h in held:
        theirs, hsize = grams(h)
        if theirs and (len(ask) >= 8 or hsize < 8):
            contained = max(contained, len(theirs & windows(ask, hsize)) / len(theirs))
    holdout = [{"task_id": f"h{i}", "prompt": " ".join(h)} for i, h in enumerate(held)]
    res = decontaminate([_trace("x", " ".join(ask), "r")], holdout)
    if any(h == ask for h in held):
        assert res.dropped[0].reason == "verbatim_prompt"
    elif overlap >= 0.8:
        assert res.dropped[0].reason == "ngram_overlap"
        assert res.dropped[0].overlap == pytest.approx(overlap)
    elif contained >= 0.8:
        assert res.dropped[0].reason == "embedded_prompt"
        assert res.dropped[0].contained == pytest.approx(contained)
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
    with pytest.raises(RowsError, match=r'items.jsonl, line 3: `label` is "maybe"'):
        audit_judge(items)
