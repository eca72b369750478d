"""The judge and traces subcommands: audit-judge, order-reversal, split, select-sft,
decontaminate, export-sft. Expected values are worked out by hand from the small files written
here; flags are checked to reach the function (a changed flag changes the answer)."""

from __future__ import annotations

import inspect
import json
import math
from pathlib import Path

import pytest
from scipy.stats import norm

from whileai_core import judge, traces
from whileai_core.cli import build_parser, main


def _jsonl(path: Path, records: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def _run_json(capsys, argv: list[str], code: int = 0) -> dict:
    """The --json result; ``code``: the exit code its verdict gives (1: negative)."""
    assert main(argv + ["--json"]) == code
    return json.loads(capsys.readouterr().out)


def _one_line_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    return captured.err


def _wilson(s: int, n: int, level: float = 0.95) -> tuple[float, float]:
    z = norm.ppf(0.5 + level / 2)
    p = s / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def _msg(role: str, content: str) -> dict:
    return {"role": role, "content": content}


# --- every flag mirrors its function argument's default -------------------------------------

@pytest.mark.parametrize("argv, func, mapping", [
    (["audit-judge", "x"], judge.audit_judge,
     {"judges": "judges", "min_agreement": "min_agreement", "min_kappa": "min_kappa",
      "max_false_pass": "max_false_pass", "half_width": "half_width", "level": "level"}),
    (["order-reversal", "x"], judge.order_reversal,
     {"max_flips": "max_flips", "level": "level"}),
    (["split", "x"], traces.split_by_task, {"share": "share", "seed": "seed"}),
    (["select-sft", "x"], traces.select_sft, {"threshold": "threshold"}),
    (["decontaminate", "x", "y"], traces.decontaminate,
     {"ngram": "ngram", "max_overlap": "max_overlap"}),
    (["export-sft", "x", "--out", "y"], traces.export_sft, {"overwrite": "overwrite"}),
])
def test_flag_defaults_are_the_function_defaults(argv, func, mapping):
    args = build_parser().parse_args(argv)
    params = inspect.signature(func).parameters
    for flag, param in mapping.items():
        assert getattr(args, flag) == params[param].default, flag


# --- audit-judge ---------------------------------------------------------------------------

# 10 items: labels pass x6, fail x4. judge-a agrees except on one label-fail item it passes;
# judge-b passes everything.
LABELS = [True] * 6 + [False] * 4
A = [True] * 6 + [True, False, False, False]


@pytest.fixture
def items(tmp_path):
    return _jsonl(tmp_path / "items.jsonl", [
        {"id": f"t{i}", "label": lab, "grades": {"judge-a": a, "judge-b": "pass"}}
        for i, (lab, a) in enumerate(zip(LABELS, A))])


def test_audit_judge_numbers_by_hand(items, capsys):
    data = _run_json(capsys, ["audit-judge", items], code=1)  # no judge clears: best none
    assert data["n_items"] == 10 and data["n_label_fail"] == 4
    # worst-case p = 0.5 at +-0.1: ceil(z^2 * 0.25 / 0.01) with z = 1.95996 -> ceil(96.04) = 97
    assert data["failures_needed"] == math.ceil(norm.ppf(0.975) ** 2 * 0.25 / 0.1 ** 2) == 97
    a, b = data["judges"]
    assert a["name"] == "judge-a" and b["name"] == "judge-b"
    # judge-a: p_o = 9/10; pass shares 0.6 (labels), 0.7 (judge): p_e = .6*.7 + .4*.3 = 0.54
    assert a["agreement"] == pytest.approx(0.9)
    assert a["agreement_ci"] == pytest.approx(_wilson(9, 10))
    assert a["kappa"] == pytest.approx((0.9 - 0.54) / (1 - 0.54))
    assert a["false_pass"] == pytest.approx(1 / 4) and a["false_fail"] == pytest.approx(0.0)
    assert a["false_pass_ci"] == pytest.approx(_wilson(1, 4))
    assert a["verdict"] == "fails"                     # false pass 0.25 > 0.1
    # judge-b (always pass): p_o = 0.6 = p_e, kappa 0; passes all 4 label-fail items
    assert b["agreement"] == pytest.approx(0.6) and b["kappa"] == pytest.approx(0.0)
    assert b["false_pass"] == pytest.approx(1.0) and b["verdict"] == "fails"
    assert data["best"] is None


def test_audit_judge_flags_reach_the_function(items, capsys):
    data = _run_json(capsys, ["audit-judge", items, "--judges", "judge-a",
                              "--max-false-pass", "0.3", "--level", "0.9"], code=1)
    (a,) = data["judges"]
    # kappa 0.78 >= 0.6, agreement 0.9 >= 0.8, false pass 0.25 <= 0.3; lower bound < 0.8
    assert a["verdict"] == "label_more"
    assert a["agreement_ci"] == pytest.approx(_wilson(9, 10, level=0.9))
    assert data["floors"]["false_pass_max"] == 0.3
    assert main(["audit-judge", items]) == 1  # label_more and fails: no judge clears
    out = capsys.readouterr().out
    assert "judge audit: 10 labelled items, 4 labelled failures" in out and "judge-b: fails" in out


def test_audit_judge_bad_file(tmp_path, capsys):
    bad = tmp_path / "items.jsonl"
    bad.write_text('{"id": 1, "label": true, "grades": {"j": true}}\n\n{"id": 2, "label": \n')
    err = _one_line_error(capsys, ["audit-judge", str(bad)])
    assert f"{bad}, line 3" in err and "Fix:" in err
    err = _one_line_error(capsys, ["audit-judge", str(tmp_path / "missing.jsonl")])
    assert "missing.jsonl" in err and "no such file" in err and "Fix:" in err


# --- order-reversal ------------------------------------------------------------------------

PAIRS = [("first", "second"), ("second", "first"), ("tie", "tie"),   # consistent
         ("first", "first"), ("tie", "second")]                        # flips, one via a tie


def test_order_reversal_by_hand(tmp_path, capsys):
    path = _jsonl(tmp_path / "pairs.jsonl",
                  [{"id": i, "forward": f, "reversed": r} for i, (f, r) in enumerate(PAIRS)])
    data = _run_json(capsys, ["order-reversal", path], code=1)  # top_pick_only, below
    assert (data["n_pairs"], data["consistent"], data["flips"], data["tie_flips"]) == (5, 3, 2, 1)
    assert data["flip_rate"] == pytest.approx(0.4)
    assert data["flip_ci"] == pytest.approx(_wilson(2, 5))
    assert data["verdict"] == "top_pick_only"            # 0.4 > 0.05
    assert _run_json(capsys, ["order-reversal", path, "--max-flips", "0.5"])["verdict"] == "ranking"
    assert main(["order-reversal", path]) == 1            # top_pick_only: a negative verdict
    assert "2 of 5 pairs flip" in capsys.readouterr().out


def test_order_reversal_bad_value(tmp_path, capsys):
    path = _jsonl(tmp_path / "pairs.jsonl", [{"id": 1, "forward": "first", "reversed": "left"}])
    err = _one_line_error(capsys, ["order-reversal", path])
    assert "pairs.jsonl, line 1:" in err and "reversed" in err and "Fix:" in err


# --- split ---------------------------------------------------------------------------------

def test_split_holds_out_whole_tasks(tmp_path, capsys):
    tasks = [f"task-{i}" for i in range(10)]
    path = _jsonl(tmp_path / "rows.jsonl",
                  [{"task_id": t, "reward": r} for t in tasks for r in (0.0, 1.0)])
    data = _run_json(capsys, ["split", path])
    assert len(data["holdout_tasks"]) == 2                # round(0.2 * 10)
    assert sorted(data["holdout_tasks"] + data["train_tasks"]) == sorted(tasks)
    assert not set(data["holdout_tasks"]) & set(data["train_tasks"])
    data = _run_json(capsys, ["split", path, "--share", "0.3", "--seed", "7"])
    assert len(data["holdout_tasks"]) == 3 and data["seed"] == 7
    err = _one_line_error(capsys, ["split", path, "--share", "1.5"])
    assert "share" in err and "1.5" in err and "Fix:" in err


def test_split_writes_the_frozen_test_and_each_side_from_a_shell(tmp_path, capsys):
    """The CLI does what the split_by_task tool does (the sft-from-traces journey from a shell):
    the held-out ids, and each side's records, every record of a task on one side."""
    tasks = [f"task-{i}" for i in range(10)]
    records = [{"task_id": t, "reward": r, "messages": [_msg("user", t), _msg("assistant", "a")]}
               for t in tasks for r in (0.0, 1.0)]
    path = _jsonl(tmp_path / "rows.jsonl", records)
    out, hold, train = (tmp_path / n for n in ("ids.json", "holdout.jsonl", "train.jsonl"))
    data = _run_json(capsys, ["split", path, "--out", str(out), "--holdout-out", str(hold),
                              "--train-out", str(train)])
    held = json.loads(out.read_text())
    assert held == data["holdout_tasks"] and len(held) == 2
    read = lambda f: [json.loads(line) for line in f.read_text().splitlines()]  # noqa: E731
    assert read(hold) == [r for r in records if r["task_id"] in held]
    assert read(train) == [r for r in records if r["task_id"] not in held]
    # nothing half-written: one existing file refuses the whole call without --force
    fresh = tmp_path / "fresh.jsonl"
    err = _one_line_error(capsys, ["split", path, "--holdout-out", str(fresh),
                                   "--train-out", str(train)])
    assert "--train-out" in err and "--force" in err and not fresh.exists()
    err = _one_line_error(capsys, ["split", path, "--holdout-out", str(fresh),
                                   "--train-out", str(tmp_path), "--force"])
    assert "not a regular file" in err and not fresh.exists()
    assert main(["split", path, "--share", "0.3", "--train-out", str(train),
                 "--force"]) == 0
    assert len({r["task_id"] for r in read(train)}) == 7
    assert "wrote 14 training records to" in capsys.readouterr().out
    # one file for two outputs: refused before anything is written (was: 152 of 192 rows lost)
    err = _one_line_error(capsys, ["split", path, "--holdout-out", str(train),
                                   "--train-out", str(train), "--force"])
    assert "`--holdout-out` and `--train-out` name the same file" in err
    assert len({r["task_id"] for r in read(train)}) == 7


# --- select-sft ----------------------------------------------------------------------------

ATTEMPTS = [
    {"task_id": "t1", "messages": [_msg("user", "q1"), _msg("assistant", "a long answer")],
     "reward": 1.0},
    {"task_id": "t1", "messages": [_msg("user", "q1"), _msg("assistant", "short")], "reward": 1.0},
    {"task_id": "t1", "messages": [_msg("user", "q1"), _msg("assistant", "wrong")], "reward": 0.0},
    {"task_id": "t2", "messages": [_msg("user", "q2"), _msg("assistant", "no")], "reward": 0.0},
    {"task_id": "t2", "messages": [_msg("user", "q2"), _msg("assistant", "half")], "reward": 0.5},
    {"task_id": "t3", "messages": [_msg("user", "q3"), _msg("assistant", "great answer")],
     "reward": 2.0},
    {"task_id": "t3", "messages": [_msg("user", "q3"), _msg("assistant", "ok")], "reward": 1.0},
]


def test_select_sft_by_hand(tmp_path, capsys):
    path = _jsonl(tmp_path / "attempts.jsonl", ATTEMPTS)
    data = _run_json(capsys, ["select-sft", path])
    assert (data["n_asks"], data["n_attempts"], data["n_kept"]) == (3, 7, 2)
    assert data["asks_without_pass"] == ["t2"]
    # per-task pass rates 2/3, 0/2, 2/2 -> mean 5/9
    assert data["attempt_pass_at_1"] == pytest.approx(5 / 9)
    # t1: two passes at 1.0, the shorter reply wins; t3: the higher reward wins
    kept = {r["task_id"]: r["messages"][-1]["content"] for r in data["records"]}
    assert kept == {"t1": "short", "t3": "great answer"}
    data = _run_json(capsys, ["select-sft", path, "--threshold", "0.5"])
    assert data["n_kept"] == 3 and data["asks_without_pass"] == []


def test_select_sft_out_and_refusal(tmp_path, capsys):
    path = _jsonl(tmp_path / "attempts.jsonl", ATTEMPTS)
    out = tmp_path / "kept.jsonl"
    data = _run_json(capsys, ["select-sft", path, "--out", str(out)])
    assert data["records"] == [] and data["n_kept"] == 2
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["task_id"] for r in written] == ["t1", "t3"]
    assert written[0] == ATTEMPTS[1]                     # the record itself, unchanged
    before = out.read_text()
    err = _one_line_error(capsys, ["select-sft", path, "--threshold", "0.5", "--out", str(out)])
    assert str(out) in err and "already exists" in err and "--force" in err
    assert out.read_text() == before
    assert main(["select-sft", path, "--threshold", "0.5", "--out", str(out), "--force"]) == 0
    assert f"wrote the 3 kept traces to {out}" in capsys.readouterr().out
    assert len(out.read_text().splitlines()) == 3


