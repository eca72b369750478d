"""Offline stand-ins for the audit-your-judge blocks (used by check.py, not by the skill's reader).

``prepare(workdir)`` writes ``labels.jsonl`` (400 replies a person labelled blind with the
codebook: pass iff the answer is correct and the code runs) and returns three candidate judges,
a rubric split into clauses, and pairs for the order test. Each judge is a deterministic program
that records the temperature it was called with. ``CHECKS[i]`` asserts what block i produced.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

N_ITEMS = 400
CLAUSES = ["The answer is correct.", "The code runs without error.", "The reply is polite."]
_FACT = {CLAUSES[0]: "correct", CLAUSES[1]: "runs", CLAUSES[2]: "polite"}


def _flip(item_id: str, share: float) -> bool:
    return int(hashlib.sha256(item_id.encode()).hexdigest()[:8], 16) / 16**8 < share


def prepare(workdir: Path) -> dict:
    rng = random.Random(7)
    facts, lines = {}, []
    for i in range(N_ITEMS):
        correct = rng.random() < 0.6
        runs = rng.random() < (0.95 if correct else 0.5)
        polite = rng.random() < 0.9
        item_id = f"r{i:03d}"
        facts[item_id] = {"correct": correct, "runs": runs, "polite": polite}
        reply = "def solve(xs):\n    return sorted(xs)\n" + "# note\n" * rng.randint(0, 30)
        lines.append(json.dumps({"id": item_id, "task": f"task-{i % 80}", "reply": reply,
                                 "label": correct and runs}))
    (workdir / "labels.jsonl").write_text("\n".join(lines) + "\n")
    temperatures: list[float] = []

    def rubric_judge(item, *, rubric, temperature):
        temperatures.append(temperature)
        f = facts[item["id"]]
        verdict = all(f[fact] for clause, fact in _FACT.items() if clause in rubric)
        return verdict != _flip(item["id"], 0.03)      # 3% honest mistakes

    def generous(item, *, rubric, temperature):
        temperatures.append(temperature)
        f = facts[item["id"]]
        return f["correct"] or f["runs"]               # passes code that runs but is wrong

    def always_pass(item, *, rubric, temperature):
        temperatures.append(temperature)
        return True

    quality = {f"p{i}": (rng.randint(0, 4), rng.randint(0, 4)) for i in range(60)}

    def pairwise(first, second, *, temperature):
        temperatures.append(temperature)
        qa, qb = first["quality"], second["quality"]
        if abs(qa - qb) <= 1:
            return "first"                             # close call: follows the position
        return "first" if qa > qb else "second"

    pairs = [{"id": k, "a": {"quality": a}, "b": {"quality": b}} for k, (a, b) in quality.items()]
    return {"judges": {"always-pass": always_pass, "generous": generous,
                       "rubric-judge": rubric_judge},
            "RUBRIC_CLAUSES": list(CLAUSES), "pairwise": pairwise, "pairs": pairs,
            "_temperatures": temperatures}


def size_the_sample(ns):
    assert ns["need"] == 97, ns["need"]
    assert ns["n_fail"] == sum(not item["label"] for item in ns["labels"])
    assert ns["n_fail"] >= ns["need"], "the fixture must hold enough labelled failures"


def grade_at_temperature_zero(ns):
    temps = ns["_temperatures"]
    assert len(temps) == 3 * len(ns["labels"]) and set(temps) == {0.0}, set(temps)
    assert all(set(item["grades"]) == set(ns["judges"]) for item in ns["labels"])


def audit_reads_floors(ns):
    by = {j.name: j for j in ns["audit"].judges}
    assert by["always-pass"].verdict == "fails" and by["always-pass"].kappa == 0.0
    assert by["generous"].verdict == "fails" and by["generous"].false_pass > 0.1
    assert by["rubric-judge"].verdict == "clears", by["rubric-judge"].reasons
    assert ns["audit"].best == "rubric-judge"


def ablation_flags_the_polite_clause(ns):
    effects = {c.clause: c.effect for c in ns["ablation"].clauses}
    assert effects["The reply is polite."] == "hurts", effects
    assert effects["The answer is correct."] == "needed"
    assert effects["The code runs without error."] == "needed"


def order_reversal_gives_top_pick_only(ns):
    assert ns["order"].verdict == "top_pick_only"
    assert ns["order"].flips > 0


CHECKS = [size_the_sample, grade_at_temperature_zero, audit_reads_floors,
          ablation_flags_the_polite_clause, order_reversal_gives_top_pick_only]
