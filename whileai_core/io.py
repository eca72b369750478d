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
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename.

    Refuses to replace an existing file unless ``overwrite=True`` (``ConfigError`` naming the
    path and the fix), and never replaces anything but a regular file. Creates missing parent
    folders. ``path`` is a :class:`~whileai_core.safepath.UserPath`, a path under ``root``, or
    (no root) the user's own path. The new file gets the mode ``open()`` would give it.
    """
    return write_text(path, text, overwrite=overwrite, root=root, error=ConfigError)


def write_jsonl(path: str | os.PathLike | UserPath, records: Any, *, overwrite: bool = False,
                root: Root | None = None) -> Path:
    """Records as JSONL (one JSON object per line, UTF-8), written with :func:`write_atomic`."""
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    return write_atomic(path, text, overwrite=overwrite, root=root)


def new_name(source: str, suffix: str = ".jsonl") -> str:
    """The file a command the product suggests should write, derived from its input and free
    now: ``graded.csv`` -> ``graded.jsonl``, or ``graded-2.jsonl`` (``-3``, ...) when that
    exists or is the input itself; ``rows.jsonl`` likewise for input that is not a file
    (``<rows>``, standard input). A suggested fix never names a file that exists, and the command
    it names refuses to replace one anyway (``import --out`` without ``--force``, ``open(...,
    "x")``), so following it never destroys data."""
    base = Path("rows.jsonl") if source.startswith("<") or source == "-" else Path(source)
    stem = base.with_suffix("") if base.suffix not in ("", ".") else base
    if stem.suffix in (".jsonl", ".json", ".csv", ".tsv") and base.suffix == ".gz":
        stem = stem.with_suffix("")  # graded.csv.gz -> graded
    for n in range(1, 10_000):
        candidate = stem.with_name(stem.name + ("" if n == 1 else f"-{n}") + suffix)
        if str(candidate) != source and not os.path.lexists(candidate):
            return str(candidate)
    return str(stem.with_name(stem.name + f"-{os.getpid()}" + suffix))