def test_select_sft_bad_line(tmp_path, capsys):
    bad = tmp_path / "attempts.jsonl"
    bad.write_text(json.dumps(ATTEMPTS[0]) + "\n"
                   + json.dumps({"task_id": "t9", "messages": [_msg("user", "q")]}) + "\n")
    err = _one_line_error(capsys, ["select-sft", str(bad)])
    assert f"{bad}, line 2" in err and "reward" in err and "Fix:" in err


# --- decontaminate -------------------------------------------------------------------------

HELD = [{"task_id": "h1", "prompt": "Sum the list"},
        {"task_id": "h2", "prompt": "What is the capital of France?"},
        {"task_id": "h3", "prompt": "one two three four five six seven eight nine ten"}]
TRAIN = [
    {"task_id": "h1", "messages": [_msg("user", "anything"), _msg("assistant", "x")]},
    {"task_id": "a", "messages": [_msg("user", "what is THE capital of france"),
                                  _msg("assistant", "Paris")]},
    # 8-grams: (one..eight), (two..nine), (three..eleven): 2 of 3 are held-out grams
    {"task_id": "b", "messages": [_msg("user", "one two three four five six seven eight nine "
                                               "eleven"), _msg("assistant", "y")]},
    {"task_id": "c", "messages": [_msg("user", "reverse a string"), _msg("assistant", "z")]},
]


