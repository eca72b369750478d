"""The eval itself, before any training: a held-out set named by its content, and whether the
eval can fail at all.

- :func:`eval_fingerprint` names a task set by the SHA-256 of its content (every field of every
  task, in a canonical form: keys sorted, tasks sorted by id), so two scores compare only when
  they were taken under the same name. Order and formatting do not change the name; any edit to
  any task does.
- :func:`freeze_holdout` writes the set once as ``<name>-<hash12>.jsonl`` and never rewrites it.
- :func:`failure_capable` reads one baseline run: pass@1 with its interval, the tasks that ever
  fail (only they can show a gain: the ceiling on any measurable change), the truncation trap,
  and whether the run scored exactly the frozen set.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from .defaults import (BOOTSTRAP_SEED, CONFIDENCE_LEVEL, EVALSET_EXAMPLES, EVALSET_HASH_CHARS,
                       EVALSET_NAME, GROUP_MIN_ROLLOUTS, PROVE_EFFECT)
from . import voice
from .errors import ArgumentError, ConfigError, RowsError, as_json
from .operations import READS, VERDICT, WRITES_NEW, operation
from .operations.args import (OUT, Arg, EffectSize, Level, OptionalRecords, Records, Rows, Seed,
                              Threshold)
from .operations.describe import named, values_of
from .result import Result, fmt_rate
from .stats.fields import LEVEL_DOC, METHOD_DOC, ci95_alias
from . import safejson
from .rows import TASK_ALIASES, TASK_FIELD, read_records
from .safepath import UserPath, user_path
from .bootstrap import check_level, check_seed
from .rewards import reward_notes
from .rows import load_rows
from .stats import pass_rate

Interval = tuple[float, float]
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_HASHED = re.compile(r"-([0-9a-f]{%d})$" % EVALSET_HASH_CHARS)

Tasks = Annotated[Records, Field(
    description="The task set, one object per task: {\"task_id\": str, ...whatever defines "
                "it: \"prompt\", \"answer\", \"category\"}. Every field is part of the content "
                "hash.", examples=["evals/heldout_tasks.jsonl"])]
SetName = Annotated[str, Field(
    min_length=1, max_length=64, description="Prefix of the set's name, "
                                             "<name>-<12 hex of sha256>: 1-64 letters, digits, "
                                             "'.', '_' or '-'.")]


# --- the canonical task set ----------------------------------------------------------------

def _task_lines(tasks: Any) -> tuple[list[str], list[str], str | None]:
    """(canonical JSON line per task sorted by id, sorted field names, source name)."""
    if isinstance(tasks, (list, tuple)) and tasks and all(isinstance(t, (str, int)) and
                                                          not isinstance(t, bool) for t in tasks):
        tasks = [{TASK_FIELD: t} for t in tasks]  # ids only
    recs = read_records(tasks, noun="task")
    if not len(recs):
        raise RowsError("no tasks", source=recs.name, fix="give at least one task with a task_id")
    seen: dict[str, int] = {}
    keyed: list[tuple[str, str]] = []
    fields: set[str] = set()
    for i, rec in enumerate(recs.items):
        tid = rec.get(TASK_FIELD)
        if tid is None:
            tid = next((rec[a] for a in TASK_ALIASES if rec.get(a) is not None), None)
        if tid is None or isinstance(tid, bool) or not isinstance(tid, (str, int)):
            raise RowsError("task has no usable `task_id`" if tid is None else
                            f"`task_id` is {as_json(tid)}", **recs.where(i),
                            field=TASK_FIELD, fix='give each task "task_id": "<a string id>"')
        tid = str(tid)
        if tid in seen:
            first = recs.where(seen[tid])
            at = f"line {first['line']}" if "line" in first else first["source"]
            raise RowsError(f"task_id {tid!r} appears again (first at {at}): a task set has one "
                            "record per task", **recs.where(i), field=TASK_FIELD,
                            fix="give one record per task (graded rows repeat a task; fingerprint "
                                "the tasks, not the rows)")
        seen[tid] = i
        fields.update(rec)
        body = {**rec, TASK_FIELD: tid}
        try:
            line = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                              allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise RowsError(f"task {tid!r} cannot be written as plain JSON ({exc})",
                            **recs.where(i),
                            fix="use JSON values only (no NaN or Infinity)") from None
        keyed.append((tid, line))
    keyed.sort()
    return [line for _, line in keyed], sorted(fields), recs.name


class EvalFingerprint(Result):
    """A task set's name: ``<name>-<first 12 hex of sha256>``, from its content alone."""

    name: str
    sha256: str
    n_tasks: int
    fields: list[str]                 # what the hash covers, beside task_id
    source: str | None = None
    file_matches: bool | None = None  # the file's own name carries this hash (None: no hash in it)
    note: str | None = None

    negative_means: ClassVar[str | None] = (
        "MISMATCH: the file is named for other content (edited after it was frozen)")

    @property
    def negative(self) -> bool:
        return self.file_matches is False

    def render(self) -> str:
        covers = ", ".join(self.fields)
        lines = [f"{self.name}  ({self.n_tasks} tasks; the hash covers {covers})",
                 f"sha256 {self.sha256}"]
        if self.file_matches is False:
            lines.append(f"MISMATCH: {self.source} is named for other content: it was edited "
                         "after it was frozen")
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ArgumentError(f"`name` must be 1-64 letters, digits, '.', '_' or '-', starting with "
                            f"a letter or digit, got {name!r}", fix="e.g. name='holdout'")
    return name


