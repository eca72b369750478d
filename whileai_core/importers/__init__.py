"""Importers: other systems' eval output -> graded rows every statistic here reads.

==========  ===================================================================================
format      reads
==========  ===================================================================================
prime-rl    prime-rl 559b447 episode files (verifiers a60a606 ``Episode.to_record()``):
            ``<run>/rollouts/step_<S>/eval/all/traces.jsonl`` (:mod:`.prime_rl`)
inspect     Inspect eval logs, ``.eval`` or ``.json`` (:mod:`.inspect_logs`)
lm-eval     lm-evaluation-harness ``--log_samples`` files, ``samples_<task>_<date>.jsonl``
            (:mod:`.lm_eval`)
==========  ===================================================================================

:func:`import_rows` picks the format from the content (``format="auto"``) unless one is named;
a named format wins. Every row has ``task_id``, ``reward``, ``truncated``, ``model`` and
``errored``, plus the source's own ids (``step``/``policy_version``/``episode_id`` for prime-rl,
``epoch``/``sample_uuid`` for Inspect, ``doc_id``/``filter`` for lm-eval). Bad records raise
:class:`~whileai_core.errors.RowsError` naming the file, the line (or sample) and the fix.
"""

from __future__ import annotations

import os

from ..errors import ArgumentError, RowsError
from ..safepath import Root, UserPath, as_user_path
from .result import Imported, StepCount
from .. import safejson

FORMATS = ("prime-rl", "inspect", "lm-eval")
ROWS = "rows"  # already graded rows (task_id + reward): nothing to import
_PEEK_LINE_MAX = 64 * 1024 * 1024


class AmbiguousImport(RowsError):
    """The input is a known format, but a choice (a metric, a step) is needed to read it."""


def detect_format(path: str | os.PathLike | UserPath) -> str | None:
    """``"prime-rl"``, ``"inspect"``, ``"lm-eval"``, ``"rows"`` (graded rows already), or None.

    Reads as little as it can: a folder's listing, a zip archive's directory, the first JSON
    line of a JSONL file, or (for a file whose first line is not a whole JSON value) the file.
    Everything is opened through the path door (``whileai_core.safepath``).
    """
    from . import inspect_logs, lm_eval, prime_rl

    path = as_user_path(path, None, argument="path", error=RowsError)
    if path.is_dir():
        found = []
        if prime_rl.is_run_tree(path):
            found.append("prime-rl")
        if any(lm_eval.SAMPLE_FILE.match(p.name) for p in path.iterdir()):
            found.append("lm-eval")
        if len(found) > 1:
            raise AmbiguousImport(f"holds both {' and '.join(found)} output", source=str(path),
                                  fix="point at one of them, or name the format")
        return found[0] if found else None
    if not path.is_file():
        return None
    if inspect_logs.is_eval_archive(path):
        return "inspect"
    first = _first_line(path)
    if first is None:
        return None
    try:
        record = safejson.loads(first)
    except ValueError:
        record = None
    if isinstance(record, dict):
        if "task_id" in record or "scenario_id" in record:
            return ROWS
        if prime_rl.looks_like_episode(record):
            return "prime-rl"
        if lm_eval.looks_like_sample(record):
            return "lm-eval"
        if inspect_logs.looks_like_log(record):  # a one-line JSON log
            return "inspect"
        return None
    if first.lstrip().startswith("{"):  # a pretty-printed JSON document
        try:
            return "inspect" if inspect_logs.peek_is_log(path) else None
        except (RowsError, ValueError, RecursionError):
            return None
    return None


def _first_line(path: UserPath) -> str | None:
    try:
        with path.open_binary("rows", error=RowsError) as fh:
            for raw in fh:
                if raw.strip():
                    return raw[:_PEEK_LINE_MAX].decode("utf-8", errors="replace")
                if fh.tell() > _PEEK_LINE_MAX:
                    return None
    except (OSError, RowsError):
        return None
    return None


