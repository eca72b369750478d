"""Which system wrote a file or folder, and its rows read when nothing needs choosing.

:func:`detect_format` reads as little as it can to name the format; :func:`read_foreign` reads
it (one format's reader: :mod:`.prime_rl`, :mod:`.inspect_logs`, :mod:`.lm_eval`);
what ``whileai_core.rows.load_rows`` takes from it is :mod:`.on_the_fly`. Nothing here computes
a statistic, so loading another system's output costs no bootstrap.
"""

from __future__ import annotations

import os

from ..errors import ArgumentError, RowsError
from ..records import first_line, first_record, is_graded_row
from ..safepath import Root, UserPath, as_user_path
from ..voice import arg
from . import inspect_logs, lm_eval, prime_rl, table, verifiers
from .foreign import ForeignRows

FORMATS = ("prime-rl", "inspect", "lm-eval", "verifiers", "csv", "jsonl")
ROWS = "rows"  # already graded rows (task_id + reward): nothing to import


class AmbiguousImport(RowsError):
    """The input is a known format, but a choice (a metric, a step) is needed to read it."""


def detect_format(path: str | os.PathLike | UserPath) -> str | None:
    """The format (``"rows"``: graded rows already), or None, read from as little as it can: a
    folder's listing, a zip archive's directory, the first JSON line, or (a pretty-printed JSON
    document) the file."""
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
    first = first_line(path)
    if first is None:
        return None
    record = first_record(first)
    if isinstance(record, dict):
        if is_graded_row(record):
            return ROWS
        if prime_rl.looks_like_episode(record):
            return "prime-rl"
        if lm_eval.looks_like_sample(record):
            return "lm-eval"
        if verifiers.looks_like_result(record):
            return "verifiers"
        if inspect_logs.looks_like_log(record):  # a one-line JSON log
            return "inspect"
        return None
    if first.lstrip().startswith("{"):  # a pretty-printed JSON document
        try:
            return "inspect" if inspect_logs.peek_is_log(path) else None
        except (RowsError, ValueError, RecursionError):
            return None
    return None


def read_foreign(source: str | os.PathLike | UserPath, *, format: str = "auto",
                 metric: str | None = None, step: int | str | None = None, kind: str = "eval",
                 keep_errored: bool = False, agent: str | None = None,
                 root: Root | None = None) -> ForeignRows:
    """The rows :func:`whileai_core.importers.import_rows` reports on, read and checked (the
    arguments are that function's), with no statistic computed."""
    if format not in ("auto", *FORMATS):
        raise ArgumentError(f"`format` is {format!r}", fix=f"use one of auto, {', '.join(FORMATS)}")
    path = as_user_path(source, root, argument="path", error=RowsError)
    if not path.exists():
        raise RowsError("no such file or folder", source=str(path),
                        fix="check the path (relative paths start at the current directory)")
    fmt = format
    if fmt == "auto":
        fmt = detect_format(path)
        if fmt is None and table.looks_like_table(path):  # only when importing: load_rows refuses it
            fmt = table.FORMAT
        elif fmt in (None, ROWS) and table.renamed_fields(path):  # load_rows names the rename
            fmt = table.RENAMED_FORMAT
        if fmt == ROWS:
            raise RowsError("is already graded rows (task_id and reward)", source=str(path),
                            fix="use it as it is (load_rows, pass-at, route)")
        if fmt is None:
            raise RowsError("is not output this importer knows (prime-rl episodes, an Inspect "
                            "log, lm-eval samples, a CSV or TSV table)", source=str(path),
                            fix=f"name the format ({arg('format')}: one of {', '.join(FORMATS)}) "
                                "or point at the output itself")
    if fmt != "prime-rl" and (step is not None or kind != "eval" or agent is not None):
        raise ArgumentError(f"`step`, `kind` and `agent` apply to prime-rl episodes, not {fmt}",
                            fix="leave them out")
    if fmt == "prime-rl":
        if metric is not None:
            raise ArgumentError("`metric` applies to Inspect and lm-eval; a prime-rl reward is "
                                "the trace's summed rewards", fix="leave it out")
        return prime_rl.read_prime_rl(path, kind=kind, step=step,
                                     keep_errored=keep_errored, agent=agent)
    if fmt == "inspect":
        return inspect_logs.read_inspect(path, metric=metric, keep_errored=keep_errored)
    if fmt == "verifiers":
        if metric is not None:
            raise ArgumentError("`metric` applies to Inspect and lm-eval; a vf-eval row's "
                                "reward is its `reward`", fix="leave it out")
        return verifiers.read_verifiers(path)
    if fmt in (table.FORMAT, table.RENAMED_FORMAT):
        if metric is not None:
            raise ArgumentError("`metric` applies to Inspect and lm-eval; these rows' reward is "
                                "their `reward` field", fix="leave it out")
        return (table.read_table if fmt == table.FORMAT else table.read_renamed)(path)
    return lm_eval.read_lm_eval(path, metric=metric)
