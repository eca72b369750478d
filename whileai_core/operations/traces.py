"""Operations that turn graded traces into an SFT file (the sft-from-traces skill):
split_by_task, failed_asks, select_sft, decontaminate, export_sft (import_rows is declared on
``whileai_core.importers.import_rows``).

Traces come as a JSONL path (or, over MCP, a small inline list). select_sft, decontaminate and
failed_asks return what they keep; given ``out`` they write it there as JSONL instead and leave
it out of the answer, so a large set never passes through the prompt.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from .. import defaults as D
from ..io import write_jsonl
from . import WRITES, operation
from .args import (OUT, Arg, OptionalOut, OptionalRowField, OutFile, Overwrite, Records,
                   Seed, Threshold)
from .surface import HERE, Context

TRACE_FORM = ('Each trace: {"task_id": str, "messages": [{"role": "system"|"user"|"assistant"|'
              '"tool", "content": str}, ...]}')
PassThreshold = Annotated[Threshold, Field(description=(
    "A trace passes when reward >= threshold; null: 1.0."))]


def _kept(result: Any, out: Any, overwrite: bool, ctx: Context) -> Any:
    """``result`` with its records written to ``out`` (when given) and left out of it."""
    if out is None:
        return result
    from ..io import write_jsonl  # lazy: loads with the call

    write_jsonl(out, result.records, overwrite=overwrite)
    return result.model_copy(update={"records": [], "path": ctx.relative(out)})


def _threshold(value: float | None) -> float:
    return D.PASS_THRESHOLD if value is None else value


@operation(
    cli="split", toolset="sft", effect=WRITES, title="Hold out a frozen test, split by task",
    description=(
        "Hold out `share` of the tasks (never part of a task), ranked by a hash of the seed and "
        "the task id so the split does not depend on row order. Optionally writes the held-out "
        "ids (`out`, the frozen test) and each side's records (`holdout_out`, `train_out`); "
        "nothing is written unless every file can be (two outputs naming the same file, or one "
        "that exists without overwrite, refuse the call). The note compares the test's size "
        "with holdout_size."),
    result="whileai_core.traces:TaskSplit", doing="splitting by task",
    serves=("load_traces",))
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
        overwrite: Overwrite = False):
    from ..traces import split_by_task as split  # lazy: loads with the call
    from ..traces.split import write_split  # lazy: loads with the call

    return write_split(split(rows, share=share, seed=seed, stratify=stratify), rows, out=out,
                       holdout_out=holdout_out, train_out=train_out, overwrite=overwrite)


@operation(
    toolset="sft", effect=WRITES, title="The asks the agent never passed",
    description=(
        "One ask (task_id and prompt messages) per task where no trace passed: the seeds for "
        "new attempts (rejection sampling with your model and your grader). `out` writes them "
        "as JSONL instead of returning them."),
    result="whileai_core.traces:FailedAsks", doing="finding failed asks")
def failed_asks(
        traces: Annotated[Records, Field(description=(
            f"Graded traces (training side only: the training file split_by_task writes). "
            f"{TRACE_FORM} plus \"reward\": number."), examples=["train.jsonl"])], *,
        threshold: PassThreshold = D.PASS_THRESHOLD, out: OptionalOut = None,
        overwrite: Overwrite = False, ctx: Context = HERE):
    from ..rows import read_records  # lazy: loads with the call
    from ..traces import FailedAsks  # lazy: loads with the call
    from ..traces import failed_asks as failed  # lazy: loads with the call

    asks = failed(traces, threshold=_threshold(threshold))
    n_traces = len(read_records(traces, noun="trace"))
    result = FailedAsks(asks=asks, n_asks=len(asks), n_traces=n_traces)
    if out is None:
        return result

    write_jsonl(out, asks, overwrite=overwrite)
    return result.model_copy(update={"asks": [], "path": ctx.relative(out)})


@operation(
    toolset="sft", effect=WRITES, title="Pick the best passing attempt per ask",
    description=(
        "From graded attempts, keep per ask the best passing one (highest reward, then the "
        "shortest reply); list the asks with no pass; attempt pass@1 with its interval. Give "
        "`out` to write the kept traces to a file instead of returning them."),
    result="whileai_core.traces:SFTSelection", doing="selecting SFT traces",
    serves=("load_traces",))
def select_sft(
        attempts: Annotated[Records, Field(description=(
            f"Graded attempts (several per ask allowed). {TRACE_FORM} plus \"reward\": "
            "number."))], *,
        threshold: PassThreshold = D.PASS_THRESHOLD, out: OptionalOut = None,
        overwrite: Overwrite = False, ctx: Context = HERE):
    from ..traces import select_sft as select  # lazy: loads with the call

    return _kept(select(attempts, threshold=_threshold(threshold)), out, overwrite, ctx)


@operation(
    toolset="sft", effect=WRITES, title="Drop training traces that leak the held-out test",
    description=(
        "Drop training traces whose task is held out, whose prompt equals a held-out prompt, or "
        "whose n-gram overlap with held-out prompts reaches `max_overlap`; every drop with its "
        "reason. Give `out` to write the kept traces to a file."),
    result="whileai_core.traces:Decontamination", doing="decontaminating training traces",
    serves=("load_traces",))
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
        out: OptionalOut = None, overwrite: Overwrite = False, ctx: Context = HERE):
    from ..traces import decontaminate as clean  # lazy: loads with the call

    return _kept(clean(train, holdout, ngram=ngram, max_overlap=max_overlap), out, overwrite,
                 ctx)


@operation(
    toolset="sft", effect=WRITES, title="Write the SFT file (TRL conversational JSONL)",
    description=(
        "Write traces as TRL's conversational JSONL ({\"messages\": [...]} per line), "
        "atomically; never replaces an existing file unless overwrite=true. Says which tokens "
        "TRL will train on."),
    result="whileai_core.traces:SFTExport", doing="exporting an SFT file")
def export_sft(
        records: Annotated[Records, Field(description=(
            f"The traces to train on (select_sft / decontaminate output). {TRACE_FORM}; each "
            "must end with an assistant turn."))],
        out: Annotated[OutFile, Field(description="Where to write TRL's conversational JSONL.")],
        *, overwrite: Overwrite = False):
    from ..traces import export_sft as export  # lazy: loads with the call

    return export(records, out, overwrite=overwrite)
