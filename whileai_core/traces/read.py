"""Reading traces: every trace checked (task_id, messages, an optional reward); the ask's text;
what a step keeps, written to a file instead of the answer when asked."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import RowsError, as_json
from ..field_names import missing, rename_fix
from ..io import write_jsonl
from ..result import Result
from ..records import read_records

ROLES = ("system", "user", "assistant", "tool")
TRACE_FORM = ('Each trace: {"task_id": str, "messages": [{"role": "system"|"user"|"assistant"|'
              '"tool", "content": str}, ...]}')


def load_traces(source: Any, *, need_reward: bool = False) -> list[dict]:
    """Traces from a JSONL/JSON path or a list of dicts, each checked; returns the list of dicts.

    Every trace needs ``task_id`` (str or int) and ``messages`` (a non-empty list of
    ``{"role": system|user|assistant|tool, "content": str}`` with at least one user turn).
    ``need_reward=True`` also requires a finite number ``reward``. A bad trace raises
    :class:`RowsError` naming the file, line (or item), field and fix.
    """
    return [dict(r) for r in _read_traces(source, need_reward=need_reward).items]


def _read_traces(source: Any, *, need_reward: bool = False):
    recs = read_records(source, noun="trace")  # the one JSONL reader, line-numbered errors
    if not recs.items:
        raise RowsError("no traces", source=recs.name, fix="give at least one trace")
    for i, rec in enumerate(recs.items):
        where = recs.where(i)
        for field, fix in (("task_id", 'add "task_id": "<the ask this conversation answers>"'),
                           ("messages", _MESSAGES_FIX)):
            if field not in rec:
                problem, found = missing(field, rec, "trace")
                raise RowsError(problem, **where, field=field,
                                fix=fix if found is None else rename_fix({found: field},
                                                                         recs.name))
        tid = rec.get("task_id")
        if isinstance(tid, bool) or not isinstance(tid, (str, int)):
            raise RowsError(f"`task_id` is {as_json(tid)}", **where, field="task_id",
                            fix='give "task_id": "<the ask this conversation answers>"')
        _check_messages(rec.get("messages"), where)
        if need_reward:
            r = rec.get("reward")
            if isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r):
                raise RowsError(f"`reward` is {as_json(r)}", **where, field="reward",
                                fix="grade every trace with a program: a finite number, pass >= 1.0")
    return recs


_MESSAGES_FIX = 'give the conversation as [{"role": "user", "content": "..."}, ...]'


def _check_messages(messages: Any, where: dict) -> None:
    if not isinstance(messages, list) or not messages:
        shown = "an empty list" if messages == [] else f"{messages!r:.60}"
        raise RowsError(f"`messages` is {shown}", **where, field="messages", fix=_MESSAGES_FIX)
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


def _kept(result: Result, out: Any, overwrite: bool, field: str = "records") -> Result:
    """``result`` with its list ``field`` written to ``out`` as JSONL (when given) and left out
    of it, ``path`` saying where (the path as the caller wrote it: relative to the server's
    root, or as typed), so a large set never passes through the prompt."""
    if out is None:
        return result
    write_jsonl(out, getattr(result, field), overwrite=overwrite)
    return result.model_copy(update={field: [], "path": str(out)})
