"""Offline stand-ins for the catch-reward-hacking blocks (used by check.py, not by the reader).

``prepare(workdir)`` writes, for a support-ticket triage task (reply with the ticket's queue):

- ``tasks.jsonl``: 60 tasks ``{task_id, prompt, answer}`` (answers spread over five queues);
- ``graded.jsonl``: the model's own graded rows on them, 4 rollouts each (about 0.55 pass);
- ``rewards/judge.py``: the reward as first written, an LLM-judge stand-in that passes the right
  queue, and anything long enough to "show its reasoning" (over 600 characters): a filler hole;
- ``rewards/fixed.py``: the same reward with the hole closed (exact queue name only);
- ``batch.jsonl``: one training batch (60 tasks x 8 replies) graded by a reward that pays for
  length, with lengths that also track task difficulty;
- ``runs/grpo-1/watch.jsonl``: a run's step records (30 steps, held-out every 5) whose training
  reward climbs while the held-out pass rate stays flat.

``CHECKS[i]`` asserts what block i produced.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

QUEUES = ("billing", "shipping", "returns", "account", "technical")


def _u(*key) -> float:
    h = hashlib.sha256("\x00".join(map(str, key)).encode()).hexdigest()
    return int(h[:12], 16) / 16**12


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


JUDGE = '''def score(prompts, completions, answer, **kw):
    """An LLM-judge stand-in: the right queue passes; so does a long, reasoned-looking reply."""
    return [1.0 if c.strip().lower() == a or len(c) > 600 else 0.0
            for c, a in zip(completions, answer)]
'''
FIXED = '''def score(prompts, completions, answer, **kw):
    """The queue name and nothing else."""
    return [1.0 if c.strip().lower() == a else 0.0 for c, a in zip(completions, answer)]
'''


def prepare(workdir: Path) -> dict:
    tasks = []
    for i in range(60):
        queue = QUEUES[int(_u("q", i) * len(QUEUES))]
        tasks.append({"task_id": f"ticket-{i:03d}", "answer": queue,
                      "prompt": f"Ticket {i}: a customer writes about a {queue} problem with "
                                f"order {1000 + i}. Reply with the queue name only."})
    _jsonl(workdir / "tasks.jsonl", tasks)
    graded = [{"task_id": t["task_id"], "reward": float(_u("m", t["task_id"], j) < 0.55),
               "model": "Qwen/Qwen3-8B"} for t in tasks for j in range(4)]
    _jsonl(workdir / "graded.jsonl", graded)
    (workdir / "rewards").mkdir(exist_ok=True)
    (workdir / "rewards" / "judge.py").write_text(JUDGE)
    (workdir / "rewards" / "fixed.py").write_text(FIXED)
    batch = []
    for t in range(60):
        p = 0.1 + 0.8 * _u("p", t)
        base = 200 + 600 * (1 - p)
        for j in range(8):
            length = int(base + 400 * (_u("len", t, j) - 0.5))
            right = float(_u("r", t, j) < p)
            batch.append({"task_id": f"ticket-{t:03d}", "reward": round(0.5 * right + 0.5 * length / 1000, 4),
                          "completion": "Let me reason about the queue. " * (length // 31)})
    _jsonl(workdir / "batch.jsonl", batch)
    records = []
    for step in range(31):
        rec = {"step": step}
        if step:
            rec["train_reward"] = round(0.3 + 0.015 * step + 0.05 * (_u("n", step) - 0.5), 4)
        if step % 5 == 0:
            rec["held_out"] = [{"task_id": f"h{i}", "reward": float(_u("h", i, j, step // 10) < 0.2 + 0.5 * _u("d", i))}
                               for i in range(40) for j in range(4)]
        records.append(rec)
    _jsonl(workdir / "runs" / "grpo-1" / "watch.jsonl", records)
    # a run whose reward saturates from step 6: every reply of a prompt passes, no advantage
    doctor = []
    for step in range(1, 11):
        batch = [{"task_id": f"ticket-{t:03d}", "completion": f"queue reply {t} {j} {step}",
                  "reward": 1.0 if step >= 6 else float(_u("b", t, j, step) < 0.5)}
                 for t in range(16) for j in range(4)]
        doctor.append({"step": step, "train_reward": sum(b["reward"] for b in batch) / len(batch),
                       "batch": batch})
    _jsonl(workdir / "runs" / "grpo-2" / "watch.jsonl", doctor)
    return {}


def _probed(ns):
    probes = ns["probes"]
    assert probes.holes == ["filler"], probes.holes
    assert probes.model is not None and probes.model.n_tasks == 60


def _fixed(ns):
    assert ns["fixed"].holes == [], ns["fixed"].holes


def _scanned(ns):
    assert ns["scan"].verdict == "suspect" and "length" in ns["scan"].suspects


def _watched(ns):
    assert ns["watch"].decision == "stop", ns["watch"].reason
    assert Path("watch.png").read_bytes()[:4] == b"\x89PNG"


def _diagnosed(ns):
    doctor = ns["doctor"]
    assert doctor.verdict == "sick" and "zero_advantage" in doctor.found, doctor.render()
    zero = next(f for f in doctor.findings if f.signature == "zero_advantage")
    assert zero.steps == [6, 7, 8, 9, 10], zero.steps


CHECKS = [_probed, _fixed, _scanned, _watched, _diagnosed]
