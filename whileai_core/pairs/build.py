"""Preference pairs from the policy's own graded rollouts: only where a task has contrast.

DPO learns from a chosen and a rejected reply to the same prompt [1]. A task gives on-policy pairs
only when it has a pass and a fail whose rewards differ by at least ``min_margin``: its best passes
(highest reward, then shortest) against the fails closest in length, else DPO learns "longer
wins" [2]. Each category without contrast is named with why and how to construct it; constructed
pairs come only from the ``constructed`` replies given, and are labelled so. A category whose share
of the pairs is far under its share of the tasks is named: the others outvote it.

[1] Rafailov et al. (2023). Direct Preference Optimization. arXiv:2305.18290.
[2] Park et al. (2024). Disentangling Length from Quality in DPO. arXiv:2403.19159.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from ..defaults import (BOOTSTRAP_SEED, CATEGORY_FIELD, CONFIDENCE_LEVEL, DPO_MAX_CHOSEN_LONGER,
                        DPO_MIN_MARGIN, PAIRS_PER_TASK, PAIRS_UNDER_SHARE, PASS_THRESHOLD)
from ..errors import ArgumentError, RowsError, as_json
from ..io import write_jsonl
from ..operations import HERE, WRITES, Context, operation
from ..operations.args import (MAX_SCORE, Arg, CategoryField, Level, OptionalOut, OptionalRecords,
                               Overwrite, Records, Threshold)
from ..result import Result, fmt_rate
from ..stats import Rate
from ..rows import read_records
from ..rows import load_rows
from ..stats import pass_rate
from ..bootstrap import check_level, check_seed
from ..traces.read import _check_messages

Source = Literal["on_policy", "constructed"]
NO_CATEGORY = "(all)"


class CategoryPairs(Result):
    """One category: its tasks, how many have contrast, its pairs, and what to do without any."""

    category: str
    n_tasks: int
    pass_rate: Rate = Field(description="the policy's pass@1 on this category's tasks")
    contrast: Rate = Field(description="share of tasks with a pass and a fail, over tasks")
    n_pairs: int
    n_constructed: int = 0
    pair_share: float | None = Field(None, description="this category's share of all pairs")
    task_share: float = Field(description="this category's share of the tasks")
    outvoted: bool = False
    why_none: str | None = Field(None, description="why there is no on-policy pair, if none")
    how_to_construct: str | None = Field(None, description="how to put contrast here, if none")

    def render(self) -> str:
        text = (f"{self.category:16} {self.n_pairs:4d} pairs"
                + (f" (+{self.n_constructed} constructed)" if self.n_constructed else "")
                + f"; contrast {fmt_rate(self.contrast.value, self.contrast.ci, self.contrast.n_tasks)}"
                + f"; pass@1 {fmt_rate(self.pass_rate.value, self.pass_rate.ci)}")
        if self.why_none:
            text += f"\n{'':16} no contrast: {self.why_none}"
        if self.how_to_construct:
            text += f"\n{'':16} construct: {self.how_to_construct}"
        if self.outvoted:
            text += (f"\n{'':16} outvoted: {self.pair_share:.0%} of the pairs for "
                     f"{self.task_share:.0%} of the tasks")
        return text


class PairSet(Result):
    """The pairs, and what the rollouts could and could not give."""

    n_tasks: int
    n_rollouts: int
    contrast: Rate = Field(description="tasks with contrast (a pass and a fail) over all tasks")
    n_contrast: int
    n_pairs: int
    n_on_policy: int
    n_constructed: int
    n_constructed_skipped: int = 0
    by_category: list[CategoryPairs]
    no_contrast: list[str] = Field(description="categories with no on-policy pair")
    chosen_longer_share: float | None = None
    model: str | None = None
    threshold: float
    min_margin: float
    per_task: int
    field: str
    pairs: list[dict[str, Any]] = Field(description=(
        "TRL conversational preference rows: prompt (messages), chosen and rejected (one "
        "assistant message each), with task_id, category, source (on_policy | constructed) and "
        "both rewards"))
    notes: list[str] = []
    path: str | None = Field(None, description="where the pairs were written (JSONL); they are "
                                               "then left out of this answer")
    shown: str | None = Field(None, description="which lists were cut, as 'n of N shown'")
    cut_lists = ("pairs", "by_category")

    def render(self) -> str:
        lines = [f"{self.n_pairs} pairs ({self.n_on_policy} on-policy, {self.n_constructed} "
                 f"constructed) from {self.n_contrast} of {self.n_tasks} tasks with contrast; "
                 f"contrast {fmt_rate(self.contrast.value, self.contrast.ci, self.contrast.n_tasks)}",
                 f"by {self.field}:"]
        lines += ["  " + c.render().replace("\n", "\n  ") for c in self.by_category]
        if self.no_contrast:
            lines.append(f"no on-policy contrast in: {', '.join(self.no_contrast)}")
        if self.chosen_longer_share is not None:
            lines.append(f"chosen is the longer reply in {self.chosen_longer_share:.0%} of pairs")
        lines += [f"note: {n}" for n in self.notes]
        if self.path:
            lines.append(f"wrote {self.n_pairs} pairs to {self.path}")
        if self.shown:
            lines.append(f"({self.shown})")
        return "\n".join(lines)


# --- reading rollouts --------------------------------------------------------------------------

def _split_reply(rec: Mapping, where: dict) -> tuple[list[dict], str]:
    """(the prompt's messages, the reply's text) of one rollout."""
    if "messages" in rec:
        msgs = rec["messages"]
        _check_messages(msgs, where)
        if msgs[-1]["role"] != "assistant":
            raise RowsError("the rollout does not end with the policy's reply", **where,
                            field="messages", fix="give each graded rollout as the prompt's "
                            "messages followed by the assistant's reply")
        return [{"role": m["role"], "content": m["content"]} for m in msgs[:-1]], msgs[-1]["content"]
    prompt, reply = rec.get("prompt"), rec.get("completion")
    if isinstance(prompt, str):
        prompt = [{"role": "user", "content": prompt}]
    if isinstance(prompt, list) and isinstance(reply, str):
        _check_messages(prompt, where)
        return [{"role": m["role"], "content": m["content"]} for m in prompt], reply
    raise RowsError("no prompt and reply: give `messages` (ending with the reply) or `prompt` "
                    "and `completion`", **where, field="messages",
                    fix='e.g. {"task_id": "t1", "messages": [{"role": "user", "content": "..."}, '
                        '{"role": "assistant", "content": "..."}], "reward": 1.0}')


def _read(rollouts: Any, field: str, model: str | None) -> tuple[dict[str, dict], list[str]]:
    """Per task: its prompt, category and (reward, reply) list; and notes."""
    recs = read_records(rollouts, noun="rollout")
    if not recs.items:
        raise RowsError("no rollouts", source=recs.name, fix="give the policy's graded rollouts")
    tasks: dict[str, dict] = {}
    models: set[str] = set()
    has_field = any(field in r for r in recs.items)
    for i, rec in enumerate(recs.items):
        where = recs.where(i)
        tid = rec.get("task_id")
        if isinstance(tid, bool) or not isinstance(tid, (str, int)):
            raise RowsError(f"`task_id` is {as_json(tid)}", **where, field="task_id",
                            fix="give every rollout the task it answers")
        reward = rec.get("reward")
        if isinstance(reward, bool) or not isinstance(reward, (int, float)) \
                or not math.isfinite(reward):
            raise RowsError(f"`reward` is {as_json(reward)}", **where, field="reward",
                            fix="grade every rollout with a program: a finite number")
        prompt, reply = _split_reply(rec, where)
        cat = rec.get(field) if has_field else NO_CATEGORY
        if cat is None or isinstance(cat, bool) or not isinstance(cat, (str, int)):
            raise RowsError(f"`{field}` is {as_json(cat)}", **where, field=field,
                            fix=f'give every rollout "{field}": "<the behaviour its task tests>"')
        if isinstance(rec.get("model"), str):
            models.add(rec["model"])
            if model is not None and rec["model"] != model:
                raise RowsError(f"this rollout is from {rec['model']!r}, not the policy "
                                f"{model!r}: pairs from another model's replies are not "
                                "on-policy", **where, field="model",
                                fix="sample the model you will train (or omit `model` and say "
                                    "in the report whose replies these are)")
        task = tasks.setdefault(str(tid), {"prompt": prompt, "category": str(cat),
                                           "replies": [], "line": where})
        if task["prompt"] != prompt:
            raise RowsError(f"task {str(tid)!r} has another prompt here than at "
                            f"{task['line'].get('line', 'its first rollout')}", **where,
                            field="messages", fix="a pair needs one prompt: give each task's "
                            "rollouts the same prompt (or give them different task ids)")
        if task["category"] != str(cat):
            raise RowsError(f"task {str(tid)!r} is `{field}` {cat!r} here but "
                            f"{task['category']!r} before", **where, field=field,
                            fix="give every rollout of a task the same category")
        task["replies"].append((float(reward), reply))
    notes = []
    if model is None and not models:
        notes.append("the rollouts do not name their model: that they are the policy's own "
                     "replies (on-policy) is taken on trust")
    elif model is None and len(models) > 1:
        notes.append(f"the rollouts come from {len(models)} models ({', '.join(sorted(models))[:120]}): "
                     "pairs are on-policy only for the model you train; pass `model` to check")
    if not has_field:
        notes.append(f"no rollout has `{field}`: every task is one category; give each rollout "
                     "its behaviour to see where contrast is missing")
    return tasks, notes


# --- pairing -----------------------------------------------------------------------------------

def _pair_task(replies: list[tuple[float, str]], threshold: float, margin: float,
               per_task: int) -> list[tuple[tuple[float, str], tuple[float, str]]]:
    passes = sorted((r for r in replies if r[0] >= threshold), key=lambda r: (-r[0], len(r[1])))
    fails = [r for r in replies if r[0] < threshold]
    out, used = [], set()
    for chosen in passes:
        if len(out) >= per_task:
            break
        options = [(abs(len(f[1]) - len(chosen[1])), k) for k, f in enumerate(fails)
                   if k not in used and f[0] <= chosen[0] - margin and f[1] != chosen[1]]
        if options:
            _, k = min(options)
            used.add(k)
            out.append((chosen, fails[k]))
    return out


def _row(task_id: str, task: dict, chosen: tuple[float, str], rejected: tuple[float | None, str],
         source: Source) -> dict[str, Any]:
    return {"prompt": task["prompt"], "chosen": [{"role": "assistant", "content": chosen[1]}],
            "rejected": [{"role": "assistant", "content": rejected[1]}], "task_id": task_id,
            "category": task["category"], "source": source, "chosen_reward": chosen[0],
            "rejected_reward": rejected[0]}


def _constructed(constructed: Any, tasks: dict[str, dict], paired: dict[str, list],
                 threshold: float, margin: float) -> tuple[list[dict], int, list[str]]:
    """Pairs from the caller's constructed rejected replies, on tasks without on-policy contrast
    whose policy has a passing reply to be the chosen one."""
    recs = read_records(constructed, noun="constructed reply")
    rows, skipped, why = [], 0, {}
    for i, rec in enumerate(recs.items):
        where = recs.where(i)
        tid, text = rec.get("task_id"), rec.get("rejected")
        if str(tid) not in tasks:
            raise RowsError(f"task {tid!r} has no rollout here", **where, field="task_id",
                            fix="construct rejected replies for tasks of the rollouts you pair")
        if not isinstance(text, str) or not text:
            raise RowsError(f"`rejected` is {text!r:.60}", **where, field="rejected",
                            fix="give the constructed reply's text, the failure the category "
                                "is about")
        reward = rec.get("reward")
        if reward is not None and (isinstance(reward, bool) or not isinstance(reward, (int, float))
                                   or not math.isfinite(reward)):
            raise RowsError(f"`reward` is {as_json(reward)}", **where, field="reward",
                            fix="grade the constructed reply with the same program, or omit it")
        task = tasks[str(tid)]
        passes = sorted((r for r in task["replies"] if r[0] >= threshold),
                        key=lambda r: (-r[0], len(r[1])))
        reason = None
        if paired.get(str(tid)):
            reason = "the task already has on-policy contrast"
        elif not passes:
            reason = "the policy never passed the task: no reply of its own to prefer"
        elif reward is not None and reward > passes[0][0] - margin:
            reason = f"the constructed reply scores {reward:g}, not {margin:g} below the chosen"
        if reason:
            skipped += 1
            why[reason] = why.get(reason, 0) + 1
            continue
        rows.append(_row(str(tid), task, passes[0],
                         (None if reward is None else float(reward), text), "constructed"))
    notes = [f"{n} constructed repl{'y' if n == 1 else 'ies'} skipped: {reason}"
             for reason, n in why.items()]
    if rows and any(r["rejected_reward"] is None for r in rows):
        notes.append("some constructed replies carry no reward: grade them with the training "
                     "reward to check that they fail")
    return rows, skipped, notes


def _why_none(rate: float, n_tasks: int, n_with_both: int) -> tuple[str, str | None]:
    if rate >= 1.0:
        return (f"the policy passed every rollout of its {n_tasks} task(s): there is no failure "
                "to push away from",
                "write a rejected reply that commits the failure this category is about (e.g. "
                "the wrong tool call, an invented id) for tasks the policy passes, grade it, and "
                "pass it as `constructed`: it is paired against the policy's own passing reply "
                "and labelled constructed")
    if rate <= 0.0:
        return (f"the policy failed every rollout of its {n_tasks} task(s): there is no chosen "
                "reply of its own",
                "DPO cannot teach this category from the policy's samples: use a stronger "
                "model's passing replies (sft-from-traces) or OPSD (pick-a-method)")
    if n_with_both:
        return ("its passes and fails differ by less than `min_margin`", None)
    return ("no task has both a pass and a fail (each task always passes or always fails)",
            "sample more rollouts per task (k) so tasks at a middling pass rate show both, or "
            "construct rejected replies for the tasks that always pass")


def _rate(values: dict[str, list[float]], threshold: float, level: float, seed: int | None) -> Rate:
    rows = [{"task_id": t, "reward": v} for t, vs in values.items() for v in vs]
    return pass_rate(load_rows(rows, threshold=threshold), level, seed)


def _check_numbers(threshold: Any, min_margin: Any, per_task: Any, field: Any) -> None:
    # the declared ranges (a Python caller's numbers meet them first: operations.checks)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) \
            or not -MAX_SCORE <= threshold <= MAX_SCORE:
        raise ArgumentError(f"`threshold` must be a number in [{-MAX_SCORE:g}, {MAX_SCORE:g}], "
                            f"got {threshold!r}")
    if isinstance(min_margin, bool) or not isinstance(min_margin, (int, float)) \
            or not 0 < min_margin <= MAX_SCORE:
        raise ArgumentError(f"`min_margin` must be a number in (0, {MAX_SCORE:g}], "
                            f"got {min_margin!r}")
    if isinstance(per_task, bool) or not isinstance(per_task, int) or not 1 <= per_task <= 64:
        raise ArgumentError(f"`per_task` must be an integer in [1, 64], got {per_task!r}",
                            fix=f"e.g. {PAIRS_PER_TASK}")
    if not isinstance(field, str) or not field:
        raise ArgumentError(f"`field` must be a rollout field name, got {field!r}")


def _by_category(tasks: dict[str, dict], paired: dict[str, list], built: list[dict],
                 threshold: float, level: float, seed: int | None) -> list[CategoryPairs]:
    """Per category: its pass rate, contrast and pairs; why none and how to construct them."""
    both = {t: any(r >= threshold for r, _ in task["replies"])
            and any(r < threshold for r, _ in task["replies"]) for t, task in tasks.items()}
    categories = sorted({task["category"] for task in tasks.values()})
    total = sum(len(ps) for ps in paired.values()) + len(built)
    lines = []
    for cat in categories:
        ids = [t for t, task in tasks.items() if task["category"] == cat]
        rate = _rate({t: [r for r, _ in tasks[t]["replies"]] for t in ids}, threshold, level, seed)
        n_pairs = sum(len(paired[t]) for t in ids)
        n_built = sum(r["category"] == cat for r in built)
        pair_share = (n_pairs + n_built) / total if total else None
        task_share = len(ids) / len(tasks)
        why = construct = None
        if not n_pairs:
            why, construct = _why_none(rate.value, len(ids), sum(both[t] for t in ids))
            if n_built:
                construct = (f"done: {n_built} constructed pair{'' if n_built == 1 else 's'} "
                             "(labelled constructed)")
        lines.append(CategoryPairs(
            category=cat, n_tasks=len(ids), pass_rate=rate,
            contrast=_rate({t: [1.0 if paired[t] else 0.0] for t in ids}, 1.0, level, seed),
            n_pairs=n_pairs, n_constructed=n_built, pair_share=pair_share, task_share=task_share,
            outvoted=len(categories) > 1 and pair_share is not None
            and pair_share < PAIRS_UNDER_SHARE * task_share,
            why_none=why, how_to_construct=construct))
    return lines


def _pair_notes(lines: list[CategoryPairs], share: float | None, pairs: list[dict]) -> list[str]:
    notes = []
    outvoted = [c for c in lines if c.outvoted]
    if outvoted:
        notes.append(f"outvoted: {', '.join(c.category for c in outvoted)} hold under "
                     f"{PAIRS_UNDER_SHARE:.0%} of their share of the tasks in pairs; the other "
                     "categories' pairs will carry the update (in the seed's round two, with-id "
                     "pairs dominated and no-id pass@1 fell 0.82 to 0.26): construct contrast "
                     "there rather than sample more of the same prompts")
    if share is not None and share >= DPO_MAX_CHOSEN_LONGER:
        notes.append(f"chosen is the longer reply in {share:.0%} of the pairs: DPO may learn "
                     "length; check the replies a pass needs")
    if not pairs:
        notes.append("no pairs: no task has a pass and a fail by the margin. Sample more "
                     "rollouts per task, or construct rejected replies (`constructed`)")
    return notes


@operation(
    toolset="training", effect=WRITES, title="Preference pairs where a task has contrast",
    description=(
        "DPO pairs from the policy's own graded rollouts: only where a task has a pass and a "
        "fail (by min_margin), best pass against the fail closest in length. Counts tasks with "
        "contrast (a rate with its interval and n) and pairs, overall and per category; names "
        "each category with no contrast, why, and how to construct it. Constructed pairs are "
        "built only from the `constructed` replies given, labelled constructed. Names a "
        "category outvoted by the others' pairs. `out` writes the pairs (TRL's conversational "
        "preference rows) and leaves them out of the answer."),
    doing="building preference pairs")
def dpo_pairs(
        rollouts: Annotated[Records, Field(description=(
            "The policy's own graded rollouts on the training tasks (split first): each "
            "{\"task_id\", \"messages\": the prompt then the reply (or \"prompt\" + "
            "\"completion\"), \"reward\", \"category\", \"model\"}."),
            examples=["train_rollouts.jsonl"])], *,
        field: CategoryField = CATEGORY_FIELD,
        threshold: Threshold = None,
        min_margin: Annotated[float, Field(gt=0, le=MAX_SCORE, allow_inf_nan=False, description=(
            "Chosen must beat rejected by at least this reward."))] = DPO_MIN_MARGIN,
        per_task: Annotated[int, Field(ge=1, le=64, description=(
            "At most this many pairs per task, each reply used once."))] = PAIRS_PER_TASK,
        constructed: Annotated[OptionalRecords, Field(description=(
            "Only when the user asked for constructed contrast: rejected replies made from the "
            "failure a category without contrast is about, [{\"task_id\", \"rejected\": text, "
            "\"reward\": its grade (optional)}]; each is paired with the policy's best passing "
            "reply on that task and labelled `constructed`, never on-policy."))] = None,
        model: Annotated[str | None, Field(max_length=500, description=(
            "The policy's id: a rollout from another model is refused (its pairs would not be "
            "on-policy)."))] = None,
        out: Annotated[OptionalOut, Field(description=(
            "Optional: write the pairs here (JSONL, TRL's conversational preference rows) and "
            "leave them out of the answer."), examples=["pairs.jsonl"])] = None,
        overwrite: Overwrite = False, level: Level = CONFIDENCE_LEVEL,
        seed: Annotated[int | None, Arg(cli=False, mcp=False)] = BOOTSTRAP_SEED,
        ctx: Context = HERE) -> PairSet:
    """Preference pairs from the policy's own graded rollouts (module docstring)."""
    threshold = PASS_THRESHOLD if threshold is None else threshold
    level, seed = check_level(level), check_seed(seed)
    _check_numbers(threshold, min_margin, per_task, field)
    tasks, notes = _read(rollouts, field, model)
    paired = {t: _pair_task(task["replies"], threshold, min_margin, per_task)
              for t, task in tasks.items()}
    rows = [_row(t, tasks[t], c, r, "on_policy") for t, ps in paired.items() for c, r in ps]
    built, skipped = [], 0
    if constructed is not None:
        built, skipped, more = _constructed(constructed, tasks, paired, threshold, min_margin)
        notes += more
    contrast = {t: [1.0 if paired[t] else 0.0] for t in tasks}
    lines = _by_category(tasks, paired, built, threshold, level, seed)
    every = rows + built
    longer = [len(r["chosen"][0]["content"]) > len(r["rejected"][0]["content"]) for r in every]
    share = sum(longer) / len(longer) if longer else None
    notes += _pair_notes(lines, share, every)
    found = PairSet(n_tasks=len(tasks), n_rollouts=sum(len(t["replies"]) for t in tasks.values()),
                    contrast=_rate(contrast, 1.0, level, seed),
                    n_contrast=sum(bool(p) for p in paired.values()), n_pairs=len(every),
                    n_on_policy=len(rows), n_constructed=len(built),
                    n_constructed_skipped=skipped, by_category=lines,
                    no_contrast=[c.category for c in lines if not c.n_pairs],
                    chosen_longer_share=share, model=model, threshold=float(threshold),
                    min_margin=float(min_margin), per_task=per_task, field=field, pairs=every,
                    notes=notes)
    if out is None:
        return found
    write_jsonl(out, found.pairs, overwrite=overwrite)
    return found.model_copy(update={"pairs": [], "path": ctx.relative(out)})
