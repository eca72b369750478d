"""Which method? Six questions asked of the graded rows, in order; the first that decides wins.

0. Who graded the rows?                 -> ``audit_judge`` first (an LLM judge's score), then
                                           the route the questions below give, once it clears
1. Can a cut-off reply pass, or earn more? -> ``fix_reward``
2. How many rollouts per task?          -> ``single_rollout`` (k = 1)
   (fewer than ``ROUTE_MIN_TASKS`` tasks -> ``too_few_tasks``: no verdict below can stand)
3. Does any task carry signal?          -> ``floor`` / ``saturated``
4. Is there a teacher that clears?      -> ``opd``
5. Did the model you will train write these rows?  -> ``off_policy``
6. Otherwise                            -> ``grpo``

The rows are read as they are (:mod:`whileai_core.questions`): a continuous reward on its spread
within each task; the fields that change the answer by their role (:mod:`whileai_core.roles`),
``fields`` saying what the route did with each. Rows of several models are routed on the model
you will train, or refused when none is it; a teacher or writer smaller than it is never
proposed. Every answer carries its evidence (with its interval and n); the next call runs as
given or names what it still ``needs``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from .defaults import (CATEGORY_FIELD, CONFIDENCE_LEVEL, LIST_SHOWN_MAX, PASS_THRESHOLD,
                       ROUTE_MIN_TASKS)
from .grading import Grading, grading
from .questions import (Band, OnPolicy, RolloutsPerTask, SplitShare, TruncatedPasses,  # noqa: F401
                        band, check_model, on_policy, rollouts_per_task, split_share,
                        truncated_passes)
from .result import Result, _answer_bytes, cut_text, fmt_rate
from .rewards import RewardScale, check_reach
from .roles import FIELDS_DOC, fields_report, read_fields
from .writers import own_rows
from .rows import Rows, load_rows
from .stats import pass_rate
from .stats.clustered import Families, check_cluster, families_of
from .stats.families import AUTO, split_cluster
from .teacher import TeacherVerdict, teacher_clears  # noqa: F401  (question 4; re-exported)
from .next_steps import (NextStep, config_step, floor_route, held_out, other_model, rows_budget,
                         single_rollout_step, smaller)
from .operations import READS, args, operation
from .operations.args import AutoCluster, Level, Model, OptionalRows, Threshold
from .operations.describe import named, values_of
from .pictures import band_picture
from .voice import OPS, arg, call

SWITCH = "enable_toolset"  # the MCP server's own tool that turns a toolset on
from .voice import name as op_name

RouteCode = Literal["audit_judge", "fix_reward", "single_rollout", "too_few_tasks", "floor",
                    "saturated", "opd", "off_policy", "grpo"]

QUESTIONS = {
    0: "Who graded the rows?",
    1: "Can a cut-off reply pass, or earn more?",
    2: "How many rollouts per task?",
    3: "Does any task carry signal?",
    4: "Is there a teacher that clears?",
    5: "Did the model you will train write these rows?",
    6: "Anything left?",
}


# --- every question at once ----------------------------------------------------------------

class RowFacts(Result):
    """What the rows say to every question the route asks, without stopping at the first that
    decides: truncated passes, rollouts per task, the band, the split share and (given the model
    you will train) who wrote the rows; and what the reward is."""

    truncated_passes: TruncatedPasses
    rollouts_per_task: RolloutsPerTask
    band: Band
    split_share: SplitShare
    on_policy: OnPolicy | None = None
    reward: RewardScale | None = None

    def render(self) -> str:
        parts = [f"warning: {self.reward.warning}"] if self.reward and self.reward.warning else []
        parts += [f"1. {QUESTIONS[1]} {self.truncated_passes.render()}",
                  f"2. {QUESTIONS[2]} {self.rollouts_per_task.render()}",
                  f"3. {QUESTIONS[3]} {self.band.render()}",
                  f"   {self.split_share.render()}"]  # the band's note, if any, ends its line
        if self.on_policy is not None:
            parts.append(f"5. {QUESTIONS[5]} {self.on_policy.render()}")
        return "\n".join(parts)


@operation(
    toolset="stats", effect=READS, title="Ask the rows every routing question",
    description=(
        "Every question route asks, answered without stopping at the first that decides: "
        "truncated rows that pass, rollouts per task (k), the per-task band with pass@1 and its "
        "interval, the split share, and (given `model`) who wrote the rows. Use it to read one "
        "fact, or all of them, about a rows file."),
    doing="inspecting graded rows",
    serves=("row_facts", "truncated_passes", "rollouts_per_task", "band", "split_share",
            "on_policy"))
def inspect_rows(rows: args.Rows, *,
                 model: Annotated[str | None, Field(max_length=500, description=(
                     "Optional: hub id of the model you will train; given, also says whether "
                     "that model wrote the rows (on_policy)."))] = None,
                 threshold: Threshold = None, level: Level = CONFIDENCE_LEVEL) -> RowFacts:
    """Ask ``rows`` questions 1, 2, 3 and (with ``model``) 5 of the route, all of them."""
    data = load_rows(rows, threshold=threshold)
    return RowFacts(truncated_passes=truncated_passes(data),
                    rollouts_per_task=rollouts_per_task(data, level=level),
                    band=band(data, level=level), split_share=split_share(data, level=level),
                    on_policy=None if model is None else on_policy(data, model),
                    reward=data.reward_scale)


row_facts = inspect_rows  # the name the package exports for it (``whileai_core.row_facts``)


# --- the route -----------------------------------------------------------------------------

class Answer(Result):
    """One question asked of the rows, what the rows said, and whether it decided the route."""

    question: int
    asks: str
    answer: str
    decides: bool
    evidence: dict[str, Any]
    detail: str = ""


class Route(Result):
    """The route, the method in words, the question that decided it, every answer so far with its
    evidence, the next call to make; what the reward is (``reward``, with its warning when pass
    rates at the threshold mislead) and what the route did with the fields that change its
    answer (``fields``)."""

    route: RouteCode
    method: str
    decided_by: str
    answers: list[Answer]
    next_step: NextStep
    reward: RewardScale | None = None
    fields: list[str] = Field(default_factory=list, description=FIELDS_DOC)
    cluster: str | None = None
    then: NextStep | None = Field(None, description="audit_judge: the call to make once the "
                                                    "judge clears")

    def bounded(self, limit: int):
        """Cut to fit an answer: the answers' ``detail`` is dropped first (of those that did not
        decide, then of the one that did), so the decision, method and next call are cut last."""
        whole = listed = self._cut_lists(limit)
        for keep in (lambda a: a.decides, lambda a: False):
            if _answer_bytes(listed) <= self.answer_max_bytes:
                break
            listed = whole.model_copy(update={"answers": [
                a if keep(a) or not a.detail else a.model_copy(update={  # "0 of N characters"
                    "detail": cut_text(a.detail, 0)}) for a in whole.answers]})
        return Result.bounded(listed, limit)

    def render(self) -> str:
        lines = [f"warning: {self.reward.warning}"] if self.reward and self.reward.warning else []
        lines += [f"route: {self.route}", f"method: {self.method}",
                  f"decided by: {self.decided_by}", ""]
        if self.reward is not None:
            lines.insert(len(lines) - 1, f"reward: {self.reward.summary()}")
        for a in self.answers:
            mark = "->" if a.decides else "  "
            lines.append(f"{mark} {a.question}. {a.asks} {a.answer}")
            lines += [f"      {line}" for line in a.detail.splitlines()]
        if self.fields:
            lines += ["", "fields:"] + [f"  {f}" for f in self.fields]
        for label, step in (("next", self.next_step), ("then", self.then)):
            if step is None:
                continue
            lines += ["", f"{label}: {step.say}"]
            if step.tool in OPS:  # the call as the reader types it (voice)
                lines.append(f"      {call(step.tool, **(step.arguments or {}))}")
            elif step.tool:
                lines.append(f"      {step.tool}({', '.join(f'{k}={v!r}' for k, v in (step.arguments or {}).items())})")
            if step.needs:
                lines.append(f"      still needs: {', '.join(step.needs)}")
        return "\n".join(lines)


def _did(data: Rows, *, teacher: bool, cluster: str | None, found: Families | None,
         kept: str | None, grader: Grading) -> dict[str, str]:
    """What the route did with each role (and some fields) of the rows, for ``fields``."""
    scale = data.reward_scale
    did: dict[str, str] = {
        "task": "intervals resample tasks" + (f" within families of `{cluster}`" if cluster
                                              else ""),
        "reward": f"{scale.summary()}; a pass is reward >= {data.threshold:g}",
        "model": kept or "question 5",
        "grader": f"question 0: graded by {grader.grader}",
        "truncated": "question 1", "finish_reason": "question 1: 'length' is a cut-off reply",
    }
    budget = data.budget
    if budget is not None and not bool((budget.max_tokens != budget.max_tokens).all()):
        did["max_tokens"] = ("question 4: the teacher's cap against the student's" if teacher
                             else "the config proposed takes it")
    if budget is not None and not bool((budget.completion_tokens != budget.completion_tokens).all()):
        did["completion_tokens"] = ("question 4: a teacher's reply past the student's cap "
                                    "fails" if teacher else "read against a teacher's, if given")
    for f in read_fields(data).of("turns"):
        multi = sum(1 for t in data.column(f.name) if type(t) is int and t > 1)
        did[f.name] = (f"{multi} of {data.n_rows} rows have more than one turn"
                       + ("; completion_tokens is then the sum over turns" if multi else ""))
    if data.has_field(CATEGORY_FIELD):
        did[CATEGORY_FIELD] = ("the band per behaviour is "
                               f"{op_name('category_table') if 'category_table' in OPS else 'category_table'}")
    if cluster is not None:
        did[cluster] = "every interval here resamples families, then tasks"
    elif found is not None:
        b = pass_rate(data, CONFIDENCE_LEVEL, families=found,
                      metric="reward" if scale.continuous else "pass")
        did[found.field] = (f"{found.n_families} families: the headline clustered by it is "
                            f"{fmt_rate(b.value, b.ci, b.n_tasks)}" + (f" ({b.note})" if b.note
                                                                      else "")
                            + f"; {arg('cluster', found.field)} clusters every interval, "
                            f"{arg('cluster', None)} reads tasks only")
    return did


TeacherRows = Annotated[OptionalRows, Field(description=(
    "Optional: a candidate teacher's rows on the same held-out tasks (the forms of `rows`): "
    "checked to clear the student before on-policy distillation is chosen."))]


def _band(arguments: dict[str, Any], result: Any, *, out: Any = None, overwrite: bool = False):
    """route_rows's picture (``plot``): the band of its rows."""
    return band_picture(arguments["rows"], threshold=arguments.get("threshold"), out=out,
                        overwrite=overwrite)