def test_decontaminate_by_hand(tmp_path, capsys):
    train = _jsonl(tmp_path / "train.jsonl", TRAIN)
    held = _jsonl(tmp_path / "held.jsonl", HELD)
    data = _run_json(capsys, ["decontaminate", train, held])
    assert (data["n_in"], data["n_kept"]) == (4, 2)
    assert data["reasons"] == {"held_out_task": 1, "verbatim_prompt": 1}
    assert [r["task_id"] for r in data["records"]] == ["b", "c"]
    assert data["ngram"] == 8 and data["max_overlap"] == 0.8
    data = _run_json(capsys, ["decontaminate", train, held, "--max-overlap", "0.6"])
    assert data["reasons"]["ngram_overlap"] == 1
    (drop,) = [d for d in data["dropped"] if d["reason"] == "ngram_overlap"]
    assert drop["task_id"] == "b" and drop["overlap"] == pytest.approx(2 / 3)
    assert drop["matched_task"] == "h3"
    out = tmp_path / "clean.jsonl"
    assert main(["decontaminate", train, held, "--out", str(out)]) == 0
    assert "kept 2 of 4" in capsys.readouterr().out
    assert [json.loads(line)["task_id"] for line in out.read_text().splitlines()] == ["b", "c"]
    err = _one_line_error(capsys, ["decontaminate", train, held, "--out", str(out)])
    assert "already exists" in err and "--force" in err
    err = _one_line_error(capsys, ["decontaminate", train, held, "--ngram", "0"])
    assert "ngram" in err and "Fix:" in err


