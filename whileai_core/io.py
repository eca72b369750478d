"""Atomic file writes: a reader sees the old file or the new one, never half of one.

Both go through the path door (``whileai_core.safepath``): the temporary file is created in the
target's own folder through that folder's handle, fsynced and renamed there; a target that exists
and is not a regular file (a link, a folder, a device) is never replaced.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .safepath import Root, UserPath, write_text


def write_atomic(path: str | os.PathLike | UserPath, text: str | bytes, *, overwrite: bool = False,
                 root: Root | None = None) -> Path:
    """Write ``text`` to ``path`` (a ``UserPath``, a path under ``root``, or the user's own
    path) atomically; an existing file only with ``overwrite`` (else ``ConfigError``)."""
    return write_text(path, text, overwrite=overwrite, root=root, error=ConfigError)


def write_jsonl(path: str | os.PathLike | UserPath, records: Any, *, overwrite: bool = False,
                root: Root | None = None) -> Path:
    """Records as JSONL (one JSON object per line, UTF-8), written with :func:`write_atomic`."""
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    return write_atomic(path, text, overwrite=overwrite, root=root)


def new_name(source: str, suffix: str = ".jsonl") -> str:
    """A free file name for a suggested command to write, from its input: ``graded.csv`` ->
    ``graded.jsonl``, or ``graded-2.jsonl`` (``-3``, ...) when that exists or is the input;
    ``rows.jsonl`` likewise for input that is no file: a suggested fix never names a file that
    exists."""
    base = Path("rows.jsonl") if source.startswith("<") or source == "-" else Path(source)
    stem = base.with_suffix("") if base.suffix not in ("", ".") else base
    if stem.suffix in (".jsonl", ".json", ".csv", ".tsv") and base.suffix == ".gz":
        stem = stem.with_suffix("")  # graded.csv.gz -> graded
    for n in range(1, 10_000):
        candidate = stem.with_name(stem.name + ("" if n == 1 else f"-{n}") + suffix)
        if str(candidate) != source and not os.path.lexists(candidate):
            return str(candidate)
    return str(stem.with_name(stem.name + f"-{os.getpid()}" + suffix))
