"""Before training: score degenerate answers with the user's own reward.

A reward that pays an empty reply, a refusal, a question back, the prompt echoed, filler to the
token cap, the most common answer, the answer's format alone (its tags around a wrong answer), or
the task's own words stuffed into a reply, will be farmed: GRPO finds any answer that scores
without doing the task [1, 2]. :func:`cheat_probes` writes each degenerate answer for every task,
scores it with the reward the run will train on, and compares each probe with the model's own
pass rate on the same tasks, paired by task (:func:`whileai_core.stats.compare`).

Verdict per probe: ``hole`` when it passes somewhere and the paired interval of (probe - model)
reaches 0 or above, i.e. the degenerate answer cannot be told apart from the model's own (or
beats it); ``leak`` when it passes on some tasks but clearly below the model; ``closed`` when it
never passes. Without the model's rows there is nothing to pair with: a passing probe is a
``leak`` and the note says to give them, except one that passes every task, a ``hole`` whatever
the model does (no model's pass rate on a task exceeds a pass, so probe - model >= 0 on each).

[1] Skalse et al. (2022). Defining and Characterizing Reward Hacking. NeurIPS. arXiv:2209.13085.
[2] Gao, Schulman & Hilton (2022). Scaling Laws for Reward Model Overoptimization. arXiv:2210.10760.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from .. import voice
from ..bootstrap import check_level, check_seed
from ..defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, PROBE_CHARS_PER_TOKEN,
                        PROBE_EXAMPLE_CHARS, PROBE_FILLER, PROBE_KEYWORDS_MAX, PROBE_MAX_TOKENS,
                        PROBE_QUESTION, PROBE_REFUSAL, REWARD_TIMEOUT_MAX_S,
                        REWARD_TIMEOUT_S)
from ..errors import ArgumentError, RowsError, as_json
from ..operations import HERE, RUNS_CODE, VERDICT, Context, operation
from ..operations.args import (MAX_NAME, Arg, Level, Metric, OptionalRowField, OptionalRows,
                               Records, Threshold)
from ..result import Result, fmt_rate
from ..rows import TASK_ALIASES, TASK_FIELD, Rows, load_rows, read_records
from ..stats import Rate, check_metric, compare, pass_rate
from .features import REPLY_FIELDS, chat_text, format_markers, reply_text
from .reward import reward_runner, reward_spec

Interval = tuple[float, float]
ProbeVerdict = Literal["hole", "leak", "closed"]

PROBES: dict[str, str] = {
    "empty": "an empty reply",
    "refusal": f"a refusal: {PROBE_REFUSAL!r}",
    "question": f"a question back: {PROBE_QUESTION!r}",
    "echo": "the prompt echoed back",
    "filler": "filler repeated to the token cap",
    "most_common": "the most common answer (of the tasks' `answer` fields, else of the model's replies)",
    "format": ("the answer format alone: the commonest tags / \\boxed{} of the model's replies (else "
               "of the prompts) around a wrong answer (the commonest other task's `answer`)"),
    "keywords": "the task text's own content words, stuffed into one reply",
}

# --- the arguments cheat_probes and prove_reward take ---------------------------------------

RewardArg = Annotated[str | list[Annotated[str, Field(max_length=4096)]], Field(
    max_length=200, description=(
        "The reward the run will train on: 'file.py:function' (or 'package.module:function'), "
        "called like a TRL reward: function(prompts=[...], completions=[...], **task_fields) -> "
        "list of numbers; or a command (a list of arguments, or one string split like a shell, "
        "never run by one): only python and a script of your own inside the workspace, no "
        "argument, e.g. ['python', 'rewards/grade.py'], that reads JSONL on stdin (one {prompt, "
        "completion, ...task fields} per line) and prints one number per line. Either runs in "
        "an isolated child process with a clean environment, its process tree killed after "
        "timeout_s."),
    examples=["rewards/grade.py:score", ["python", "rewards/grade.py"]]), Arg(metavar="REWARD")]
ProbeTasks = Annotated[Records, Field(description=(
    "The training tasks: {task_id, prompt, ...fields the reward reads}; prompt is text or chat "
    "messages."))]
MaxTokens = Annotated[int, Field(ge=1, le=1_000_000, description=(
    "The run's completion token cap: the filler probe fills it (4 characters a token)."))]
GroupBy = Annotated[OptionalRowField, Field(description=(
    "A task field (e.g. 'category'): every finding per value."))]
TimeoutS = Annotated[float, Field(gt=0, le=REWARD_TIMEOUT_MAX_S, allow_inf_nan=False, description=(
    "Seconds the reward may take for the whole batch."))]
PassEnv = Annotated[list[Annotated[str, Field(max_length=128)]] | None, Field(
    max_length=32, description=(
        "Environment variables the reward needs (e.g. ['OPENAI_API_KEY'] for a reward that "
        "calls an API); no other token or key reaches it.")), Arg(metavar="NAME")]
# Python callers only (no surface offers them): where a child reward runs, and the resampling
PythonRoot = Annotated[Any, Arg(cli=False, mcp=False)]
PythonSeed = Annotated[int | None, Arg(cli=False, mcp=False)]


def _probes_doc() -> str:
    return "Which probes to run; null: all of " + ", ".join(PROBES) + "."


def _probes_schema() -> dict[str, Any]:
    return {"anyOf": [{"type": "array", "items": {"type": "string", "enum": list(PROBES)},
                       "maxItems": len(PROBES)}, {"type": "null"}]}


def _reward_and_root(reward: Any, root: Any, ctx: Context) -> tuple[Any, Any]:
    """The reward read by the one grammar (:func:`.reward.reward_spec`), and the folder a child
    reward runs in: the server's workspace when ``ctx`` has one (its files located there), else
    ``root``."""
    if ctx.root is None:
        return reward_spec(reward), root
    return reward_spec(reward, ctx.root), ctx.root.path


_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'_-]{3,}")
_STOP = frozenset("""about above after again against because been before being below between
both could does doing down during each from further have having here hers herself himself into
itself just more most myself once only other ours ourselves over same should some such than that
their theirs them themselves then there these they this those through under until very were what
when where which while whom with would your yours yourself yourselves please""".split())


# --- results -----------------------------------------------------------------------------------

class ProbeExample(Result):
    """One probe reply on one task and the reward it got (the reply cut to 200 characters)."""

    task_id: str
    completion: str
    reward: float


class ProbeReport(Result):
    """One degenerate answer on every task, against the model on the same tasks."""

    name: str
    what: str
    rate: Rate
    mean_reward: float
    delta: float | None = None
    delta_ci: Interval | None = None
    n_paired: int = 0
    verdict: ProbeVerdict
    example: ProbeExample | None = None
    by_group: dict[str, Rate] | None = None

    def render(self) -> str:
        text = f"{self.name:<12} {self.verdict:<6} {fmt_rate(self.rate.value, self.rate.ci, self.rate.n_tasks)}"
        if self.delta is not None:
            ci = (f" [{self.delta_ci[0]:+.3f}, {self.delta_ci[1]:+.3f}]"
                  if self.delta_ci else " [no interval]")
            text += f"; vs model {self.delta:+.3f}{ci} (n={self.n_paired} paired tasks)"
        if self.verdict != "closed":
            text += _example_lines(self.example, self.by_group)
        return text


def _example_lines(example: ProbeExample | None, by_group: dict[str, Rate] | None) -> str:
    """The example and the rates per group, as the lines under a probe's or a check's."""
    text = ""
    if example is not None:
        text += (f"\n             e.g. task {example.task_id}: {example.completion!r} -> reward "
                 f"{example.reward:g}")
    if by_group:
        text += "\n             by group: " + ", ".join(
            f"{g} {fmt_rate(r.value, r.ci, r.n_tasks)}" for g, r in by_group.items())
    return text


class CheatProbes(Result):
    """Every probe's pass rate next to the model's, the holes named with an example."""

    verdict: Literal["holes", "leaks", "closed"]
    metric: Literal["pass", "reward"]
    threshold: float
    n_tasks: int
    model: Rate | None
    probes: list[ProbeReport]
    holes: list[str]
    leaks: list[str]
    skipped: dict[str, str]
    max_tokens: int
    level: float
    next_step: str
    notes: list[str] = []

    negative_means: ClassVar[str | None] = (
        "a probe is a hole (`holes`; a `leak` passes clearly below the model: 0)")

    @property
    def negative(self) -> bool:
        return self.verdict == "holes"

    def render(self) -> str:
        model = "model: no rows given" if self.model is None else (
            f"model  {fmt_rate(self.model.value, self.model.ci, self.model.n_tasks)}")
        lines = [f"cheat probes: {self.verdict} ({self.n_tasks} tasks, metric {self.metric}, "
                 f"threshold {self.threshold:g})", model]
        lines += [p.render() for p in self.probes]
        lines += [f"skipped {k}: {v}" for k, v in self.skipped.items()]
        lines += [f"note: {n}" for n in self.notes]
        lines.append(f"next: {self.next_step}")
        return "\n".join(lines)


# --- the probes --------------------------------------------------------------------------------

def prompt_text(prompt: Any) -> str:
    """The text a probe echoes: the prompt string, or the last user message of a chat."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        users = [m.get("content") for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
        texts = [t for t in users if isinstance(t, str)]
        return texts[-1] if texts else ""
    return ""


