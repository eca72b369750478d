"""Regenerate the example inputs of the README's journey (deterministic):
``python examples/make_examples.py``

One made-up product, a refund assistant, and every file a step of the journey reads:

- ``graded.jsonl``: 48 held-out tasks x 4 rollouts of Qwen/Qwen3-8B, true pass rates in six bands
  (route, pass-at, failure-capable, by-category).
- ``teacher.jsonl``: Qwen/Qwen3-32B on the same tasks, each band 0.1 higher (capped at 1).
- ``tasks.jsonl``: those 48 tasks as a task set to freeze: ``task_id``, ``category`` (three
  behaviours), ``prompt`` and the expected ``answer`` (freeze, fingerprint, by-category,
  cheat-probes).
- ``reruns/run-1.jsonl`` .. ``run-3.jsonl``: the same model re-run three times on those tasks
  (noise-floor).
- ``judge_items.jsonl``: 80 replies with a person's blind label and two judges' grades
  (audit-judge); ``judge_pairs.jsonl``: 40 pairs judged in both orders (order-reversal).
- ``traces.jsonl``: production traces of the assistant, graded by ``grader.py``, a third of the asks
  repeated under a new id, one word changed (split, select-sft, decontaminate, export-sft).
- ``grader.py``: the program grader, ``grade(ask, reply)`` for the SFT recipe and
  ``reward(prompts, completions, answer, **fields)`` (TRL's reward signature) for cheat-probes.
- ``sft-data/``: the data folder ``launch sft --data`` reads, exactly what the README's SFT
  commands write to ``out/sft``: ``train.jsonl``, ``holdout.jsonl``, ``grader.py``,
  ``settings.json``.
- ``rollouts.jsonl``: an RL run's rollouts with their reply text, 30 tasks x 8, where longer
  replies are paid more within a task (hack-scan).
- ``training_rows.jsonl``: 31 steps of a run whose training reward climbs while the held-out
  rows (``"split": "eval"``, every 5 steps) stay flat (watch).
- ``after.jsonl``: the same 48 tasks x 4 rollouts after a round of training, each band 0.15
  higher (capped at 1): what ``compare`` reads beside ``graded.jsonl``.
- ``rl-run/watch.jsonl``: a GRPO run's output folder as the recipes' watch callback writes it
  (``recipes/watch.py``: one step record a line, the step's batch with reply text and the
  held-out rows): 12 steps of 8 tasks x 4 rollouts, where from step 6 every reply is one long
  restatement cut at the token cap and scored 0, so every group has one reward and teaches
  nothing (doctor).

``sft-data/`` is made by the library's own split_by_task, select_sft, decontaminate and
export_sft (run from the checkout), so the file the README's commands write and this one agree.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODEL = "Qwen/Qwen3-8B"
CATEGORIES = ("full-refund", "partial-refund", "no-refund")
BANDS = (0.0, 0.15, 0.4, 0.6, 0.85, 1.0)

GRADER = '''"""The refund assistant's grader: a reply passes when it is the refund amount, alone.

