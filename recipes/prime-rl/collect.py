"""Read the three prime-rl arms back: held-out rows step 1 vs last, paired, with the noise floor.

prime-rl evaluates the held-out split (``train[872:]``, 128 prompts) once before training and
every ``eval.interval`` steps after; the recipe pairs each prompt's first and last score. The
reward is the taskset's LCS ratio in [0, 1]; an exact reversal (1.0) is a pass. Every number
comes from ``whileai_core``: ``compare`` pairs by prompt and resamples prompts. For the LCS
marker, each row's reward r is handed to it as the pass rate of ``LCS_RESOLUTION`` pseudo-rows
(round(100 r) passes of 100), so the per-prompt rate *is* the prompt's LCS to 0.01 and the
task-clustered bootstrap interval is that of the mean LCS. The noise floor is the arms' step-1
scores: the same untrained student evaluated three times.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence

from whileai_core.errors import RowsError

LCS_RESOLUTION = 100
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


def as_rate_rows(rows: Sequence[Mapping], resolution: int = LCS_RESOLUTION) -> list[dict]:
    """Each reward r in [0, 1] as round(resolution r) passing and the rest failing pseudo-rows."""
    out = []
    for row in rows:
        r = float(row["reward"])
        if not 0.0 <= r <= 1.0:
            raise RowsError(f"reward {r} is outside [0, 1]; the LCS marker is a ratio",
                            source="eval rows", field="reward", fix="pass the LCS reward rows")
        hits = round(r * resolution)
        task = row["task_id"]
        out += [{"task_id": task, "reward": 1.0}] * hits
        out += [{"task_id": task, "reward": 0.0}] * (resolution - hits)
    return out


def _indicator(rows: Sequence[Mapping], field: str) -> list[dict]:
    return [{"task_id": r["task_id"], "reward": 1.0 if r.get(field) else 0.0} for r in rows]


def arm_report(rows: Sequence[Mapping], *, run_std: float | None = None) -> dict:
    """First vs last eval step of one arm: LCS and exact-reversal pass@1, truncation share."""
    from whileai_core import compare, pass_at

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
        "lcs_before": pass_at(as_rate_rows(before)).to_dict(),
        "lcs_after": pass_at(as_rate_rows(after)).to_dict(),
        "lcs_delta": compare(as_rate_rows(before), as_rate_rows(after), run_std=run_std).to_dict(),
        "exact_delta": compare(before, after, run_std=run_std).to_dict(),
        "truncated_before": pass_at(_indicator(before, "truncated")).to_dict(),
        "truncated_after": pass_at(_indicator(after, "truncated")).to_dict(),
    }


def report(arms: Mapping[str, Mapping]) -> dict:
    """All arms: noise floor from the step-1 scores, per-arm deltas, each arm against GRPO.

    ``arms[name]`` holds ``rows`` (graded eval rows with ``step``) and ``wall_clock_s``.
    """
    from whileai_core import compare, noise_floor, pass_at

    first_scores = {}
    for name, arm in arms.items():
        steps = by_step(arm["rows"])
        first_scores[name] = pass_at(as_rate_rows(steps[min(steps)])).pass_at_1
    noise = noise_floor(*first_scores.values()) if len(first_scores) >= 2 else None
    run_std = noise.run_std if noise is not None else None
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
                as_rate_rows(grpo[max(grpo)]), as_rate_rows(mine[max(mine)]),
                run_std=run_std).to_dict()
    return out


def _delta_text(d: Mapping) -> str:
    if d.get("delta") is None:
        return f"n/a ({d['verdict']})"
    ci = d.get("ci95")
    inner = f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else " [no interval]"
    return f"{d['delta']:+.3f}{inner} {d['verdict']}"


def render(rep: Mapping) -> str:
    lines = ["arm    | held-out LCS first | last   | delta [95%] verdict            | "
             "truncated first -> last | wall clock"]
    for name, arm in rep["arms"].items():
        wall = arm.get("wall_clock_s")
        lines.append(
            f"{name:<6} | {arm['lcs_before']['pass_at_1']:.3f} (step {arm['first_step']})"
            f"{'':<4} | {arm['lcs_after']['pass_at_1']:.3f} | {_delta_text(arm['lcs_delta']):<30} | "
            f"{arm['truncated_before']['pass_at_1']:.2f} -> {arm['truncated_after']['pass_at_1']:.2f}"
            f"{'':<12} | {'n/a' if wall is None else f'{wall:.0f} s'}")
    noise = rep.get("noise_floor")
    if noise:
        scores = ", ".join(f"{s:.3f}" for s in noise["run_scores"])
        lines.append(f"noise floor: step-1 LCS {scores}; run_std {noise['run_std']:.3f}, a delta "
                     f"under {noise['band']:.3f} is noise")
    for name, d in rep["head_to_head"].items():
        lines.append(f"{name} at the last step: {_delta_text(d)}")
    return "\n".join(lines)