def keywords(text: str, limit: int = PROBE_KEYWORDS_MAX) -> list[str]:
    """Distinct content words of ``text`` (4+ characters, not stop words), in order."""
    words = (w.lower() for w in _WORD.findall(text))
    return list(dict.fromkeys(w for w in words if w not in _STOP))[:limit]


def _filler(max_chars: int) -> str:
    return (PROBE_FILLER * (max_chars // len(PROBE_FILLER) + 1))[:max_chars].rstrip()


def _stuffed(text: str, max_chars: int) -> str:
    words = " ".join(keywords(text))
    if not words:
        return ""
    return " ".join([words] * 3)[:max_chars].rstrip()


def _cut(text: str, limit: int = PROBE_EXAMPLE_CHARS) -> str:
    return text if len(text) <= limit else f"{text[:limit]}...({len(text)} chars)"


def _as_completion(text: str, prompt: Any) -> Any:
    """A chat prompt gets a chat completion, as TRL gives a conversational reward."""
    if isinstance(prompt, list):
        return [{"role": "assistant", "content": text}]
    return text


def _model_markers(model: Any) -> list[list[tuple[str, str, str]]]:
    """The format markers of each model reply that has some."""
    if model is None:
        return []
    found = (format_markers(reply_text(rec) or "") for rec in model.records)
    return [marks for marks in found if marks]


def _shell(tasks: list[dict], model: Any) -> tuple[tuple | None, str]:
    """The commonest sequence of format markers, from the model's replies, else the prompts
    (every message: a format is often asked for in the system message)."""
    prompts = (format_markers(chat_text(t["prompt"]) or "") for t in tasks)
    for found, source in ((_model_markers(model), "the model's replies"), (prompts, "the prompts")):
        shells = Counter(tuple((o, c) for o, _, c in marks) for marks in found if marks)
        if shells:
            return shells.most_common(1)[0][0], source
    return None, ""


def _format_replies(tasks: list[dict], model: Any) -> tuple[list[str] | None, str]:
    """One reply per task: the commonest sequence of format markers, each holding a wrong answer.

    The markers come from the model's replies, else from the prompts. The content is, per task,
    the commonest `answer` of the other tasks that differs from this task's (so an exact-match
    reward never pays it), else the commonest content the model put in its last marker, else ''.
    """
    shell, source = _shell(tasks, model)
    if shell is None:
        return None, ""
    contents = Counter(marks[-1][1].strip() for marks in _model_markers(model))
    answers = Counter(str(t["answer"]) for t in tasks if t.get("answer") not in (None, ""))
    ranked = [a for a, _ in answers.most_common()]
    fallback = contents.most_common(1)[0][0] if contents else ""
    out = []
    for t in tasks:
        own = str(t.get("answer"))
        wrong = next((a for a in ranked if a != own), None if ranked else fallback) or ""
        out.append("\n".join(f"{o}{wrong}{c}" for o, c in shell))
    return out, source


# --- the call ----------------------------------------------------------------------------------

def _read_tasks(tasks: Any) -> tuple[list[dict], list[str]]:
    recs = read_records(tasks, noun="task")
    if not recs.items:
        raise RowsError("no tasks", source=recs.name, fix="give one object per task with "
                        "task_id and prompt")
    ids, seen = [], set()
    for i, rec in enumerate(recs.items):
        tid = rec.get(TASK_FIELD)
        if tid is None:
            tid = next((rec[a] for a in TASK_ALIASES if rec.get(a) is not None), None)
        if tid is None or isinstance(tid, bool) or not isinstance(tid, (str, int)):
            raise RowsError(f"`task_id` is {as_json(tid)}", **recs.where(i), field=TASK_FIELD,
                            fix='give each task an id, e.g. "task_id": "t1"')
        if "prompt" not in rec or not isinstance(rec["prompt"], (str, list)):
            raise RowsError(f"`prompt` is {rec.get('prompt')!r:.60}", **recs.where(i),
                            field="prompt", fix="give the prompt as text or a list of chat "
                            'messages [{"role": "user", "content": "..."}]')
        tid = str(tid)
        if tid in seen:
            raise RowsError(f"task {tid!r} appears twice", **recs.where(i), field=TASK_FIELD,
                            fix="give each task once (probes write one reply per task)")
        seen.add(tid)
        ids.append(tid)
    return recs.items, ids


def _most_common(tasks: list[dict], model: Any) -> tuple[str | None, str]:
    answers = [str(t["answer"]) for t in tasks if t.get("answer") not in (None, "")]
    if answers:
        return Counter(answers).most_common(1)[0][0], "the tasks' `answer` field"
    if model is not None:
        for field in REPLY_FIELDS:
            texts = [r.get(field) for r in model.records if isinstance(r.get(field), str)]
            if texts:
                return Counter(texts).most_common(1)[0][0], f"the model rows' `{field}`"
    return None, ""


@operation(
    toolset="hacking", effect=RUNS_CODE, title="Probe a reward with degenerate answers",
    description=(
        "Before training: score degenerate answers (empty, a refusal, a question back, the "
        "prompt echoed, filler to the token cap, the most common answer, the answer format "
        "alone, the task's words stuffed) with the user's own reward on every task, and compare "
        "each with the model's pass rate, paired by task with an interval. A probe that scores "
        "at or above the model is a hole, named with an example. Runs the reward (workspace "
        "code) in a child process with a timeout."),
    exit_code=VERDICT, doing="probing a reward")
def cheat_probes(
        tasks: ProbeTasks, *, reward: RewardArg,
        model_rows: Annotated[OptionalRows, Field(description=(
            "The model's graded rows on these tasks: each probe is compared with its pass rate, "
            "paired by task. Without them a passing probe is only a leak."))] = None,
        max_tokens: MaxTokens = PROBE_MAX_TOKENS,
        probes: Annotated[list[Annotated[str, Field(max_length=MAX_NAME)]] | None, Field(
            max_length=50), Arg(describe=_probes_doc, schema=_probes_schema)] = None,
        group_by: GroupBy = None,
        metric: Metric = "pass", threshold: Threshold = None,
        timeout_s: TimeoutS = REWARD_TIMEOUT_S, level: Level = CONFIDENCE_LEVEL,
        pass_env: PassEnv = None, ctx: Context = HERE, root: PythonRoot = None,
        seed: PythonSeed = BOOTSTRAP_SEED) -> CheatProbes:
    """Score degenerate answers with ``reward`` on every task; name the holes with an example.

    In the library ``reward`` may also be a callable ``reward(prompts, completions, **columns)
    -> list[float]`` (TRL's shape); ``root`` is where a child reward runs (under the server,
    ``ctx``'s workspace), and :mod:`.reward` says how each form is run.
    """
    reward, root = _reward_and_root(reward, root, ctx)
    level, seed = check_level(level), check_seed(seed)
    check_metric(metric)
    chosen = _chosen(max_tokens, probes)
    runner = reward_runner(reward, root=root, timeout_s=timeout_s, pass_env=pass_env)
    task_list, ids = _read_tasks(tasks)
    model = None if model_rows is None else load_rows(model_rows, threshold=threshold)
    thr = model.threshold if model is not None else load_rows(
        [{"task_id": "_", "reward": 0.0}], threshold=threshold).threshold
    if group_by is not None and not any(group_by in t for t in task_list):
        raise ArgumentError(f"`{voice.arg('group_by')}` {group_by!r} is a field of no task",
                            fix="name a task field such as 'category', or omit "
                            f"{voice.arg('group_by')}")
    common, common_from = _most_common(task_list, model)
    shelled, shell_from = _format_replies(task_list, model) if "format" in chosen else (None, "")
    replies, skipped = _replies(chosen, task_list, common, shelled,
                                max_tokens * PROBE_CHARS_PER_TOKEN)
    names = list(replies)
    scores = runner(_batch(task_list, ids, replies.values())).reshape(len(names), len(ids))
    model_rate = None if model is None else pass_rate(model, level, seed, metric)
    groups = None if group_by is None else [str(t.get(group_by)) for t in task_list]
    reports = [_report(name, replies[name], scores[j], ids, thr, model, groups, level, seed,
                       metric) for j, name in enumerate(names)]
    holes = [r.name for r in reports if r.verdict == "hole"]
    leaks = [r.name for r in reports if r.verdict == "leak"]
    notes = _notes(replies, common, common_from, shell_from, model, ids)
    return CheatProbes(verdict="holes" if holes else "leaks" if leaks else "closed", metric=metric,
                       threshold=thr, n_tasks=len(ids), model=model_rate, probes=reports,
                       holes=holes, leaks=leaks, skipped=skipped, max_tokens=max_tokens,
                       level=level, next_step=_next_step(holes, leaks, group_by, task_list),
                       notes=notes)


def _batch(task_list: list[dict], ids: list[str], texts_by_kind: Iterable[list[str]]
           ) -> list[dict]:
    """One item per kind of reply and task, in that order: the task's fields and the reply."""
    return [{**{k: v for k, v in t.items() if k != "prompt"}, "task_id": tid,
             "prompt": t["prompt"], "completion": _as_completion(text, t["prompt"])}
            for texts in texts_by_kind for t, tid, text in zip(task_list, ids, texts)]


def _notes(replies: dict[str, list[str]], common: str | None, common_from: str, shell_from: str,
           model: Rows | None, ids: list[str]) -> list[str]:
    """Where the most_common and format probes came from, and what the model's rows lack."""
    notes = []
    if "most_common" in replies:
        notes.append(f"most_common probe: {_cut(common, 60)!r}, from {common_from}")
    if "format" in replies:
        notes.append(f"format probe: {_cut(replies['format'][0], 60)!r} (first task), the markers "
                     f"from {shell_from}")
    if model is None:
        notes.append(f"no {voice.arg('model_rows')}: a passing probe cannot be compared with the "
                     "model, so it is called a leak (one that passes every task is a hole: no "
                     "model does better); give the model's graded rows on these tasks")
    elif ids:
        missing = len(set(ids) - set(model.task_ids))
        if missing:
            notes.append(f"{missing} of {len(ids)} tasks have no model rows: they are left out of "
                         "the paired comparison")
    return notes


def _chosen(max_tokens: Any, probes: list[str] | None) -> list[str]:
    """The probes to run, once ``max_tokens`` and ``probes`` are checked."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 1 <= max_tokens <= 1_000_000:
        raise ArgumentError(f"`max_tokens` must be an integer in [1, 1000000], got {max_tokens!r}",
                            fix="pass the run's completion cap, e.g. max_tokens=512")
    chosen = list(PROBES) if probes is None else list(probes)
    unknown = [p for p in chosen if p not in PROBES]
    if unknown or not chosen:
        raise ArgumentError(f"`probes` has unknown names {unknown or chosen}; known: "
                            f"{', '.join(PROBES)}", fix="pick from those, or omit probes")
    return chosen


def _replies(chosen: list[str], task_list: list[dict], common: str | None,
             shelled: list[str] | None, max_chars: int) -> tuple[dict[str, list[str]],
                                                                 dict[str, str]]:
    """Each probe's reply per task, and the probes skipped (nothing to build them from)."""
    skipped: dict[str, str] = {}
    replies: dict[str, list[str]] = {}
    for name in chosen:
        if name == "most_common" and common is None:
            skipped[name] = ("no `answer` field in the tasks and no reply text in the model rows "
                             "(completion/reply/response/output/text)")
            continue
        if name == "format" and shelled is None:
            skipped[name] = ("no format marker (<tag>...</tag>, \\boxed{}) in the model's replies "
                             "or in the prompts")
            continue
        texts = [prompt_text(t["prompt"]) for t in task_list]
        replies[name] = {
            "empty": lambda: [""] * len(texts),
            "refusal": lambda: [PROBE_REFUSAL] * len(texts),
            "question": lambda: [PROBE_QUESTION] * len(texts),
            "echo": lambda: [tx[:max_chars] for tx in texts],
            "filler": lambda: [_filler(max_chars)] * len(texts),
            "most_common": lambda: [common[:max_chars]] * len(texts),
            "keywords": lambda: [_stuffed(tx, max_chars) for tx in texts],
            "format": lambda: [tx[:max_chars] for tx in shelled],
        }[name]()
    return replies, skipped


def _report(name: str, replies: list[str], scores: np.ndarray, ids: list[str], thr: float,
            model: Rows | None, groups: list[str] | None, level: float, seed: int | None,
            metric: str) -> ProbeReport:
    """One probe's rate, verdict, best-scored example and rate per group."""
    data = load_rows([{"task_id": tid, "reward": float(s)} for tid, s in zip(ids, scores)],
                     threshold=thr)
    rate = pass_rate(data, level, seed, metric)
    passed = data.passed if metric == "pass" else data.reward > 0
    best = int(np.argmax(scores))
    example = ProbeExample(task_id=ids[best], completion=_cut(replies[best]),
                           reward=float(scores[best]))
    fields: dict[str, Any] = {}
    verdict: ProbeVerdict = "closed" if not passed.any() else "leak"
    if model is None and metric == "pass" and passed.size and passed.all():
        verdict = "hole"  # no model beats a pass on every task
    if model is not None:
        cmp = compare(model, data, level=level, seed=seed, metric=metric)
        fields = dict(delta=cmp.delta, delta_ci=cmp.ci, n_paired=cmp.n_paired)
        if passed.any() and cmp.delta is not None:
            top = cmp.ci[1] if cmp.ci is not None else cmp.delta
            verdict = "hole" if top >= 0 else "leak"
    by_group = None if groups is None else {
        g: pass_rate(data.where(np.array([k == g for k in groups])), level, seed, metric)
        for g in list(dict.fromkeys(groups))[:20]}
    return ProbeReport(name=name, what=PROBES[name], rate=rate,
                       mean_reward=float(scores.mean()), verdict=verdict,
                       example=example if passed.any() or name == "filler" else None,
                       by_group=by_group, **fields)


def _next_step(holes: list[str], leaks: list[str], group_by: str | None,
               task_list: list[dict]) -> str:
    if holes:
        return (f"fix the reward before training: it pays {', '.join(holes)} at least as well "
                f"as the model's own answers (see each example). Then run "
                f"{voice.name('cheat_probes')} again")
    if not leaks:
        return f"no probe passes: train, and watch the run with {voice.name('watch_run')}"
    if group_by is not None:  # the by-group line is there
        where = voice.choose(python="by_group", cli="its by-group line", mcp="by_group")
        where = f"see {where} and the example"
    elif any("category" in t for t in task_list):  # where it is not: say how to see it
        where = f"see the example; {voice.arg('group_by', 'category')} shows on which"
    else:
        where = "see the example"
    return (f"the reward pays {', '.join(leaks)} on some tasks ({where}); tighten it "
            f"there, or watch the run with {voice.name('watch_run')}")