def _route_doc() -> str:
    return ("Start here. Reads graded rollouts of the model you will train and asks in order: "
            "who graded them (a judge is audited first)? can a cut-off reply pass or earn more? "
            "rollouts per task? does any task carry signal? does a teacher clear on the same "
            "budget? did this model write them? Returns the `route` "
            f"({named(values_of(Route, 'route'))}), the deciding question, each answer's "
            "evidence with its 95% interval and n, what it did with each field, and the next "
            "call (`next_step`). plot: the band.")


@operation(toolset="core", effect=READS, title="Route graded rows to a training method",
           description=_route_doc, doing="routing graded rows", picture=_band,
           serves=("route", "band_picture"), cli="route")
def route_rows(rows: args.Rows, *, model: Annotated[Model, Field(description=(
                   "Hub id of the model you will train, e.g. 'Qwen/Qwen3-8B'. The rows should be "
                   "this model's own rollouts; its size decides whether OPSD is possible."))],
               teacher_rows: TeacherRows = None,
               taskset: Annotated[str | None, Field(max_length=500, description=(
                   "Optional: the taskset you will train on; only fills the suggested "
                   "prime_rl_config call."))] = None,
               teacher_url: Annotated[str | None, Field(max_length=2000, description=(
                   "Optional: the OpenAI-compatible URL serving the teacher (vLLM); only fills the "
                   "suggested call."))] = None,
               threshold: Threshold = None, cluster: AutoCluster = AUTO) -> Route:
    """Ask the questions of ``rows`` (graded on the model you will train) and route.

    ``teacher_rows`` are read first, so bad ones are refused even when the route stops before
    question 4. ``cluster``: a row field naming each task's family (every interval resamples
    families); ``"auto"``: a family field the rows carry is named in ``fields``; None: tasks.
    """
    if teacher_rows is not None:
        teacher_rows = load_rows(teacher_rows, threshold=threshold)
    data = load_rows(rows, threshold=threshold)
    if threshold is not None and float(threshold) != PASS_THRESHOLD:
        check_reach(data.reward_scale, data.source)  # a band the mark made is no band
    check_model(data, model)
    data, kept = own_rows(data, model)
    check_cluster(cluster)
    cluster, found = split_cluster(cluster, data)
    families = families_of(data, cluster) if cluster is not None else None
    grader = grading(data)
    inner = _questions(_Asked(data, model=model, teacher_rows=teacher_rows, taskset=taskset,
                              teacher_url=teacher_url, threshold=threshold, cluster=cluster,
                              families=families, graded_by=grader.grader))
    fields = fields_report(data, _did(data, teacher=teacher_rows is not None, cluster=cluster,
                                      found=found, kept=kept, grader=grader))
    inner = inner.model_copy(update={"fields": fields})
    if not grader:
        return inner
    first = Answer(question=0, asks=QUESTIONS[0], answer=f"an LLM judge ({grader.why})",
                   decides=True, evidence=grader.to_dict(), detail=grader.render())
    later = [a.model_copy(update={"decides": False}) for a in inner.answers]
    label = grader.label
    step = NextStep(
        say=(f"Audit the judge before any RL on its score (skill audit-your-judge): have people "
             f"label the {label.items} replies question 0 names blind, with a codebook; write "
             "one item per reply as {id, label, grades: {<judge>: its grade}, reply}, then turn "
             "on the judge tools and call audit_judge on them."),
        tool=SWITCH, arguments={"toolset": "judge"})
    then = inner.next_step.model_copy(update={
        "say": f"Once the judge clears: {inner.method}; {grader.reward}."})
    return inner.model_copy(update={
        "route": "audit_judge", "method": f"audit the judge first; once it clears: "
                                          f"{inner.method}",
        "decided_by": f"0. {QUESTIONS[0]}", "answers": [first, *later], "next_step": step,
        "then": then})


