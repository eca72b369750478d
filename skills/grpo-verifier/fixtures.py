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


# --- checks ------------------------------------------------------------------------------------

def _read(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line]


def planted_holes_named_before_training(ns):
    proof = ns["proof"]
    assert proof.verdict == "fix_first"
    assert "format_bonus" in proof.holes and "truncation" in proof.holes, proof.holes
    bonus = {c.name: c for c in proof.checks}["format_bonus"]
    # the planted bonus: a well-formed call earns 0.8, the same text without tags earns 0 (or,
    # off topic, passes at 1.0 as a short reply), so the mean bonus is 0.8 on 48 tasks and
    # -0.2 on the 12 off-topic ones: (48 x 0.8 - 12 x 0.2) / 60 = 0.6
    assert abs(bonus.mean_bonus - (48 * 0.8 - 12 * 0.2) / 60) < 1e-9
    assert not Path("runs").exists()     # nothing trained


def fixed_reward_has_no_hole(ns):
    assert ns["fixed"].verdict == "train" and ns["fixed"].holes == []


def split_by_category_and_table(ns):
    split, table = ns["split"], ns["table"]
    cat = {t["task_id"]: t["category"] for t in _read("tasks.jsonl")}
    held = {c: sum(cat[t] == c for t in split.holdout_tasks) for c in set(cat.values())}
    assert held == {"with_id": 7, "no_id": 2, "off_topic": 2}, held
    rows = _read("graded_fixed.jsonl")
    for line in table.lines:
        mine = [r for r in rows if cat[r["task_id"]] == line.category]
        per_task: dict[str, list[float]] = {}
        for r in mine:
            per_task.setdefault(r["task_id"], []).append(float(r["reward"] >= 1.0))
        expected = sum(sum(v) / len(v) for v in per_task.values()) / len(per_task)
        assert abs(line.pass_at_1 - expected) < 1e-9 and line.n_tasks == len(per_task)


def plan_names_rare_categories_and_arms(ns):
    grpo, dapo = ns["grpo"], ns["dapo"]
    assert {c.category for c in grpo.categories if c.rare} == {"no_id", "off_topic"}
    assert grpo.balance == 0.25 and "--balance" in grpo.flags
    assert [a.name for a in grpo.arms] == ["method", "random_selection", "random_reward"]
    assert grpo.arms[0].n_tasks == grpo.arms[1].n_tasks
    assert dapo.loss.config["num_iterations"] == 2 and dapo.loss.config["epsilon_high"] == 0.28
    assert "--num-iterations 2" in dapo.command


def launched_watched_and_read_by_category(ns):
    trained, watch = ns["trained"], ns["watch"]
    assert ns["plan"].action == "planned"
    assert trained.ready, trained.note
    assert trained.metrics["train_steps"] == 2
    assert trained.by_category is not None and trained.by_category.n_behaviours == 3
    assert watch.decision in ("continue", "not_enough_data", "stop")


CHECKS = [planted_holes_named_before_training, fixed_reward_has_no_hole,
          split_by_category_and_table, plan_names_rare_categories_and_arms,
          launched_watched_and_read_by_category]
