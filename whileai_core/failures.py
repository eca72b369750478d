"""What the CLI and the MCP server say when a call fails: one line the user can act on
(:func:`explain`: a refused input, a system error on a path, a missing extra, memory; None for
anything else), or the plain statement that it is a bug and where to report it
(:func:`bug_report`). Every line has its secrets masked (:func:`mask_secrets`).
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from typing import Any

from .defaults import CHILD_ENV_NAMES, CHILD_ENV_PREFIXES
from .errors import ArgumentError, WhileaiError
from .os_errors import os_reason
from .result import map_strings, short_message
from .extras import MODULES, install_command, install_fix
from .seal import SECRET_NAME  # secret-looking names: one pattern, where the server moves them

# the server's own bearer token: no child process (a reward, a local run) needs it
SERVER_SECRETS = ("WHILEAI_MCP_TOKEN",)


def mask_secrets(text: str, environ: dict[str, str] | None = None) -> str:
    """``text`` with the value of every secret-looking environment variable (``MODAL_TOKEN_*``,
    ``*_API_KEY``, ``WHILEAI_MCP_TOKEN``...; values of 6+ characters) replaced by ``<$NAME>``:
    every failure line and every child output we quote goes through it."""
    env = os.environ if environ is None else environ
    for name, value in env.items():
        value = value.strip()
        if SECRET_NAME.search(name) and len(value) >= 6 and value in text:
            text = text.replace(value, f"<${name}>")
    return text


def mask_value(value: Any, environ: dict[str, str] | None = None) -> Any:
    """``value`` (JSON-like: mappings, lists, strings) with :func:`mask_secrets` applied to every
    string in it, keys included: a run's results, handle or error as stored and as shown."""
    if isinstance(value, str):
        return mask_secrets(value, environ)
    if isinstance(value, dict):
        return {mask_value(k, environ): mask_value(v, environ) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [mask_value(v, environ) for v in value]
    return value


def masked(value: Any, environ: dict[str, str] | None = None) -> Any:
    """``value`` (a result, or JSON-like data) with :func:`mask_secrets` applied to every string
    it holds. The server masks every answer whole before cutting it to its byte bound, so a cut
    string never shows the start of a secret either."""
    env = os.environ if environ is None else environ
    secrets = [(name, v.strip()) for name, v in env.items()
               if SECRET_NAME.search(name) and len(v.strip()) >= 6]
    if not secrets:
        return value

    def hide(text: str) -> str:
        for name, secret in secrets:
            if secret in text:
                text = text.replace(secret, f"<${name}>")
        return text

    return map_strings(value, hide)


def _kept(name: str) -> bool:
    if name in SERVER_SECRETS or SECRET_NAME.search(name):
        return False
    return name in CHILD_ENV_NAMES or name.startswith(CHILD_ENV_PREFIXES)


def child_env(extra: dict[str, str] | None = None, *,
              pass_env: tuple[str, ...] | list[str] = ()) -> dict[str, str]:
    """A clean environment for a child that runs user code (a reward, a local run): only
    ``CHILD_ENV_NAMES`` and the ``CHILD_ENV_PREFIXES`` families, less any secret-looking name;
    no token, key or loader variable (``LD_PRELOAD``) unless named in ``pass_env`` (never the
    server's own token). ``extra`` is added last."""
    env = {k: v for k, v in os.environ.items() if _kept(k)}
    for name in pass_env:
        if name in SERVER_SECRETS:
            raise WhileaiError(f"`pass_env` names {name}, the server's own token; no child is "
                               "given it", fix="remove it from pass_env")
        if name in os.environ:
            env[name] = os.environ[name]
    env.update(extra or {})
    return env


def check_pass_env(pass_env: Any) -> tuple[str, ...]:
    """``pass_env`` as a tuple of variable names, or :class:`ArgumentError` naming the bad one."""
    if pass_env is None:
        return ()
    if isinstance(pass_env, str) or not isinstance(pass_env, (list, tuple)):
        raise ArgumentError(f"`pass_env` must be a list of environment variable names, got "
                            f"{type(pass_env).__name__}", fix="e.g. pass_env=['OPENAI_API_KEY']")
    for name in pass_env:
        if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
            raise ArgumentError(f"`pass_env` holds {str(name)[:80]!r}, not a variable name "
                                "(letters, digits, '_')", fix="e.g. pass_env=['OPENAI_API_KEY']")
        if name in SERVER_SECRETS:
            raise ArgumentError(f"`pass_env` names {name}, the server's own token; no child is "
                                "given it", fix="remove it")
    return tuple(pass_env)


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


REPORT_TO = ("the whileai skill pack's issue tracker (the repository you installed it from), "
             "with the command you ran")

# the path door writes through ``.<name>.whileai-<pid>-<12 hex>.tmp`` beside the target
# (safepath.temp_name); a failure on that file is a failure to write the target (or in its
# folder), and is named so.
_TEMP = re.compile(r"^\.(?P<name>.+)\.whileai-\d+-[0-9a-f]{12}\.tmp$")


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


def explain_os_error(err: OSError) -> str:
    """``<path>: <what happened>. Fix: <what to do>`` for an ``OSError``."""
    path, via_temp = _user_path(err)
    meaning, fix = os_reason(err, path)
    if via_temp and path is not None:
        if err.errno in (errno.EACCES, errno.EPERM):
            fix = "choose a folder you may write to"
        return f"{path}: cannot create a file in {Path(path).parent} ({meaning}). Fix: {fix}"
    return f"{path + ': ' if path is not None else ''}{meaning}. Fix: {fix}"


def _missing_module(err: ModuleNotFoundError) -> str | None:
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
    return None if message is None else short_message(mask_secrets(message))


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
    return short_message(mask_secrets(f"unexpected internal error while {doing}: {type(exc).__name__}"
            + (f": {text}" if text else "") + f". This is a bug in whileai, not in your input. "
            f"Please report it to {REPORT_TO}; the traceback is {traceback_at}"))
