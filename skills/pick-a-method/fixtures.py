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


def _rows(name, *, tasks, k, rate, model=MODEL, cut_off_passes=0, budget=None, lcs=None,
          families=0):
    """Rows for ``tasks`` tasks, ``k`` rollouts each; task t passes with probability rate(t).

    ``budget`` (cap, tokens(t, j)): each row's max_tokens and completion_tokens. ``lcs``: a
    continuous reward instead, lcs(t, j) in [0, 1). ``families``: task t belongs to family
    t // families (its pass rate then comes from the family: rate is called with the family)."""
    out = []
    for t in range(tasks):
        p = rate(t // families if families else t)
        for j in range(k):
            passed = _u(name, t, j) < p
            truncated = _u("cut", name, t, j) < 0.05 and not passed
            row = {"task_id": f"task-{t:03d}", "reward": float(passed),
                   "truncated": truncated, "model": model}
            if lcs is not None:
                row["reward"], row["truncated"] = round(lcs(t, j), 4), False
            if budget is not None:
                cap, tokens = budget
                row["max_tokens"], row["completion_tokens"] = cap, tokens(t, j)
            if families:
                row["family"] = f"repo-{t // families:02d}"
            out.append(row)
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
    # an LCS reward in [0, 1) that no reply reaches 1 on (the reverse-text recipe at step 1),
    # and the same prompts with one reward per prompt however often it is sampled
    "lcs.jsonl": dict(tasks=48, k=8, rate=_spread, lcs=lambda t, j: 0.05 + 0.5 * _u("l", t)
                      + 0.4 * _u("lj", t, j)),
    "lcs_flat.jsonl": dict(tasks=48, k=8, rate=_spread, lcs=lambda t, j: 0.05 + 0.9 * _u("l", t)),
    # the same 80 held-out tasks, each side's max_tokens and reply lengths recorded
    "student_heldout.jsonl": dict(tasks=80, k=4, rate=lambda t: 0.25 + 0.3 * _u("s", t),
                                  budget=(512, lambda t, j: 120 + int(380 * _u("st", t, j)))),
    "strong_teacher.jsonl": dict(tasks=80, k=4, rate=lambda t: 0.65 + 0.3 * _u("s", t),
                                 model=STRONG,
                                 budget=(512, lambda t, j: 150 + int(350 * _u("tt", t, j)))),
    "weak_teacher.jsonl": dict(tasks=80, k=4, rate=lambda t: 0.27 + 0.3 * _u("s", t),
                               model="Qwen/Qwen3-14B",
                               budget=(512, lambda t, j: 150 + int(350 * _u("wt", t, j)))),
    # a teacher that wins only with four times the room: most replies run past 512 tokens
    "long_teacher.jsonl": dict(tasks=80, k=4, rate=lambda t: 0.8, model=STRONG,
                               budget=(2048, lambda t, j: 300 + int(1700 * _u("lt", t, j)))),
    # 12 repos of 8 prompts: a prompt's pass rate is mostly its repo's
    "families.jsonl": dict(tasks=96, k=4, rate=lambda f: 0.1 + 0.8 * _u("fam", f), families=8),
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


def _per_task(path, keep=lambda row: True):
    """Per-task (passes, rollouts), counted from the file without the library; a row passes
    when its reward is at least 1.0 and ``keep(row)``."""
    counts = {}
    for line in Path(path).read_text().splitlines():
        row = json.loads(line)
        c, n = counts.get(row["task_id"], (0, 0))
        counts[row["task_id"]] = (c + (row["reward"] >= 1.0 and keep(row)), n + 1)
    return counts


def _rows_of(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def fields_described(ns):
    by = {f.name: f for f in ns["fields"].fields}
    assert by["completion_tokens"].within_task == "varies" and by["max_tokens"].values == ["512"]
    assert ns["fields"].route_fields == ["truncated", "max_tokens", "completion_tokens"]


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


def continuous_reward_has_signal(ns):
    rows = _rows_of("lcs.jsonl")
    assert max(r["reward"] for r in rows) < 1.0                  # no exact reversal anywhere
    assert ns["lcs"].band == "mixed" and ns["lcs"].pass_at_1.value == 0.0
    tasks = {r["task_id"] for r in rows}
    assert ns["lcs"].n_signal == len(tasks)                      # every prompt's rewards differ
    assert ns["lcs_route"].route == "grpo" and ns["flat_route"].route == "floor"


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


def longer_budget_does_not_clear(ns):
    assert not ns["long"] and ns["long"].budget.status == "teacher_longer"
    # the teacher held to 512 tokens: a pass counts only when its reply fits, by hand
    kept = _per_task("long_teacher.jsonl", keep=lambda r: r["completion_tokens"] <= 512)
    expected = sum(c / n for c, n in kept.values()) / len(kept)
    assert abs(ns["long"].at_student_cap.teacher.value - expected) < 1e-12
    assert "max_tokens=512" in ns["long"].reason


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
                   "lcs.jsonl": "grpo", "graded.jsonl": "grpo"}, got
    assert ns["decided"].route == "opd"


def families_widen_the_interval(ns):
    plain, clustered = ns["plain"], ns["by_repo"]
    assert clustered.pass_at_1 == plain.pass_at_1 and clustered.n_families == 12
    assert (clustered.ci[1] - clustered.ci[0]) > 1.5 * (plain.ci[1] - plain.ci[0])


def sized_with_controls(ns):
    from statistics import NormalDist

    # Miller 2024 Eq. 9 on the planning model: omega^2 = 2 (1/12)(1 - 0.8), sigma^2 = 1/6, k = 4
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    expected = z * z * (2 * (1 / 12) * 0.2 + 2 * (1 / 6) / 4) / 0.05 ** 2
    assert ns["size"].n_tasks == int(-(-expected // 1)), (ns["size"].n_tasks, expected)
    arms = ns["arms"]
    assert set(arms) == {"method", "random selection", "random reward"}
    assert len({len(v) for v in arms.values()}) == 1


CHECKS = [fields_described, cut_off_passes_counted, rollouts_counted, single_rollout_options,
          band_and_split_share, continuous_reward_has_signal, floor_routes_to_opsd,
          saturated_ranks_the_passes, teacher_clears_only_when_stronger,
          longer_budget_does_not_clear, opd_config_names_the_teacher, who_wrote_the_rows,
          routes_end_to_end, families_widen_the_interval, sized_with_controls]
