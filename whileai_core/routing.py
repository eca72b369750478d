"""Which method? Six questions asked of the graded rows, in order; the first that decides wins.

1. Can a cut-off reply pass?            -> ``fix_reward``
2. How many rollouts per task?          -> ``single_rollout`` (k = 1)
   (fewer than ``ROUTE_MIN_TASKS`` tasks -> ``too_few_tasks``: no verdict below can stand)
3. Does any task carry signal?          -> ``floor`` / ``saturated``
4. Is there a teacher that clears?      -> ``opd``
5. Did the model you will train write these rows?  -> ``off_policy``
6. Otherwise                            -> ``grpo``

The rows are read as they are (:mod:`whileai_core.questions`): a continuous reward is read on its
spread within each task, not on passes at 1.0; budgets are compared before a teacher clears; a
model id that nearly matches the rows' model is an error, not another model; the fields that
change the answer (tokens, turns, category, family) are named in ``fields``. Every answer carries
its evidence (counts, the band, pass@1 or the mean reward with its interval and n). Question 0 (a
program grader beats a judge) is a property of how the rows were graded; audit any judge first
(skill audit-your-judge).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .defaults import (CATEGORY_FIELD, CONFIDENCE_LEVEL, GROUP_MIN_ROLLOUTS, LIST_SHOWN_MAX,
                       OPSD_MIN_PARAMS_B, PRIME_RL_GROUP_SIZE, ROUTE_MIN_TASKS)
from .models import model_size_b
from .questions import (Band, OnPolicy, RolloutsPerTask, SplitShare, TruncatedPasses,  # noqa: F401
                        band, check_model, on_policy, rollouts_per_task, split_share,
                        truncated_passes)
from .result import Result
from .rewards import RewardScale
from .rows import Rows, load_rows
from .stats.clustered import check_cluster, families_of
from .teacher import TeacherVerdict, teacher_clears  # noqa: F401  (question 4; re-exported)
from .voice import OPS, arg, call, choose
from .voice import name as op_name

RouteCode = Literal["fix_reward", "single_rollout", "too_few_tasks", "floor", "saturated", "opd",
                    "off_policy", "grpo"]
TASKSET_PLACEHOLDER = "<your taskset>"

QUESTIONS = {
    1: "Can a cut-off reply pass?",
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


def row_facts(rows: Any, *, model: str | None = None, threshold: float | None = None,
              level: float = CONFIDENCE_LEVEL) -> RowFacts:
    """Ask ``rows`` questions 1, 2, 3 and (with ``model``) 5 of the route, all of them."""
    data = load_rows(rows, threshold=threshold)
    return RowFacts(truncated_passes=truncated_passes(data),
                    rollouts_per_task=rollouts_per_task(data, level=level),
                    band=band(data, level=level), split_share=split_share(data, level=level),
                    on_policy=None if model is None else on_policy(data, model),
                    reward=data.reward_scale)


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
    evidence, the next call to make; what the reward is (``reward``, with its warning when pass
    rates at the threshold mislead) and what the route did with the fields that change its
    answer (``fields``)."""

    route: RouteCode
    method: str
    decided_by: str
    answers: list[Answer]
    next_step: NextStep
    reward: RewardScale | None = None
    fields: list[str] = Field(default_factory=list, description=(
        "the fields present that change the answer (max_tokens, completion_tokens, turns, "
        "category, family) and what the route did with each"))
    cluster: str | None = None

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
        lines += ["", f"next: {self.next_step.say}"]
        if self.next_step.tool in OPS:  # the call as the reader types it (voice)
            lines.append(f"      {call(self.next_step.tool, **(self.next_step.arguments or {}))}")
        return "\n".join(lines)


def _config_step(say: str, taskset: str, method: Any, model: str, **extra: Any) -> NextStep:
    return NextStep(say=say, tool="prime_rl_config",
                    arguments={"taskset": taskset, "method": method, "model": model, **extra})


def _has(data: Rows, field: str) -> bool:
    return data.has_field(field)


