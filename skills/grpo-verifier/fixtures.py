"""Offline stand-ins for the grpo-verifier blocks (used by check.py, not by the skill's reader).

``prepare(workdir)`` writes, for a refund assistant that calls tools as
``<tool_call>{"name", "arguments"}</tool_call>`` (look the order up before refunding it, never
invent an order id, ask for it when the customer gives none, answer off-topic questions briefly):

- ``tasks.jsonl``: 60 training tasks ``{task_id, prompt (chat), category, order_id}``: 36
  ``with_id``, 12 ``no_id``, 12 ``off_topic``;
- ``rewards/reward.py``: the program reward as first written, with a planted format bonus (a
  well-formed tool call earns 0.8 whatever it calls) and a search that finds the right call
  anywhere in the reply (so a reply that runs on to the cap still passes);
- ``rewards/fixed.py``: the same reward with both closed (a reply must be exactly the right call,
  the question, or a short answer; a wrong reply earns 0);
- ``graded.jsonl`` and ``graded_fixed.jsonl``: the base model's own rollouts on the tasks, 4 a
  task with their text, graded by each reward;
- ``base.jsonl``: the base model's held-out rows before training (the category table's input).

``MODEL`` is a Qwen base (the random-reward arm applies) and ``BACKEND = "local"``: the launch
step runs the GRPO recipe's CPU smoke. ``CHECKS[i]`` asserts what block i produced.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

MODEL = "Qwen/Qwen2.5-1.5B-Instruct"
SYSTEM = ("You are a refund assistant. Call a tool as <tool_call>{\"name\": ..., \"arguments\": "
          "{...}}</tool_call>. Look an order up (lookup_order) before refunding it; never invent "
          "an order id; when the customer gives none, ask for the order number.")
CATEGORIES = ("with_id",) * 3 + ("no_id", "off_topic")

REWARD = '''import json
import re

CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)


def _text(c):
    return c if isinstance(c, str) else c[-1]["content"]


def score(prompts, completions, category, order_id, **kw):
    """The refund reward as first written: 1.0 for the right move, 0.8 for any well-formed call."""
    out = []
    for c, cat, oid in zip(completions, category, order_id):
        text = _text(c)
        m = CALL.search(text)
        try:
            call = json.loads(m.group(1)) if m else None
        except ValueError:
            call = None
        well_formed = isinstance(call, dict) and "name" in call
        if cat == "with_id":
            right = well_formed and call["name"] == "lookup_order" and \\
                call.get("arguments", {}).get("order_id") == oid
        elif cat == "no_id":
            right = not m and "?" in text and re.search(r"order (number|id)", text.lower()) is not None
        else:
            right = not m and 0 < len(text) <= 400
        out.append(1.0 if right else 0.8 if well_formed else 0.0)
    return out
'''

FIXED = '''import json
import re

CALL = re.compile(r"\\s*<tool_call>(.*?)</tool_call>\\s*", re.S)


def _text(c):
    return c if isinstance(c, str) else c[-1]["content"]


def score(prompts, completions, category, order_id, **kw):
    """The right move and nothing after it; a wrong reply earns nothing, however well formed."""
    out = []
    for c, cat, oid in zip(completions, category, order_id):
        text = _text(c)
        m = CALL.fullmatch(text)
        try:
            call = json.loads(m.group(1)) if m else None
        except ValueError:
            call = None
        if cat == "with_id":
            right = isinstance(call, dict) and call.get("name") == "lookup_order" and \\
                call.get("arguments", {}).get("order_id") == oid
        elif cat == "no_id":
            right = "<tool_call>" not in text and len(text) <= 200 and text.rstrip().endswith("?") \\
                and re.search(r"order (number|id)", text.lower()) is not None
        else:
            right = "<tool_call>" not in text and 0 < len(text) <= 400
        out.append(1.0 if right else 0.0)
    return out
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


def _reply(task: dict, j: int, run: str = "train") -> str:
    """The base policy: right 30% of the time with an id, 70% without, 60% off topic."""
    cat, oid, tid = task["category"], task["order_id"], task["task_id"]
    u = _u(run, tid, j)
    if cat == "with_id":
        if u < 0.3:
            return _call("lookup_order", order_id=oid)
        if u < 0.5:
            return _call("refund_order", order_id=oid)
        return "I have started your refund, it will arrive in 5 days."
    if cat == "no_id":
        if u < 0.7:
            return "Sorry about that. What is your order number?"
        return _call("lookup_order", order_id="A99999")
    if u < 0.6:
        return "Yes, gift cards come in several sizes on our shop page."
    return "Let me explain everything about gift cards in detail. " * 12


def _grade(code: str, tasks: list[dict], replies: list[str]) -> list[float]:
    namespace: dict = {}
    exec(compile(code, "reward", "exec"), namespace)
    return namespace["score"]([t["prompt"] for t in tasks], replies,
                              [t["category"] for t in tasks], [t["order_id"] for t in tasks])


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _rollouts(tasks: list[dict], code: str, run: str = "train") -> list[dict]:
    pairs = [(t, _reply(t, j, run)) for t in tasks for j in range(4)]
    rewards = _grade(code, [t for t, _ in pairs], [r for _, r in pairs])
    return [{"task_id": t["task_id"], "category": t["category"], "model": MODEL,
             "completion": r, "reward": s} for (t, r), s in zip(pairs, rewards)]


def prepare(workdir: Path) -> dict:
    tasks = [_task(i) for i in range(60)]
    _write(workdir / "tasks.jsonl", tasks)
    (workdir / "rewards").mkdir(exist_ok=True)
    (workdir / "rewards" / "reward.py").write_text(REWARD)
    (workdir / "rewards" / "fixed.py").write_text(FIXED)
    _write(workdir / "graded.jsonl", _rollouts(tasks, REWARD))
    _write(workdir / "graded_fixed.jsonl", _rollouts(tasks, FIXED))
    return {"MODEL": MODEL, "BACKEND": "local"}
