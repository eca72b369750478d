"""Which method? Six questions asked of the graded rows, in order; the first that decides wins.

1. Can a cut-off reply pass?            -> ``fix_reward``
2. How many rollouts per task?          -> ``single_rollout`` (k = 1)
3. What is the per-task band?           -> ``floor`` / ``saturated``
4. Is there a teacher that clears?      -> ``opd``
5. Did the model you will train write these rows?  -> ``off_policy``
6. Otherwise                            -> ``grpo``

Every answer carries its evidence (counts, the band, pass@1 with its interval and n). Facts:
shared/reference/methods.md, "Routing facts". Question 0 (a program grader beats a judge) is a
property of how the rows were graded; audit any judge first (skill audit-your-judge).

Why one module of ~400 lines: the six questions and the route that asks them read as one story,
in order, and each question is already a small function of its own.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from pydantic import Field

from .bootstrap import check_level
from .defaults import (BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE_LEVEL, GROUP_MIN_ROLLOUTS,
                       LIST_SHOWN_MAX, OPSD_MIN_PARAMS_B, TASK_EXTREMES)
from .errors import ArgumentError
from .models import base_model, model_size_b
from .result import Result, fmt_rate
from .rows import load_rows
from .stats import Rate, pass_rate
from .stats.fields import LEVEL_DOC, METHOD_DOC, ci95_alias
from .stats.intervals import task_interval
from .teacher import TeacherVerdict, teacher_clears  # noqa: F401  (question 4; re-exported)
from .voice import OPS, call, choose
from .voice import name as op_name

Interval = tuple[float, float]
RouteCode = Literal["fix_reward", "single_rollout", "floor", "saturated", "opd", "off_policy",
                    "grpo"]
TASKSET_PLACEHOLDER = "<your taskset>"


# --- the questions, one function each ------------------------------------------------------

class TruncatedPasses(Result):
    """Rows that hit the token cap and still passed: the reward, not the model, decides them."""

    count: int
    n_truncated: int
    n_rows: int
    n_tasks_hit: int
    tasks: list[str]
    shown: str | None = None

    def __bool__(self) -> bool:
        return self.count > 0

    def render(self) -> str:
        return (f"{self.count} truncated rows pass (of {self.n_truncated} truncated, "
                f"{self.n_rows} rows)" + (f"; e.g. tasks {', '.join(self.tasks)} ({self.shown})"
                                          if self.tasks else ""))


def truncated_passes(rows: Any) -> TruncatedPasses:
    data = load_rows(rows)
    hit = data.truncated & data.passed
    hit_tasks = np.unique(data.task_index[hit])  # sorted task positions = first-appearance order
    tasks = [data.task_ids[i] for i in hit_tasks[:TASK_EXTREMES].tolist()]
    return TruncatedPasses(count=int(hit.sum()), n_truncated=int(data.truncated.sum()),
                           n_rows=data.n_rows, n_tasks_hit=int(hit_tasks.shape[0]), tasks=tasks,
                           shown=f"{len(tasks)} of {hit_tasks.shape[0]} tasks" if tasks else None)


class RolloutsPerTask(Result):
    """k = the fewest rollouts any task has (a grouped method needs k >= 2; 4+ is the aim)."""

    k: int
    max: int
    median: float
    n_tasks: int
    tasks_below_target: int
    target: int = GROUP_MIN_ROLLOUTS

    def render(self) -> str:
        return (f"k = {self.k} (min rollouts per task; max {self.max}, median {self.median:g}, "
                f"{self.n_tasks} tasks; {self.tasks_below_target} below {self.target})")


def rollouts_per_task(rows: Any) -> RolloutsPerTask:
    data = load_rows(rows)
    n = data.rollouts
    return RolloutsPerTask(k=int(n.min()), max=int(n.max()), median=float(np.median(n)),
                           n_tasks=data.n_tasks,
                           tasks_below_target=int((n < GROUP_MIN_ROLLOUTS).sum()))


class Band(Result):
    """Where the tasks sit: ``floor`` (every task fails always), ``saturated`` (every task passes
    always) or ``mixed``; with the counts and pass@1."""

    band: Literal["floor", "saturated", "mixed"]
    n_tasks: int
    n_always_fail: int
    n_always_pass: int
    n_split: int
    pass_at_1: Rate

    def render(self) -> str:
        return (f"{self.band}: {self.n_always_fail} tasks always fail, {self.n_always_pass} always "
                f"pass, {self.n_split} split; pass@1 {self.pass_at_1.render()}")


def band(rows: Any, *, level: float = CONFIDENCE_LEVEL) -> Band:
    data = load_rows(rows)
    zero = int((data.passes == 0).sum())
    full = int((data.passes == data.rollouts).sum())
    name = "floor" if zero == data.n_tasks else "saturated" if full == data.n_tasks else "mixed"
    return Band(band=name, n_tasks=data.n_tasks, n_always_fail=zero, n_always_pass=full,
                n_split=data.n_tasks - zero - full, pass_at_1=pass_rate(data, check_level(level)))


class SplitShare(Result):
    """Share of tasks whose rollouts both pass and fail: only these give a grouped method signal.

    ``ci`` is the interval over tasks for a 0/1 per-task value (mid-p under 10 tasks,
    Agresti-Coull from 10; :mod:`whileai_core.stats.intervals`).
    ``expected_by_k``: the share a task at its measured rate p would be split with k rollouts,
    mean of 1 - p^k - (1-p)^k.
    """

    share: float
    ci: Interval | None = Field(description="interval of the share at `level`; null under 3 tasks")
    level: float = Field(CONFIDENCE_LEVEL, description=LEVEL_DOC)
    ci_method: str | None = Field(None, description=METHOD_DOC)
    n_split: int
    n_tasks: int
    expected_by_k: dict[int, float]

    ci95 = ci95_alias("ci")

    def render(self) -> str:
        exp = ", ".join(f"k={k}: {v:.2f}" for k, v in self.expected_by_k.items())
        return (f"split share {fmt_rate(self.share, self.ci, self.n_tasks)} "
                f"({self.n_split} split); expected at {exp}")


def split_share(rows: Any, *, level: float = CONFIDENCE_LEVEL) -> SplitShare:
    data = load_rows(rows)
    level = check_level(level)
    split = (data.passes > 0) & (data.passes < data.rollouts)
    p = data.pass_rate()
    expected = {k: float(np.mean(1 - p ** k - (1 - p) ** k)) for k in (2, 4, 8, 16)}
    iv = task_interval(split.astype(float), level=level, seed=BOOTSTRAP_SEED,
                       n_resamples=BOOTSTRAP_RESAMPLES)
    return SplitShare(share=float(split.mean()), ci=iv.ci, level=level, ci_method=iv.method,
                      n_split=int(split.sum()), n_tasks=data.n_tasks, expected_by_k=expected)


class OnPolicy(Result):
    """Who sampled the rows: the model you will train, an older copy of it, or another model.

    A revision follows ``@`` in a model id ("org/name@step-40"): same name, other revision is an
    older copy. Rows without a ``model`` field cannot say; they are assumed on-policy, with a note.
    """

    status: Literal["on_policy", "older_copy", "other_model", "unknown"]
    model: str
    share_same: float
    models: dict[str, int]
    n_models: int
    n_rows: int
    note: str | None = None
    shown: str | None = None
    cut_lists = ("models",)

    def __bool__(self) -> bool:
        return self.status in ("on_policy", "unknown")

    def render(self) -> str:
        seen = ", ".join(f"{m} ({n})" for m, n in self.models.items())
        text = f"{self.status}: {self.share_same:.0%} of {self.n_rows} rows by {self.model}; seen {seen}"
        return (text + (f" ({self.shown})" if self.shown else "")
                + (f". {self.note}" if self.note else ""))


def on_policy(rows: Any, model: str) -> OnPolicy:
    if not isinstance(model, str) or not model.strip():
        raise ArgumentError(f"`model` must be the id of the model you will train, got {model!r}. "
                            'Fix: e.g. model="Qwen/Qwen3-8B"')
    data = load_rows(rows)
    counts = data.models()
    named = {m: n for m, n in counts.items() if m is not None}
    same = named.get(model, 0)
    # most rows first, so a cut list (bounded) keeps the models that matter
    top = dict(sorted((((m if m is not None else "<none>"), n) for m, n in counts.items()),
                      key=lambda kv: (-kv[1], kv[0])))
    if not named:
        return OnPolicy(status="unknown", model=model, share_same=0.0, models=top,
                        n_models=len(top), n_rows=data.n_rows, note="rows carry no `model` field: assumed sampled "
                        "by the model you will train; add the field to be sure")
    others = {m for m in named if m != model}
    if not others:
        status = "on_policy"
    elif all(base_model(m) == base_model(model) for m in others):
        status = "older_copy"
    else:
        status = "other_model"
    note = None
    if None in counts:
        note = f"{counts[None]} rows have no `model` field"
    return OnPolicy(status=status, model=model, share_same=same / data.n_rows, models=top,
                    n_models=len(top), n_rows=data.n_rows, note=note)


# --- every question at once ----------------------------------------------------------------

class RowFacts(Result):
    """What the rows say to every question the route asks, without stopping at the first that
    decides: truncated passes, rollouts per task, the band, the split share and (given the model
    you will train) who wrote the rows."""

    truncated_passes: TruncatedPasses
    rollouts_per_task: RolloutsPerTask
    band: Band
    split_share: SplitShare
    on_policy: OnPolicy | None = None

    def render(self) -> str:
        parts = [f"1. {QUESTIONS[1]} {self.truncated_passes.render()}",
                 f"2. {QUESTIONS[2]} {self.rollouts_per_task.render()}",
                 f"3. {QUESTIONS[3]} {self.band.render()}",
                 f"   {self.split_share.render()}"]  # the band's note, if any, ends its line
        if self.on_policy is not None:
            parts.append(f"5. {QUESTIONS[5]} {self.on_policy.render()}")
        return "\n".join(parts)


def row_facts(rows: Any, *, model: str | None = None, threshold: float | None = None,
              level: float = CONFIDENCE_LEVEL) -> RowFacts:
    """Ask ``rows`` questions 1, 2, 3 and (with ``model``) 5 of the route, all of them."""
    data = load_rows(rows, threshold=threshold)
    return RowFacts(truncated_passes=truncated_passes(data), rollouts_per_task=rollouts_per_task(data),
                    band=band(data, level=level), split_share=split_share(data, level=level),
                    on_policy=None if model is None else on_policy(data, model))


# --- the route -----------------------------------------------------------------------------

class Answer(Result):
    """One question asked of the rows, what the rows said, and whether it decided the route."""

    question: int
    asks: str
    answer: str
    decides: bool
    evidence: dict[str, Any]
    detail: str = ""


class NextStep(Result):
    """The concrete next call: a tool with its arguments, or an action in words."""

    say: str
    tool: str | None = None
    arguments: dict[str, Any] | None = None


class Route(Result):
    """The route, the method in words, the question that decided it, every answer so far with its
    evidence, and the next call to make."""

    route: RouteCode
    method: str
    decided_by: str
    answers: list[Answer]
    next_step: NextStep

    def render(self) -> str:
        lines = [f"route: {self.route}", f"method: {self.method}", f"decided by: {self.decided_by}", ""]
        for a in self.answers:
            mark = "->" if a.decides else "  "
            lines.append(f"{mark} {a.question}. {a.asks} {a.answer}")
            lines += [f"      {line}" for line in a.detail.splitlines()]
        lines += ["", f"next: {self.next_step.say}"]
        if self.next_step.tool in OPS:  # the call as the reader types it (voice)
            lines.append(f"      {call(self.next_step.tool, **(self.next_step.arguments or {}))}")
        return "\n".join(lines)


QUESTIONS = {
    1: "Can a cut-off reply pass?",
    2: "How many rollouts per task?",
    3: "What is the per-task band?",
    4: "Is there a teacher that clears?",
    5: "Did the model you will train write these rows?",
    6: "Anything left?",
}


def _config_step(say: str, taskset: str, method: Any, model: str, **extra: Any) -> NextStep:
    return NextStep(say=say, tool="prime_rl_config",
                    arguments={"taskset": taskset, "method": method, "model": model, **extra})


def route(rows: Any, *, model: str, teacher_rows: Any = None, taskset: str | None = None,
          teacher_url: str | None = None, threshold: float | None = None) -> Route:
    """Ask the six questions of ``rows`` (graded on the model you will train) and route.

    ``teacher_rows``: the candidate teacher graded on the same held-out tasks (optional).
    ``taskset``/``teacher_url`` only fill the next call's arguments.
    """
    if not isinstance(model, str) or not model.strip():
        raise ArgumentError(f"`model` must be the id of the model you will train, got {model!r}. "
                            'Fix: e.g. model="Qwen/Qwen3-8B"')
    data = load_rows(rows, threshold=threshold)
    ts = taskset or TASKSET_PLACEHOLDER
    answers: list[Answer] = []

    def ask(q: int, answer: str, decides: bool, evidence: Result | dict) -> None:
        if isinstance(evidence, Result):  # bounded: a route's answer never grows with the rows
            evidence = evidence.bounded(LIST_SHOWN_MAX)
            ev, detail = evidence.to_dict(), evidence.render()
        else:
            ev, detail = evidence, ""
        answers.append(Answer(question=q, asks=QUESTIONS[q], answer=answer, decides=decides,
                              evidence=ev, detail=detail))

    def done(code: RouteCode, method: str, q: int, step: NextStep) -> Route:
        return Route(route=code, method=method, decided_by=f"{q}. {QUESTIONS[q]}",
                     answers=answers, next_step=step)

    # 1. truncation
    tp = truncated_passes(data)
    ask(1, f"yes: {tp.count} truncated rows pass" if tp else "no truncated row passes", bool(tp), tp)
    if tp:
        return done("fix_reward", "nothing yet: fix the reward first", 1, NextStep(
            say="Make a truncated reply fail (or raise max_tokens), re-grade, and route again: "
                "while a cut-off reply can pass, every rate below measures the reward, not the model."))
    # 2. group size
    rp = rollouts_per_task(data)
    single = rp.k == 1
    ask(2, f"k = {rp.k}" + (": one rollout per task, no grouped method" if single else ""), single, rp)
    if single:
        step = _config_step(
            f"Re-run the prompts at k >= {GROUP_MIN_ROLLOUTS} and route again (usually the cheaper "
            "fix). Otherwise train FlashReinforce, SAO or BPCO in your own trainer, or prime-rl's "
            "rae (EMA baseline, group_size 1):", ts, "rae", model, group_size=1)
        return done("single_rollout", "FlashReinforce / SAO / BPCO in your trainer, or prime-rl "
                    "rae; or re-run at k >= 4", 2, step)
    # 3. band
    bd = band(data)
    decided = bd.band != "mixed"
    ask(3, bd.band, decided, bd)
    if bd.band == "floor":
        size = model_size_b(model)
        if size is not None and size < OPSD_MIN_PARAMS_B:
            return done("floor", f"SFT on a stronger model's completions (OPSD needs ~"
                        f"{OPSD_MIN_PARAMS_B:g}B+, this is {size:g}B)", 3, NextStep(
                            say="Every task fails, and the model is too small for OPSD: collect "
                                "passing completions from a stronger model and run the "
                                "sft-from-traces skill ("
                                + ", ".join(op_name(o) for o in ("select_sft", "decontaminate",
                                                                  "export_sft")) + ")."))
        caveat = "" if size is not None else " (model size unknown: OPSD needs ~7B+)"
        return done("floor", "OPSD: the same model shown privileged context" + caveat, 3,
                    _config_step("Every task fails and more rollouts cannot help (a draw keeps "
                                 "a pass with probability 0 at p = 0). Give the model privileged "
                                 "context with OPSD:", ts, {"name": "opsd", "privileged": "reference"},
                                 model))
    if bd.band == "saturated":
        return done("saturated", "GroupwiseGrading (rank the passes), or a harder eval", 3, NextStep(
            say="Every task passes: binary rewards give no signal. If the passes differ in "
                "quality, rank them with GroupwiseGrading(grader, mode='reward') after auditing "
                "its grader; otherwise harden the eval."))
    # 4. teacher
    if teacher_rows is not None:
        tc = teacher_clears(teacher_rows, data)
        ask(4, "yes" if tc else f"no: {tc.reason}", bool(tc), tc)
        if tc:
            teacher_models = [m for m in load_rows(teacher_rows).models() if m]
            name = teacher_models[0] if len(teacher_models) == 1 else "<teacher model>"
            url = teacher_url or "http://localhost:8001/v1"
            return done("opd", "OPD from the teacher (same tokenizer; teacher served by vLLM)", 4,
                        _config_step("The teacher clears: distil it on-policy. Serve it with vLLM "
                                     "(prompt log-probs) and check it shares the tokenizer:", ts,
                                     {"name": "opd", "teacher": f"{name}@{url}"}, model))
    else:
        ask(4, "no teacher rows given", False, {"teacher_rows": None})
    # 5. on-policy
    op = on_policy(data, model)
    off = op.status in ("older_copy", "other_model")
    ask(5, op.status, off, op)
    if op.status == "other_model":
        return done("off_policy", "SFT on these rows, or OPD from the model that wrote them", 5,
                    NextStep(say="Another model wrote these rows: GRPO on them is an off-policy "
                                 "update with no correction. Run sft-from-traces on them, or "
                                 "score that model as a teacher (" + choose(
                                     python="`teacher_clears`", cli="`whileai-skills route ROWS "
                                     "--model ID --teacher TEACHER_ROWS`") + ") and use OPD. "
                                 "Re-grade the model you will train before reading its band."))
    if op.status == "older_copy":
        return done("off_policy", "Async(grpo) with a per-token correction (icepop or ipo)", 5,
                    _config_step("An older copy of this model wrote the rows: wrap GRPO in "
                                 "Async with a correction:", ts,
                                 {"name": "async", "method": "grpo", "correction": "icepop"}, model))
    # 6. GRPO
    ss = split_share(data)
    ask(6, f"split tasks, on-policy: GRPO ({ss.n_split} of {ss.n_tasks} tasks split)", True, ss)
    return done("grpo", "GRPO on the split tasks (program grader, on-policy rows)", 6,
                _config_step(f"Train GRPO; size the held-out test first ({op_name('holdout_size')}) "
                             "and train a random-selection control of the same size:", ts,
                             "grpo", model))
