"""The argument types operations are declared with: one schema per concept.

Each type is ``Annotated[<wire type>, Field(...), Arg(...)]``: the pydantic ``Field`` carries the
description for the caller and a finite range (NaN, 1e100 and integers past 64 bits are input
errors, never "a bug in whileai"); :class:`Arg` says how the surfaces take it (a path to
resolve, rows that may come inline, positional at the shell...). An operation may narrow a
type's description for its own use (``Annotated[Rows, Field(description=...)]``); the range and
the kind stay the type's.

The MCP input schema and the CLI flags are generated from these (``server.tooling``,
``whileai_core.cli``); paths, inline records and run ids are resolved from the kind, once, by
:mod:`whileai_core.operations.surface`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from ..defaults import LEVEL_MAX, LEVEL_MIN, MCP_INLINE_ROWS_MAX, RUN_ID_PATTERN, TASK_PAGE_MAX
from ..safepath import Root

# --- how a surface takes an argument ---------------------------------------------------------

VALUE = "value"        # as given
PATH = "path"          # a file or folder to read (a list: each): under the root over MCP
OUT = "out"            # a file or folder to write: under the root over MCP
SOURCE = "source"      # records: a path (as PATH) or, over MCP, a small inline list
ARM = "arm"            # one run: a path, inline records, or a list of paths (one per seed)
RUNS = "runs"          # a list of paths or numbers (scores)
NAMED = "named"        # a mapping name -> path
RUN_OR_PATH = "run_or_path"  # a run id, or a path


@dataclass(frozen=True)
class Arg:
    """How the surfaces take one argument.

    ``positional``: written without a name at the shell (in signature order; one with a default
    may be left out). ``metavar``: its placeholder in ``--help``. ``cli``/``mcp``: offered there
    (the MCP server's environment decides what a shell user passes as ``--state-dir``).
    ``describe``: the description, computed when a surface is built. ``schema``: the JSON
    schema advertised, computed then too (the core checks the value in its own words).
    ``rows``: graded rows; over MCP a file is loaded once per version of it for the whole
    session (``whileai_core.rows_cache``), so many questions of one file parse it once.
    ``form``: how the shell writes it where the type alone would say otherwise (``"json"``: a
    mapping given as one word of JSON, not as NAME=VALUE words; see ``whileai_core.cli``).
    ``writes``: for an ``OUT`` argument, the kind of output it writes (a key of
    ``whileai_core.safepath.OUTPUTS``: "jsonl", "json", "toml", "markdown", "folder"); under the
    server's root a write of any other kind is refused, whatever its name.
    """

    kind: str = VALUE
    positional: bool = False
    metavar: str | None = None
    cli: bool = True
    mcp: bool = True
    describe: Any = None  # () -> str: a description read when a surface is built (values
    #                       named from a domain module the CLI's parser should not import)
    schema: Any = None    # () -> dict: the JSON schema advertised (the values accepted are the
    #                       type's; the core checks them with its own words)
    rows: bool = False
    form: str | None = None
    writes: str | None = None


@dataclass(frozen=True)
class FromContext:
    """Marks a parameter no caller gives at a surface: the surface fills it with its
    ``Context``'s ``field`` (``whileai_core.operations.surface``); a Python caller passes it
    as any other argument, or leaves its default."""

    field: str


WorkspaceRoot = Annotated[Root | None, FromContext("root")]
"""The root every path of the call is opened under: the MCP server's workspace, filled by the
surface (None at the shell); a Python caller may pass its own ``whileai_core.safepath.Root``."""


METHOD_SCHEMA_URI = "whileai://methods/schema.json"
"""The MCP resource of every method's knobs (``server.method_schema``), named by the description
of ``prime_rl_config``'s ``method``."""


# Bounds on every number an operation takes.
MAX_SCORE = 1e15        # a reward, threshold or run_std: any scale a grader uses
MAX_SEED = 2**63 - 1
MAX_K = 100_000         # rollouts per task
MAX_COUNT = 10**9       # steps, batch, group size, eval examples
MAX_TOKENS = 10**8      # max_tokens, seq_len
MAX_GPUS_PER_NODE = 1024
MAX_NODES = 100_000
MAX_VOCAB = 10**8
MAX_NAME = 200          # a row field, a judge, a feature

Score = Annotated[float, Field(ge=-MAX_SCORE, le=MAX_SCORE, allow_inf_nan=False)]
"""A reward, score or rate given as a number."""

RECORDS_FORM = (f"A JSONL (or JSON-array) file; over MCP also a list of at most "
                f"{MCP_INLINE_ROWS_MAX} records")

# --- rows and records ------------------------------------------------------------------------

Rows = Annotated[
    str | list[dict[str, Any]],
    Field(description=(
        "Graded rollouts: a JSONL path (never paste a large file) of {\"task_id\", \"reward\"; "
        "optional \"truncated\", \"model\"}, a run's output import_rows reads, or over MCP a "
        f"list of at most {MCP_INLINE_ROWS_MAX} rows."),
        examples=["evals/graded.jsonl"]),
    Arg(SOURCE, positional=True, rows=True)]

OptionalRows = Annotated[
    str | list[dict[str, Any]] | None,
    Field(description="Graded rows (the same forms as `rows`)."),
    Arg(SOURCE, metavar="ROWS", rows=True)]

Records = Annotated[
    str | list[dict[str, Any]],
    Field(description=RECORDS_FORM + "."),
    Arg(SOURCE, positional=True)]

OptionalRecords = Annotated[
    str | list[dict[str, Any]] | None,
    Field(description=RECORDS_FORM + "."),
    Arg(SOURCE)]

ArmRows = Annotated[
    str | list[dict[str, Any]] | list[str],
    Field(description=(
        "One run: a rows file, a small inline list (MCP), or a list of files, one per training "
        "seed (the verdict then includes the between-seed variance; at the shell: "
        "--<name>-seed FILE, repeatable)."),
        examples=["evals/run.jsonl", ["evals/run-seed0.jsonl", "evals/run-seed1.jsonl"]]),
    Arg(ARM, positional=True, rows=True)]

# --- paths -------------------------------------------------------------------------------------

InPath = Annotated[str, Field(min_length=1, max_length=4096), Arg(PATH, positional=True)]
"""A file or folder to read."""

OutFile = Annotated[
    str, Field(min_length=1, max_length=4096, description="Where to write, as JSONL.",
               examples=["out/records.jsonl"]),
    Arg(OUT, metavar="FILE", writes="jsonl")]

OptionalOut = Annotated[
    str | None, Field(max_length=4096, description=(
        "Optional: write the records here as JSONL and leave them out of the answer (the answer "
        "stays small whatever the input)."), examples=["out/records.jsonl"]),
    Arg(OUT, metavar="FILE", writes="jsonl")]

Overwrite = Annotated[bool, Field(description=(
    "Replace an output file that exists (only when the user asked for it to be replaced)."))]

# --- intervals and tests -----------------------------------------------------------------------

Level = Annotated[float, Field(
    ge=LEVEL_MIN, le=LEVEL_MAX, allow_inf_nan=False,
    description="Confidence level of every interval: 0.95 = 95%.")]

Seed = Annotated[int | None, Field(
    ge=0, le=MAX_SEED,
    description="Seed of the random draws: the same inputs and seed, the same answer. null: a "
                "fresh seed.")]

Threshold = Annotated[float | None, Field(
    ge=-MAX_SCORE, le=MAX_SCORE, allow_inf_nan=False,
    description="A row passes when reward >= threshold; null: 1.0.")]

Metric = Annotated[Literal["pass", "reward"], Field(
    description="'pass': pass rates (reward >= threshold); 'reward': mean rewards (partial "
                "credit).")]

RegisteredMetric = Annotated[Literal["pass", "reward"] | None, Field(
    description="null: the experiment's registered metric (else 'pass'); 'pass': pass rates, "
                "'reward': mean rewards. Another metric than the registered one is read and "
                "flagged as a deviation.")]
"""Metric, for a run of a registered experiment (its registration names the metric)."""

AutoMetric = Annotated[Literal["auto", "pass", "reward"], Field(
    description="'pass': pass rates (reward >= threshold); 'reward': mean rewards (partial "
                "credit); 'auto': the mean reward of a continuous reward with no threshold, "
                "else the pass rate.")]
"""Metric, with the choice left to the rows (the operations whose core reads the reward's kind)."""

Cluster = Annotated[str | None, Field(
    max_length=MAX_NAME,
    description="Optional: the row field naming each task's family (repo, template): "
                "intervals resample families, then tasks; under 10 families, flagged unreliable.",
    examples=["family"]), Arg(metavar="FIELD")]

AutoCluster = Annotated[str | None, Field(
    max_length=MAX_NAME,
    description="The row field naming each task's family (repo, template): intervals resample "
                "families. 'auto': one found is read beside the task interval, the verdict no "
                "stronger; null: tasks only.",
    examples=["family"]), Arg(metavar="FIELD")]

EffectSize = Annotated[float, Field(
    gt=0.0, lt=1.0, allow_inf_nan=False,
    description="Smallest change in pass@1 worth detecting, in (0, 1): 0.05 = 5 points; the "
                "verdict is 'flat' only when the whole interval lies inside +-effect.")]

CompareEffect = Annotated[float | None, Field(
    gt=0.0, le=MAX_SCORE, allow_inf_nan=False,
    description="Smallest change worth detecting, in the metric's units (0.05 = 5 points of "
                "pass@1). Left out: 0.05, or 0.05 of a reward's span on another scale, said in "
                "a note. 'flat' only when the whole interval lies inside +-effect.")]

RunStd = Annotated[float | None, Field(
    ge=0.0, le=MAX_SCORE, allow_inf_nan=False,
    description="Optional: the standard deviation of the score when the same eval is re-run "
                "(noise_floor's run_std); a change inside its noise band is not called a move.")]

NoiseRuns = Annotated[int | None, Field(
    ge=2, le=1000,
    description="How many re-runs run_std was measured on (noise_floor's n_runs); null reads it "
                "as 3 and says so.")]

RowField = Annotated[str, Field(
    min_length=1, max_length=MAX_NAME, description="A field of the rows.",
    examples=["category"]), Arg(metavar="FIELD")]

CategoryField = Annotated[RowField, Field(description=(
    "The field naming a task's category (behaviour)."))]

OptionalRowField = Annotated[str | None, Field(
    max_length=MAX_NAME, description="A field of the rows.", examples=["category"]),
    Arg(metavar="FIELD")]

Model = Annotated[str, Field(
    min_length=1, max_length=500,
    description="Hub id of the model you will train, e.g. 'Qwen/Qwen3-8B'.")]

Names = Annotated[list[Annotated[str, Field(min_length=1, max_length=MAX_NAME)]] | None, Field(
    max_length=200, description="Names to keep; null: all.")]

# --- the per-task page and the picture (offered by the surfaces; see surface.py) ---------------

Detail = Annotated[bool, Field(
    description="true: also one page of the per-task table (`offset`, `limit`; task_table "
                "writes it all); false: its summary (counts, histogram, lowest and highest).")]
Offset = Annotated[int, Field(
    ge=0, le=10**9, description="With detail=true: the first task of the page (0-based, in the "
                                "rows' first-appearance order).")]
Limit = Annotated[int, Field(
    ge=1, le=TASK_PAGE_MAX, description=f"With detail=true: tasks per page (1-{TASK_PAGE_MAX}).")]
Plot = Annotated[bool, Field(description=(
    "Also return the picture as a PNG (the numbers stay; at the shell: --plot FILE)."))]

_Writer = Annotated[str, Field(max_length=500)]
ModelFilter = Annotated[_Writer | dict[str, _Writer] | None, Field(description=(
    "Read one writer's rows: a model id or a checkpoint/step; {argument: value} per rows "
    "argument."))]

# --- runs --------------------------------------------------------------------------------------

def _run_id_schema() -> dict[str, Any]:
    return {"type": "string", "pattern": RUN_ID_PATTERN}


# the pattern is advertised; a value off it is refused by the core, whose message names the
# id's form and where to find one
RunId = Annotated[str, Field(
    min_length=1, max_length=100, description="The run's id ('run-' and 12 hex digits), from "
                                              "launch_run or list_runs.",
    examples=["run-0123456789ab"]), Arg(positional=True, metavar="ID", schema=_run_id_schema)]

StateDir = Annotated[str | None, Field(description=(
    "Folder of the run registry; null: $WHILEAI_STATE_DIR, else ~/.whileai.")),
    Arg(metavar="DIR", mcp=False)]

# --- registered experiments ----------------------------------------------------------------------

RULE_DOC = ("The decision rule as data: {\"ship_if\": [clause, ...]}, ship when every clause "
            "holds. Clauses: {\"kind\": \"delta_above\", \"bound\": 0.05} (the paired delta's "
            "interval lies above bound); {\"kind\": \"no_category_drop\", \"field\": "
            "\"category\", \"beyond\": \"noise_band\" or a number} (no category's interval lies "
            "below 0 with its delta past the band).")

Rule = Annotated[dict[str, Any], Field(description=RULE_DOC), Arg(metavar="JSON", form="json")]
"""A decision rule (``whileai_core.experiments.rule`` checks it); one word of JSON at the
shell."""

HoldoutSet = Annotated[str, Field(
    min_length=1, max_length=4096,
    description="The frozen held-out file (its tasks are checked) or its content name from "
                "eval_fingerprint.", examples=["evals/holdout-b7c37b988f77.jsonl"]),
    Arg(metavar="FILE_OR_NAME")]
"""A held-out set: a path or a content name, read by the core (under the server's root over
MCP)."""
