"""Atomic file writes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .errors import ConfigError
from .voice import arg


def write_atomic(path: str | os.PathLike, text: str | bytes, *, overwrite: bool = False) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename.

    Refuses to replace an existing file unless ``overwrite=True`` (``ConfigError`` naming the
    path and the fix). Creates missing parent folders.
    """
    target = Path(path)
    if target.exists() and not overwrite:
        raise ConfigError(_exists(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8") if isinstance(text, str) else text
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp makes the file 0600; give it the mode open() would (0666 less the umask).
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if not overwrite:
            # link() fails if the target appeared meanwhile: no silent clobber in a race.
            try:
                os.link(tmp, target)
            except FileExistsError:
                raise ConfigError(_exists(target)) from None
            except OSError:
                os.replace(tmp, target)
                return target
            os.unlink(tmp)
        else:
            os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def _exists(target: Path) -> str:
    return (f"{target} already exists; not overwriting it. Fix: pass {arg('overwrite', True)} "
            "or choose another path")


def write_jsonl(path: str | os.PathLike, records, *, overwrite: bool = False) -> Path:
    """Records as JSONL (one JSON object per line, UTF-8), written with :func:`write_atomic`."""
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    return write_atomic(path, text, overwrite=overwrite)
