"""What the CLI and the MCP server say when a call fails: one line the user can act on, or the
plain statement that it is a bug and where to report it.

- :func:`explain` turns what is the user's to fix into one line: a :class:`WhileaiError` (its
  message already names the fix), an ``OSError`` (the path, what the system said, and the fix for
  that kind of failure), a module missing from an optional extra (the pip command), memory.
  It returns None for anything else: that is a bug of ours.
- :func:`bug_report` is the line for a bug: what was being done, the exception, that the input
  is not to blame, and where to report it (and where the traceback went).
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from .errors import WhileaiError

# environment variables whose values never appear in what we print (tokens, keys, passwords)
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
# the server's own bearer token: no child process (a reward, a local run) needs it
SERVER_SECRETS = ("WHILEAI_MCP_TOKEN",)


def mask_secrets(text: str, environ: dict[str, str] | None = None) -> str:
    """``text`` with the value of every secret-looking environment variable (``MODAL_TOKEN_*``,
    ``*_API_KEY``, ``WHILEAI_MCP_TOKEN``...; values of 6+ characters) replaced by ``<$NAME>``.

    Every failure line goes through it (:func:`explain`, :func:`bug_report`), and so do the
    child output and logs we quote: a reward or a recipe that prints a token cannot make us
    echo it.
    """
    env = os.environ if environ is None else environ
    for name, value in env.items():
        value = value.strip()
        if SECRET_NAME.search(name) and len(value) >= 6 and value in text:
            text = text.replace(value, f"<${name}>")
    return text


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a child process we start: ours, less the server's own secrets."""
    env = {k: v for k, v in os.environ.items() if k not in SERVER_SECRETS}
    env.update(extra or {})
    return env


REPORT_TO = ("the whileai skill pack's issue tracker (the repository you installed it from), "
             "with the command you ran")

# io.write_atomic writes through ``.<name>.<8 random chars>.tmp`` beside the target; a failure on
# that file is a failure to write the target (or in its folder), and is named so.
_TEMP = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]{8}\.tmp$")

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


def _user_path(err: OSError) -> tuple[str | None, bool]:
    """The path the user gave, as far as the error shows it, and whether it is the folder of a
    file we tried to write (the error was on our temporary file beside it)."""
    # a rename (tmp -> target) names the target second: that is the user's path
    path = err.filename2 if err.filename2 is not None else err.filename
    if path is None:
        return None, False
    path = os.fsdecode(path) if isinstance(path, bytes) else str(path)
    match = _TEMP.match(Path(path).name)
    if match:
        return str(Path(path).with_name(match["name"])), True
    return path, False


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


def explain_os_error(err: OSError) -> str:
    """``<path>: <what happened>. Fix: <what to do>`` for an ``OSError``."""
    path, via_temp = _user_path(err)
    meaning, fix = os_reason(err, path)
    if via_temp and path is not None:
        if err.errno in (errno.EACCES, errno.EPERM):
            fix = "choose a folder you may write to"
        return f"{path}: cannot create a file in {Path(path).parent} ({meaning}). Fix: {fix}"
    return f"{path + ': ' if path is not None else ''}{meaning}. Fix: {fix}"


def _is_file(path: str) -> bool:
    try:
        return Path(path).exists() and not Path(path).is_dir()
    except OSError:
        return False


def _missing_module(err: ModuleNotFoundError) -> str | None:
    from .extras import MODULES, install_command, install_fix

    top = (err.name or "").split(".")[0]
    if top not in MODULES:
        return None  # one of our own modules, or a module we never asked for: a bug
    extra = MODULES[top]
    if not extra:
        return (f"the core dependency `{top}` is not installed (a broken install). Fix: "
                f"reinstall: {install_command('')}")
    return f"`{top}` is not installed. Fix: {install_fix(extra)}"


def explain(exc: BaseException) -> str | None:
    """One line for a failure that is the user's to fix; None for a bug."""
    message = _explain(exc)
    return None if message is None else mask_secrets(message)


def _explain(exc: BaseException) -> str | None:
    if isinstance(exc, WhileaiError):
        return str(exc)
    if isinstance(exc, ModuleNotFoundError):
        return _missing_module(exc)
    if isinstance(exc, OSError):
        return explain_os_error(exc)
    if isinstance(exc, MemoryError):
        return ("out of memory. Fix: give a smaller input (split the file), or run on a machine "
                "with more memory")
    return None


def bug_report(exc: BaseException, doing: str, *, traceback_at: str) -> str:
    """The line for a bug: what failed, that the input is not to blame, where to report it."""
    text = str(exc).splitlines()[0][:300] if str(exc).strip() else ""
    return mask_secrets(f"unexpected internal error while {doing}: {type(exc).__name__}"
            + (f": {text}" if text else "") + f". This is a bug in whileai, not in your input. "
            f"Please report it to {REPORT_TO}; the traceback is {traceback_at}")
