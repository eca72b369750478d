"""Offline stand-ins for the sft-from-traces blocks (used by check.py, not by the skill's reader).

``prepare(workdir)`` writes ``traces.jsonl``: production traces of an agent that totals ledger
entries, graded by a program (1.0 when the reply is the right total). Ten asks come back under a
second task id with one word changed, as production traffic does. It writes the program grader
to ``grader.py`` and returns ``MODEL`` (the agent), ``TRAINED`` (the checkpoint the SFT run would
produce), ``attempt`` (a sampler standing in for a stronger model or the agent at temperature 1),
``grade`` (the grader, loaded from that file), ``evaluate`` (an eval harness that returns graded
rows; it simulates the trained checkpoint), ``GENERAL_TASKS`` (a second behaviour's frozen test)
and ``BACKEND = "local"``: the training step runs the SFT recipe's real CPU smoke (two steps of a
tiny model on the exported file, through ``launch_run``). ``CHECKS[i]`` asserts what block i
produced.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

MODEL = "Qwen/Qwen3-8B"
TRAINED = "./sft-out"
N_TASKS = 100
N_DUPS = 10


def _u(*key) -> float:
    """A deterministic uniform draw in [0, 1) from a key."""
    h = hashlib.sha256("\x00".join(map(str, key)).encode()).hexdigest()
    return int(h[:12], 16) / 16**12


def _ask(i: int, ending: str = "else") -> str:
    a, b = 100 + (i * 37) % 900, 100 + (i * 91) % 900
    return f"Ledger entry {i}: add {a} and {b}, then reply with the total and nothing {ending}."


def _answer(text: str) -> str:
    a, b = map(int, re.search(r"add (\d+) and (\d+)", text).groups())
    return str(a + b)


# The program grader as a file: the skill copies it into the SFT data folder, and the recipe runs
# it on the held-out asks (here, and in the Modal container for a GPU run).
GRADER = """import re


def grade(ask, reply):
    text = next(m["content"] for m in ask["messages"] if m["role"] == "user")
    a, b = map(int, re.search(r"add (\\d+) and (\\d+)", text).groups())
    return 1.0 if reply.strip() == str(a + b) else 0.0
"""


def _skill(task: str) -> float:
    """The agent's true pass rate on a task: a third of the asks it never gets right."""
    u = _u("skill", task)
    return 0.0 if u < 0.35 else 0.2 + 0.7 * _u("p", task)


