"""audit_judge, order_reversal, select_sft, decontaminate, export_sft through the protocol.

Expected values are hand-derived from the literal items below; Wilson intervals come from scipy
(binomtest(...).proportion_ci(method="wilson")) as the outside reference.
"""

from __future__ import annotations

import json

import pytest
from scipy.stats import binomtest

from test_server_support import call, error_text, ok, write_jsonl


def convo(task, user, reply=None, **extra):
    messages = [{"role": "user", "content": user}]
    if reply is not None:
        messages.append({"role": "assistant", "content": reply})
    return {"task_id": task, "messages": messages, **extra}


# --- audit_judge ---------------------------------------------------------------------------

# 10 labelled replies, 5 pass and 5 fail. judge-a agrees with every label; judge-b passes all.
ITEMS = [{"id": f"r{i}", "label": i < 5, "grades": {"judge-a": i < 5, "judge-b": True}}
         for i in range(10)]


def test_audit_judge_numbers(server, ws):
    write_jsonl(ws / "labels.jsonl", ITEMS)
    out = ok(call(server, "audit_judge", {"items": "labels.jsonl"}))
    a, b = out["judges"]
    assert (out["n_items"], out["n_label_fail"]) == (10, 5)
    # judge-a: agreement 10/10, kappa 1, false pass 0/5
    assert (a["agreement"], a["kappa"], a["false_pass"]) == (1.0, 1.0, 0.0)
    lo, hi = binomtest(10, 10).proportion_ci(confidence_level=0.95, method="wilson")
    assert a["agreement_ci"] == pytest.approx([lo, hi], abs=1e-9)
    # ... but its Wilson lower bound (0.72) is under 0.8 and 5 failures < 97 needed
    assert lo < 0.8 and a["verdict"] == "label_more"
    # failures for +-0.1 on a rate (worst case p = 0.5): ceil(1.96^2 * 0.25 / 0.01) = 97
    assert out["failures_needed"] == 97
    # judge-b: agreement 5/10; kappa = (0.5 - 0.5) / (1 - 0.5) = 0; passes all 5 failures
    assert (b["agreement"], b["kappa"], b["false_pass"]) == (0.5, 0.0, 1.0)
    assert b["verdict"] == "fails"
    assert out["best"] is None and "92 more labelled failures" in out["next_step"]


def test_audit_judge_bad_items(server, ws):
    write_jsonl(ws / "nolabel.jsonl", [{"id": "r1", "grades": {"a": True}}])
    text = error_text(call(server, "audit_judge", {"items": "nolabel.jsonl"}), "audit_judge")
    assert "nolabel.jsonl, line 1:" in text and "no `label`" in text and "Fix" in text
    text = error_text(call(server, "audit_judge", {"items": ITEMS, "min_kappa": 2}),
                      "audit_judge")
    assert "`min_kappa` = 2: must be at most 1 (0 to 1)" in text
    text = error_text(call(server, "audit_judge", {"items": "../labels.jsonl"}), "audit_judge")
    assert "contains '..'" in text


# --- order_reversal ------------------------------------------------------------------------

def test_order_reversal_numbers(server):
    pairs = [{"id": 1, "forward": "first", "reversed": "second"},   # consistent
             {"id": 2, "forward": "first", "reversed": "first"},    # flip
             {"id": 3, "forward": "tie", "reversed": "tie"},        # consistent
             {"id": 4, "forward": "second", "reversed": "tie"}]     # flip through a tie
    out = ok(call(server, "order_reversal", {"pairs": pairs}))
    assert (out["n_pairs"], out["flips"], out["tie_flips"], out["consistent"]) == (4, 2, 1, 2)
    assert out["flip_rate"] == 0.5 and out["verdict"] == "top_pick_only"
    lo, hi = binomtest(2, 4).proportion_ci(confidence_level=0.95, method="wilson")
    assert out["flip_ci"] == pytest.approx([lo, hi], abs=1e-9)


def test_order_reversal_bad_pick(server):
    text = error_text(call(server, "order_reversal",
                           {"pairs": [{"forward": "left", "reversed": "first"}]}), "order_reversal")
    assert '`forward` is "left" (a string)' in text and "Fix" in text


# --- select_sft ----------------------------------------------------------------------------

