"""import_rows: another system's eval output (prime-rl, Inspect, lm-eval) -> a graded-rows file.

The server reads the output under the root and writes the rows as JSONL under the root, so rows
never pass through the prompt; the reply is the bounded summary (counts, errored rollouts, the
policy version per step, at most 3 preview rows, at most 20 files named).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from whileai_core.importers import Imported, import_rows

from .tooling import WRITES_FILE, Env, ToolInput, ToolSpec, write_records


class ImportRowsInput(ToolInput):
    path: Annotated[str, Field(
        description="The output to import, relative to the workspace root: a prime-rl run "
                    "folder (or rollouts/step_<S>/eval/all/traces.jsonl), an Inspect log "
                    "(.eval or .json), or lm-eval --log_samples files (samples_<task>_<date>."
                    "jsonl, or the folder holding them).",
        examples=["outputs/my-run", "logs/2026-01-01_task.eval"])]
    out: Annotated[str, Field(
        description="Where to write the graded rows as JSONL, relative to the workspace root. "
                    "Pass this file to rate, compare or route.",
        examples=["evals/imported.jsonl"])]
    format: Annotated[Literal["auto", "prime-rl", "inspect", "lm-eval"], Field(
        description="The source format; 'auto' reads it from the content. A named format "
                    "wins.")] = "auto"
    metric: Annotated[str | None, Field(
        description="Inspect: the scorer whose score becomes the reward. lm-eval: the metric, "
                    "'name' or 'name,filter'. Needed only when the output has several; the "
                    "error lists them. Leave null for prime-rl.")] = None
    step: Annotated[Annotated[int, Field(ge=0, le=10**9)] | Literal["first", "last"] | None, Field(
        description="prime-rl only: keep one training step (its number, 'first' or 'last'). "
                    "Null keeps every step, each row with its `step` and `policy_version`.")] = None
    kind: Annotated[Literal["eval", "train"], Field(
        description="prime-rl only: held-out eval episodes (default) or training "
                    "rollouts.")] = "eval"
    agent: Annotated[str | None, Field(
        min_length=1, max_length=200,
        description="prime-rl only: keep one agent's traces (the trace's agent.name) of a "
                    "multi-agent taskset. Null keeps every agent, one row per trace; the "
                    "summary's notes name the agents when there are several.")] = None
    keep_errored: Annotated[bool, Field(
        description="Keep errored rollouts as rows marked errored: true. Default false: they "
                    "are counted in `errored` and left out (a failed rollout is not a "
                    "zero-reward answer).")] = False
    overwrite: Annotated[bool, Field(
        description="Replace `out` if it exists. Leave false unless the user asked to replace "
                    "that file.")] = False


def import_rows_tool(args: ImportRowsInput, env: Env) -> Imported:
    ws = env.workspace
    source = ws.resolve(args.path, argument="path")
    out = ws.resolve(args.out, argument="out")
    # the importers walk the folder and open every file through the door, under the root
    result = import_rows(source, format=args.format, metric=args.metric, step=args.step,
                         kind=args.kind, keep_errored=args.keep_errored, agent=args.agent)
    written = write_records(result.rows, out, overwrite=args.overwrite)
    return result.model_copy(update={
        "source": ws.relative(source), "out": ws.relative(written),
        "files": [ws.relative(Path(f)) for f in result.files]})


TOOLS = [
    ToolSpec(
        name="import_rows", title="Import graded rows from prime-rl, Inspect or lm-eval output",
        description=(
            "Turn another system's eval output into a graded-rows JSONL file that every other "
            "tool reads: prime-rl episodes (reward = the trace's summed rewards; step and the "
            "policy version that sampled each row), Inspect logs (one row per sample and epoch; "
            "C/I/P or numeric scores), lm-eval --log_samples files (one row per doc, the metric "
            "named). Errored rollouts are counted, not scored 0. Writes `out`; returns counts, "
            "per-step policy versions, notes and 3 preview rows."),
        input=ImportRowsInput, output=Imported, run=import_rows_tool, annotations=WRITES_FILE,
        doing="importing graded rows", core=("import_rows",)),
]