# --- export-sft ----------------------------------------------------------------------------

def test_export_sft_writes_trl_jsonl(tmp_path, capsys):
    records = [
        {"task_id": "t1", "reward": 1.0, "messages": [
            _msg("system", "be brief"), _msg("user", "q"), _msg("assistant", "a"),
            _msg("user", "more"), _msg("assistant", "b")]},
        {"task_id": "t2", "messages": [_msg("user", "q2"), _msg("assistant", "a2")]},
    ]
    src = _jsonl(tmp_path / "kept.jsonl", records)
    out = tmp_path / "sft" / "train.jsonl"
    data = _run_json(capsys, ["export-sft", src, "--out", str(out)])
    assert (data["n_records"], data["n_assistant_turns"]) == (2, 3)
    assert data["path"] == str(out)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines == [{"messages": r["messages"]} for r in records]   # other fields dropped
    err = _one_line_error(capsys, ["export-sft", src, "--out", str(out)])
    assert str(out) in err and "--force" in err
    assert main(["export-sft", src, "--out", str(out), "--force"]) == 0
    assert "wrote 2 conversations (3 assistant turns)" in capsys.readouterr().out


def test_export_sft_needs_out(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["export-sft", str(tmp_path / "x.jsonl")])
    assert exc.value.code == 2 and "--out" in capsys.readouterr().err