ATTEMPTS = [convo("a", "q-a", "a long reply", reward=1.0),
            convo("a", "q-a", "short", reward=1.0),      # same reward, shorter: kept for a
            convo("a", "q-a", "wrong", reward=0.0),
            convo("b", "q-b", "no", reward=0.0),
            convo("b", "q-b", "no", reward=0.0),          # b never passes
            convo("c", "q-c", "yes", reward=1.0)]


def test_select_sft_numbers_and_out(server, ws):
    write_jsonl(ws / "attempts.jsonl", ATTEMPTS)
    out = ok(call(server, "select_sft", {"attempts": "attempts.jsonl"}))
    assert out["records"] == [ATTEMPTS[1], ATTEMPTS[5]]
    assert (out["n_asks"], out["n_attempts"], out["n_kept"]) == (3, 6, 2)
    assert out["asks_without_pass"] == ["b"]
    assert out["attempt_pass_at_1"] == pytest.approx((2 / 3 + 0 + 1) / 3)   # by ask
    # with `out`: the same records go to the file, not into the reply
    out2 = ok(call(server, "select_sft", {"attempts": "attempts.jsonl", "out": "sft/kept.jsonl"}))
    assert out2["records"] == [] and out2["n_kept"] == 2
    lines = (ws / "sft" / "kept.jsonl").read_text().splitlines()
    assert [json.loads(x) for x in lines] == [ATTEMPTS[1], ATTEMPTS[5]]
    text = error_text(call(server, "select_sft", {"attempts": "attempts.jsonl",
                                                  "out": "sft/kept.jsonl"}), "select_sft")
    assert "already exists; not overwriting it" in text


def test_select_sft_needs_rewards(server):
    text = error_text(call(server, "select_sft", {"attempts": [convo("a", "q", "r")]}),
                      "select_sft")
    assert "`reward` is null or missing" in text and "Fix" in text


# --- decontaminate -------------------------------------------------------------------------

HELD_WORDS = "one two three four five six seven eight nine ten"
HOLDOUT = [{"task_id": "t2", "prompt": "anything at all"},
           {"task_id": "h1", "prompt": "Sort these numbers: 3, 1, 2!"},
           {"task_id": "h3", "prompt": HELD_WORDS}]
TRAIN = [convo("t1", "Write a haiku about the sea", "waves"),            # kept
         convo("t2", "a different prompt", "x"),                          # its task is held out
         convo("t3", "sort these numbers 3 1 2", "1 2 3"),                 # verbatim after normalising
         convo("t4", HELD_WORDS + " eleven", "y")]   # 8-grams: 3 of its 4 are held out -> 0.75


def test_decontaminate_reasons(server, ws):
    write_jsonl(ws / "train.jsonl", TRAIN)
    out = ok(call(server, "decontaminate", {"train": "train.jsonl", "holdout": HOLDOUT,
                                            "max_overlap": 0.7}))
    assert [r["task_id"] for r in out["records"]] == ["t1"]
    dropped = {d["task_id"]: d for d in out["dropped"]}
    assert dropped["t2"]["reason"] == "held_out_task"
    assert dropped["t3"]["reason"] == "verbatim_prompt" and dropped["t3"]["matched_task"] == "h1"
    assert dropped["t4"]["reason"] == "ngram_overlap" and dropped["t4"]["overlap"] == 0.75
    assert out["reasons"] == {"held_out_task": 1, "verbatim_prompt": 1, "ngram_overlap": 1}
    # at the default 0.8, t4's 0.75 overlap is under the bar, but all 3 of h3's 8-grams are in
    # t4 (h3 is embedded whole): dropped as embedded_prompt (kept before 0.2)
    kept = ok(call(server, "decontaminate", {"train": "train.jsonl", "holdout": HOLDOUT}))
    assert [r["task_id"] for r in kept["records"]] == ["t1"]
    (t4,) = [d for d in kept["dropped"] if d["task_id"] == "t4"]
    assert (t4["reason"], t4["contained"], t4["matched_task"]) == ("embedded_prompt", 1.0, "h3")


def test_decontaminate_bad_ngram(server):
    text = error_text(call(server, "decontaminate", {"train": TRAIN, "holdout": HOLDOUT,
                                                     "ngram": 0}), "decontaminate")
    assert "`ngram` = 0: must be at least 1 (1 to 64)" in text


# --- export_sft ----------------------------------------------------------------------------