route = route_rows  # the Python name the skills use (``whileai_core.route``); one function


def _questions(asked: _Asked) -> Route:
    """Questions 1 to 6, the first that decides wins."""
    for question in (_truncation, _group_size, _task_count, _signal, _teacher, _on_policy):
        decided = question(asked)
        if decided is not None:
            return decided
    return _grpo(asked)


class _Asked:
    """What the questions read (the rows, the route's arguments, ``graded_by``: question 0's
    grader) and the answers so far."""

    def __init__(self, data: Rows, *, model: str, teacher_rows: Any, taskset: str | None,
                 teacher_url: str | None, threshold: float | None, cluster: str | None,
                 families: Families | None, graded_by: str) -> None:
        self.data, self.model, self.teacher_rows, self.ts = data, model, teacher_rows, taskset
        self.teacher_url, self.threshold, self.cluster = teacher_url, threshold, cluster
        self.families, self.graded_by = families, graded_by
        self.scale, self.budget = data.reward_scale, rows_budget(data)
        self.answers: list[Answer] = []
        self.band: Band | None = None  # question 3's, read again by question 6

    def ask(self, q: int, answer: str, decides: bool, evidence: Result | dict) -> None:
        if isinstance(evidence, Result):  # bounded: a route's answer never grows with the rows
            evidence = evidence.bounded(LIST_SHOWN_MAX)
            ev, detail = evidence.to_dict(), evidence.render()
        else:
            ev, detail = evidence, ""
        self.answers.append(Answer(question=q, asks=QUESTIONS[q], answer=answer,
                                   decides=decides, evidence=ev, detail=detail))

    def done(self, code: RouteCode, method: str, q: int | str, step: NextStep) -> Route:
        decided = f"{q}. {QUESTIONS[q]}" if isinstance(q, int) else q
        return Route(route=code, method=method, decided_by=decided, answers=self.answers,
                     next_step=step, reward=self.scale, cluster=self.cluster)