def import_rows(source: str | os.PathLike | UserPath, *, format: str = "auto",
                metric: str | None = None, step: int | str | None = None, kind: str = "eval",
                keep_errored: bool = False, agent: str | None = None,
                root: Root | None = None) -> Imported:
    """Graded rows from another system's output. Returns :class:`Imported` (``.rows``).

    ``format``: ``"auto"`` (from the content), or one of ``prime-rl``, ``inspect``, ``lm-eval``
    (wins over the content). ``metric``: the Inspect scorer or lm-eval metric (``name`` or
    ``name,filter``) that becomes the reward; needed when there are several. ``step`` and
    ``kind``: prime-rl only (one step, an int or ``"first"``/``"last"``; ``"eval"`` or
    ``"train"`` episodes). ``keep_errored``: keep errored rollouts as rows with
    ``errored: true`` instead of only counting them. ``agent``: prime-rl only, one agent's
    traces of a multi-agent taskset (``agent.name``). Every file and folder is opened through
    the path door: under ``root`` when given (confined), else as the user's own path; a link
    anywhere inside the output is refused, never followed.
    """
    from .inspect_logs import import_inspect
    from .lm_eval import import_lm_eval
    from .prime_rl import import_prime_rl

    if format not in ("auto", *FORMATS):
        raise ArgumentError(f"`format` is {format!r}. Fix: use one of auto, {', '.join(FORMATS)}")
    path = as_user_path(source, root, argument="path", error=RowsError)
    if not path.exists():
        raise RowsError("no such file or folder", source=str(path),
                        fix="check the path (relative paths start at the current directory)")
    fmt = format
    if fmt == "auto":
        fmt = detect_format(path)
        if fmt == ROWS:
            raise RowsError("is already graded rows (task_id and reward)", source=str(path),
                            fix="use it as it is (load_rows, pass-at, route)")
        if fmt is None:
            raise RowsError("is not output this importer knows (prime-rl episodes, an Inspect "
                            "log, lm-eval samples)", source=str(path),
                            fix="name the format (format=... / CLI import prime-rl|inspect|"
                                "lm-eval) or point at the output itself")
    if fmt != "prime-rl" and (step is not None or kind != "eval" or agent is not None):
        raise ArgumentError(f"`step`, `kind` and `agent` apply to prime-rl episodes, not {fmt}. "
                            "Fix: leave them out")
    if fmt == "prime-rl":
        if metric is not None:
            raise ArgumentError("`metric` applies to Inspect and lm-eval; a prime-rl reward is "
                                "the trace's summed rewards. Fix: leave it out")
        return import_prime_rl(path, kind=kind, step=step, keep_errored=keep_errored,
                               agent=agent)
    if fmt == "inspect":
        return import_inspect(path, metric=metric, keep_errored=keep_errored)
    return import_lm_eval(path, metric=metric)


def rows_for_load(path: UserPath, fmt: str) -> list[dict]:
    """What ``load_rows`` reads from a foreign format: only when nothing needs choosing."""
    try:
        imported = import_rows(path, format=fmt)
    except AmbiguousImport:
        raise
    except RowsError as err:
        if err.field != "metric":
            raise
        problem = str(err).split(". Fix: ")[0]
        raise AmbiguousImport(f"is {fmt} output: {problem}; load_rows reads it only when "
                              "nothing needs choosing",
                              fix=f"import it first: whileai-skills import {fmt} {path} "
                                  "--metric NAME --out rows.jsonl") from None
    steps = sorted({s.step for s in imported.by_step if s.step is not None}
                   | {r["step"] for r in imported.rows if isinstance(r.get("step"), int)})
    if len(steps) > 1:
        spanned = (f"steps {steps}" if len(steps) <= 8 else
                   f"{len(steps)} steps ({steps[0]} to {steps[-1]})")
        raise AmbiguousImport(f"is prime-rl output spanning {spanned}; one pass rate over "
                              "several policies means nothing", source=str(path),
                              fix=f"import one step: whileai-skills import prime-rl {path} "
                                  f"--step {steps[-1]} --out rows.jsonl")
    agents = sorted({str(r["agent"]) for r in imported.rows if r.get("agent") is not None})
    if len(agents) > 1:
        raise AmbiguousImport(f"is prime-rl output with {len(agents)} agents per episode "
                              f"({', '.join(agents)}); one pass rate over several agents' "
                              "traces means nothing", source=str(path),
                              fix=f"import one agent: whileai-skills import prime-rl {path} "
                                  f"--agent {agents[0]} --out rows.jsonl")
    if not imported.rows:
        raise RowsError(f"is {fmt} output with no scored rows ({imported.errored} errored)",
                        source=str(path), fix="check the run: every rollout errored")
    return imported.rows


__all__ = ["FORMATS", "AmbiguousImport", "Imported", "StepCount", "detect_format",
           "import_rows", "rows_for_load"]
