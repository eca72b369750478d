"""The DPO recipe's data folder (read by ``recipes/dpo/data.py``), written from the pairs: what
``launch_run("dpo", data=...)`` trains on.

- ``pairs.jsonl``: TRL's conversational preference rows (``prompt``, ``chosen``, ``rejected``),
  with ``task_id``, ``category``, ``source`` and both rewards beside them;
- ``holdout-<hash>.jsonl``: the held-out asks, one per task (``task_id``, ``messages`` and the
  task's other fields for the grader), frozen under their content name (``freeze_holdout``);
- ``grader.py``: ``grade(ask, reply) -> float`` (1.0 a pass), copied from the caller's file;
- ``settings.json`` (optional): recipe settings for this data.
"""

from __future__ import annotations

import json
import os
from typing import Annotated, Any

from pydantic import Field

from .. import voice
from ..defaults import DPO_PAIRS_FILE
from ..errors import ArgumentError, RowsError, as_json
from ..evalset import freeze_holdout
from ..operations import WRITES, operation
from ..operations.args import (OUT, PATH, RECORDS_FORM, SOURCE, Arg, Overwrite, Records,
                               WorkspaceRoot)
from ..result import Result
from .build import PairSet
from ..rows import read_records
from ..safepath import as_user_path
from ..io import write_atomic, write_jsonl
from ..traces.read import _check_messages, prompt_messages

GRADER_FILE, SETTINGS_FILE = "grader.py", "settings.json"


class DPOData(Result):
    folder: str
    pairs_file: str
    n_pairs: int
    n_on_policy: int
    n_constructed: int
    holdout_file: str
    holdout_name: str
    n_holdout: int
    grader: str
    settings: dict[str, Any] | None = None

    def render(self) -> str:
        return (f"wrote {self.folder}: {self.n_pairs} pairs ({self.n_on_policy} on-policy, "
                f"{self.n_constructed} constructed) in {self.pairs_file}; {self.n_holdout} "
                f"held-out asks frozen as {self.holdout_name}; {self.grader}"
                + (f"; settings {json.dumps(self.settings)}" if self.settings else ""))


def _pairs(pairs: Any) -> list[dict]:
    if isinstance(pairs, PairSet):
        return list(pairs.pairs)
    recs = read_records(pairs, noun="DPO pair")
    for i, rec in enumerate(recs.items):
        for key in ("prompt", "chosen", "rejected"):
            value = rec.get(key)
            if not isinstance(value, list) or not value:
                raise RowsError(f"`{key}` is {value!r:.60}", **recs.where(i), field=key,
                                fix=f"give the pairs {voice.name('dpo_pairs')} wrote (TRL's "
                                    "conversational preference rows)")
    return [dict(r) for r in recs.items]


def _asks(holdout: Any) -> list[dict]:
    """One held-out ask per task: the first record's prompt, with the task's other fields."""
    recs = read_records(holdout, noun="held-out record")
    asks: dict[str, dict] = {}
    for i, rec in enumerate(recs.items):
        tid = rec.get("task_id")
        if isinstance(tid, bool) or not isinstance(tid, (str, int)):
            raise RowsError(f"`task_id` is {as_json(tid)}", **recs.where(i), field="task_id",
                            fix="give every held-out record its task id")
        _check_messages(rec.get("messages"), recs.where(i))
        if str(tid) not in asks:
            extra = {k: v for k, v in rec.items()
                     if k not in ("messages", "task_id", "reward", "model", "truncated")}
            asks[str(tid)] = {**extra, "task_id": str(tid), "messages": prompt_messages(rec)}
    if not asks:
        raise RowsError("no held-out records", source=recs.name,
                        fix="give the held-out tasks' records (split_by_task's holdout side)")
    return list(asks.values())


@operation(
    cli="dpo-data", toolset="training", effect=WRITES, title="Write the DPO recipe's data folder",
    description=(
        "The folder the dpo recipe trains on (launch_run with it as its data): pairs.jsonl, the held-out asks "
        "frozen as holdout-<hash>.jsonl (one per task), grader.py, optional settings.json. "
        "Refuses pairs whose task is held out."),
    doing="writing the DPO data folder")
