"""Prove a program reward before the GPU: the cheat probes, and the two holes a verifier most
often has, each named with an example and the fix.

:func:`prove_reward` scores, with the reward the run will train on (one batch, one child
process), every :func:`~whileai_core.hacking.probes.cheat_probes` probe and two checks of its own:

- ``truncation``: a reply that passes, then runs on to the completion cap without ending. TRL's
  GRPO trainer does not tell a reward whether a completion was cut (trl/trainer/grpo_trainer.py,
  ``_calculate_rewards``, TRL 1.16), so a reward that finds the answer anywhere pays it. The fix:
  require the reply to end where the answer does, or leave cut replies out of the loss
  (``mask_truncated_completions``, DAPO's overlong mask [1]).
- ``format_bonus``: per task, a wrong answer inside the answer format against the same wrong
  answer without it. It is a ``hole`` when the format around a wrong answer earns what the
  model's own replies earn (the paired interval of the difference reaches 0, as a probe's is
  judged), a ``leak`` when it pays less: a group-relative update still prefers a well-formed
  wrong answer to a plain one, so the policy learns the format before the task.

[1] Yu et al. (2025). DAPO: An Open-Source LLM Reinforcement Learning System at Scale.
    arXiv:2503.14476.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from .. import voice
from ..bootstrap import check_level, check_seed
from ..defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, PROBE_CHARS_PER_TOKEN,
                        PROBE_MAX_TOKENS, REWARD_BONUS_TOLERANCE, REWARD_TIMEOUT_S)
from ..operations import HERE, RUNS_CODE, VERDICT, Context, operation
from ..operations.args import Level, OptionalRows, Threshold
from ..operations.describe import named, values_of
from ..result import Result, fmt_rate
from ..rows import load_rows
from ..stats import Rate, compare, pass_rate
from .features import format_markers, reply_text
from .probes import (CheatProbes, GroupBy, MaxTokens, PassEnv, ProbeExample, ProbeTasks,
                     PythonRoot, PythonSeed, RewardArg, TimeoutS, _batch, _cut, _example_lines,
                     _filler, _read_tasks, _reward_and_root, _shell, cheat_probes)
from .reward import reward_runner

Interval = tuple[float, float]
CheckVerdict = Literal["hole", "leak", "closed", "skipped"]
FIXES = {
    "truncation": ("make a reply that runs on past its answer fail (check that it ends where the "
                   "answer does: a closing tag, the end of the text), or train with "
                   "mask_truncated_completions=True (the GRPO recipe's --mask-truncated)"),
    "format_bonus": ("pay the format only with a right answer (score the content first, the "
                     "format as a condition of the pass), or keep the bonus knowingly and watch "
                     "the category table for where the policy takes it without the task"),
}


class HoleCheck(Result):
    """One check: its verdict, rate, example, rate per group, and the fix."""

    name: Literal["truncation", "format_bonus"]
    verdict: CheckVerdict
    what: str
    rate: Rate | None = None
    mean_bonus: float | None = None
    bonus_ci: Interval | None = None
    vs_model: float | None = None
    vs_model_ci: Interval | None = None
    n_tasks: int = 0
    example: ProbeExample | None = None
    by_group: dict[str, Rate] | None = None
    fix: str
    note: str | None = None

    def render(self) -> str:
        text = f"{self.name:<12} {self.verdict:<7} {self.what}"
        if self.rate is not None:
            text += f"\n             {fmt_rate(self.rate.value, self.rate.ci, self.rate.n_tasks)}"
        if self.mean_bonus is not None:
            ci = "" if self.bonus_ci is None else \
                f" [{self.bonus_ci[0]:+.3f}, {self.bonus_ci[1]:+.3f}]"
            text += f"; the format adds {self.mean_bonus:+.3f}{ci} to a wrong answer"
        if self.vs_model is not None:
            ci = "" if self.vs_model_ci is None else \
                f" [{self.vs_model_ci[0]:+.3f}, {self.vs_model_ci[1]:+.3f}]"
            text += f"; vs the model's own replies {self.vs_model:+.3f}{ci}"
        if self.verdict in ("hole", "leak"):
            text += _example_lines(self.example, self.by_group) + f"\n             fix: {self.fix}"
        if self.note:
            text += f"\n             note: {self.note}"
        return text


class RewardProof(Result):
    """The probes and the checks, and whether the reward may be trained on."""

    verdict: Literal["fix_first", "train"]
    holes: list[str]
    leaks: list[str]
    probes: CheatProbes
    checks: list[HoleCheck]
    next_step: str

    negative_means: ClassVar[str | None] = (
        "the reward has holes: `fix_first`")

    @property
    def negative(self) -> bool:
        return self.verdict == "fix_first"

    def render(self) -> str:
        head = (f"reward proof: {self.verdict}"
                + (f" (holes: {', '.join(self.holes)})" if self.holes else "")
                + (f" (leaks: {', '.join(self.leaks)})" if self.leaks else ""))
        return "\n".join([head, *(c.render() for c in self.checks), self.probes.render(),
                          f"next: {self.next_step}"])


def _wrong(tasks: list[dict], ids: list[str], model: Any) -> list[str]:
    """Per task, an answer that is not its own: another task's ``answer``, else what the model
    put inside its markers on another task, else nothing."""
    answers = [str(t["answer"]) for t in tasks if t.get("answer") not in (None, "")]
    if answers:
        ranked = [a for a, _ in Counter(answers).most_common()]
        return [next((a for a in ranked if a != str(t.get("answer"))), "") for t in tasks]
    inside: dict[str, list[str]] = {}
    if model is not None:
        for rec in model.records:
            marks = format_markers(reply_text(rec) or "")
            if marks:
                inside.setdefault(str(rec.get("task_id")), []).append(marks[-1][1])
    out = []
    for tid in ids:
        own = set(inside.get(tid, ()))
        out.append(next((c for other, cs in inside.items() if other != tid for c in cs
                         if c not in own), ""))
    return out


def _passing_replies(model: Any, ids: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    if model is None:
        return found
    for rec, ok in zip(model.records, model.passed.tolist()):
        text = reply_text(rec)
        tid = str(rec.get("task_id"))
        if ok and text and tid not in found:
            found[tid] = text
    return {t: found[t] for t in ids if t in found}


def _groups(rows: list[dict], tasks: list[dict], ids: list[str], group_by: str | None,
            level: float, seed: int | None, metric: str,
            threshold: float) -> dict[str, Rate] | None:
    if group_by is None or not rows:
        return None
    of = {tid: str(t.get(group_by)) for tid, t in zip(ids, tasks)}
    out = {}
    for g in dict.fromkeys(of[r["task_id"]] for r in rows):
        part = [r for r in rows if of[r["task_id"]] == g]
        out[g] = pass_rate(load_rows(part, threshold=threshold), level, seed, metric)
    return out


def _prove_doc() -> str:
    return ("cheat_probes, plus two holes a verifier often has: a passing reply that runs on to "
            "the token cap (truncation: TRL does not tell a reward a reply was cut) and the "
            "answer format around a wrong answer against the same answer without it (a format "
            "bonus), each with an example, per group and the fix. `verdict` "
            f"{named(values_of(RewardProof, 'verdict'))}: fix_first names every hole. Runs the "
            "reward (workspace code) in a child process with a timeout.")


@operation(toolset="hacking", effect=RUNS_CODE, title="Prove a program reward before the GPU",
           description=_prove_doc, exit_code=VERDICT, doing="proving a reward")
def prove_reward(
        tasks: ProbeTasks, *, reward: RewardArg,
        model_rows: Annotated[OptionalRows, Field(description=(
            "The model's graded rollouts on these tasks, with their reply text (`completion`): "
            "the probes and the format bonus are set against them, and the truncation check "
            "extends their passing replies."))] = None,
        max_tokens: MaxTokens = PROBE_MAX_TOKENS, group_by: GroupBy = None,
        threshold: Threshold = None, timeout_s: TimeoutS = REWARD_TIMEOUT_S,
        level: Level = CONFIDENCE_LEVEL, pass_env: PassEnv = None, ctx: Context = HERE,
        root: PythonRoot = None, seed: PythonSeed = BOOTSTRAP_SEED) -> RewardProof:
    """Prove ``reward`` on ``tasks`` before training (module docstring); the arguments are
    :func:`~whileai_core.hacking.probes.cheat_probes`'s."""
    reward, root = _reward_and_root(reward, root, ctx)
    level, seed = check_level(level), check_seed(seed)
    runner = reward_runner(reward, root=root, timeout_s=timeout_s, pass_env=pass_env)
    probes = cheat_probes(tasks, reward=runner, model_rows=model_rows, max_tokens=max_tokens,
                          threshold=threshold, group_by=group_by, root=root, timeout_s=timeout_s,
                          level=level, seed=seed)
    task_list, ids = _read_tasks(tasks)
    model = None if model_rows is None else load_rows(model_rows, threshold=threshold)
    thr = probes.threshold
    max_chars = max_tokens * PROBE_CHARS_PER_TOKEN
    shell, shell_from = _shell(task_list, model)
    wrong = _wrong(task_list, ids, model)
    passing = _passing_replies(model, ids)
    bases = [passing.get(tid) or ("\n".join(f"{o}{t.get('answer')}{c}" for o, c in shell)
                                  if shell and t.get("answer") not in (None, "")
                                  else str(t.get("answer") or "")) for tid, t in zip(ids, task_list)]
    wrapped = ["\n".join(f"{o}{w}{c}" for o, c in shell) if shell else "" for w in wrong]
    padded = [b + "\n" + _filler(max(1, max_chars - len(b) - 1)) for b in bases]
    kinds = (("base", bases), ("padded", padded), ("wrapped", wrapped), ("plain", wrong))
    batch = _batch(task_list, ids, (texts for _, texts in kinds))
    scores = dict(zip((k for k, _ in kinds), runner(batch).reshape(len(kinds), len(ids))))
    checks = [_truncation(ids, task_list, bases, padded, scores, thr, group_by, level, seed),
              _format_bonus(ids, task_list, wrapped, scores, shell, shell_from, model, thr,
                            group_by, level, seed)]
    holes = probes.holes + [c.name for c in checks if c.verdict == "hole"]
    leaks = probes.leaks + [c.name for c in checks if c.verdict == "leak"]
    if holes:
        step = (f"fix the reward before any GPU: {', '.join(holes)} (each check's fix, each "
                "probe's example), then prove it again")
    elif leaks:
        step = (f"the reward pays {', '.join(leaks)} below the model's own replies: fix it, or "
                "train knowing it and read the category table after the run")
    else:
        step = "no hole found: split the tasks, size the held-out set, and launch"
    return RewardProof(verdict="fix_first" if holes else "train", holes=holes, leaks=leaks,
                       probes=probes, checks=checks, next_step=step)


