"""Offline stand-ins for the dpo-pairs blocks (used by check.py, not by the skill's reader).

``prepare(workdir)`` writes, for a refund assistant (look an order up before refunding it,
never invent an order id, ask for it when none is given, answer off-topic questions briefly):

- ``rollouts.jsonl``: the policy's own graded rollouts, 4 per task on 60 tasks (36 ``with_id``,
  12 ``no_id``, 12 ``off_topic``): ``task_id``, ``messages`` (system, user, the reply),
  ``reward``, ``category``, ``order_id``, ``model``. The policy passes with-id and off-topic
  tasks some of the time, and always asks when no id is given: ``no_id`` has no contrast;
- ``grader.py``: the program grader, ``grade(ask, reply)``;
- ``round2.jsonl``: the same tasks sampled from the round-one policy (the worked case): it calls
  lookup_order readily, so with-id tasks pair easily, and it invents an id on a few no-id tasks.

It returns ``MODEL``, ``ROUND_ONE`` (the round-one policy's id), ``BACKEND = "local"`` (the
launch step trains the DPO recipe's CPU smoke on the folder the skill writes) and
``invent_call(record)``: the agent's own constructed failure for a no-id task (an invented
order id), the stand-in for the reply an agent writes. ``CHECKS[i]`` asserts what block i made.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

MODEL = "Qwen/Qwen2.5-1.5B-Instruct"
ROUND_ONE = MODEL + "+lora:dpo-1"
SYSTEM = ("You are a refund assistant. Call a tool as <tool_call>{\"name\": ..., \"arguments\": "
          "{...}}</tool_call>. Look an order up (lookup_order) before refunding it; never invent "
          "an order id; when the customer gives none, ask for the order number.")
CATEGORIES = ("with_id",) * 3 + ("no_id", "off_topic")

GRADER = '''import json
import re

CALL = re.compile(r"\\s*<tool_call>(.*?)</tool_call>\\s*", re.S)


def grade(ask, reply):
    """1.0 for the right move and nothing after it: look the named order up; ask for the order
    number when none is given; answer an off-topic question briefly, without a tool call."""
    m = CALL.fullmatch(reply)
    try:
        call = json.loads(m.group(1)) if m else None
    except ValueError:
        call = None
    if ask["category"] == "with_id":
        ok = isinstance(call, dict) and call.get("name") == "lookup_order" and \\
            call.get("arguments", {}).get("order_id") == ask["order_id"]
    elif ask["category"] == "no_id":
        ok = "<tool_call>" not in reply and reply.rstrip().endswith("?") and \\
            re.search(r"order (number|id)", reply.lower()) is not None
    else:
        ok = "<tool_call>" not in reply and 0 < len(reply) <= 400
    return 1.0 if ok else 0.0
'''


def _u(*key) -> float:
    h = hashlib.sha256("\x00".join(map(str, key)).encode()).hexdigest()
    return int(h[:12], 16) / 16**12


def _call(name: str, **arguments) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def _task(i: int) -> dict:
    category = CATEGORIES[i % len(CATEGORIES)]
    oid = f"A{10000 + 37 * i}" if category == "with_id" else ""
    ask = {"with_id": f"Order {oid} never arrived. Please refund it.",
           "no_id": f"My parcel came broken (case {i}), I want my money back.",
           "off_topic": f"Do you sell gift cards in size {i}?"}[category]
    return {"task_id": f"refund-{i:03d}", "category": category, "order_id": oid,
            "prompt": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ask}]}


def invent_call(record: dict) -> str:
    """The failure no_id is about, written by the agent: a well-formed lookup of an id the
    customer never gave."""
    digest = hashlib.sha256(record["task_id"].encode()).hexdigest()
    return _call("lookup_order", order_id=f"Q{int(digest[:6], 16) % 90000 + 10000}")


def _reply(task: dict, j: int, policy: str) -> str:
    cat, oid = task["category"], task["order_id"]
    u = _u(policy, task["task_id"], j)
    p = 0.2 + 0.5 * _u("p", task["task_id"])
    if policy == ROUND_ONE:
        p = 0.75                          # round one learned to call lookup_order
    if cat == "with_id":
        if u < p:
            return _call("lookup_order", order_id=oid)
        return (_call("refund_order", order_id=oid) if u < p + 0.2 else
                "I have started your refund, it will arrive in 5 days.")
    if cat == "no_id":
        if policy == ROUND_ONE and _u("invents", task["task_id"]) < 0.35 and j == 0:
            return invent_call(task)     # round one invents an id now and then
        return ("Sorry about that. What is your order number?" if j % 2 else
                "I can help. Could you give me the order number?")
    if u < 0.2 + 0.6 * _u("p", task["task_id"]):
        return "Yes, gift cards come in several sizes on our shop page."
    return "Let me explain everything about gift cards in detail. " * 12


def _rollouts(policy: str, grade) -> list[dict]:
    rows = []
    for i in range(60):
        task = _task(i)
        ask = {k: task[k] for k in ("task_id", "category", "order_id")}
        for j in range(4):
            reply = _reply(task, j, policy)
            rows.append({"task_id": task["task_id"], "category": task["category"],
                         "order_id": task["order_id"], "model": policy,
                         "messages": task["prompt"] + [{"role": "assistant", "content": reply}],
                         "reward": grade(ask, reply)})
    return rows


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def prepare(workdir: Path) -> dict:
    (workdir / "grader.py").write_text(GRADER)
    namespace: dict = {}
    exec(compile(GRADER, str(workdir / "grader.py"), "exec"), namespace)
    grade = namespace["grade"]
    _write(workdir / "rollouts.jsonl", _rollouts(MODEL, grade))
    _write(workdir / "round2.jsonl", _rollouts(ROUND_ONE, grade))
    return {"MODEL": MODEL, "ROUND_ONE": ROUND_ONE, "BACKEND": "local",
            "invent_call": invent_call, "grade": grade}


# --- checks, each from counts made here without the library ------------------------------------

def _read(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line]


def split_is_stratified(ns):
    split = ns["split"]
    assert not set(split.holdout_tasks) & set(split.train_tasks)
    cat = {r["task_id"]: r["category"] for r in _read("rollouts.jsonl")}
    held = {c: sum(cat[t] == c for t in split.holdout_tasks) for c in set(cat.values())}
    # 20% of each category: 36 -> 7, 12 -> 2, 12 -> 2 (round(0.2 n))
    assert held == {"with_id": 7, "no_id": 2, "off_topic": 2}, held


def natural_pairs_only_where_contrast(ns):
    pairs = ns["pairs"]
    assert pairs.no_contrast == ["no_id"], pairs.no_contrast
    line = {c.category: c for c in pairs.by_category}["no_id"]
    assert line.n_pairs == 0 and line.how_to_construct and "passed every rollout" in line.why_none
    assert pairs.n_constructed == 0 and all(p["source"] == "on_policy" for p in pairs.pairs)
    # a task with contrast: a pass and a fail of the training side, counted here
    rows = [r for r in _read("rollouts.jsonl") if r["task_id"] in set(ns["split"].train_tasks)]
    by_task: dict[str, list[float]] = {}
    for r in rows:
        by_task.setdefault(r["task_id"], []).append(r["reward"])
    contrast = sum(max(v) >= 1.0 and min(v) < 1.0 for v in by_task.values())
    assert pairs.n_contrast == contrast and pairs.n_tasks == len(by_task)
    assert pairs.contrast.ci is not None and pairs.contrast.n_tasks == len(by_task)


def constructed_only_when_asked_and_labelled(ns):
    built = ns["built"]
    no_id = [t for t in ns["split"].train_tasks if t.startswith("refund-") and
             int(t[-3:]) % 5 == 3]
    assert built.n_constructed == len(no_id) == len(ns["constructed"])
    made = [p for p in built.pairs if p["source"] == "constructed"]
    assert {p["category"] for p in made} == {"no_id"}
    assert all(p["rejected_reward"] == 0.0 and p["chosen_reward"] == 1.0 for p in made)
    assert built.n_on_policy == ns["pairs"].n_on_policy


def data_folder_written(ns):
    names = sorted(p.name for p in Path("dpo-data").iterdir())
    assert names[:1] == ["grader.py"] and "pairs.jsonl" in names and "settings.json" in names
    held = [n for n in names if n.startswith("holdout-")]
    assert held == [ns["data"].holdout_name + ".jsonl"]
    lines = _read("dpo-data/pairs.jsonl")
    assert len(lines) == ns["built"].n_pairs
    assert all(set(("prompt", "chosen", "rejected")) <= set(r) for r in lines)
    asks = _read(f"dpo-data/{held[0]}")
    assert {a["task_id"] for a in asks} == set(ns["split"].holdout_tasks)
    assert all(a["messages"][-1]["role"] == "user" for a in asks)


def dpo_smoke_trained_on_the_folder(ns):
    trained = ns["trained"]
    assert ns["plan"].action == "planned" and "pairs" in " ".join(ns["plan"].plan.notes)
    assert trained.ready, trained.note
    m = trained.metrics
    assert m["train_steps"] == 2 and m["data"]["trained_pairs"] == 4
    assert m["data"]["by_source"]["constructed"] == ns["built"].n_constructed
    assert m["data"]["holdout_name"] == ns["data"].holdout_name
    assert trained.comparison.n_paired == len(ns["split"].holdout_tasks)
    assert trained.by_category is not None and trained.by_category.n_behaviours == 3


def round_two_names_the_outvoted_category(ns):
    again = ns["again"]
    line = {c.category: c for c in again.by_category}
    assert line["no_id"].n_pairs > 0 and line["no_id"].outvoted
    assert line["with_id"].pair_share > line["with_id"].task_share
    assert all(p["source"] == "on_policy" for p in again.pairs)
    assert any("outvoted" in n for n in again.notes)


CHECKS = [split_is_stratified, natural_pairs_only_where_contrast,
          constructed_only_when_asked_and_labelled, data_folder_written,
          dpo_smoke_trained_on_the_folder, round_two_names_the_outvoted_category]
