"""What an ``OSError`` means for the person who gave the path, and the fix, in plain words.

The path door (``whileai_core.safepath``) says it when an open or a write fails, and
``whileai_core.failures`` when one reaches the CLI or the server; both read it here, below them.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

# errno -> what it means for the user, and the fix
_FIXES: dict[int, tuple[str, str]] = {
    errno.ENOENT: ("no such file or folder",
                   "check the path: its folders must exist, or be folders you may create"),
    errno.EACCES: ("permission denied",
                   "use a path you have permission for, or change the permissions"),
    errno.EPERM: ("operation not permitted", "choose a path in a folder you own"),
    errno.EISDIR: ("is a folder, not a file", "give a file path, e.g. a name inside that folder"),
    errno.ENOTDIR: ("a part of the path is a file, not a folder", "check the path's folders"),
    errno.ENOSPC: ("no space left on the device", "free some space, or write elsewhere"),
    errno.EDQUOT: ("disk quota exceeded", "free some space, or write elsewhere"),
    errno.EROFS: ("is on a read-only file system", "write to a writable folder"),
    errno.ENAMETOOLONG: ("the name is too long", "use a shorter path"),
    errno.ELOOP: ("too many levels of symbolic links", "give a path without a symlink loop"),
    errno.EEXIST: ("already exists", "choose another path"),
    errno.ENOTEMPTY: ("the folder is not empty", "choose another path"),
    errno.EXDEV: ("crosses file systems", "write to a folder on the same disk"),
    errno.EBUSY: ("is busy (in use by the system)", "choose another path"),
    errno.ETXTBSY: ("is busy (a running program)", "choose another path"),
    errno.EMFILE: ("too many open files", "close other programs, or raise `ulimit -n`"),
    errno.EIO: ("input/output error", "check the disk, or use another path"),
}


def os_reason(err: OSError, path: str | os.PathLike | None = None) -> tuple[str, str]:
    """(what happened, the fix) for ``err`` in plain words; ``path`` is where it happened, when
    the caller knows it better than the error does."""
    meaning, fix = _FIXES.get(err.errno or -1, (None, "check the path and try again"))
    if meaning is None:
        said = err.strerror or type(err).__name__
        meaning = said[:1].lower() + said[1:]
    if err.errno in (errno.EEXIST, errno.ENOTDIR) and path is not None and _is_file(str(path)):
        # a folder was needed here (to create one under it, or to look inside it)
        meaning, fix = "a file is in the way, where a folder is needed", "check the path's folders"
    return meaning, fix


def _is_file(path: str) -> bool:
    try:
        return Path(path).exists() and not Path(path).is_dir()
    except OSError:
        return False
