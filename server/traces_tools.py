"""Tools that turn graded traces into an SFT file: select_sft, decontaminate, export_sft
(the sft-from-traces skill).

Traces come as a JSONL path under the root (preferred) or a small inline list. select_sft and
decontaminate return the kept records; given `out`, they write them there as JSONL instead of
sending them back (records: [] in the reply), so a large set never passes through the prompt.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from pydantic import Field

from whileai_core.defaults import HOLDOUT_SHARE, PASS_THRESHOLD, SPLIT_SEED
from whileai_core.traces import (Decontamination, FailedAsks, SFTExport, SFTSelection, TaskSplit,
                                 decontaminate, export_sft, select_sft)

from .tooling import MAX_SCORE, WRITES_FILE, Env, ToolInput, ToolSpec, source, write_records

_SELECT = inspect.signature(select_sft).parameters
_DECON = inspect.signature(decontaminate).parameters
_EXPORT = inspect.signature(export_sft).parameters

TRACE_FORM = ('Each trace: {"task_id": str, "messages": [{"role": "system"|"user"|"assistant"|'
              '"tool", "content": str}, ...]}')

OutArg = Annotated[str | None, Field(
    description="Optional: write the kept records here as JSONL (relative to the workspace "
                "root) and leave them out of the reply. Omit to get them back inline.")]
OverwriteArg = Annotated[bool, Field(
    description="Replace an output file if it exists. Leave false unless the user asked to "
                "replace that file.")]


def _kept(result, out: str | None, overwrite: bool, env: Env):
    if out is None:
        return result
    write_records(result.records, env.workspace.resolve(out, argument="out"), overwrite=overwrite)
    return result.model_copy(update={"records": []})


class SplitByTaskInput(ToolInput):
    rows: Annotated[str | list[dict[str, Any]], Field(
        description="Records with a `task_id` (graded rows, traces...): a JSONL/JSON path under "
                    "the workspace root (preferred) or a small list. Split by task, never by row.",
        examples=["traces.jsonl"])]
    share: Annotated[float, Field(
        gt=0.0, lt=1.0, description="Share of the tasks to hold out, in (0, 1).")] = HOLDOUT_SHARE
    seed: Annotated[int, Field(
        ge=0, le=2**63 - 1,
        description="Seed of the split: the same task ids and seed give the same split, in any "
                    "row order.")] = SPLIT_SEED
    stratify: Annotated[str | None, Field(
        max_length=200,
        description="Optional: a record field (e.g. 'category') to split within each of its "
                    "values, so a rare category is on both sides.")] = None
    out: Annotated[str | None, Field(
        description="Optional: write the held-out task ids here as a JSON list (the frozen test "
                    "file), relative to the workspace root.",
        examples=["holdout_tasks.json"])] = None
    holdout_out: Annotated[str | None, Field(
        description="Optional: write the input's records whose task is held out here (JSONL).",
        examples=["holdout.jsonl"])] = None
    train_out: Annotated[str | None, Field(
        description="Optional: write the input's records whose task is not held out here "
                    "(JSONL): the only side to build training data from.",
        examples=["train.jsonl"])] = None
    overwrite: OverwriteArg = False


def split_by_task_tool(args: SplitByTaskInput, env: Env) -> TaskSplit:
    import json

    from whileai_core.io import write_atomic
    from whileai_core.rows import read_records
    from whileai_core.traces import split_by_task

    given = source(args.rows, env.workspace, argument="rows")
    records = read_records(given, noun="record").items
    split = split_by_task(given, share=args.share, seed=args.seed, stratify=args.stratify)
    targets = [(name, env.workspace.resolve(value, argument=name))
               for name, value in (("out", args.out), ("holdout_out", args.holdout_out),
                                   ("train_out", args.train_out)) if value is not None]
    if not args.overwrite:  # refuse before writing anything: nothing half-written
        for name, path in targets:
            if path.kind() is not None:
                from whileai_core.errors import ConfigError
                raise ConfigError(f"`{name}` {env.workspace.relative(path)} already exists; "
                                  "nothing was written. Fix: overwrite=true, or another path")
    for name, path in targets:
        if name == "out":
            write_atomic(path, json.dumps(split.holdout_tasks) + "\n", overwrite=args.overwrite)
        else:
            side = split.holdout(records) if name == "holdout_out" else split.train(records)
            write_records(side, path, overwrite=args.overwrite)
    return split


class FailedAsksInput(ToolInput):
    traces: Annotated[str | list[dict[str, Any]], Field(
        description="Graded traces (training side only: the train_out of split_by_task): a "
                    f"JSONL path under the root or a small list. {TRACE_FORM} plus \"reward\": "
                    "number.",
        examples=["train.jsonl"])]
    threshold: Annotated[float, Field(
        ge=-1e12, le=1e12, description="A trace passes when reward >= threshold.")
    ] = PASS_THRESHOLD
    out: OutArg = None
    overwrite: OverwriteArg = False


def failed_asks_tool(args: FailedAsksInput, env: Env) -> FailedAsks:
    from whileai_core.rows import read_records
    from whileai_core.traces import failed_asks

    given = source(args.traces, env.workspace, argument="traces")
    asks = failed_asks(given, threshold=args.threshold)
    n_traces = len(read_records(given, noun="trace"))
    if args.out is None:
        return FailedAsks(asks=asks, n_asks=len(asks), n_traces=n_traces)
    path = write_records(asks, env.workspace.resolve(args.out, argument="out"),
                         overwrite=args.overwrite)
    return FailedAsks(asks=[], n_asks=len(asks), n_traces=n_traces,
                      path=env.workspace.relative(path))


class SelectSFTInput(ToolInput):
    attempts: Annotated[str | list[dict[str, Any]], Field(
        description="Graded attempts (several per ask allowed): a JSONL path under the root or "
                    f"a small list. {TRACE_FORM} plus \"reward\": number.")]
    threshold: Annotated[float, Field(
        ge=-MAX_SCORE, le=MAX_SCORE, allow_inf_nan=False, description="An attempt passes when reward >= threshold.")] = _SELECT["threshold"].default
    out: OutArg = None
    overwrite: OverwriteArg = False


def select_sft_tool(args: SelectSFTInput, env: Env) -> SFTSelection:
    result = select_sft(source(args.attempts, env.workspace, argument="attempts"),
                        threshold=args.threshold)
    return _kept(result, args.out, args.overwrite, env)


class DecontaminateInput(ToolInput):
    train: Annotated[str | list[dict[str, Any]], Field(
        description=f"Training traces: a JSONL path under the root or a small list. {TRACE_FORM}")]
    holdout: Annotated[str | list[dict[str, Any]], Field(
        description="The held-out asks: a JSONL path under the root or a small list of "
                    '{"task_id": ..., "prompt": str} or {"task_id": ..., "messages": [...]}.')]
    ngram: Annotated[int, Field(ge=1, le=64, description="Words per n-gram, in [1, 64].")] = _DECON["ngram"].default
    max_overlap: Annotated[float, Field(
        gt=0, le=1, allow_inf_nan=False, description="Drop a training prompt when at least this share of its n-grams occur in "
                    "held-out prompts, in (0, 1].")] = _DECON["max_overlap"].default
    out: OutArg = None
    overwrite: OverwriteArg = False


def decontaminate_tool(args: DecontaminateInput, env: Env) -> Decontamination:
    result = decontaminate(source(args.train, env.workspace, argument="train"),
                           source(args.holdout, env.workspace, argument="holdout"),
                           ngram=args.ngram, max_overlap=args.max_overlap)
    return _kept(result, args.out, args.overwrite, env)


class ExportSFTInput(ToolInput):
    records: Annotated[str | list[dict[str, Any]], Field(
        description="The traces to train on (select_sft / decontaminate output): a JSONL path "
                    f"under the root or a small list. {TRACE_FORM}; each must end with an "
                    "assistant turn.")]
    out: Annotated[str, Field(
        description="Where to write TRL's conversational JSONL, relative to the workspace "
                    "root.")]
    overwrite: OverwriteArg = _EXPORT["overwrite"].default


def export_sft_tool(args: ExportSFTInput, env: Env) -> SFTExport:
    return export_sft(source(args.records, env.workspace, argument="records"),
                      env.workspace.resolve(args.out, argument="out"), overwrite=args.overwrite)


TOOLS = [
    ToolSpec(
        name="split_by_task", title="Hold out a frozen test, split by task",
        description=(
            "Hold out `share` of the tasks (never part of a task), ranked by a hash of the seed "
            "and the task id so the split does not depend on row order. Optionally writes the "
            "held-out ids (`out`, the frozen test) and each side's records (`holdout_out`, "
            "`train_out`). The note compares the test's size with holdout_size."),
        input=SplitByTaskInput, output=TaskSplit, run=split_by_task_tool,
        annotations=WRITES_FILE, doing="splitting by task",
        core=("split_by_task", "load_traces")),
    ToolSpec(
        name="failed_asks", title="The asks the agent never passed",
        description=(
            "One ask (task_id and prompt messages) per task where no trace passed: the seeds "
            "for new attempts (rejection sampling with your model and your grader). `out` writes "
            "them as JSONL instead of returning them."),
        input=FailedAsksInput, output=FailedAsks, run=failed_asks_tool,
        annotations=WRITES_FILE, doing="finding failed asks", core=("failed_asks",)),
    ToolSpec(
        name="select_sft", title="Pick the best passing attempt per ask",
        description=(
            "From graded attempts, keep per ask the best passing one (highest reward, then the "
            "shortest reply); list the asks with no pass; attempt pass@1 with its interval. "
            "Give `out` to write the kept traces to a file instead of returning them."),
        input=SelectSFTInput, output=SFTSelection, run=select_sft_tool,
        annotations=WRITES_FILE, doing="selecting SFT traces", core=("select_sft", "load_traces")),
    ToolSpec(
        name="decontaminate", title="Drop training traces that leak the held-out test",
        description=(
            "Drop training traces whose task is held out, whose prompt equals a held-out prompt, "
            "or whose n-gram overlap with held-out prompts reaches `max_overlap`; every drop "
            "with its reason. Give `out` to write the kept traces to a file."),
        input=DecontaminateInput, output=Decontamination, run=decontaminate_tool,
        annotations=WRITES_FILE, doing="decontaminating training traces",
        core=("decontaminate", "load_traces")),
    ToolSpec(
        name="export_sft", title="Write the SFT file (TRL conversational JSONL)",
        description=(
            "Write traces as TRL's conversational JSONL ({\"messages\": [...]} per line), "
            "atomically; never replaces an existing file unless overwrite=true. Says which "
            "tokens TRL will train on."),
        input=ExportSFTInput, output=SFTExport, run=export_sft_tool, annotations=WRITES_FILE,
        doing="exporting an SFT file", core=("export_sft",)),
]