def prepare(workdir: Path) -> dict:
    asks = {f"ledger-{i:03d}": _ask(i) for i in range(N_TASKS)}
    # the same ask again under a new id, one word changed: 7 of its 8 8-grams are shared
    asks.update({f"repeat-{i:03d}": _ask(i, "more") for i in range(0, N_TASKS, N_TASKS // N_DUPS)})
    lines = []
    for tid, text in asks.items():
        p = 0.0 if tid.startswith("repeat") else _skill(tid)
        for j in range(1 + int(_u("n", tid) * 3)):
            ok = _u("prod", tid, j) < p
            reply = _answer(text) if ok else str(int(_answer(text)) + 10)
            lines.append(json.dumps({"task_id": tid, "model": MODEL, "reward": float(ok),
                                     "messages": [{"role": "user", "content": text},
                                                  {"role": "assistant", "content": reply}]}))
    (workdir / "traces.jsonl").write_text("\n".join(lines) + "\n")
    calls = {"attempt": 0}

    def attempt(messages, i):
        calls["attempt"] += 1
        text = messages[-1]["content"]
        right = _u("attempt", text, i) < 0.25          # a sampler that is right 1 time in 4
        return _answer(text) if right else f"The total is {int(_answer(text)) - 1}."

    (workdir / "grader.py").write_text(GRADER)
    namespace: dict = {}
    exec(compile(GRADER, str(workdir / "grader.py"), "exec"), namespace)
    grade = namespace["grade"]

    def evaluate(model, tasks, *, k=4, run=0, suite="ledger"):
        rows = []
        for task in tasks:
            p = _skill(task) if suite == "ledger" else 0.3 + 0.6 * _u("general", task)
            if model == TRAINED:
                p = min(1.0, p + 0.35) if suite == "ledger" else max(0.0, p - 0.01)
            for j in range(k):
                rows.append({"task_id": task, "model": model,
                             "reward": float(_u("eval", model, suite, task, run, j) < p)})
        return rows

    return {"MODEL": MODEL, "TRAINED": TRAINED, "attempt": attempt, "grade": grade,
            "evaluate": evaluate, "GENERAL_TASKS": [f"general-{i:03d}" for i in range(60)],
            "BACKEND": "local", "_calls": calls}


def split_is_by_task_and_frozen(ns):
    split = ns["split"]
    assert not set(split.holdout_tasks) & set(split.train_tasks)
    frozen = json.loads(Path("holdout_tasks.json").read_text())
    assert frozen == split.holdout_tasks and len(frozen) >= 10


def noise_floor_from_three_reruns(ns):
    assert ns["floor"].n_runs == 3 and ns["floor"].run_std > 0
    assert ns["before"].n_tasks == len(ns["split"].holdout_tasks)
    assert ns["before"].ci is not None


def seeds_are_failed_train_asks(ns):
    held = set(ns["split"].holdout_tasks)
    assert ns["asks"] and not {a["task_id"] for a in ns["asks"]} & held
    assert all(a["messages"][-1]["role"] == "user" for a in ns["asks"])


def rejection_sampling_graded_every_attempt(ns):
    assert len(ns["graded"]) == 16 * len(ns["asks"]) == ns["_calls"]["attempt"]
    assert 0.1 < ns["attempt_rate"].pass_at_1 < 0.4 and ns["attempt_rate"].k == 16
    assert ns["attempt_rate"].pass_at_k > ns["attempt_rate"].pass_at_1


def best_passing_attempt_kept(ns):
    chosen = ns["chosen"]
    assert chosen.n_kept == len(chosen.records) > 0
    assert all(r["reward"] >= 1.0 for r in chosen.records)
    assert len({r["task_id"] for r in chosen.records}) == chosen.n_kept


def decontamination_caught_the_repeats(ns):
    clean = ns["clean"]
    assert clean.reasons.get("ngram_overlap", 0) >= 1, clean.reasons
    assert all(d.task_id.startswith("repeat") for d in clean.dropped if d.reason == "ngram_overlap")
    assert not {r["task_id"] for r in clean.records} & set(ns["split"].holdout_tasks)


def export_is_trl_conversational(ns):
    lines = Path("sft/train.jsonl").read_text().splitlines()
    assert len(lines) == ns["exported"].n_records == ns["clean"].n_kept
    held = {m["content"] for r in ns["split"].holdout(ns["traces"]) for m in r["messages"]
            if m["role"] == "user"}
    for line in lines:
        row = json.loads(line)
        assert list(row) == ["messages"] and row["messages"][-1]["role"] == "assistant"
        assert row["messages"][0]["content"] not in held
    # the data folder: the held-out traces, the grader, the model
    assert sorted(p.name for p in Path("sft").iterdir()) == sorted(
        ["train.jsonl", "holdout.jsonl", "grader.py", "settings.json"])
    held_out = [json.loads(line) for line in Path("sft/holdout.jsonl").read_text().splitlines()]
    assert {r["task_id"] for r in held_out} == set(ns["split"].holdout_tasks)
    assert json.loads(Path("sft/settings.json").read_text()) == {"model": MODEL}


def sft_recipe_trained_and_paired_the_held_out_tasks(ns):
    """Two real steps of the recipe's CPU smoke on the exported file, and a paired verdict on
    every held-out task (2 samples each before and after, the smoke's size)."""
    trained = ns["trained"]
    assert ns["plan"].action == "planned" and ns["plan"].plan.command.endswith("--data " + str(
        Path("sft").resolve()))
    assert trained.ready, trained.note
    n_held = len(ns["split"].holdout_tasks)
    assert trained.comparison.n_paired == n_held
    assert trained.n_before_rows == trained.n_after_rows == 2 * n_held
    assert trained.verdict in ("moved", "moved_the_wrong_way", "flat", "within_noise",
                               "no_detectable_change", "insufficient_data")
    metrics = trained.metrics
    assert metrics["train_steps"] == 2 and metrics["loss_mask"]["n_wrong_mask"] == 0
    assert metrics["loss_mask"]["completion_tokens_trained"] > 0
    assert metrics["data"]["conversations"] == ns["exported"].n_records
    assert metrics["data"]["holdout_tasks"] == n_held
    assert metrics["data"]["settings_file"] == {"model": MODEL}


def paired_delta_on_the_frozen_test(ns):
    report = ns["report"]
    assert report["ledger"].verdict == "moved", report["ledger"]
    assert report["ledger"].n_paired == len(ns["split"].holdout_tasks)
    assert report["general"].verdict != "moved"


CHECKS = [split_is_by_task_and_frozen, noise_floor_from_three_reruns, seeds_are_failed_train_asks,
          rejection_sampling_graded_every_attempt, best_passing_attempt_kept,
          decontamination_caught_the_repeats, export_is_trl_conversational,
          sft_recipe_trained_and_paired_the_held_out_tasks, paired_delta_on_the_frozen_test]
