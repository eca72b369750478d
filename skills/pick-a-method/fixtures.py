"""Offline stand-ins for the pick-a-method blocks (used by check.py, not by the skill's reader).

``prepare(workdir)`` writes graded rows (one JSONL file per situation the questions tell apart)
and returns ``MODEL`` (the model you will train), ``TASKSET``, ``TEACHER`` (an Endpoint that is
never called: nothing here opens a connection) and ``grader`` (a program that scores a pass's
quality, standing in for an audited judge). ``CHECKS[i]`` asserts what block i produced.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

MODEL = "Qwen/Qwen3-8B"
TASKSET = "reverse-text"
STRONG = "Qwen/Qwen3-32B"


def _u(*key) -> float:
    h = hashlib.sha256("\x00".join(map(str, key)).encode()).hexdigest()
    return int(h[:12], 16) / 16**12


def _rows(name, *, tasks, k, rate, model=MODEL, cut_off_passes=0):
    """Rows for ``tasks`` tasks, ``k`` rollouts each; task t passes with probability rate(t)."""
    out = []
    for t in range(tasks):
        p = rate(t)
        for j in range(k):
            passed = _u(name, t, j) < p
            truncated = _u("cut", name, t, j) < 0.05 and not passed
            out.append({"task_id": f"task-{t:03d}", "reward": float(passed),
                        "truncated": truncated, "model": model})
    for i in range(cut_off_passes):  # a reply cut at the cap that still lands the keyword
        out[i * k] |= {"reward": 1.0, "truncated": True}
    return out


def _spread(t):
    return _u("p", t)


ROW_FILES = {
    "graded.jsonl": dict(tasks=48, k=8, rate=_spread),
    "cut_off.jsonl": dict(tasks=48, k=8, rate=_spread, cut_off_passes=6),
    "one_per_prompt.jsonl": dict(tasks=200, k=1, rate=_spread),
    "floor.jsonl": dict(tasks=40, k=8, rate=lambda t: 0.0),
    "saturated.jsonl": dict(tasks=40, k=8, rate=lambda t: 1.0),
    "other_model.jsonl": dict(tasks=48, k=8, rate=_spread, model="deepseek-ai/DeepSeek-V3"),
    "older_copy.jsonl": dict(tasks=48, k=8, rate=_spread, model=f"{MODEL}@step-40"),
    # the same 80 held-out tasks, scored at the student's max_tokens
    "student_heldout.jsonl": dict(tasks=80, k=4, rate=lambda t: 0.25 + 0.3 * _u("s", t)),
    "strong_teacher.jsonl": dict(tasks=80, k=4, rate=lambda t: 0.65 + 0.3 * _u("s", t),
                                 model=STRONG),
    "weak_teacher.jsonl": dict(tasks=80, k=4, rate=lambda t: 0.27 + 0.3 * _u("s", t),
                               model="Qwen/Qwen3-14B"),
}


def prepare(workdir: Path) -> dict:
    from whileai_core.methods import Endpoint

    for name, spec in ROW_FILES.items():
        rows = _rows(name, **spec)
        (workdir / name).write_text("\n".join(json.dumps(r) for r in rows) + "\n")

    def grader(replies: list) -> list:
        """(solution, behaviour) quality in [0, 1] for each passing reply."""
        return [(0.5 + 0.5 * _u("sol", r), 0.4 + 0.6 * _u("beh", r)) for r in replies]

    teacher = Endpoint(url="http://localhost:8001/v1", model=STRONG, vocab=151_936)
    return {"MODEL": MODEL, "TASKSET": TASKSET, "TEACHER": teacher, "grader": grader}


def _per_task(path):
    """Per-task (passes, rollouts), counted from the file without the library."""
    counts = {}
    for line in Path(path).read_text().splitlines():
        row = json.loads(line)
        c, n = counts.get(row["task_id"], (0, 0))
        counts[row["task_id"]] = (c + (row["reward"] >= 1.0), n + 1)
    return counts


def cut_off_passes_counted(ns):
    assert ns["clean"].count == 0
    assert ns["cut"].count == ROW_FILES["cut_off.jsonl"]["cut_off_passes"]


def rollouts_counted(ns):
    assert ns["grouped"].k == 8 and ns["single"].k == 1


def single_rollout_options(ns):
    # FlashReinforce's advantage is R - batch mean, on every token: 1 - 0.5 and 0 - 0.5
    assert [[round(a, 12) for a in traj] for traj in ns["update"].advantages] == \
        [[0.5] * 3, [-0.5] * 2]
    assert "rae" in ns["rae"].text


def band_and_split_share(ns):
    counts = _per_task("graded.jsonl")
    split = sum(0 < c < n for c, n in counts.values())
    assert ns["where"].band == "mixed"
    assert ns["share"].n_split == split and ns["share"].n_tasks == len(counts)


def floor_routes_to_opsd(ns):
    assert ns["opsd"].method.startswith("opsd") or "opsd" in ns["opsd"].text
    assert ns["opsd"].command


def saturated_ranks_the_passes(ns):
    assert ns["method"].mode == "reward"
    # GRS with floor 0: R' = R * s * b for each pass, from the grader's own scores
    expected = [s * b for s, b in ns["grader"](ns["replies"])]
    assert all(abs(x - y) < 1e-12 for x, y in zip(ns["shaped"].rewards, expected))


def teacher_clears_only_when_stronger(ns):
    assert ns["strong"] and not ns["weak"]
    t, s = _per_task("strong_teacher.jsonl"), _per_task("student_heldout.jsonl")
    gap = (sum(c / n for c, n in t.values()) / len(t)) - (sum(c / n for c, n in s.values()) / len(s))
    assert abs(ns["strong"].gap - gap) < 1e-12


def opd_config_names_the_teacher(ns):
    assert "localhost:8001" in ns["opd"].text


def who_wrote_the_rows(ns):
    status = {path: who.status for path, who in ns["writers"].items()}
    assert status == {"graded.jsonl": "on_policy", "other_model.jsonl": "other_model",
                      "older_copy.jsonl": "older_copy"}, status
    assert ns["stale"].config["orchestrator"]["max_off_policy_steps"] == 8  # prime-rl default


def routes_end_to_end(ns):
    got = {path: r.route for path, r in ns["routes"].items()}
    assert got == {"cut_off.jsonl": "fix_reward", "one_per_prompt.jsonl": "single_rollout",
                   "floor.jsonl": "floor", "saturated.jsonl": "saturated",
                   "other_model.jsonl": "off_policy", "older_copy.jsonl": "off_policy",
                   "graded.jsonl": "grpo"}, got
    assert ns["decided"].route == "opd"


def sized_with_controls(ns):
    from statistics import NormalDist

    # Miller 2024 Eq. 9 on the planning model: omega^2 = 2 (1/12)(1 - 0.8), sigma^2 = 1/6, k = 4
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    expected = z * z * (2 * (1 / 12) * 0.2 + 2 * (1 / 6) / 4) / 0.05 ** 2
    assert ns["size"].n_tasks == int(-(-expected // 1)), (ns["size"].n_tasks, expected)
    arms = ns["arms"]
    assert set(arms) == {"method", "random selection", "random reward"}
    assert len({len(v) for v in arms.values()}) == 1


CHECKS = [cut_off_passes_counted, rollouts_counted, single_rollout_options, band_and_split_share,
          floor_routes_to_opsd, saturated_ranks_the_passes, teacher_clears_only_when_stronger,
          opd_config_names_the_teacher, who_wrote_the_rows, routes_end_to_end,
          sized_with_controls]
