"""Put a set of files (and folder links) in place under a confined root, all of them or none.

Written one by one, by name, a folder swapped for a symlink between two writes would send the
later files wherever the link points, and a refusal halfway would leave a half-written project.
Here, in three phases:

1. **Stage.** Each file is written to a temporary file in its own folder, through a handle on that
   folder opened from the root without following links (``UserPath.open_folder``).
2. **Check.** Each target is still as planned (absent for a new file, the planned-from bytes for
   a replaced one), and each folder is still the one its path names.
3. **Commit.** Each staged file is linked into place (``link`` fails if the name appeared: no
   clobber) or renamed over the old one (its permissions kept), and each link is made, all
   through the folder handles; then the folders are checked again.

A failure at any point undoes what was done (staged and new files and links removed, replaced
files given their old bytes back, the folders made removed), through the same handles, so a
folder renamed midway is left holding what it held before. The caller gets one ``ConfigError``
saying nothing was changed, and why.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError, WhileaiError
from .os_errors import os_reason
from .safepath import temp_name

_TEMP = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class StagedFile:
    """A file to put in place: ``rel`` below the root (no link in it), its new bytes, and the
    bytes it was planned from (None: it must not exist)."""

    rel: str
    data: bytes
    old: bytes | None


@dataclass
class _Item:
    rel: str
    fd: int                     # the folder's handle
    name: str
    old: bytes | None
    tmp: str | None = None      # the staged file, while it is one
    link: Path | None = None
    done: bool = False


def put_in_place(root, files: list[StagedFile], *, links: list[tuple[str, Path]] = (),
                 existing: Collection[str] = (), what: str = "nothing was changed") -> None:
    """Write ``files`` and make ``links`` (``(rel, target folder)``) under ``root`` (a confined
    ``safepath.Root``), all or none; raise ``ConfigError("<what>: <why>. Fix: ...")``.

    ``existing``: the folders the plan found; one missing now was moved meanwhile, and is
    refused rather than made again empty."""
    made: list[tuple[int, str]] = []    # (handle on the folder it was made in, its rel), in order
    items: list[_Item] = []
    fds: dict[str, int] = {}

    def folder(rel: str) -> tuple[int, str]:
        parent, _, name = rel.rpartition("/")
        if parent not in fds:
            count = len(made)
            fds[parent] = root.locate(parent or ".", argument=parent or ".").open_folder(
                create=True, made=made, error=ConfigError)
            gone = [m for _, m in made[count:] if m in existing]
            if gone:
                raise ConfigError(f"the folder {gone[0]} was moved or removed while files were "
                                  "being written")
        return fds[parent], name

    try:
        try:
            for f in files:
                fd, name = folder(f.rel)
                item = _Item(f.rel, fd, name, f.old)
                items.append(item)
                item.tmp = _stage(fd, name, f.data, keep_mode=f.old is not None)
            for rel, target in links:
                fd, name = folder(rel)
                items.append(_Item(rel, fd, name, None, link=target))
            for item in items:
                if item.old is None:
                    if _mode(item.fd, item.name) is not None:
                        raise ConfigError(f"{item.rel} appeared while it was being written")
                elif _read_at(item.fd, item.name) != item.old:
                    raise ConfigError(f"{item.rel} changed while it was being written")
            _same_folders(root, fds)
            for item in items:
                _commit(item)
            _same_folders(root, fds)
        except (OSError, WhileaiError) as exc:
            _undo(items, made)
            raise ConfigError(_refusal(what, exc)) from None
    finally:
        for fd in [*fds.values(), *(fd for fd, _ in made)]:
            os.close(fd)


def _same_folders(root, fds: dict[str, int]) -> None:
    """Raise unless each folder handle is still the folder its path names, walked again from the
    root through the door (a link on the way is refused there, with its fix)."""
    for rel, fd in fds.items():
        path = root.locate(rel or ".", argument=rel or ".")
        if path.kind() is None:
            raise ConfigError(f"the folder {rel} was moved or removed while files were being "
                              "written")
        now = path.open_folder(error=ConfigError)
        try:
            held, found = os.fstat(fd), os.fstat(now)
        finally:
            os.close(now)
        if (held.st_dev, held.st_ino) != (found.st_dev, found.st_ino):
            raise ConfigError(f"the folder {rel} was moved or replaced while files were being "
                              "written")


def _refusal(what: str, exc: BaseException) -> str:
    """One message, one fix: the reason's own fix (a link to replace, say), then the retry."""
    again = "make sure nothing else changes these files or folders meanwhile, then run it again"
    reason = str(exc) if isinstance(exc, WhileaiError) else _os_words(exc)
    problem, sep, fix = reason.rpartition(". Fix: ")
    if not sep:
        return f"{what}: {reason}. Fix: {again}"
    return f"{what}: {problem}. Fix: {fix}; if nothing should have changed it, {again}"


def _stage(fd: int, name: str, data: bytes, *, keep_mode: bool) -> str:
    tmp = temp_name(name)  # carries the pid: a killed init's leftovers are swept later
    out = os.open(tmp, _TEMP, 0o666, dir_fd=fd)  # 0o666 less the umask, as open() gives
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(out, view):]
        if keep_mode:  # a replaced file keeps its permissions (a 0600 file stays 0600)
            mode = _mode(fd, name)
            if mode is not None:
                os.fchmod(out, stat.S_IMODE(mode))
        os.fsync(out)
    except BaseException:
        os.close(out)
        os.unlink(tmp, dir_fd=fd)
        raise
    os.close(out)
    return tmp


def _commit(item: _Item) -> None:
    if item.link is not None:
        os.symlink(item.link, item.name, target_is_directory=True, dir_fd=item.fd)
    elif item.old is None:
        os.link(item.tmp, item.name, src_dir_fd=item.fd, dst_dir_fd=item.fd,
                follow_symlinks=False)  # fails if the name appeared: no clobber
        os.unlink(item.tmp, dir_fd=item.fd)
    else:
        os.rename(item.tmp, item.name, src_dir_fd=item.fd, dst_dir_fd=item.fd)
    item.tmp = None
    item.done = True


def _undo(items: list[_Item], made: list[tuple[int, str]]) -> None:
    for item in reversed(items):
        try:
            if item.tmp is not None:
                os.unlink(item.tmp, dir_fd=item.fd)
            if not item.done:
                continue
            if item.old is None:
                os.unlink(item.name, dir_fd=item.fd)
            else:  # the old bytes back, the same way they were replaced
                tmp = _stage(item.fd, item.name, item.old, keep_mode=True)
                os.rename(tmp, item.name, src_dir_fd=item.fd, dst_dir_fd=item.fd)
        except OSError:
            continue
    # made in order, a folder before those inside it: undone the other way round, each through
    # the handle on where it was made (rmdir takes only an empty folder: nothing of anyone's)
    for fd, rel in reversed(made):
        with suppress(OSError):
            os.rmdir(rel.rpartition("/")[2], dir_fd=fd)


def _mode(fd: int, name: str) -> int | None:
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None


def _read_at(fd: int, name: str) -> bytes | None:
    """The regular file ``name`` in the folder ``fd`` (no link followed), or None."""
    try:
        handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        chunks = []
        while chunk := os.read(handle, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(handle)


def _os_words(exc: OSError) -> str:
    why, _ = os_reason(exc)
    return f"{exc.filename}: {why}" if exc.filename else why