def _truncation(a: _Asked) -> Route | None:
    """1. A cut-off reply that passes, or a continuous reward that pays it more."""
    tp = truncated_passes(a.data)
    pays = tp.pay is not None and tp.pay.pays
    a.ask(1, (f"yes: {tp.count} truncated rows pass" if tp.count else
              f"yes: {tp.pay.render()}" if pays else "no truncated row passes"
              + ("" if tp.pay is None else " or earns more")), bool(tp), tp)
    if not tp:
        return None
    why = ("a cut-off reply can pass" if tp.count else
           "a reply the cap cut off earns more than a finished one")
    return a.done("fix_reward", "nothing yet: fix the reward first", 1, NextStep(
        say=f"Make a truncated reply fail or earn no more than a finished one (or raise "
            f"max_tokens), re-grade, and route again: while {why}, every rate below "
            "measures the reward, not the model."))


def _group_size(a: _Asked) -> Route | None:
    """2. Rollouts per task."""
    rp = rollouts_per_task(a.data)
    single = rp.k == 1
    a.ask(2, f"k = {rp.k}" + (": one rollout per task; the mean is estimable, the per-task "
                              "band is not" if single else ""), single, rp)
    if not single:
        return None
    return a.done("single_rollout", "re-sample at k >= 4 and route again; if you can only "
                  "ever sample once per prompt, FlashReinforce / SAO / BPCO in your trainer, or "
                  "prime-rl rae", 2, single_rollout_step(a.ts, a.model, a.budget))


