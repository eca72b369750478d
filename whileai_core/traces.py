"""From production traces to an SFT file, without leaking the test (the sft-from-traces skill).

A trace is one conversation: ``{"task_id": ..., "messages": [{"role", "content"}, ...],
"reward": <optional number>, "model": <optional str>}``. The steps, in the order the skill runs
them:

1. :func:`split_by_task`: a frozen held-out test, split by task (never by row), so no ask is on
   both sides. The split depends only on the task ids and the seed, not on row order.
2. :func:`failed_asks`: the asks (prompts) the agent failed on every try: seeds for new attempts.
3. :func:`rejection_sample`: 10-30 attempts per ask, each graded by a program.
4. :func:`select_sft`: the best passing attempt per ask.
5. :func:`decontaminate`: drop any training example whose task id is held out, whose prompt is a
   held-out prompt verbatim, whose prompt shares >= 80% of its 8-grams with held-out prompts, or
   that holds >= 80% of one held-out prompt's 8-grams (a held-out prompt embedded in it).
6. :func:`export_sft`: TRL's conversational JSONL, one ``{"messages": [...]}`` per line.

Scoring before/after on the frozen test is :func:`whileai_core.compare`; the noise floor is
:func:`whileai_core.noise_floor` on re-runs of the same held-out set.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from pydantic import Field

from . import defaults as D
from .errors import ArgumentError, RowsError
from .result import Result, fmt_rate

ROLES = ("system", "user", "assistant", "tool")


# --- reading traces ------------------------------------------------------------------------

def load_traces(source: Any, *, need_reward: bool = False) -> list[dict]:
    """Traces from a JSONL/JSON path or a list of dicts, each checked; returns the list of dicts.

    Every trace needs ``task_id`` (str or int) and ``messages`` (a non-empty list of
    ``{"role": system|user|assistant|tool, "content": str}`` with at least one user turn).
    ``need_reward=True`` also requires a finite number ``reward``. A bad trace raises
    :class:`RowsError` naming the file, line (or item), field and fix.
    """
    return [dict(r) for r in _read_traces(source, need_reward=need_reward).items]


def _read_traces(source: Any, *, need_reward: bool = False):
    from .rows import read_records  # the one JSONL reader, with line-numbered errors

    recs = read_records(source, noun="trace")
    if not recs.items:
        raise RowsError("no traces", source=recs.name, fix="give at least one trace")
    for i, rec in enumerate(recs.items):
        where = recs.where(i)
        tid = rec.get("task_id")
        if isinstance(tid, bool) or not isinstance(tid, (str, int)):
            raise RowsError(f"`task_id` is {tid!r}", **where, field="task_id",
                            fix='add "task_id": "<the ask this conversation answers>"')
        _check_messages(rec.get("messages"), where)
        if need_reward:
            r = rec.get("reward")
            if isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r):
                raise RowsError(f"`reward` is {r!r}", **where, field="reward",
                                fix="grade every trace with a program: a finite number, pass >= 1.0")
    return recs


def _check_messages(messages: Any, where: dict) -> None:
    if not isinstance(messages, list) or not messages:
        raise RowsError(f"`messages` is {messages!r:.60}", **where, field="messages",
                        fix='give the conversation as [{"role": "user", "content": "..."}, ...]')
    for j, m in enumerate(messages):
        if not isinstance(m, Mapping) or m.get("role") not in ROLES \
                or not isinstance(m.get("content"), str):
            raise RowsError(f"message {j + 1} is {m!r:.80}", **where, field="messages",
                            fix=f"each message needs role in {ROLES} and string content")
    if not any(m["role"] == "user" for m in messages):
        raise RowsError("no user message", **where, field="messages",
                        fix="a trace starts from the user's ask")


def prompt_messages(trace: Mapping) -> list[dict]:
    """The messages before the first assistant turn: the ask."""
    out = []
    for m in trace["messages"]:
        if m["role"] == "assistant":
            break
        out.append({"role": m["role"], "content": m["content"]})
    return out


def prompt_text(record: Mapping) -> str:
    """The text an ask is compared by: a ``prompt`` string, else its user messages joined."""
    if isinstance(record.get("prompt"), str):
        return record["prompt"]
    return "\n".join(m["content"] for m in record.get("messages", ()) if m.get("role") == "user")


# --- 1. the held-out split -----------------------------------------------------------------

class TaskSplit(Result):
    """Tasks held out (the frozen test) and tasks left to train on; no task is on both sides."""

    holdout_tasks: list[str]
    train_tasks: list[str]
    n_tasks: int
    n_holdout: int
    share: float
    seed: int
    note: str
    shown: str | None = Field(None, description="which lists were cut, as 'n of N shown'")
    cut_lists = ("holdout_tasks", "train_tasks")

    def holdout(self, records: Iterable[Mapping]) -> list[dict]:
        """The records whose task is held out."""
        keep = set(self.holdout_tasks)
        return [dict(r) for r in records if _task_of(r) in keep]

    def train(self, records: Iterable[Mapping]) -> list[dict]:
        """The records whose task is not held out."""
        drop = set(self.holdout_tasks)
        return [dict(r) for r in records if _task_of(r) not in drop]

    def render(self) -> str:
        text = (f"split by task: {self.n_holdout} held out, {self.n_tasks - self.n_holdout} to "
                f"train on (share {self.share}, seed {self.seed})\n{self.note}")
        return text + (f"\n({self.shown})" if self.shown else "")


def _task_of(record: Mapping) -> str:
    return str(record.get("task_id", record.get("scenario_id")))  # the rows' alias too


def split_by_task(rows_or_records: Any, *, share: float = D.HOLDOUT_SHARE,
                  seed: int = D.SPLIT_SEED) -> TaskSplit:
    """Hold out ``share`` of the tasks, never part of a task.

    Arguments: ``rows_or_records``: :class:`~whileai_core.Rows`, a path, or a list of dicts with
    ``task_id``; ``share`` in (0, 1), default 0.2; ``seed``: an int, default 0.

    Tasks are ranked by sha256(seed, task_id) and the first round(share x n) (at least 1, at most
    n - 1) are held out, so the split does not depend on row order, and a task keeps its side as
    long as its rank does. The note compares the held-out size with :func:`holdout_size`.
    """
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
        raise ArgumentError(f"share must be a number in (0, 1), got {share!r}. Fix: use the "
                            f"default {D.HOLDOUT_SHARE}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ArgumentError(f"seed must be an int, got {seed!r}. Fix: use {D.SPLIT_SEED}")
    tasks = _task_ids(rows_or_records)
    if len(tasks) < 2:
        raise ArgumentError(f"split_by_task needs at least 2 tasks, got {len(tasks)}. Fix: "
                            "collect traces for more asks (a split by row would leak the test)")
    ranked = sorted(tasks, key=lambda t: hashlib.sha256(f"{seed}\x00{t}".encode()).hexdigest())
    n_hold = min(len(tasks) - 1, max(1, round(share * len(tasks))))
    held = set(ranked[:n_hold])
    from .stats import holdout_size  # lazy: stats pulls the bootstrap machinery

    need = holdout_size().n_tasks
    note = (f"{n_hold} held-out tasks; detecting a {D.PROVE_EFFECT} change at k={D.HOLDOUT_K} "
            f"needs about {need} (holdout_size)")
    if n_hold < need:
        note += ": this test can only see larger effects; say so in the report"
    return TaskSplit(holdout_tasks=[t for t in tasks if t in held],
                     train_tasks=[t for t in tasks if t not in held], n_tasks=len(tasks),
                     n_holdout=n_hold,
                     share=float(share), seed=seed, note=note)


def _task_ids(source: Any) -> list[str]:
    from .rows import Rows

    if isinstance(source, Rows):
        return list(source.task_ids)
    from .safepath import is_path

    if isinstance(source, Mapping) or not (is_path(source) or isinstance(source, Iterable)):
        raise ArgumentError(f"cannot split a {type(source).__name__}. Fix: pass Rows, a path, or "
                            "a list of dicts with task_id")
    from .rows import read_records

    recs = read_records(source, noun="record")
    out: dict[str, None] = {}
    for i, rec in enumerate(recs.items):
        tid = rec.get("task_id", rec.get("scenario_id"))  # the rows' alias too
        if isinstance(tid, bool) or not isinstance(tid, (str, int)):
            raise RowsError(f"`task_id` is {tid!r}", **recs.where(i),
                            field="task_id", fix="give every record a task_id")
        out[str(tid)] = None
    return list(out)


# --- 2. the asks the agent failed ----------------------------------------------------------

def failed_asks(traces: Any, *, threshold: float = D.PASS_THRESHOLD) -> list[dict]:
    """One ask per task where no trace passed (reward >= threshold), as ``{"task_id", "messages"}``.

    These are what the agent cannot yet do: the asks to seed new attempts with.
    """
    records = load_traces(traces, need_reward=True)
    passed = {str(r["task_id"]) for r in records if r["reward"] >= threshold}
    asks: dict[str, dict] = {}
    for r in records:
        tid = str(r["task_id"])
        if tid not in passed and tid not in asks:
            asks[tid] = {"task_id": tid, "messages": prompt_messages(r)}
    return list(asks.values())


class FailedAsks(Result):
    """The asks no trace passed: what the agent cannot yet do (seeds for new attempts)."""

    asks: list[dict] = Field(description='one {"task_id", "messages"} per failed ask')
    n_asks: int
    n_traces: int
    path: str | None = Field(None, description="where the asks were written as JSONL, if asked")
    shown: str | None = Field(None, description="which lists were cut, as 'n of N shown'")
    cut_lists = ("asks",)

    def render(self) -> str:
        where = f"; written to {self.path}" if self.path else ""
        return (f"{self.n_asks} asks no trace passed (of {self.n_traces} traces){where}"
                + (f" ({self.shown})" if self.shown else ""))


# --- 3. rejection sampling -----------------------------------------------------------------

def rejection_sample(asks: Any, attempt: Callable[[list[dict], int], str],
                     grade: Callable[[Mapping, str], float], *,
                     attempts: int = D.REJECTION_ATTEMPTS) -> list[dict]:
    """Make ``attempts`` replies per ask and grade each with a program.

    ``attempt(messages, i)`` returns the assistant's reply text for attempt ``i``;
    ``grade(ask, reply)`` returns a finite reward (a pass is >= 1.0). Returns graded traces
    ``{"task_id", "messages": ask + reply, "reward", "attempt"}``: the input of :func:`select_sft`
    and, as rows, of :func:`whileai_core.pass_at`.
    """
    if isinstance(attempts, bool) or not isinstance(attempts, int) or not 1 <= attempts <= 1000:
        raise ArgumentError(f"attempts must be an int in [1, 1000], got {attempts!r}. Fix: "
                            f"10-30 per ask; default {D.REJECTION_ATTEMPTS}")
    out = []
    for ask in load_traces(asks):
        prompt = prompt_messages(ask)
        for i in range(attempts):
            reply = attempt(prompt, i)
            if not isinstance(reply, str):
                raise ArgumentError(f"attempt() returned a {type(reply).__name__} for task "
                                    f"{ask['task_id']!r}. Fix: return the reply text")
            reward = grade(ask, reply)
            if isinstance(reward, bool):
                reward = float(reward)
            if not isinstance(reward, (int, float)) or not math.isfinite(reward):
                raise ArgumentError(f"grade() returned {reward!r} for task {ask['task_id']!r}. "
                                    "Fix: return a finite number (1.0 pass, 0.0 fail)")
            out.append({"task_id": str(ask["task_id"]),
                        "messages": prompt + [{"role": "assistant", "content": reply}],
                        "reward": float(reward), "attempt": i})
    return out


# --- 4. keep the best passing attempt per ask ----------------------------------------------

class SFTSelection(Result):
    """The best passing attempt per ask, and how often attempts passed."""

    records: list[dict] = Field(description="one trace per kept ask")
    n_asks: int
    n_attempts: int
    n_kept: int
    asks_without_pass: list[str]
    attempt_pass_at_1: float
    attempt_pass_at_1_ci: tuple[float, float] | None
    note: str
    shown: str | None = Field(None, description="which lists were cut, as 'n of N shown'")
    cut_lists = ("records", "asks_without_pass")

    def render(self) -> str:
        return (f"kept {self.n_kept} of {self.n_asks} asks from {self.n_attempts} attempts; "
                f"attempt pass@1 {fmt_rate(self.attempt_pass_at_1, self.attempt_pass_at_1_ci, self.n_asks)}"
                f"\n{self.n_asks - self.n_kept} asks had no passing attempt\n{self.note}"
                + (f"\n({self.shown})" if self.shown else ""))


def _reply_length(trace: Mapping) -> int:
    return sum(len(m["content"]) for m in trace["messages"] if m["role"] == "assistant")


def select_sft(attempts: Any, *, threshold: float = D.PASS_THRESHOLD) -> SFTSelection:
    """Keep, for each ask, the best passing attempt.

    Arguments (JSON-friendly): ``attempts``: a JSONL path or a list of graded traces
    (``task_id``, ``messages``, ``reward``); ``threshold``: a pass is reward >= threshold
    (default 1.0). Best = highest reward, then the shortest reply (so the file does not teach
    padding), then the earliest. Asks with no passing attempt are listed, not kept.
    """
    from .stats import pass_at

    records = load_traces(attempts, need_reward=True)
    best: dict[str, dict] = {}
    order: dict[str, None] = {}
    for r in records:
        tid = str(r["task_id"])
        order[tid] = None
        if r["reward"] < threshold:
            continue
        cur = best.get(tid)
        if cur is None or (r["reward"], -_reply_length(r)) > (cur["reward"], -_reply_length(cur)):
            best[tid] = r
    rates = pass_at([{"task_id": str(r["task_id"]), "reward": r["reward"]} for r in records],
                    threshold=threshold, k=1)
    missing = [t for t in order if t not in best]
    note = ("asks with no pass stay unsolved: more attempts will not help at p = 0 "
            "(1 - (1-p)^k = 0); give them a stronger model or a hint") if missing else \
        "every ask has a passing attempt"
    return SFTSelection(records=[best[t] for t in order if t in best], n_asks=len(order),
                        n_attempts=len(records), n_kept=len(best), asks_without_pass=missing,
                        attempt_pass_at_1=rates.pass_at_1, attempt_pass_at_1_ci=rates.ci,
                        note=note)


# --- 5. decontamination --------------------------------------------------------------------

_WORD = re.compile(r"\w+")


def ngrams(text: str, n: int = D.DECONTAM_NGRAM) -> set[tuple[str, ...]]:
    """Lowercased word n-grams; a text shorter than n words is one gram (itself)."""
    words = _WORD.findall(text.lower())
    if len(words) < n:
        return {tuple(words)} if words else set()
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def _normal(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


class Dropped(Result):
    task_id: str
    reason: Literal["held_out_task", "verbatim_prompt", "ngram_overlap", "embedded_prompt"]
    overlap: float = Field(description="share of the ask's n-grams found in held-out prompts")
    contained: float = Field(0.0, description="share of the matched held-out prompt's n-grams "
                                              "found in the ask (1.0: embedded whole)")
    matched_task: str | None


class Decontamination(Result):
    """What was kept and what was dropped, each drop with its reason and evidence."""

    records: list[dict] = Field(description="the training records that survived")
    dropped: list[Dropped]
    n_in: int
    n_kept: int
    ngram: int
    max_overlap: float
    reasons: dict[str, int]
    shown: str | None = Field(None, description="which lists were cut, as 'n of N shown'")
    cut_lists = ("records", "dropped")

    def render(self) -> str:
        why = ", ".join(f"{k} {v}" for k, v in self.reasons.items()) or "none"
        return (f"decontaminated: kept {self.n_kept} of {self.n_in} (dropped: {why}; "
                f"{self.ngram}-gram overlap or containment >= {self.max_overlap})"
                + (f"\n({self.shown})" if self.shown else ""))


def _windows(words: list[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + size]) for i in range(len(words) - size + 1)}


class _HeldIndex:
    """Held-out prompts as gram -> owners, at the n-gram size and (lazily) at shorter sizes."""

    def __init__(self, held: list[tuple[str, list[str]]], n: int):
        self.held, self.n = held, n
        self.total = {tid: 0 for tid, _ in held}
        self.by_size: dict[int, dict[tuple[str, ...], list[str]]] = {}
        self.short: dict[int, dict[tuple[str, ...], list[str]]] = {}  # whole short prompts
        for tid, words in held:
            if len(words) >= n:
                grams = _windows(words, n)
                self.total[tid] = len(grams)
                for g in grams:
                    self.by_size.setdefault(n, {}).setdefault(g, []).append(tid)
            elif len(words) >= D.DECONTAM_SHORT_MIN_WORDS:
                self.total[tid] = 1
                self.short.setdefault(len(words), {}).setdefault(tuple(words), []).append(tid)

    def windows(self, size: int) -> dict[tuple[str, ...], list[str]]:
        if size not in self.by_size:  # every size-word window of every held-out prompt
            index: dict[tuple[str, ...], list[str]] = {}
            for tid, words in self.held:
                for g in _windows(words, size):
                    index.setdefault(g, []).append(tid)
            self.by_size[size] = index
        return self.by_size[size]

    def match(self, words: list[str]) -> tuple[float, str | None, float, str | None]:
        """(overlap, its best held-out match, containment, the held-out prompt most contained)."""
        n = self.n
        if len(words) >= n:
            grams = _windows(words, n)
        elif len(words) >= D.DECONTAM_SHORT_MIN_WORDS:
            grams = {tuple(words)}
            n = len(words)
        else:
            return 0.0, None, 0.0, None
        index = self.windows(n)
        hits: Counter = Counter()
        found = 0
        for g in grams:
            owners = index.get(g)
            if owners:
                found += 1
                hits.update(dict.fromkeys(owners, 1))
        # per held-out prompt: its grams found in the ask (same n-gram space when len >= n)
        share = {tid: hits[tid] / self.total[tid] for tid in hits} if len(words) >= self.n else {}
        for size, whole in self.short.items():
            if size <= len(words):
                for g in _windows(words, size) & whole.keys():
                    for tid in whole[g]:
                        share[tid] = 1.0
        order = {tid: i for i, (tid, _) in enumerate(self.held)}
        best = max(hits, key=lambda t: (hits[t], -order[t])) if hits else None
        inside = max(share, key=lambda t: (share[t], -order[t])) if share else None
        return found / len(grams), best, (share[inside] if inside else 0.0), inside


def decontaminate(train: Any, holdout: Any, *, ngram: int = D.DECONTAM_NGRAM,
                  max_overlap: float = D.DECONTAM_MAX_OVERLAP) -> Decontamination:
    """Drop training records that could carry the held-out test into training.

    Arguments (JSON-friendly): ``train``: traces (path or list of dicts with ``task_id`` and
    ``messages``); ``holdout``: the held-out records (path or list of dicts with ``task_id`` and
    ``messages`` or a ``prompt`` string); ``ngram``: words per n-gram (default 8);
    ``max_overlap``: the share that drops a record (default 0.8).

    A record is dropped when (in this order) its task id is held out (``held_out_task``); its
    prompt equals a held-out prompt after lowercasing and collapsing punctuation/space
    (``verbatim_prompt``); at least ``max_overlap`` of its n-grams occur in held-out prompts
    (``ngram_overlap``); or at least ``max_overlap`` of one held-out prompt's n-grams occur in it,
    e.g. a held-out prompt embedded whole in a longer one (``embedded_prompt``). A prompt shorter
    than ``ngram`` words (from ``DECONTAM_SHORT_MIN_WORDS``) counts as one gram of its own length,
    matched against every window of that length on the other side. Prompts are the user turns.
    ``matched_task`` is the held-out task sharing the most n-grams with the record (the most
    contained one for ``embedded_prompt``).
    """
    if isinstance(ngram, bool) or not isinstance(ngram, int) or not 1 <= ngram <= 64:
        raise ArgumentError(f"ngram must be an int in [1, 64], got {ngram!r}. Fix: use "
                            f"{D.DECONTAM_NGRAM}")
    if isinstance(max_overlap, bool) or not isinstance(max_overlap, (int, float)) \
            or not 0 < max_overlap <= 1:
        raise ArgumentError(f"max_overlap must be in (0, 1], got {max_overlap!r}. Fix: use "
                            f"{D.DECONTAM_MAX_OVERLAP}")
    records = load_traces(train)
    held = _holdout_records(holdout)
    held_ids = {str(h["task_id"]) for h in held}
    verbatim = {_normal(prompt_text(h)): str(h["task_id"]) for h in held}
    index = _HeldIndex([(str(h["task_id"]), _WORD.findall(prompt_text(h).lower()))
                        for h in held], ngram)
    kept, dropped = [], []
    for r in records:
        tid, text = str(r["task_id"]), prompt_text(r)
        overlap, best, contained, inside = index.match(_WORD.findall(text.lower()))
        common = dict(task_id=tid, overlap=overlap, contained=contained)
        if tid in held_ids:
            dropped.append(Dropped(reason="held_out_task", matched_task=tid, **common))
        elif _normal(text) in verbatim:
            dropped.append(Dropped(reason="verbatim_prompt", matched_task=verbatim[_normal(text)],
                                   **common))
        elif overlap >= max_overlap:
            dropped.append(Dropped(reason="ngram_overlap", matched_task=best, **common))
        elif contained >= max_overlap:
            dropped.append(Dropped(reason="embedded_prompt", matched_task=inside, **common))
        else:
            kept.append(r)
    return Decontamination(records=kept, dropped=dropped, n_in=len(records), n_kept=len(kept),
                           ngram=ngram, max_overlap=float(max_overlap),
                           reasons=dict(Counter(d.reason for d in dropped)))


def _holdout_records(holdout: Any) -> list[dict]:
    from .rows import read_records

    recs = read_records(holdout, noun="held-out record")
    for i, h in enumerate(recs.items):
        where = recs.where(i)
        if isinstance(h.get("task_id"), bool) or not isinstance(h.get("task_id"), (str, int)):
            raise RowsError("a held-out record needs a task_id", **where,
                            field="task_id", fix="give each held-out ask its task_id")
        if not isinstance(h.get("prompt"), str):
            _check_messages(h.get("messages"), where)
    return recs.items


# --- 6. export -----------------------------------------------------------------------------

TRAINS_ON = ("TRL SFTTrainer on a conversational dataset computes the loss on every token of "
             "the rendered conversation (system and user turns included) unless "
             "SFTConfig(assistant_only_loss=True), which needs a chat template with "
             "{% generation %} markers; this file carries no loss mask")


class SFTExport(Result):
    path: str
    n_records: int
    n_assistant_turns: int
    trains_on: str = TRAINS_ON

    def render(self) -> str:
        return (f"wrote {self.n_records} conversations ({self.n_assistant_turns} assistant "
                f"turns) to {self.path}\n{self.trains_on}")


def export_sft(records: Any, path: str | os.PathLike, *, overwrite: bool = False) -> SFTExport:
    """Write TRL's conversational JSONL: one ``{"messages": [{"role", "content"}, ...]}`` a line.

    Arguments (JSON-friendly): ``records``: traces (path or list of dicts with ``messages``;
    other fields are dropped); ``path``: where to write; ``overwrite``: replace an existing file
    (default False: refuse). Each conversation must end with an assistant turn, the thing SFT
    teaches. Written atomically.
    """
    from .io import write_atomic

    recs = _read_traces(records)
    lines, turns = [], 0
    for i, t in enumerate(recs.items):
        msgs = [{"role": m["role"], "content": m["content"]} for m in t["messages"]]
        if msgs[-1]["role"] != "assistant":
            raise RowsError("the conversation does not end with an assistant turn",
                            **recs.where(i), field="messages",
                            fix="keep only attempts with a reply (select_sft output)")
        turns += sum(m["role"] == "assistant" for m in msgs)
        lines.append(json.dumps({"messages": msgs}, ensure_ascii=False))
    target = write_atomic(path, "\n".join(lines) + "\n", overwrite=overwrite)
    return SFTExport(path=str(target), n_records=len(lines), n_assistant_turns=turns)
