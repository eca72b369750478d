"""Another system's output read where rows load, as it is: what ``load_rows`` hooks into.

Every rows argument takes what :func:`~whileai_core.importers.import_rows` takes.
:func:`read_as_rows` reads it when nothing needs choosing (one step, one agent, one scorer or
metric) and says what it read (:func:`origin`); when something does, the error names the choices
and the import to run.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import RowsError
from ..safepath import UserPath
from ..voice import call
from . import lm_eval
from .detect import ROWS, AmbiguousImport, detect_format, read_foreign
from .foreign import ForeignRows


@dataclass(frozen=True)
class OnTheFly:
    """Rows read from another system's output: its format, the rows, and what was read."""

    format: str
    rows: list[dict]
    read: str


def read_as_rows(path: UserPath) -> OnTheFly | None:
    """The rows of ``path`` when it is another system's output (None: graded rows, or
    something the rows reader names itself)."""
    fmt = detect_format(path)
    if fmt is None and path.is_dir():
        inner = _model_folder(path)
        if inner is not None:
            path, fmt = inner, "lm-eval"
    if fmt is None or fmt == ROWS:
        return None
    read = rows_for_load(path, fmt)
    return OnTheFly(fmt, read.rows, origin(read, path))


def _model_folder(path: UserPath) -> UserPath | None:
    """The one model folder lm-eval wrote under an ``--output_path`` folder, if that is all
    ``path`` holds of lm-eval's output."""
    try:
        entries = path.list_dir(error=RowsError)
    except RowsError:
        return None
    dirs = [path.child(name) for name, _ in entries if path.child(name).is_dir()]
    found = [d for d in dirs if any(lm_eval.SAMPLE_FILE.match(n) for n, _ in
                                    d.list_dir(error=RowsError))]
    return found[0] if len(found) == 1 else None


def origin(read: ForeignRows, path: UserPath) -> str:
    """What was read of another system's output, and how to read something else of it."""
    if read.format == "prime-rl":
        steps = sorted({r["step"] for r in read.rows if isinstance(r.get("step"), int)})
        where = f"step {steps[0]}" if len(steps) == 1 else "every step"
        return (f"prime-rl run: eval episodes of {where}, the traces' summed rewards (another "
                "step: " + call("import_rows", path=str(path), step="N", out="rows.jsonl") + ")")
    if read.format == "verifiers":
        return "vf-eval results: the `reward` column, task_id = example_id"
    what = "scorer" if read.format == "inspect" else "metric"
    name = read.metric or ""
    if read.format == "lm-eval":
        metric, _, filt = name.partition(",")
        name = f"{metric}` (filter `{filt}`" if filt else metric
        shown = f"`{name})" if filt else f"`{name}`"
    else:
        shown = f"`{name}`"
    return (f"{read.format} output: the {what} {shown} as the reward (another: "
            + call("import_rows", path=str(path), scorer="NAME", out="rows.jsonl") + ")")


def rows_for_load(path: UserPath, fmt: str) -> ForeignRows:
    """What ``load_rows`` reads from a foreign format: only when nothing needs choosing."""
    try:
        read = read_foreign(path, format=fmt)
    except AmbiguousImport:
        raise
    except RowsError as err:
        if err.field != "scorer":
            raise
        problem = str(err).split(". Fix: ")[0]
        raise AmbiguousImport(f"is {fmt} output: {problem}; load_rows reads it only when "
                              "nothing needs choosing",
                              fix="import it first: " + call(
                                  "import_rows", path=str(path), format=fmt, scorer="NAME",
                                  out="rows.jsonl")) from None
    steps = sorted({s.step for s in read.steps if s.step is not None}
                   | {r["step"] for r in read.rows if isinstance(r.get("step"), int)})
    if len(steps) > 1:
        spanned = (f"steps {steps}" if len(steps) <= 8 else
                   f"{len(steps)} steps ({steps[0]} to {steps[-1]})")
        raise AmbiguousImport(f"is prime-rl output spanning {spanned}; one pass rate over "
                              "several policies means nothing", source=str(path),
                              fix="import one step: " + call(
                                  "import_rows", path=str(path), format="prime-rl",
                                  step=steps[-1], out="rows.jsonl"))
    agents = sorted({str(r["agent"]) for r in read.rows if r.get("agent") is not None})
    if len(agents) > 1:
        raise AmbiguousImport(f"is prime-rl output with {len(agents)} agents per episode "
                              f"({', '.join(agents)}); one pass rate over several agents' "
                              "traces means nothing", source=str(path),
                              fix="import one agent: " + call(
                                  "import_rows", path=str(path), format="prime-rl",
                                  agent=agents[0], out="rows.jsonl"))
    if not read.rows:
        raise RowsError(f"is {fmt} output with no scored rows ({read.errored} errored)",
                        source=str(path), fix="check the run: every rollout errored")
    return read