def _fingerprint(tasks: Any, name: str) -> tuple[EvalFingerprint, list[str]]:
    lines, fields, source = _task_lines(tasks)
    digest = hashlib.sha256(("\n".join(lines) + "\n").encode("utf-8")).hexdigest()
    content = [f for f in fields if f != TASK_FIELD]
    note = None
    if not content:
        note = ("the hash covers task ids only: an edited prompt or answer keeps the name. Fix: "
                "fingerprint the task records (prompt, answer, category), not just their ids")
    matches = None
    if isinstance(tasks, (str, os.PathLike, UserPath)):
        stem = tasks.stem if isinstance(tasks, UserPath) else Path(tasks).stem
        found = _HASHED.search(stem)
        if found:
            matches = found.group(1) == digest[:EVALSET_HASH_CHARS]
    return EvalFingerprint(name=f"{name}-{digest[:EVALSET_HASH_CHARS]}", sha256=digest,
                           n_tasks=len(lines), fields=content or [TASK_FIELD], source=source,
                           file_matches=matches, note=note), lines


@operation(
    cli="fingerprint", toolset="evals", effect=READS, title="Name a task set by its content",
    description=(
        "The content name of a task set, <name>-<12 hex of sha256> over every field of every "
        "task (keys sorted, tasks sorted by id): reordering keeps it, any edit changes it. Two "
        "scores compare only under the same name. On a file freeze_holdout wrote, file_matches "
        "says whether it was edited since."),
    exit_code=VERDICT, doing="fingerprinting a task set")
def eval_fingerprint(tasks: Tasks, *, name: SetName = EVALSET_NAME) -> EvalFingerprint:
    """The content name of a task set (records, or task ids alone): SHA-256 over the records as
    canonical JSON lines sorted by task id. A file named ``...-<12 hex>`` (as
    :func:`freeze_holdout` writes) is checked against it (``file_matches``)."""
    return _fingerprint(tasks, _check_name(name))[0]


class FrozenHoldout(Result):
    """A held-out set written once under its content name."""

    name: str
    sha256: str
    path: str
    n_tasks: int
    fields: list[str]
    written: bool                    # False: the same file was already there
    note: str | None = None

    def render(self) -> str:
        what = "frozen" if self.written else "already frozen (same content, not rewritten)"
        lines = [f"{self.name}: {self.n_tasks} tasks {what} in {self.path}",
                 "compare two scores only when both name this set"]
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


@operation(
    cli="freeze", toolset="evals", effect=WRITES_NEW,
    title="Freeze the held-out set under its content name",
    description=(
        "Write the held-out tasks once as <out_dir>/<name>-<hash>.jsonl (canonical JSON lines). "
        "The same content again finds its file and writes nothing; a file of that name with "
        "other content is an error, never overwritten."),
    doing="freezing a held-out set")