def test_export_sft_writes_trl_conversations(server, ws):
    records = [convo("a", "q-a", "short", reward=1.0), convo("c", "q-c", "yes")]
    out = ok(call(server, "export_sft", {"records": records, "out": "sft/train.jsonl"}))
    path = ws / "sft" / "train.jsonl"
    assert out["path"] == str(path.resolve()) and out["n_records"] == 2
    assert out["n_assistant_turns"] == 2
    assert [json.loads(x) for x in path.read_text().splitlines()] == [
        {"messages": [{"role": "user", "content": "q-a"}, {"role": "assistant", "content": "short"}]},
        {"messages": [{"role": "user", "content": "q-c"}, {"role": "assistant", "content": "yes"}]}]


@pytest.mark.parametrize("args, says", [
    ({"records": [convo("a", "q")], "out": "x.jsonl"}, "does not end with an assistant turn"),
    ({"records": [convo("a", "q", "r")], "out": "/tmp/escape.jsonl"}, "outside the workspace root"),
    ({"records": [convo("a", "q", "r")], "out": "../escape.jsonl"}, "contains '..'"),
    ({"records": [convo("a", "q", "r")]}, "`out`: is required"),
])
def test_export_sft_refusals(server, args, says):
    assert says in error_text(call(server, "export_sft", args), "export_sft")


def test_export_sft_keeps_an_existing_file(server, ws):
    (ws / "train.jsonl").write_text("mine\n")
    text = error_text(call(server, "export_sft", {"records": [convo("a", "q", "r")],
                                                  "out": "train.jsonl"}), "export_sft")
    assert "already exists; not overwriting it" in text
    assert (ws / "train.jsonl").read_text() == "mine\n"


# --- split_by_task ---------------------------------------------------------------------------

def _graded(ws, n_tasks=48, k=4):
    rows = [{"task_id": f"t{t:02d}", "reward": float((t + j) % 3 == 0)}
            for t in range(n_tasks) for j in range(k)]
    (ws / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def test_split_writes_each_side_whole_tasks(server, ws):
    rows = _graded(ws)
    out = ok(call(server, "split_by_task", {"rows": "rows.jsonl", "out": "ids.json",
                                            "holdout_out": "hold.jsonl",
                                            "train_out": "train.jsonl"}))
    held = json.loads((ws / "ids.json").read_text())
    assert held == out["holdout_tasks"] and len(held) == round(0.2 * 48) == out["n_holdout"]
    read = [json.loads(x) for x in (ws / "hold.jsonl").read_text().splitlines()]
    train = [json.loads(x) for x in (ws / "train.jsonl").read_text().splitlines()]
    assert read == [r for r in rows if r["task_id"] in held]
    assert train == [r for r in rows if r["task_id"] not in held]
    assert len(read) + len(train) == 192
    assert out["written"] == ["wrote 10 held-out task ids to ids.json",
                              "wrote 40 held-out records to hold.jsonl",
                              "wrote 152 training records to train.jsonl"]


def test_split_with_one_path_for_both_sides_is_refused_and_writes_nothing(server, ws):
    # the bug this guards: both sides written to one file with overwrite=true, the second
    # replacing the first: "success", and 40 of the 192 rows gone from the file
    _graded(ws)
    (ws / "same.jsonl").write_text("mine\n")
    text = error_text(call(server, "split_by_task", {
        "rows": "rows.jsonl", "out": "ids.json", "holdout_out": "same.jsonl",
        "train_out": "./same.jsonl", "overwrite": True}), "split_by_task")
    assert "`holdout_out` and `train_out` name the same file" in text and "nothing was written" \
        in text
    assert (ws / "same.jsonl").read_text() == "mine\n" and not (ws / "ids.json").exists()


def test_split_that_would_write_over_its_own_input_is_refused(server, ws):
    # an output naming the file being split, even with overwrite=true, would replace the 192
    # rows with one side of them: refused before anything is written
    _graded(ws)
    before = (ws / "rows.jsonl").read_bytes()
    for side in ("holdout_out", "train_out", "out"):
        text = error_text(call(server, "split_by_task", {
            "rows": "rows.jsonl", side: "./rows.jsonl", "overwrite": True}), "split_by_task")
        assert f"`rows` and `{side}` name the same file" in text, text
        assert "nothing was written" in text
        assert (ws / "rows.jsonl").read_bytes() == before
