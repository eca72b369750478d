"""Offline stand-ins for the manage-experiments blocks (used by check.py, not by the reader).

``prepare(workdir)`` writes, for the refund assistant of the dpo-pairs skill:

- ``heldout_asks.jsonl``: the held-out asks (one per task, with ``category``), 15 tasks in three
  categories, to be frozen;
- ``heldout_edited.jsonl``: the same asks with one reworded (another test, another name);
- ``base_run1.jsonl`` .. ``base_run3.jsonl``: the base model scored three times on them (graded
  rows, 4 rollouts a task), for the noise floor;
- ``dpo-data/``: a DPO data folder (pairs, the held-out asks frozen, ``grader.py``) built with
  the dpo-pairs skill's calls, for the arm to train.

It returns ``BACKEND = "local"`` (the arm runs the DPO recipe's CPU smoke). ``CHECKS[i]``
asserts what block i produced.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

MODEL = "Qwen/Qwen2.5-1.5B-Instruct"
SYSTEM = ("You are a refund assistant. Call a tool as <tool_call>{\"name\": ..., \"arguments\": "
          "{...}}</tool_call>. Look an order up (lookup_order) before refunding it; never invent "
          "an order id; when the customer gives none, ask for the order number.")
CATEGORIES = ("with_id", "no_id", "off_topic")
GRADER = '''def grade(ask, reply):
    """1.0 when the reply does what the category asks (a stand-in for the refund grader)."""
    if ask["category"] == "with_id":
        return float(ask["order_id"] in reply and "lookup_order" in reply)
    if ask["category"] == "no_id":
        return float("<tool_call>" not in reply and "order number" in reply.lower())
    return float("<tool_call>" not in reply and 0 < len(reply) <= 400)
'''


def _u(*key) -> float:
    h = hashlib.sha256("\x00".join(map(str, key)).encode()).hexdigest()
    return int(h[:12], 16) / 16**12


def _ask(i: int) -> dict:
    cat = CATEGORIES[i % 3]
    oid = f"A{20000 + 41 * i}" if cat == "with_id" else ""
    text = {"with_id": f"Order {oid} never arrived. Please refund it.",
            "no_id": f"My parcel came broken (case {i}), I want my money back.",
            "off_topic": f"Do you sell gift cards in size {i}?"}[cat]
    return {"task_id": f"ticket-{i:03d}", "category": cat, "order_id": oid,
            "messages": [{"role": "system", "content": SYSTEM},
                         {"role": "user", "content": text}]}


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def prepare(workdir: Path) -> dict:
    from whileai_core import dpo_pairs, write_dpo_data

    held = [_ask(i) for i in range(15)]
    _write(workdir / "heldout_asks.jsonl", held)
    edited = [dict(a) for a in held]
    edited[0] = dict(edited[0], messages=[edited[0]["messages"][0], {
        "role": "user", "content": edited[0]["messages"][1]["content"] + " Today, please."}])
    _write(workdir / "heldout_edited.jsonl", edited)
    for run in (1, 2, 3):
        _write(workdir / f"base_run{run}.jsonl", [
            {"task_id": a["task_id"], "category": a["category"], "model": MODEL,
             "reward": float(_u("base", run, a["task_id"], j) < 0.3 + 0.5 * _u("p", a["task_id"]))}
            for a in held for j in range(4)])
    (workdir / "grader.py").write_text(GRADER)
    train = []
    for i in range(100, 130):
        ask = _ask(i)
        for j in range(4):
            good = _u("train", i, j) < 0.5
            reply = ("<tool_call>" + json.dumps({"name": "lookup_order", "arguments": {
                "order_id": ask["order_id"] or "A99999"}}) + "</tool_call>") if good else \
                "Could you give me the order number?"
            ok = good if ask["category"] == "with_id" else not good
            train.append({**{k: ask[k] for k in ("task_id", "category", "order_id")},
                          "model": MODEL, "reward": float(ok),
                          "messages": ask["messages"] + [{"role": "assistant", "content": reply}]})
    write_dpo_data(dpo_pairs(train, model=MODEL), workdir / "dpo-data", holdout=held,
                   grader=workdir / "grader.py", settings={"model": MODEL})
    return {"BACKEND": "local"}


# --- checks ------------------------------------------------------------------------------------

def frozen_and_noise_measured(ns):
    frozen, floor = ns["frozen"], ns["floor"]
    assert frozen.n_tasks == 15 and Path(frozen.path).name == frozen.name + ".jsonl"
    held = [p.name for p in Path("dpo-data").iterdir() if p.name.startswith("holdout-")]
    assert held == [frozen.name + ".jsonl"]          # the data folder holds the same test
    assert floor.n_runs == 3 and floor.run_std > 0


def registered_before_any_run(ns):
    exp = ns["exp"]
    assert exp.runs == [] and exp.registration.holdout == ns["frozen"].name
    assert exp.registration.rule.ship_if[0].bound == 0.05
    assert exp.registration.run_std == ns["floor"].run_std


def verdict_by_the_registered_rule(ns):
    trained = ns["trained"]
    assert trained.ready, trained.note
    decision = trained.decision
    assert decision.basis == "as_registered" and decision.deviations == []
    assert decision.experiment == "dpo-round-1" and decision.arm == "dpo"
    assert decision.holdout == ns["frozen"].name
    c = trained.comparison
    assert c.noise_band is not None                     # the registered floor was used
    # the rule, applied here to the comparison's own numbers
    above = None if c.ci is None else c.ci[0] > 0.05
    behaviours = trained.by_category.behaviours
    dropped = any(b.ci is not None and b.ci[1] < 0 and b.delta < -c.noise_band for b in behaviours)
    no_drop = False if dropped else (None if any(b.ci is None for b in behaviours) else True)
    outcomes = (above, no_drop)
    expected = ("do_not_ship" if False in outcomes else "undecided" if None in outcomes
                else "ship")
    assert decision.decision == expected, (decision, outcomes)


def other_readings_are_flagged(ns):
    edited, reward = ns["edited"].decision, ns["other_metric"].decision
    assert edited.basis == "deviates" and edited.holdout != ns["frozen"].name
    assert any(d.startswith("held-out set: read on") for d in edited.deviations)
    assert reward.basis == "deviates" and reward.metric == "reward"
    assert any(d.startswith("metric:") for d in reward.deviations)


def five_lines_recorded(ns):
    note = ns["note"]
    assert note.run_id == ns["run"].id and note.revision == 1
    assert all(getattr(note, k) for k in ("changed", "moved", "why", "learned", "reproduce"))


def listed_exported_archived(ns):
    text = Path("EXPERIMENTS.md").read_text()
    assert "## dpo-round-1" in text and ns["run"].id in text and "What was learned" in text
    assert ns["archived"].archived_at is not None
    assert ns["listing"].experiments[0].runs[0].record is not None
    assert ns["after_archive"].experiments == [] and ns["after_archive"].n_archived_hidden == 1


CHECKS = [frozen_and_noise_measured, registered_before_any_run, verdict_by_the_registered_rule,
          other_readings_are_flagged, five_lines_recorded, listed_exported_archived]