def _task_count(a: _Asked) -> Route | None:
    """Too few tasks for any verdict below."""
    n = a.data.n_tasks
    if n >= ROUTE_MIN_TASKS:
        return None
    tasks = f"{n} task" + ("" if n == 1 else "s")
    return a.done("too_few_tasks", f"none yet: {tasks}", "too few tasks", NextStep(
        say=f"Only {tasks}: below {ROUTE_MIN_TASKS} no verdict the route gives "
            "(a band, a teacher's gap) can be told from chance (the smallest two-sided exact "
            f"p on {tasks} is 2/2^{n} = {2 / 2 ** n:.3f}). "
            f"Score {ROUTE_MIN_TASKS} or more tasks (a few hundred to size a training run: "
            f"{op_name('holdout_size')}) and route again."))


def _signal(a: _Asked) -> Route | None:
    """3. The reward's spread within each task."""
    bd = a.band = band(a.data, families=a.families)
    a.ask(3, _band_answer(bd), bd.band in ("floor", "saturated"), bd)
    if bd.band == "floor":
        return floor_route(a.done, bd, a.model, a.ts, a.budget)
    if bd.band == "saturated":
        return a.done("saturated", "GroupwiseGrading (rank the passes), or a harder eval", 3,
                      NextStep(say="Every rollout of every task passes: the reward gives no "
                               "signal. If the passes differ in quality, rank them with "
                               "GroupwiseGrading(grader, mode='reward') after auditing its "
                               "grader; otherwise harden the eval."))
    return None


