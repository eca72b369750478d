"""Step 1: the frozen held-out test, split by task (never by row)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from pydantic import Field

from .. import voice
from .. import defaults as D
from ..errors import ArgumentError, ConfigError, RowsError, as_json
from ..io import write_atomic, write_jsonl
from ..operations import WRITES, operation
from ..operations.args import OUT, Arg, OptionalRowField, Overwrite, Records, Seed
from ..records import read_records
from ..result import Result
from ..rows import Rows
from ..safepath import StreamPath, UserPath, is_path, user_path
from ..stats import holdout_size
from ..voice import arg


class TaskSplit(Result):
    """Tasks held out (the frozen test) and tasks left to train on; no task is on both sides."""

    holdout_tasks: list[str]
    train_tasks: list[str]
    n_tasks: int
    n_holdout: int
    share: float
    seed: int
    note: str
    stratify: str | None = Field(None, description="the field the split was stratified by")
    strata: dict[str, list[int]] | None = Field(None, description=(
        "with `stratify`: each value's [held-out tasks, training tasks]"))
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
        if self.strata:
            text += f"\nby {self.stratify} (held out / train): " + ", ".join(
                f"{k} {h}/{t}" for k, (h, t) in self.strata.items())
        text += "".join(f"\n{line}" for line in self.written)
        return text + (f"\n({self.shown})" if self.shown else "")


def _task_of(record: Mapping) -> str:
    return str(record.get("task_id", record.get("scenario_id")))  # the rows' alias too


@operation(
    cli="split", toolset="sft", effect=WRITES, title="Hold out a frozen test, split by task",
    description=(
        "Hold out `share` of the tasks (never part of a task), ranked by a hash of the seed and "
        "the task id so the split does not depend on row order. Optionally writes the held-out "
        "ids (`out`, the frozen test) and each side's records (`holdout_out`, `train_out`); "
        "nothing is written unless every file can be (two outputs naming the same file, or one "
        "that exists without overwrite, refuse the call). The note compares the test's size "
        "with holdout_size."),
    doing="splitting by task", serves=("load_traces",))
def split_by_task(
        rows: Annotated[Records, Field(description=(
            "Records with a `task_id` (graded rows, traces...). Split by task, never by row."),
            examples=["traces.jsonl"])], *,
        share: Annotated[float, Field(gt=0.0, lt=1.0, allow_inf_nan=False, description=(
            "Share of the tasks to hold out, in (0, 1)."))] = D.HOLDOUT_SHARE,
        seed: Seed = D.SPLIT_SEED,
        stratify: Annotated[OptionalRowField, Field(description=(
            "Optional: a record field (e.g. 'category') to split within each of its values, so "
            "a rare category is on both sides."))] = None,
        out: Annotated[str | None, Field(max_length=4096, description=(
            "Optional: write the held-out task ids here as a JSON list (the frozen test)."),
            examples=["holdout_tasks.json"]), Arg(OUT, metavar="FILE", writes="json")] = None,
        holdout_out: Annotated[str | None, Field(max_length=4096, description=(
            "Optional: write the input's records whose task is held out here (JSONL)."),
            examples=["holdout.jsonl"]), Arg(OUT, metavar="FILE", writes="jsonl")] = None,
        train_out: Annotated[str | None, Field(max_length=4096, description=(
            "Optional: write the input's records whose task is not held out here (JSONL): the "
            "only side to build training data from."), examples=["train.jsonl"]),
            Arg(OUT, metavar="FILE", writes="jsonl")] = None,
        overwrite: Overwrite = False) -> TaskSplit:
    """Hold out ``share`` of the tasks, never part of a task.

    Tasks are ranked by sha256(seed, task_id) and the first round(share x n) (at least 1, at most
    n - 1) are held out, so a task keeps its side as long as its rank does. ``stratify`` does the
    same within each value of the field, so a rare category is on both sides (a plain hash split
    can put all of one in training, unseen by the test); a value with one task goes to training.
    """
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
        raise ArgumentError(f"share must be a number in (0, 1), got {share!r}", fix="use the "
                            f"default {D.HOLDOUT_SHARE}")
    if seed is None:  # a fresh split, reported with its seed so it can be drawn again
        import secrets

        seed = secrets.randbelow(2**63)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ArgumentError(f"seed must be a non-negative int, got {seed!r}", fix="use "
                            f"{D.SPLIT_SEED}")
    if stratify is not None and (not isinstance(stratify, str) or not stratify):
        raise ArgumentError(f"stratify must be a record field name, got {stratify!r}", fix="e.g. "
                            "stratify='category'")
    tasks, strata_of = _task_ids(rows, stratify)
    if len(tasks) < 2:
        raise ArgumentError(f"{voice.name('split_by_task')} needs at least 2 tasks, got "
                            f"{len(tasks)}",
                            fix="collect traces for more asks (a split by row would leak the test)")
    held, strata = _held_out(tasks, strata_of, share, seed)
    n_hold = len(held)
    need = holdout_size().n_tasks
    note = (f"{n_hold} held-out tasks; detecting a {D.PROVE_EFFECT} change at k={D.HOLDOUT_K} "
            f"needs about {need} ({voice.name('holdout_size')})")
    if n_hold < need:
        note += ": this test can only see larger effects; say so in the report"
    alone = [k for k, (h, _) in strata.items() if h == 0]
    if stratify is not None and alone:
        note += (f"; {len(alone)} {stratify} value(s) have one task and are on the training "
                 f"side only (e.g. {alone[0]!r}): the test cannot see them")
    split = TaskSplit(holdout_tasks=[t for t in tasks if t in held],
                      train_tasks=[t for t in tasks if t not in held], n_tasks=len(tasks),
                      n_holdout=n_hold, share=float(share), seed=seed, note=note,
                      stratify=stratify, strata=strata if stratify is not None else None)
    return write_split(split, rows, out=out, holdout_out=holdout_out, train_out=train_out,
                       overwrite=overwrite)


def _held_out(tasks: list[str], strata_of: dict[str, str], share: float,
              seed: int) -> tuple[set[str], dict[str, list[int]]]:
    """The held-out tasks, and per stratum its [held-out, training] counts."""
    groups: dict[str, list[str]] = {}
    for t in tasks:
        groups.setdefault(strata_of.get(t, ""), []).append(t)
    held: set[str] = set()
    strata: dict[str, list[int]] = {}
    for value, members in sorted(groups.items()):
        ranked = sorted(members,
                        key=lambda t: hashlib.sha256(f"{seed}\x00{t}".encode()).hexdigest())
        n = 0 if len(members) < 2 else min(len(members) - 1, max(1, round(share * len(members))))
        held.update(ranked[:n])
        strata[value] = [n, len(members) - n]
    return held, strata


def write_split(split: TaskSplit, records: Any = None, *, out: Any = None,
                holdout_out: Any = None, train_out: Any = None,
                overwrite: bool = False) -> TaskSplit:
    """Write the split: the held-out task ids as a JSON list (``out``, the frozen test) and
    the records of each side as JSONL (``holdout_out``, ``train_out``), ``written`` filled in.

    Nothing is written unless every file can be: two of them (or one and ``records``) naming
    the same file, one that is not a regular file, or one that exists without ``overwrite``
    refuses the call first.
    """
    targets = [(name, path) for name, path in (("out", out), ("holdout_out", holdout_out),
                                               ("train_out", train_out)) if path is not None]
    if not targets:
        return split

    def place_of(path: Any) -> str:
        return os.path.realpath(path.absolute if isinstance(path, UserPath) else
                                os.path.expanduser(os.fspath(path)))

    # the file being split is no output either: writing a side over it loses the other side
    where = {place_of(records): "rows"} if is_path(records) else {}
    for name, path in targets:
        place = place_of(path)
        if place in where:
            first = arg(where[place], op="split_by_task")  # ROWS at the shell
            raise ConfigError(f"`{first}` and `{arg(name)}` name the same file "
                              f"({path}); nothing was written", fix="give each its own path")
        where[place] = name
    for name, path in targets:  # refuse before writing anything: nothing half-written
        door = path if isinstance(path, UserPath) else user_path(path, argument=name)
        if isinstance(door, StreamPath):  # "-" or /dev/stdout: results go to files only
            raise door._not_written(name, ConfigError)
        door.check_writable(ConfigError)  # its kind of output (under the server's root)
        kind = door.kind()
        if kind not in (None, "file"):
            raise ConfigError(f"`{arg(name)}` {path} exists and is not a regular file; it is "
                              f"never replaced, with or without {arg('overwrite')}; nothing "
                              "was written", fix="choose another path")
        if kind == "file" and not overwrite:
            raise ConfigError(f"`{arg(name)}` {path} already exists; nothing was written",
                              fix=f"{arg('overwrite', True)}, or choose another path")
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


def _task_ids(source: Any, stratify: str | None = None) -> tuple[list[str], dict[str, str]]:
    """The task ids in first-seen order, and (with ``stratify``) each task's value of it."""
    if isinstance(source, Rows):
        if stratify is None:
            return list(source.task_ids), {}
        source = source.records
    if isinstance(source, Mapping) or not (is_path(source) or isinstance(source, Iterable)):
        raise ArgumentError(f"cannot split a {type(source).__name__}", fix="pass Rows, a path, or "
                            "a list of dicts with task_id")
    recs = read_records(source, noun="record")
    out: dict[str, None] = {}
    strata: dict[str, str] = {}
    for i, rec in enumerate(recs.items):
        tid = rec.get("task_id", rec.get("scenario_id"))  # the rows' alias too
        if isinstance(tid, bool) or not isinstance(tid, (str, int)):
            raise RowsError(f"`task_id` is {as_json(tid)}", **recs.where(i),
                            field="task_id", fix="give every record a task_id")
        out[str(tid)] = None
        if stratify is not None:
            value = rec.get(stratify)
            if value is None or isinstance(value, bool) or not isinstance(value, (str, int)):
                raise RowsError(f"`{stratify}` is {as_json(value)}", **recs.where(i), field=stratify,
                                fix=f"give every record its {stratify} (the split is stratified "
                                    "by it), or omit stratify")
            if strata.setdefault(str(tid), str(value)) != str(value):
                raise RowsError(f"task {str(tid)!r} is `{stratify}` {value!r} here but "
                                f"{strata[str(tid)]!r} before", **recs.where(i), field=stratify,
                                fix="give every record of a task the same value")
    return list(out), strata
