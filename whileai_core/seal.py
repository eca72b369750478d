"""The server keeps no secret where a child it starts can read it.

A reward (and a local run's grader) runs as the same user as the server, and
``/proc/<server pid>/environ`` shows the environment the server was *started* with, whatever it
removed since; ``/proc/<pid>/mem`` shows its memory. So the MCP server, at start
(``server.main``):

1. :func:`reexec_without_secrets`: when its environment holds secret-looking variables
   (``failures.SECRET_NAME``), it writes them to an anonymous in-memory file and re-executes
   itself in place (``execv``: same pid, stdio and arguments) without them, the file's
   descriptor named in ``WHILEAI_SECRETS_FD``;
2. :func:`restore_secrets` in the new image reads them back into ``os.environ`` and closes the
   file: the initial environment ``/proc`` shows never held them;
3. :func:`confine.undumpable`: its ``/proc`` files and memory are closed to other processes of
   the user.

Children run without privilege (``confine.drop_privileges``), so this holds when the server runs
as root too. Off Linux (no ``memfd_create``) a pipe carries the secrets; where neither works,
and off POSIX, the server starts as it is.
"""

from __future__ import annotations

import json
import os
import re
import sys
from contextlib import suppress

from . import confine

# environment variables whose values never appear in what we print (tokens, keys, passwords),
# and that the server moves out of its initial environment (whileai_core.failures masks them)
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)

SECRETS_FD_ENV = "WHILEAI_SECRETS_FD"
_PIPE_MAX_BYTES = 60_000  # under a pipe's 64 KB buffer: written before anyone reads it


def secret_names(environ: dict[str, str] | None = None) -> list[str]:
    """The variables of ``environ`` (default: ours) whose names look secret."""
    env = os.environ if environ is None else environ
    return sorted(name for name in env if SECRET_NAME.search(name) and name != SECRETS_FD_ENV)


def _carrier(data: bytes) -> int | None:
    """A descriptor holding ``data`` from its start, inheritable, or None."""
    if hasattr(os, "memfd_create"):
        try:
            fd = os.memfd_create("whileai-secrets", 0)  # no CLOEXEC: it crosses the exec
        except OSError:
            fd = None
        if fd is not None:
            os.write(fd, data)
            os.lseek(fd, 0, os.SEEK_SET)
            return fd
    if len(data) > _PIPE_MAX_BYTES:
        return None
    read, write = os.pipe()
    os.write(write, data)
    os.close(write)
    os.set_inheritable(read, True)
    return read


def reexec_without_secrets() -> None:
    """Start this program again in place without its secret-looking variables (see the module
    docstring). Returns only when there is nothing to move, when this is already the new
    image, or where it cannot be done (not POSIX, no interpreter path)."""
    names = secret_names()
    # POSIX only: elsewhere exec starts a new process and the host loses the one it spawned
    if not names or SECRETS_FD_ENV in os.environ or os.name != "posix" \
            or not sys.executable or not getattr(sys, "orig_argv", None):
        return
    fd = _carrier(json.dumps({name: os.environ[name] for name in names}).encode())
    if fd is None:
        return
    env = {k: v for k, v in os.environ.items() if k not in names}
    env[SECRETS_FD_ENV] = str(fd)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
    except OSError:  # cannot start again: go on as we are
        os.close(fd)


def restore_secrets() -> list[str]:
    """In the new image: the secrets back into ``os.environ`` (never into the initial
    environment), the descriptor closed; the names restored."""
    value = os.environ.pop(SECRETS_FD_ENV, None)
    if value is None or not value.isdigit():
        return []
    fd = int(value)
    chunks = []
    try:
        while data := os.read(fd, 1 << 16):
            chunks.append(data)
    except OSError:
        return []
    finally:
        with suppress(OSError):
            os.close(fd)
    try:
        secrets = json.loads(b"".join(chunks).decode("utf-8"))
    except ValueError:
        return []
    restored = []
    for name, secret in secrets.items() if isinstance(secrets, dict) else ():
        if isinstance(name, str) and isinstance(secret, str) and name not in os.environ:
            os.environ[name] = secret
            restored.append(name)
    return restored


def seal_server() -> None:
    """What ``server.main`` calls first: re-exec without secrets, read them back, become
    non-dumpable."""
    reexec_without_secrets()
    restore_secrets()
    confine.undumpable()