def freeze_holdout(tasks: Tasks,
                   out_dir: Annotated[str, Field(min_length=1, max_length=4096, description=(
                       "Folder to write <name>-<hash>.jsonl in; created if missing.")),
                       Arg(OUT, metavar="DIR", writes="folder")] = ".", *,
                   name: SetName = EVALSET_NAME) -> FrozenHoldout:
    """Write the held-out tasks once, as ``out_dir/<name>-<hash12>.jsonl`` (canonical lines);
    a file of that name with other bytes is an error, never overwritten."""
    fp, lines = _fingerprint(tasks, _check_name(name))
    folder = out_dir if isinstance(out_dir, UserPath) else user_path(
        out_dir, argument="out_dir", for_write=True)
    kind = folder.kind()
    if kind not in (None, "dir"):
        what = "is a file" if kind == "file" else f"is a {kind}, not a folder"
        raise ArgumentError(f"{voice.arg('out_dir')} {str(out_dir)!r} {what}", fix="give a folder")
    path = folder.child(f"{fp.name}.jsonl")
    data = ("\n".join(lines) + "\n").encode("utf-8")
    written = True
    if path.kind() is not None:
        if path.read_bytes("rows", error=ConfigError) != data:
            raise ConfigError(f"{path} exists with other content: it was edited after it was "
                              "frozen, so its name no longer describes it", fix="restore it from "
                              "version control, or freeze the edited set (it gets a new name) and "
                              "re-score the baseline on it")
        written = False
    else:
        path.write_bytes(data)
    return FrozenHoldout(name=fp.name, sha256=fp.sha256, path=str(path), n_tasks=fp.n_tasks,
                         fields=fp.fields, written=written, note=fp.note)


# --- can the eval fail? ---------------------------------------------------------------------

class Sample(Result):
    """Some task ids of a finding (at most ``EVALSET_EXAMPLES``) and how many there are."""

    ids: list[str]
    total: int

    @classmethod
    def of(cls, ids: list[str]) -> Sample:
        return cls(ids=ids[:EVALSET_EXAMPLES], total=len(ids))

    def render(self) -> str:
        return f"{len(self.ids)} of {self.total}: {', '.join(self.ids)}"


_EXAMPLE_TEXT = {"cut_off_pass": "tasks with a cut-off pass",
                 "unscored": "frozen tasks the run did not score",
                 "not_frozen": "scored tasks not in the frozen set"}

Readiness = Literal["truncation_trap", "off_the_frozen_set", "cannot_fail", "little_headroom",
                    "ready"]


class FailureCapable(Result):
    """One baseline run read for what it can show.

    ``n_fail_capable``: tasks with at least one failed rollout. Only they can improve, so they
    bound any gain: pass@1 can rise by at most ``headroom`` = 1 - pass@1 (every one of them
    passing always). ``verdict``, first that applies: ``truncation_trap`` (a reply cut at the
    token cap passed: fix the grader), ``off_the_frozen_set`` (the run's tasks differ from the
    frozen set), ``cannot_fail`` (no task ever fails), ``little_headroom`` (headroom < effect),
    ``ready``.
    """

    pass_at_1: float
    ci: Interval | None = Field(description="interval of pass_at_1 at `level`, over tasks")
    ci_method: str | None = Field(None, description=METHOD_DOC)
    n_tasks: int
    n_rows: int
    k: int
    n_fail_capable: int
    n_always_pass: int
    n_never_pass: int
    headroom: float
    effect: float
    truncated_passes: int
    n_truncated: int
    holdout: str | None = None        # the frozen set's name, when one was given
    n_missing: int = 0                # frozen tasks the run did not score
    n_extra: int = 0                  # scored tasks that are not in the frozen set
    examples: dict[Literal["cut_off_pass", "unscored", "not_frozen"], Sample] = {}
    verdict: Readiness
    level: float = Field(CONFIDENCE_LEVEL, description=LEVEL_DOC)
    note: str | None = None

    ci95 = ci95_alias("ci")

    negative_means: ClassVar[str | None] = (
        "anything but `ready` (`truncation_trap`, `off_the_frozen_set`, `cannot_fail`, "
        "`little_headroom`)")

    @property
    def negative(self) -> bool:
        return self.verdict != "ready"

    def render(self) -> str:
        lines = [f"pass@1  {fmt_rate(self.pass_at_1, self.ci, self.n_tasks)}, {self.n_rows} rows, "
                 f"k >= {self.k}",
                 f"failure-capable: {self.n_fail_capable} of {self.n_tasks} tasks ever fail "
                 f"({self.n_always_pass} always pass, {self.n_never_pass} never pass)",
                 f"ceiling: pass@1 can rise at most {self.headroom:.3f} (effect wanted "
                 f"{self.effect:.3f})",
                 f"truncation: {self.truncated_passes} cut-off replies pass "
                 f"(of {self.n_truncated} cut off)"]
        if self.holdout is not None:
            lines.append(f"frozen set {self.holdout}: {self.n_missing} of its tasks unscored, "
                         f"{self.n_extra} scored tasks not in it")
        for key, sample in self.examples.items():
            lines.append(f"  e.g. {_EXAMPLE_TEXT[key]} ({sample.render()})")
        lines.append(f"verdict: {self.verdict}")
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