def field_notes(data: Rows, *, teacher: bool, cluster: str | None) -> list[str]:
    """What the route did with each field present that changes its answer (bounded: one line
    per field it knows)."""
    notes = []
    budget = data.budget
    if budget is not None and not bool((budget.max_tokens != budget.max_tokens).all()):
        notes.append("max_tokens: " + ("the teacher's budget was compared with the student's "
                                       "(question 4)" if teacher else "no teacher rows, so "
                                       "nothing to compare it with"))
    elif teacher:
        notes.append("max_tokens: not carried by the student's rows, so the teacher's budget "
                     "was not checked")
    if budget is not None and not bool((budget.completion_tokens != budget.completion_tokens).all()):
        notes.append("completion_tokens: a teacher's reply past the student's cap counts as "
                     "failed" if teacher else "completion_tokens: carried; read against a "
                     "teacher's when one is given")
    turns = _has(data, "turns")
    if turns:
        multi = sum(1 for t in data.column("turns") if type(t) is int and t > 1)
        notes.append(f"turns: {multi} of {data.n_rows} rows have more than one turn"
                     + ("; completion_tokens is then the sum over turns" if multi else ""))
    if _has(data, CATEGORY_FIELD):
        notes.append(f"{CATEGORY_FIELD}: the band per behaviour is "
                     f"{op_name('category_table') if 'category_table' in OPS else 'category_table'}")
    if cluster is not None:
        notes.append(f"{cluster}: every interval here resamples families, then tasks")
    elif _has(data, "family"):
        notes.append("family: carried but not used; intervals resample tasks only: pass "
                     f"{arg('cluster', 'family')} when tasks of one family pass and fail "
                     "together")
    return notes[:LIST_SHOWN_MAX]


def route(rows: Any, *, model: str, teacher_rows: Any = None, taskset: str | None = None,
          teacher_url: str | None = None, threshold: float | None = None,
          cluster: str | None = None) -> Route:
    """Ask the six questions of ``rows`` (graded on the model you will train) and route.

    ``teacher_rows``: the candidate teacher graded on the same held-out tasks (optional).
    ``taskset``/``teacher_url`` only fill the next call's arguments.
    ``cluster``: a row field naming each task's family; every interval resamples families.
    """
    data = load_rows(rows, threshold=threshold)
    check_model(data, model)
    check_cluster(cluster)
    families = families_of(data, cluster) if cluster is not None else None
    scale = data.reward_scale
    ts = taskset or TASKSET_PLACEHOLDER
    answers: list[Answer] = []
    fields = field_notes(data, teacher=teacher_rows is not None, cluster=cluster)

    def ask(q: int, answer: str, decides: bool, evidence: Result | dict) -> None:
        if isinstance(evidence, Result):  # bounded: a route's answer never grows with the rows
            evidence = evidence.bounded(LIST_SHOWN_MAX)
            ev, detail = evidence.to_dict(), evidence.render()
        else:
            ev, detail = evidence, ""
        answers.append(Answer(question=q, asks=QUESTIONS[q], answer=answer, decides=decides,
                              evidence=ev, detail=detail))

    def done(code: RouteCode, method: str, q: int | str, step: NextStep) -> Route:
        decided = f"{q}. {QUESTIONS[q]}" if isinstance(q, int) else q
        return Route(route=code, method=method, decided_by=decided, answers=answers,
                     next_step=step, reward=scale, fields=fields, cluster=cluster)

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
    ask(2, f"k = {rp.k}" + (": one rollout per task; the mean is estimable, the per-task band "
                            "is not" if single else ""), single, rp)
    if single:
        return done("single_rollout", "re-sample at k >= 4 and route again; if you can only "
                    "ever sample once per prompt, FlashReinforce / SAO / BPCO in your trainer, or "
                    "prime-rl rae", 2, _single_rollout_step(ts, model))
    # too few tasks for any verdict below
    if data.n_tasks < ROUTE_MIN_TASKS:
        tasks = f"{data.n_tasks} task" + ("" if data.n_tasks == 1 else "s")
        return done("too_few_tasks", f"none yet: {tasks}", "too few tasks", NextStep(
            say=f"Only {tasks}: below {ROUTE_MIN_TASKS} no verdict the route gives "
                "(a band, a teacher's gap) can be told from chance (the smallest two-sided exact "
                f"p on {tasks} is 2/2^{data.n_tasks} = {2 / 2 ** data.n_tasks:.3f}). "
                f"Score {ROUTE_MIN_TASKS} or more tasks (a few hundred to size a training run: "
                f"{op_name('holdout_size')}) and route again."))
    # 3. signal: the reward's spread within each task
    bd = band(data, families=families)
    decided = bd.band in ("floor", "saturated")
    ask(3, _band_answer(bd), decided, bd)
    if bd.band == "floor":
        return _floor(done, bd, model, ts)
    if bd.band == "saturated":
        return done("saturated", "GroupwiseGrading (rank the passes), or a harder eval", 3, NextStep(
            say="Every rollout of every task passes: the reward gives no signal. If the passes "
                "differ in quality, rank them with GroupwiseGrading(grader, mode='reward') after "
                "auditing its grader; otherwise harden the eval."))
    # 4. teacher
    if teacher_rows is not None:
        tc = teacher_clears(teacher_rows, data, threshold=threshold, cluster=cluster)
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
    ask(6, _grpo_answer(bd, ss), True, ss)
    method = ("GRPO on the reward (program grader, on-policy rows): the reward's spread within "
              "each group is the signal, whatever pass@1 says" if scale.continuous else
              "GRPO on the split tasks (program grader, on-policy rows)")
    return done("grpo", method, 6,
                _config_step(f"Train GRPO; size the held-out test first ({op_name('holdout_size')}) "
                             "and train a random-selection control of the same size:", ts,
                             "grpo", model))


