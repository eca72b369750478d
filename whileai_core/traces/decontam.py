"""Step 5: drop training records that could carry the held-out test into training."""

from __future__ import annotations

import re
from collections import Counter
from typing import Annotated, Any, Literal

from pydantic import Field

from .. import defaults as D
from ..errors import ArgumentError, RowsError
from ..operations import WRITES, operation
from ..operations.args import OptionalOut, Overwrite, Records
from ..result import Result
from ..records import read_records
from .read import TRACE_FORM, _check_messages, _kept, load_traces, prompt_text

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
    path: str | None = Field(None, description="where the kept records were written as JSONL "
                                               "(then `records` is empty), if asked")
    shown: str | None = Field(None, description="which lists were cut, as 'n of N shown'")
    cut_lists = ("records", "dropped")

    def render(self) -> str:
        why = ", ".join(f"{k} {v}" for k, v in self.reasons.items()) or "none"
        return (f"decontaminated: kept {self.n_kept} of {self.n_in} (dropped: {why}; "
                f"{self.ngram}-gram overlap or containment >= {self.max_overlap})"
                + (f"\nwrote the {self.n_kept} kept traces to {self.path}" if self.path else "")
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


@operation(
    toolset="sft", effect=WRITES, title="Drop training traces that leak the held-out test",
    description=(
        "Drop training traces whose task is held out, whose prompt equals a held-out prompt, or "
        "whose n-gram overlap with held-out prompts reaches `max_overlap`; every drop with its "
        "reason. Give `out` to write the kept traces to a file."),
    doing="decontaminating training traces", serves=("load_traces",))
def decontaminate(
        train: Annotated[Records, Field(description=f"Training traces. {TRACE_FORM}")],
        holdout: Annotated[Records, Field(description=(
            "The held-out asks: {\"task_id\": ..., \"prompt\": str} or {\"task_id\": ..., "
            "\"messages\": [...]}."))], *,
        ngram: Annotated[int, Field(ge=1, le=64, description=(
            "Words per n-gram, in [1, 64]."))] = D.DECONTAM_NGRAM,
        max_overlap: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False, description=(
            "Drop a training prompt when at least this share of its n-grams occur in held-out "
            "prompts, in (0, 1]."))] = D.DECONTAM_MAX_OVERLAP,
        out: OptionalOut = None, overwrite: Overwrite = False) -> Decontamination:
    """Drop training records that could carry the held-out test into training.

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
        raise ArgumentError(f"ngram must be an int in [1, 64], got {ngram!r}", fix="use "
                            f"{D.DECONTAM_NGRAM}")
    if isinstance(max_overlap, bool) or not isinstance(max_overlap, (int, float)) \
            or not 0 < max_overlap <= 1:
        raise ArgumentError(f"max_overlap must be in (0, 1], got {max_overlap!r}", fix="use "
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
    return _kept(Decontamination(records=kept, dropped=dropped, n_in=len(records),
                                 n_kept=len(kept), ngram=ngram, max_overlap=float(max_overlap),
                                 reasons=dict(Counter(d.reason for d in dropped))),
                 out, overwrite)


def _holdout_records(holdout: Any) -> list[dict]:
    recs = read_records(holdout, noun="held-out record")
    for i, h in enumerate(recs.items):
        where = recs.where(i)
        if isinstance(h.get("task_id"), bool) or not isinstance(h.get("task_id"), (str, int)):
            raise RowsError("a held-out record needs a task_id", **where,
                            field="task_id", fix="give each held-out ask its task_id")
        if not isinstance(h.get("prompt"), str):
            _check_messages(h.get("messages"), where)
    return recs.items