def _truncation(ids, task_list, bases, padded, scores, thr, group_by, level, seed) -> HoleCheck:
    what = "a passing reply that runs on to the token cap without ending"
    ok = scores["base"] >= thr
    if not ok.any():
        return HoleCheck(name="truncation", verdict="skipped", what=what, fix=FIXES["truncation"],
                         note="no reply to start from passes (give model_rows with the reply "
                              "text, or tasks with an `answer`)")
    rows = [{"task_id": t, "reward": float(s >= thr)}
            for t, s, good in zip(ids, scores["padded"], ok) if good]
    rate = pass_rate(load_rows(rows, threshold=1.0), level, seed)
    hit = [i for i, good in enumerate(ok) if good and scores["padded"][i] >= thr]
    example = None if not hit else ProbeExample(
        task_id=ids[hit[0]], completion=_cut(padded[hit[0]]), reward=float(scores["padded"][hit[0]]))
    return HoleCheck(name="truncation", verdict="hole" if hit else "closed", what=what, rate=rate,
                     n_tasks=len(rows), example=example, fix=FIXES["truncation"],
                     by_group=_groups(rows, task_list, ids, group_by, level, seed, "pass", 1.0),
                     note=f"{int(ok.sum())} of {len(ids)} tasks had a passing reply to extend")