def write_dpo_data(
        pairs: Annotated[Records, Field(description="The pairs dpo_pairs wrote (its `out`).",
                                        examples=["pairs.jsonl"])],
        out_dir: Annotated[str, Field(min_length=1, max_length=4096, description=(
            "The data folder to write."), examples=["dpo-data"]),
            Arg(OUT, metavar="DIR", writes="folder")], *,
        holdout: Annotated[str | list[dict[str, Any]], Field(description=(
            "The held-out tasks' records (one or more per task, with `messages`): frozen into "
            "the folder as holdout-<hash>.jsonl, one ask per task. " + RECORDS_FORM + "."),
            examples=["holdout.jsonl"]), Arg(SOURCE, metavar="FILE")],
        grader: Annotated[str, Field(min_length=1, max_length=4096, description=(
            "Your grader file (grade(ask, reply) -> float, 1.0 a pass), copied into the folder "
            "as grader.py."), examples=["grader.py"]), Arg(PATH, metavar="FILE")],
        settings: Annotated[dict[str, Any] | None, Field(max_length=100, description=(
            "Optional DPO recipe settings for this data, e.g. {\"model\": \"Qwen/Qwen3-8B\", "
            "\"beta\": 0.1}; written as settings.json (at the shell: --settings KEY=VALUE "
            "...)."))] = None,
        overwrite: Overwrite = False, root: WorkspaceRoot = None) -> DPOData:
    """Write the DPO recipe's data folder (module docstring), each file atomically; an existing
    one is replaced only with ``overwrite`` (the frozen held-out file never: same content, same
    name)."""
    rows = _pairs(pairs)
    if not rows:
        raise ArgumentError("no pairs to write", fix=f"{voice.name('dpo_pairs')} found no "
                            "contrast; construct rejected replies ("
                            + voice.arg("constructed", op="dpo_pairs")
                            + ") or sample more rollouts per task")
    if settings is not None and not isinstance(settings, dict):
        raise ArgumentError(f"`settings` must be an object of DPO recipe settings, got "
                            f"{type(settings).__name__}", fix=f"e.g. {{'model': 'Qwen/Qwen3-8B'}}")
    if settings and "run_name" in settings:
        raise ArgumentError("`settings` may not set run_name: that is the launch's name",
                            fix="remove it (launch_run's `name`)")
    asks = _asks(holdout)
    held = {a["task_id"] for a in asks}
    leaked = sorted({str(r.get("task_id")) for r in rows} & held)
    if leaked:
        raise ArgumentError(f"{len(leaked)} task(s) have pairs and are held out (e.g. "
                            f"{leaked[0]!r}): the test would be trained on", fix="build the "
                            f"pairs from the training side of {voice.name('split_by_task')} "
                            "only")
    source = as_user_path(grader, root, argument="grader").read_text("rows", fix="give the "
                                                                     "grader as a UTF-8 .py file")
    folder = as_user_path(out_dir, root, argument="out_dir", for_write=True)
    pairs_path = write_jsonl(folder.child(DPO_PAIRS_FILE), rows, overwrite=overwrite)
    frozen = freeze_holdout(asks, folder)
    grader_path = write_atomic(folder.child(GRADER_FILE), source, overwrite=overwrite)
    if settings:
        write_atomic(folder.child(SETTINGS_FILE), json.dumps(settings, indent=2) + "\n",
                     overwrite=overwrite)
    return DPOData(folder=os.fspath(folder.absolute), pairs_file=os.fspath(pairs_path),
                   n_pairs=len(rows), n_on_policy=sum(r.get("source") == "on_policy" for r in rows),
                   n_constructed=sum(r.get("source") == "constructed" for r in rows),
                   holdout_file=str(frozen.path), holdout_name=frozen.name, n_holdout=len(asks),
                   grader=os.fspath(grader_path), settings=settings or None)