def _single_rollout_step(ts: str, model: str) -> NextStep:
    return _config_step(
        f"Re-sample every prompt at k >= {GROUP_MIN_ROLLOUTS} and route again: one rollout per "
        "task estimates the mean but not which tasks split, and that band decides between GRPO, "
        "OPSD and SFT (usually the cheaper fix). Training does not need groups in these rows: "
        "prime-rl samples its own group of `group_size` rollouts per prompt at every step "
        f"({PRIME_RL_GROUP_SIZE} in its reverse-text examples; [orchestrator] group_size), so "
        "GRPO there needs only prompts that will split. If you can only ever sample once per "
        "prompt (production traces), train FlashReinforce, SAO or BPCO in your own trainer, or "
        "prime-rl's rae (a baseline from an EMA of past rewards, group_size 1):", ts, "rae",
        model, group_size=1)


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


def _floor(done, bd: Band, model: str, ts: str) -> Route:
    size = model_size_b(model)
    continuous = bd.reward_kind != "binary"
    why = ("No task's rewards differ within it (if every rollout of a task gets the same "
           "nonzero reward, check the sampling temperature: identical replies give identical "
           "rewards), so a grouped method gets no gradient and more rollouts of the same "
           "sampler add none." if continuous else
           "No task splits: every task fails always" + (
               f" or passes always ({bd.n_always_pass} do)" if bd.n_always_pass else "")
           + ", and more rollouts cannot help a task at p = 0 (a draw keeps a pass with "
             "probability 0).")
    if size is not None and size < OPSD_MIN_PARAMS_B:
        return done("floor", f"SFT on a stronger model's completions (OPSD needs ~"
                    f"{OPSD_MIN_PARAMS_B:g}B+, this is {size:g}B)", 3, NextStep(
                        say=f"{why} The model is too small for OPSD: collect passing completions "
                            "from a stronger model and run the sft-from-traces skill ("
                            + ", ".join(op_name(o) for o in ("select_sft", "decontaminate",
                                                              "export_sft")) + ")."))
    caveat = "" if size is not None else " (model size unknown: OPSD needs ~7B+)"
    return done("floor", "OPSD: the same model shown privileged context" + caveat, 3,
                _config_step(f"{why} Give the model privileged context with OPSD:", ts,
                             {"name": "opsd", "privileged": "reference"}, model))