def _format_bonus(ids, task_list, wrapped, scores, shell, shell_from, model, thr, group_by,
                  level, seed) -> HoleCheck:
    what = "a wrong answer inside the answer format, against the same answer without it"
    if shell is None:
        return HoleCheck(name="format_bonus", verdict="skipped", what=what,
                         fix=FIXES["format_bonus"], note="no format marker (<tag>...</tag>, "
                         "\\boxed{}) in the model's replies or in the prompts")
    bonus = scores["wrapped"] - scores["plain"]
    rows = [{"task_id": t, "reward": float(b)} for t, b in zip(ids, bonus)]
    rate = pass_rate(load_rows(rows, threshold=REWARD_BONUS_TOLERANCE), level, seed)
    mean = pass_rate(load_rows(rows), level, seed, "reward")
    best = int(np.argmax(bonus))
    example = ProbeExample(task_id=ids[best], completion=_cut(wrapped[best]),
                           reward=float(scores["wrapped"][best]))
    fields: dict[str, Any] = {}
    note = f"the markers from {shell_from}"
    verdict: CheckVerdict = "closed"
    if bonus.max() > REWARD_BONUS_TOLERANCE and mean.value > 0:
        verdict = "leak"
        if model is not None:
            wrapped_rows = [{"task_id": t, "reward": float(s)}
                            for t, s in zip(ids, scores["wrapped"])]
            cmp = compare(model, load_rows(wrapped_rows, threshold=thr), level=level, seed=seed,
                          metric="reward")
            fields = dict(vs_model=cmp.delta, vs_model_ci=cmp.ci)
            top = cmp.ci[1] if cmp.ci is not None else cmp.delta
            if top is not None and top >= 0:
                verdict = "hole"
        else:
            note += (f"; no {voice.arg('model_rows')}: the bonus cannot be set against the "
                     "model's own replies")
    return HoleCheck(name="format_bonus", verdict=verdict, what=what, rate=rate,
                     mean_bonus=mean.value, bonus_ci=mean.ci, n_tasks=len(ids),
                     example=example if verdict != "closed" else None, fix=FIXES["format_bonus"],
                     by_group=_groups(rows, task_list, ids, group_by, level, seed, "reward", 0.0),
                     note=note, **fields)