def _teacher(a: _Asked) -> Route | None:
    """4. A teacher that clears, and is no smaller than the model you will train."""
    if a.teacher_rows is None:
        a.ask(4, "no teacher rows given", False, {"teacher_rows": None})
        return None
    tc = teacher_clears(a.teacher_rows, a.data, threshold=a.threshold, cluster=a.cluster)
    teacher_models = [m for m in load_rows(a.teacher_rows).models() if m]
    name = teacher_models[0] if len(teacher_models) == 1 else None
    too_small = smaller(name, a.model)
    a.ask(4, ("yes" if tc and not too_small else f"it clears, but {too_small}" if tc
              else f"no: {tc.reason}"), bool(tc) and not too_small, tc)
    if not tc or too_small:
        return None
    url = a.teacher_url or "http://localhost:8001/v1"
    step = config_step("The teacher clears: distil it on-policy. Serve it with vLLM "
                       "(prompt log-probs) and check it shares the tokenizer.", a.ts,
                       {"name": "opd", "teacher": f"{name}@{url}"} if name else
                       {"name": "opd"}, a.model, a.budget)
    if name is None:
        step = step.model_copy(update={"needs": [*step.needs, "method.teacher"]})
    return a.done("opd", "OPD from the teacher (same tokenizer; teacher served by vLLM)", 4,
                  step)


def _on_policy(a: _Asked) -> Route | None:
    """5. Whether the model you will train wrote the rows."""
    op = on_policy(a.data, a.model)
    a.ask(5, op.status, op.status in ("older_copy", "other_model"), op)
    if op.status == "other_model":
        return other_model(a.done, op, a.model)
    if op.status == "older_copy":
        return a.done("off_policy", "Async(grpo) with a per-token correction (icepop or ipo)",
                      5, config_step("An older copy of this model wrote the rows: wrap GRPO in "
                                     "Async with a correction.", a.ts,
                                     {"name": "async", "method": "grpo",
                                      "correction": "icepop"}, a.model, a.budget))
    return None


def _grpo(a: _Asked) -> Route:
    """6. Otherwise GRPO."""
    ss = split_share(a.data)
    a.ask(6, _grpo_answer(a.band, ss), True, ss)
    who = {"llm_judge": "the audited judge's score", "human": "people's grades"}.get(
        a.graded_by, "program grader")
    method = (f"GRPO on the reward ({who}, on-policy rows): the reward's spread within "
              "each group is the signal, whatever pass@1 says" if a.scale.continuous else
              f"GRPO on the split tasks ({who}, on-policy rows)")
    return a.done("grpo", method, 6,
                  config_step(f"Train GRPO, with a random-selection control of the same size. "
                              f"{held_out(a.data)}", a.ts, "grpo", a.model, a.budget))


def _band_answer(bd: Band) -> str:
    if bd.reward_kind == "binary":
        return bd.band if bd.band != "floor" or bd.n_always_pass == 0 else (
            f"floor: no task splits ({bd.n_always_fail} always fail, {bd.n_always_pass} always "
            "pass)")
    pass_note = (f"pass@1 is {bd.pass_at_1.value:.3f} at threshold {bd.threshold:g}")
    if bd.band == "mixed":
        return (f"yes: {bd.n_signal} of {bd.n_tasks} tasks have rewards that differ by more "
                f"than {bd.tolerance:g} ({pass_note}; a grouped method learns from the reward's "
                "differences within a group, not from passes)")
    if bd.band == "floor":
        return (f"floor: no task's rewards differ by more than {bd.tolerance:g} ({pass_note}): "
                "no signal in the reward either")
    return bd.band


def _grpo_answer(bd: Band, ss: SplitShare) -> str:
    if bd.reward_kind == "binary":
        return f"split tasks, on-policy: GRPO ({ss.n_split} of {ss.n_tasks} tasks split)"
    zero = (f"pass@1 is {bd.pass_at_1.value:.3f}, which does not matter for a grouped method: "
            "its credit is each reward minus its group's mean, so any spread within a group is "
            "a gradient")
    return (f"signal in the reward, on-policy: GRPO ({ss.n_split} of {ss.n_tasks} tasks have "
            f"reward spread above {bd.tolerance:g}; {zero})")