def _capable_doc() -> str:
    return ("Read a baseline run before training: pass@1 with its interval and n, the tasks "
            "that ever fail (the ceiling on any gain: headroom = 1 - pass@1), cut-off replies "
            "that pass, and (with `holdout`) whether the run scored exactly the frozen set. "
            f"`verdict`: {named(values_of(FailureCapable, 'verdict'))}.")


@operation(toolset="evals", effect=READS, title="Can this eval fail, and how much can it show?",
           description=_capable_doc, exit_code=VERDICT, doing="reading what the eval can show")
def failure_capable(rows: Rows, *,
                    holdout: Annotated[OptionalRecords, Field(description=(
                        "Optional: the frozen task set (the file freeze_holdout wrote). Given, "
                        "the run must have scored exactly its tasks."))] = None,
                    effect: Annotated[EffectSize, Field(description=(
                        "Smallest gain in pass@1 worth detecting: 0.05 = 5 points."))
                    ] = PROVE_EFFECT,
                    level: Level = CONFIDENCE_LEVEL, seed: Seed = BOOTSTRAP_SEED,
                    threshold: Threshold = None) -> FailureCapable:
    """Can this eval fail, and by how much can it show a gain? ``rows``: the baseline's graded
    rows on the held-out tasks."""
    level, seed = check_level(level), check_seed(seed)
    if isinstance(effect, bool) or not isinstance(effect, (int, float)) or not 0 < effect < 1:
        raise ArgumentError(f"`effect` must be a number strictly between 0 and 1, got {effect!r}",
                            fix="e.g. effect=0.05 (5 points of pass@1)")
    data = load_rows(rows, threshold=threshold)
    n, c = data.rollouts, data.passes
    ever_fail = c < n
    rate = pass_rate(data, level, seed)
    hit = data.truncated & data.passed
    ids = np.asarray(data.task_ids, dtype=object)
    examples: dict[str, Sample] = {}
    if hit.any():
        examples["cut_off_pass"] = Sample.of(list(dict.fromkeys(ids[data.task_index[hit]].tolist())))
    name, missing, extra = None, [], []
    if holdout is not None:
        fp, lines = _fingerprint(holdout, EVALSET_NAME)
        name = fp.name
        frozen = {safejson.loads(ln)["task_id"] for ln in lines}
        scored = set(data.task_ids)
        missing = sorted(frozen - scored)
        extra = [t for t in data.task_ids if t not in frozen]
        if missing:
            examples["unscored"] = Sample.of(missing)
        if extra:
            examples["not_frozen"] = Sample.of(extra)
    headroom = 1.0 - rate.value
    verdict: Readiness
    if hit.any():
        verdict = "truncation_trap"
    elif missing or extra:
        verdict = "off_the_frozen_set"
    elif not ever_fail.any():
        verdict = "cannot_fail"
    elif headroom < effect:
        verdict = "little_headroom"
    else:
        verdict = "ready"
    notes = reward_notes(data)
    k = int(n.min())
    if k < GROUP_MIN_ROLLOUTS:
        notes.append(f"some task has {k} rollout(s): a task that passed every time may still fail; "
                     f"score every task at k >= {GROUP_MIN_ROLLOUTS} before counting")
    if verdict == "little_headroom":
        notes.append(f"even if every failure-capable task passed always, pass@1 would rise "
                     f"{headroom:.3f} < {effect:.3f}: make the eval harder (tasks the model fails)")
    return FailureCapable(pass_at_1=rate.value, ci=rate.ci, ci_method=rate.ci_method,
                          n_tasks=data.n_tasks, n_rows=data.n_rows, k=k,
                          n_fail_capable=int(ever_fail.sum()),
                          n_always_pass=int((c == n).sum()), n_never_pass=int((c == 0).sum()),
                          headroom=headroom, effect=float(effect),
                          truncated_passes=int(hit.sum()), n_truncated=int(data.truncated.sum()),
                          holdout=name, n_missing=len(missing), n_extra=len(extra),
                          examples=examples, verdict=verdict, level=level,
                          note="; ".join(notes) or None)
