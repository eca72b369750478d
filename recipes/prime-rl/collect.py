"""Read the three prime-rl arms back: held-out rows step 1 vs last, paired, with the noise floor.

prime-rl evaluates the held-out split (``train[872:]``, 128 prompts) once before training and
every ``eval.interval`` steps after; the recipe pairs each prompt's first and last score. The
reward is the taskset's LCS ratio in [0, 1]; an exact reversal (1.0) is a pass. Every number
comes from ``whileai_core``: ``compare`` pairs by prompt and resamples prompts; the LCS marker
is compared as a mean reward (``metric="reward"``), the exact reversal as a pass rate. The noise
floor is the arms' step-1 scores: the same untrained student evaluated three times.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence

from whileai_core.errors import RowsError

ARMS = ("grpo", "opsd", "opd")
_STEP_IN_PATH = re.compile(r"step[_-]?(\d+)")
_ID_FIELDS = ("task_id", "example_id", "prompt_id", "id")
_TRUNCATED_FIELDS = ("truncated", "is_truncated")
_STEP_FIELDS = ("step", "eval_step")


def eval_rows(lines: Iterable[str], *, source: str = "eval rows",
              default_step: int | None = None) -> list[dict]:
    """Graded rows from prime-rl eval output lines: ``task_id``, ``reward``, ``truncated``, ``step``.

    The prompt id is the first of task_id/example_id/prompt_id/id, else a hash of the prompt.
    A line without a finite reward or a step is an error naming the line, never a silent skip.
    A rollout that carries an ``error`` is kept with ``errored: True``; the report leaves it out
    of the scores (a failed rollout is not a zero-reward answer) and counts it.
    """
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise RowsError("invalid JSON", source=source, line=number,
                            fix="pass prime-rl's eval rollouts (one JSON object per line)") from None
        reward = record.get("reward")
        if isinstance(reward, bool) or not isinstance(reward, (int, float)) or reward != reward:
            raise RowsError(f"`reward` is {reward!r}", source=source, line=number, field="reward",
                            fix="each eval row needs the taskset's numeric reward")
        task = next((record[k] for k in _ID_FIELDS if record.get(k) is not None), None)
        if task is None:
            prompt = record.get("prompt")
            if prompt is None:
                raise RowsError("row has no prompt id and no prompt", source=source, line=number,
                                field="task_id", fix="keep example_id (or the prompt) in eval rows")
            task = hashlib.sha256(json.dumps(prompt, sort_keys=True).encode()).hexdigest()[:16]
        step = next((record[k] for k in _STEP_FIELDS if record.get(k) is not None), default_step)
        if not isinstance(step, int) or isinstance(step, bool):
            raise RowsError(f"`step` is {step!r}", source=source, line=number, field="step",
                            fix="say which training step the eval row belongs to")
        truncated = next((bool(record[k]) for k in _TRUNCATED_FIELDS if k in record), False)
        rows.append({"task_id": str(task), "reward": float(reward), "truncated": truncated,
                     "step": step, "model": record.get("model"),
                     "errored": record.get("error") is not None})
    return rows


def step_from_path(path: str) -> int | None:
    found = _STEP_IN_PATH.findall(path)
    return int(found[-1]) if found else None


def by_step(rows: Sequence[Mapping]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for row in rows:
        out.setdefault(int(row["step"]), []).append(dict(row))
    return dict(sorted(out.items()))


def arm_report(rows: Sequence[Mapping], *, run_std: float | None = None) -> dict:
    """First vs last eval step of one arm: LCS and exact-reversal pass@1, truncation share."""
    from whileai_core import compare, field_share, mean_reward

    steps = by_step(rows)
    if len(steps) < 2:
        raise RowsError(f"eval rows cover steps {list(steps)}; pairing needs the first and the "
                        "last", source="eval rows", fix="keep the startup eval and a later one")
    first, last = min(steps), max(steps)
    before = [r for r in steps[first] if not r.get("errored")]
    after = [r for r in steps[last] if not r.get("errored")]
    return {
        "first_step": first, "last_step": last,
        "errored_first": len(steps[first]) - len(before),
        "errored_last": len(steps[last]) - len(after),
        "lcs_before": mean_reward(before).to_dict(),
        "lcs_after": mean_reward(after).to_dict(),
        "lcs_delta": compare(before, after, run_std=run_std, metric="reward").to_dict(),
        "exact_delta": compare(before, after).to_dict(),
        "truncated_before": field_share(before, "truncated").to_dict(),
        "truncated_after": field_share(after, "truncated").to_dict(),
    }


def report(arms: Mapping[str, Mapping]) -> dict:
    """All arms: noise floor from the step-1 scores, per-arm deltas, each arm against GRPO.

    ``arms[name]`` holds ``rows`` (graded eval rows with ``step``) and ``wall_clock_s``.
    """
    from whileai_core import compare, mean_reward, noise_floor

    first_scores = {}
    for name, arm in arms.items():
        steps = by_step(arm["rows"])
        first_scores[name] = mean_reward(steps[min(steps)]).value
    noise = noise_floor(*first_scores.values()) if len(first_scores) >= 2 else None
    run_std = noise  # the NoiseFloor itself: compare reads run_std and the runs behind it
    out = {"noise_floor": noise.to_dict() if noise else None, "step1_lcs": first_scores,
           "arms": {}, "head_to_head": {}}
    for name, arm in arms.items():
        out["arms"][name] = {**arm_report(arm["rows"], run_std=run_std),
                             "wall_clock_s": arm.get("wall_clock_s")}
    if "grpo" in arms:
        grpo = by_step(arms["grpo"]["rows"])
        for name, arm in arms.items():
            if name == "grpo":
                continue
            mine = by_step(arm["rows"])
            out["head_to_head"][f"{name}_vs_grpo"] = compare(
                grpo[max(grpo)], mine[max(mine)], run_std=run_std, metric="reward").to_dict()
    return out


def _delta_text(d: Mapping) -> str:
    if d.get("delta") is None:
        return f"n/a ({d['verdict']})"
    ci = d.get("ci")
    inner = f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else " [no interval]"
    return f"{d['delta']:+.3f}{inner} {d['verdict']}"


def render(rep: Mapping) -> str:
    lines = ["arm    | held-out LCS first | last   | delta [95%] verdict            | "
             "truncated first -> last | wall clock"]
    for name, arm in rep["arms"].items():
        wall = arm.get("wall_clock_s")
        lines.append(
            f"{name:<6} | {arm['lcs_before']['value']:.3f} (step {arm['first_step']})"
            f"{'':<4} | {arm['lcs_after']['value']:.3f} | {_delta_text(arm['lcs_delta']):<30} | "
            f"{arm['truncated_before']['value']:.2f} -> {arm['truncated_after']['value']:.2f}"
            f"{'':<12} | {'n/a' if wall is None else f'{wall:.0f} s'}")
    noise = rep.get("noise_floor")
    if noise:
        scores = ", ".join(f"{s:.3f}" for s in noise["run_scores"])
        lines.append(f"noise floor: step-1 LCS {scores}; run_std {noise['run_std']:.3f}, a delta "
                     f"under {noise['band']:.3f} is noise")
    for name, d in rep["head_to_head"].items():
        lines.append(f"{name} at the last step: {_delta_text(d)}")
    return "\n".join(lines)