grade(ask, reply): the SFT recipe's form (ask: a held-out record with its messages).
reward(prompts, completions, answer, **fields): TRL's reward form (cheat-probes calls it).
"""

import re

_AMOUNT = re.compile(r"-?\\d+\\.\\d{2}")


def _expected(text):
    paid, items, returned = (float(x) for x in re.findall(r"\\d+(?:\\.\\d+)?", text)[1:4])
    return f"{paid / items * returned:.2f}"


def _score(reply, answer):
    reply = reply.strip()
    return 1.0 if _AMOUNT.fullmatch(reply) and reply == answer else 0.0


def grade(ask, reply):
    text = next(m["content"] for m in ask["messages"] if m["role"] == "user")
    return _score(reply, _expected(text))


def reward(prompts, completions, answer, **fields):
    return [_score(c, a) for c, a in zip(completions, answer)]
'''


def _write_jsonl(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)


def _task(i: int) -> dict:
    """Refund task i: an order paid in full, some items returned; the answer is the refund."""
    category = CATEGORIES[i % 3]
    items = 2 + i % 4
    paid = float(items * (10 + (i * 7) % 40))
    returned = {"full-refund": items, "partial-refund": 1, "no-refund": 0}[category]
    prompt = (f"Order R-{1000 + i}: the customer paid {paid:.2f} for {items} items and returns "
              f"{returned} of them. Reply with the refund amount only, as 0.00.")
    return {"task_id": f"refund-{i:03d}", "category": category, "prompt": prompt,
            "answer": f"{paid / items * returned:.2f}"}


def graded_and_teacher() -> None:
    rng = random.Random(20261129)
    student, teacher = [], []
    for i in range(48):
        p = BANDS[i % 6]
        q = min(1.0, p + 0.1)
        for j in range(4):
            student.append({"task_id": f"refund-{i:03d}", "reward": 1.0 if rng.random() < p else 0.0,
                            "truncated": False, "model": MODEL, "rollout": j})
            teacher.append({"task_id": f"refund-{i:03d}", "reward": 1.0 if rng.random() < q else 0.0,
                            "truncated": False, "model": "Qwen/Qwen3-32B", "rollout": j})
    _write_jsonl(HERE / "graded.jsonl", student)
    _write_jsonl(HERE / "teacher.jsonl", teacher)


def tasks_and_reruns() -> None:
    _write_jsonl(HERE / "tasks.jsonl", [_task(i) for i in range(48)])
    for run in (1, 2, 3):
        rng = random.Random(1000 + run)
        _write_jsonl(HERE / "reruns" / f"run-{run}.jsonl", [
            {"task_id": f"refund-{i:03d}", "reward": 1.0 if rng.random() < BANDS[i % 6] else 0.0,
             "truncated": False, "model": MODEL, "run": run, "rollout": j}
            for i in range(48) for j in range(4)])


def judge_files() -> None:
    rng = random.Random(7)
    items = []
    for i in range(80):
        task = _task(i % 48)
        label = rng.random() < 0.55
        reply = task["answer"] if label else f"{float(task['answer']) + 5:.2f}"
        if not label and i % 4 == 0:  # a long, confident wrong reply: what lenient judges pass
            reply = f"After checking the policy carefully, the refund is {reply}."
        strict = label if rng.random() < 0.95 else not label
        lenient = label or len(reply) > 20 or rng.random() < 0.3
        items.append({"id": f"reply-{i:03d}", "task_id": task["task_id"], "reply": reply,
                      "label": label, "grades": {"judge-strict": strict,
                                                 "judge-lenient": lenient}})
    _write_jsonl(HERE / "judge_items.jsonl", items)
    pairs = []
    for i in range(40):
        forward = rng.choice(["first", "second"])
        flipped = rng.random() < 0.2  # a position bias: the pick follows the slot, not the reply
        same = "second" if forward == "first" else "first"  # the same reply, shown second
        pairs.append({"id": f"pair-{i:03d}", "forward": forward,
                      "reversed": forward if flipped else same})
    _write_jsonl(HERE / "judge_pairs.jsonl", pairs)


def traces() -> list[dict]:
    """Production traces: 60 tickets, 1-3 attempts each, graded by the grader; 20 asks come back
    under a new ticket id with one word changed (what decontaminate catches)."""
    namespace: dict = {}
    exec(compile(GRADER, "grader.py", "exec"), namespace)
    rng = random.Random(11)
    out = []
    asks = {f"ticket-{i:03d}": _task(100 + i)["prompt"] for i in range(60)}
    asks.update({f"ticket-{60 + k:03d}": _task(100 + k * 3)["prompt"].replace("only", "alone")
                 for k in range(20)})
    for tid, prompt in asks.items():
        skill = 0.9 if int(tid[-3:]) >= 60 else rng.random()
        for _ in range(1 + rng.randrange(3)):
            right = namespace["_expected"](prompt)
            reply = right if rng.random() < skill else f"{float(right) + 1:.2f}"
            if rng.random() < 0.2:
                reply = f"The refund is {reply}."
            record = {"task_id": tid, "model": MODEL,
                      "messages": [{"role": "user", "content": prompt},
                                   {"role": "assistant", "content": reply}]}
            record["reward"] = namespace["grade"](record, reply)
            out.append(record)
    _write_jsonl(HERE / "traces.jsonl", out)
    (HERE / "grader.py").write_text(GRADER)
    return out


def sft_data(records: list[dict]) -> None:
    """The README's SFT commands, through the library: split 20% of the tickets off as the
    held-out test, keep the best passing attempt per training ask, drop what leaks the test,
    export TRL's conversational file; with the grader and the model in settings.json."""
    sys.path.insert(0, str(HERE.parent))
    from whileai_core import decontaminate, export_sft, select_sft, split_by_task
    split = split_by_task(str(HERE / "traces.jsonl"), share=0.2, seed=0)
    held = set(split.holdout_tasks)
    train = [r for r in records if r["task_id"] not in held]
    holdout = [r for r in records if r["task_id"] in held]
    folder = HERE / "sft-data"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    _write_jsonl(folder / "holdout.jsonl", holdout)
    chosen = select_sft(train)
    clean = decontaminate(chosen.records, holdout)
    export_sft(clean.records, folder / "train.jsonl")
    shutil.copy(HERE / "grader.py", folder / "grader.py")
    (folder / "settings.json").write_text(json.dumps({"model": MODEL}) + "\n")


