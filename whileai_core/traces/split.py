"""Step 1: the frozen held-out test, split by task (never by row)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import Field

from .. import defaults as D
from ..errors import ArgumentError, RowsError
from ..result import Result


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
    written: list[str] = Field(default_factory=list,
                               description="what was written where, one line per file")
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
        text += "".join(f"\n{line}" for line in self.written)
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
    if seed is None:  # a fresh split, reported with its seed so it can be drawn again
        import secrets

        seed = secrets.randbelow(2**63)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ArgumentError(f"seed must be a non-negative int, got {seed!r}. Fix: use "
                            f"{D.SPLIT_SEED}")
    tasks = _task_ids(rows_or_records)
    if len(tasks) < 2:
        raise ArgumentError(f"split_by_task needs at least 2 tasks, got {len(tasks)}. Fix: "
                            "collect traces for more asks (a split by row would leak the test)")
    ranked = sorted(tasks, key=lambda t: hashlib.sha256(f"{seed}\x00{t}".encode()).hexdigest())
    n_hold = min(len(tasks) - 1, max(1, round(share * len(tasks))))
    held = set(ranked[:n_hold])
    from ..stats import holdout_size  # lazy: stats pulls the bootstrap machinery

    need = holdout_size().n_tasks
    note = (f"{n_hold} held-out tasks; detecting a {D.PROVE_EFFECT} change at k={D.HOLDOUT_K} "
            f"needs about {need} (holdout_size)")
    if n_hold < need:
        note += ": this test can only see larger effects; say so in the report"
    return TaskSplit(holdout_tasks=[t for t in tasks if t in held],
                     train_tasks=[t for t in tasks if t not in held], n_tasks=len(tasks),
                     n_holdout=n_hold,
                     share=float(share), seed=seed, note=note)


def write_split(split: TaskSplit, records: Any = None, *, out: Any = None,
                holdout_out: Any = None, train_out: Any = None,
                overwrite: bool = False) -> TaskSplit:
    """Write the split: the held-out task ids as a JSON list (``out``, the frozen test) and
    the records of each side as JSONL (``holdout_out``, ``train_out``; ``records`` is what was
    split: a path or a list of dicts). Each path is a ``UserPath`` (under the server's root) or
    the user's own path.

    Nothing is written unless every file can be: two of them naming the same file, one that
    exists and is not a regular file (never replaced), or one that exists without
    ``overwrite`` refuses the call first. Returns the split with ``written`` filled in.
    """
    import json
    import os

    from ..errors import ConfigError
    from ..io import write_atomic, write_jsonl
    from ..safepath import UserPath, user_path
    from ..voice import arg

    targets = [(name, path) for name, path in (("out", out), ("holdout_out", holdout_out),
                                               ("train_out", train_out)) if path is not None]
    if not targets:
        return split
    where = {}
    for name, path in targets:
        place = os.path.realpath(path.absolute if isinstance(path, UserPath) else
                                 os.path.expanduser(os.fspath(path)))
        if place in where:
            raise ConfigError(f"`{arg(where[place])}` and `{arg(name)}` name the same file "
                              f"({path}); nothing was written. Fix: give each its own path")
        where[place] = name
    for name, path in targets:  # refuse before writing anything: nothing half-written
        door = path if isinstance(path, UserPath) else user_path(path, argument=name)
        kind = door.kind()
        if kind not in (None, "file"):
            raise ConfigError(f"`{arg(name)}` {path} exists and is not a regular file; it is "
                              f"never replaced, with or without {arg('overwrite')}; nothing "
                              "was written. Fix: choose another path")
        if kind == "file" and not overwrite:
            raise ConfigError(f"`{arg(name)}` {path} already exists; nothing was written. "
                              f"Fix: {arg('overwrite', True)}, or choose another path")
    from ..rows import read_records

    items = read_records(records, noun="record").items if any(
        name != "out" for name, _ in targets) else []
    written = []
    for name, path in targets:
        if name == "out":
            write_atomic(path, json.dumps(split.holdout_tasks) + "\n", overwrite=overwrite)
            written.append(f"wrote {len(split.holdout_tasks)} held-out task ids to {path}")
        else:
            side = split.holdout(items) if name == "holdout_out" else split.train(items)
            write_jsonl(path, side, overwrite=overwrite)
            what = "held-out" if name == "holdout_out" else "training"
            written.append(f"wrote {len(side)} {what} records to {path}")
    return split.model_copy(update={"written": written})


def _task_ids(source: Any) -> list[str]:
    from ..rows import Rows

    if isinstance(source, Rows):
        return list(source.task_ids)
    from ..safepath import is_path

    if isinstance(source, Mapping) or not (is_path(source) or isinstance(source, Iterable)):
        raise ArgumentError(f"cannot split a {type(source).__name__}. Fix: pass Rows, a path, or "
                            "a list of dicts with task_id")
    from ..rows import read_records

    recs = read_records(source, noun="record")
    out: dict[str, None] = {}
    for i, rec in enumerate(recs.items):
        tid = rec.get("task_id", rec.get("scenario_id"))  # the rows' alias too
        if isinstance(tid, bool) or not isinstance(tid, (str, int)):
            raise RowsError(f"`task_id` is {tid!r}", **recs.where(i),
                            field="task_id", fix="give every record a task_id")
        out[str(tid)] = None
    return list(out)