def rollouts() -> None:
    """30 tasks x 8 rollouts; within a task, padded replies pass more often (a length hack)."""
    rng = random.Random(5)
    out = []
    for i in range(30):
        task = _task(i)
        for j in range(8):
            padded = j % 2 == 1
            reply = task["answer"] if not padded else (
                "Let me restate the whole refund policy before answering. " * (2 + j)
                + task["answer"])
            p = 0.75 if padded else 0.35
            out.append({"task_id": task["task_id"], "completion": reply, "model": MODEL,
                        "reward": 1.0 if rng.random() < p else 0.0, "truncated": False,
                        "rollout": j})
    _write_jsonl(HERE / "rollouts.jsonl", out)


def training_rows() -> None:
    """Steps 0-30: 16 training rollouts a step whose pass rate climbs from 0.3 to 0.85, and 30
    held-out tasks x 2 every 5 steps, flat at their step-0 rates."""
    rng = random.Random(3)
    out = []
    held = [(f"refund-{i:03d}", BANDS[i % 6]) for i in range(30)]
    for step in range(31):
        p = 0.3 + 0.55 * step / 30
        for j in range(16):
            out.append({"step": step, "task_id": f"train-{(step * 16 + j) % 200:03d}",
                        "reward": 1.0 if rng.random() < p else 0.0, "truncated": False})
        if step % 5 == 0:
            for task, rate in held:
                for _ in range(2):
                    out.append({"step": step, "split": "eval", "task_id": task,
                                "reward": 1.0 if rng.random() < rate else 0.0,
                                "truncated": False})
    _write_jsonl(HERE / "training_rows.jsonl", out)


def after() -> None:
    """``graded.jsonl``'s tasks after training: each band 0.15 higher, capped at 1."""
    rng = random.Random(20261203)
    _write_jsonl(HERE / "after.jsonl", [
        {"task_id": f"refund-{i:03d}", "reward": 1.0 if rng.random() < min(1.0, BANDS[i % 6] + 0.15)
         else 0.0, "truncated": False, "model": MODEL, "rollout": j}
        for i in range(48) for j in range(4)])


def rl_run() -> None:
    """A GRPO run that locks into one reply cut at the cap: steps 0-5 learn (a group's rollouts
    pass or fail apart), steps 6-11 every rollout of a group is the same cut reply, reward 0."""
    rng = random.Random(12)
    stuck = "Let me restate the whole refund policy before I answer. " * 12
    records = []
    for step in range(12):
        batch = []
        for i in range(8):
            task = _task(i)
            for _ in range(4):
                if step >= 6:
                    reply, reward, cut = stuck, 0.0, True
                elif rng.random() < 0.3 + 0.05 * step:
                    reply, reward, cut = task["answer"], 1.0, False
                else:
                    reply, reward, cut = f"{float(task['answer']) + rng.randrange(1, 9):.2f}", 0.0, False
                batch.append({"task_id": task["task_id"], "reward": reward, "completion": reply,
                              "truncated": cut})
        record = {"step": step, "train_reward": sum(r["reward"] for r in batch) / len(batch),
                  "n_completions": len(batch),
                  "truncated_share": sum(r["truncated"] for r in batch) / len(batch),
                  "batch": batch}
        if step % 4 == 0:  # the frozen held-out set, every 4 steps: flat
            record["held_out"] = [
                {"task_id": f"refund-{i:03d}", "reward": 1.0 if rng.random() < BANDS[i % 6] else 0.0,
                 "truncated": False, "completion": "0.00"} for i in range(30, 46) for _ in range(2)]
        records.append(record)
    _write_jsonl(HERE / "rl-run" / "watch.jsonl", records)


def main() -> None:
    graded_and_teacher()
    tasks_and_reruns()
    judge_files()
    sft_data(traces())
    rollouts()
    training_rows()
    after()
    rl_run()


if __name__ == "__main__":
    main()
