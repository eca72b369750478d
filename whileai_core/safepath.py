"""The one door for user paths: every file a user names is opened here, and only here.

Each rule answers a red-team finding (tests/test_safepath.py):
- A path is walked one component at a time from a directory handle, each opened with
  ``O_NOFOLLOW`` relative to the folder above (``dir_fd``): a symlink anywhere is refused, and
  the check is the open, so nothing can be swapped in between.
- Only a regular file is read: the last component is looked at (``fstatat``), opened with
  ``O_NONBLOCK | O_NOFOLLOW | O_NOCTTY`` and looked at again (``fstat``), so a FIFO, socket or
  device is refused before anything blocks on it; the file is then read from that handle.
- Reads are limited in size (per kind of file, :class:`Limits`) and in time.
- Writes go to a temporary file in the target's folder (through its handle), fsynced, renamed
  there. An existing target that is not a regular file is never replaced; a regular one only
  with ``overwrite``.

Two kinds of root:
- **Confined** (:class:`Root`, the server's ``--root``): ``..``, every symlink and every file
  with more than one hard link are refused (a hard link to a file outside looks like one inside).
- **A user's own path** (:func:`user_path`: CLI, library, recipes): resolved as the shell would
  (the user's symlinks followed once), then opened by the same rules. It confines nothing (the
  user could open the file anyway) but refuses special files, races and unbounded reads.
"""

from __future__ import annotations

import errno
import fcntl
import io
import math
import os
import re
import secrets
import select
import stat
import threading
import time
import unicodedata
import weakref
import zlib
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from . import defaults as D
from .admission import admit
from .errors import ArgumentError, ConfigError, RowsError, WhileaiError
from .os_errors import os_reason
from .progress import step
from .voice import CLI, arg, choose, reader, relative_paths

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 8 << 20

# --- limits ----------------------------------------------------------------------------------

FILE_KINDS: dict[str, tuple[str, str]] = {
    # kind: (what it covers, the environment variable that sets its limit in MB)
    "rows": ("rows, traces, judge items and prompt files", "WHILEAI_MAX_ROWS_MB"),
    "tokenizer": ("tokenizer.json files", "WHILEAI_MAX_TOKENIZER_MB"),
    "config": ("config files (prime-rl TOML, agent host configs, skill files, reward code)",
               "WHILEAI_MAX_CONFIG_MB"),
    "archive": ("what an archive (an Inspect .eval log) unpacks to", "WHILEAI_MAX_ARCHIVE_MB"),
}
TIMEOUT_ENV = "WHILEAI_READ_TIMEOUT_S"


def _default_mb() -> dict[str, float]:
    return {"rows": D.MAX_ROWS_FILE_MB, "tokenizer": D.MAX_TOKENIZER_FILE_MB,
            "config": D.MAX_CONFIG_FILE_MB, "archive": D.MAX_ARCHIVE_MB}


@dataclass(frozen=True)
class Limits:
    """How much the door reads: ``max_mb`` per kind of file (see ``FILE_KINDS``), and how long
    one read may take (``timeout_s``). Defaults in ``whileai_core.defaults``; the environment
    (``WHILEAI_MAX_<KIND>_MB``, ``WHILEAI_READ_TIMEOUT_S``) and the server's flags override them."""

    max_mb: Mapping[str, float] = field(default_factory=_default_mb)
    timeout_s: float = D.READ_TIMEOUT_S

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *,
                 max_mb: Mapping[str, float] | None = None,
                 timeout_s: float | None = None) -> Limits:
        """Defaults, then the environment, then the explicit values (the server's flags)."""
        env = os.environ if environ is None else environ
        sizes = _default_mb()
        for kind, (_, var) in FILE_KINDS.items():
            if env.get(var, "").strip():
                sizes[kind] = _positive(env[var], var, "a size in MB, e.g. 1024")
        for kind, value in (max_mb or {}).items():
            if kind not in FILE_KINDS:
                raise ArgumentError(f"unknown kind of file {kind!r} for a size limit", fix="one of "
                                    f"{', '.join(FILE_KINDS)}")
            sizes[kind] = _positive(value, f"the {kind} limit", "a size in MB, e.g. 1024")
        timeout = D.READ_TIMEOUT_S
        if env.get(TIMEOUT_ENV, "").strip():
            timeout = _positive(env[TIMEOUT_ENV], TIMEOUT_ENV, "seconds, e.g. 120")
        if timeout_s is not None:
            timeout = _positive(timeout_s, "the read timeout", "seconds, e.g. 120")
        return cls(max_mb=sizes, timeout_s=timeout)

    def max_bytes(self, kind: str) -> int:
        return int(self.max_mb[kind] * (1 << 20))


def _positive(value: Any, name: str, example: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number <= 0 or number > 1e9:
        raise ArgumentError(f"{name} is {value!r}; it must be a positive number", fix=f"{example}")
    return number


# --- errors ----------------------------------------------------------------------------------

def _fail(error: type[WhileaiError], where: str, problem: str, fix: str) -> WhileaiError:
    """``error`` in the caller's voice: "<where>: <problem>. Fix: <fix>"."""
    if issubclass(error, RowsError):
        return error(problem, source=where, fix=fix)
    return error(f"{where}: {problem}. Fix: {fix}")


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symlink"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISREG, "a regular file"))


def _kind_of(mode: int) -> str:
    return next((words for test, words in _KINDS if test(mode)), "not a regular file")


# --- what a tool may write under a confined root (the server's workspace) --------------------
#
# An allow-list: each writing argument declares what it writes (``Arg(OUT, writes=...)``, passed
# to ``Root.locate``) and a write lands only when the name fits that kind (a list of bad names
# cannot be complete). On top, because other programs read these formats too:
# - nothing hidden: no part of the path starts with '.' (.claude/, .github/, .git/hooks, .envrc);
# - not a name a program reads on its own where it finds it (``PROGRAM_FILES``,
#   ``PROGRAM_NAMES``, ``PROGRAM_PATHS``: package.json, pytest.toml, AGENTS.md...), compared by
#   ``name_key`` as a case-blind file system would ('AGENTſ.md' is AGENTS.md on macOS). A name
#   adopted later lands until it is added (``tests/test_redteam_check_gate.py``).
# Only ``whileai-skills init``, which the user runs, writes host configuration (``staged``).


@dataclass(frozen=True)
class Output:
    """What a writing argument writes: ``what`` (in words), the ``suffixes`` a file of it ends
    with, an ``example``; ``folder``: a data folder whose files the tool names itself."""

    what: str
    suffixes: tuple[str, ...] = ()
    example: str = ""
    folder: bool = False

    def allows(self, name: str) -> bool:
        return self.folder or name.lower().endswith(self.suffixes)

    def words(self) -> str:
        if self.folder:
            return f"{self.what} (a folder, e.g. {self.example})"
        ends = " or ".join(self.suffixes)
        return f"{self.what} (a name ending in {ends}, e.g. {self.example})"


OUTPUTS: dict[str, Output] = {
    "jsonl": Output("JSONL rows, records or tables", (".jsonl",), "out/records.jsonl"),
    "json": Output("a JSON list of task ids", (".json",), "holdout_tasks.json"),
    "toml": Output("a prime-rl TOML config", (".toml",), "configs/rl.toml"),
    "markdown": Output("a Markdown report", (".md",), "EXPERIMENTS.md"),
    "folder": Output("a data folder holding the files the tool documents", folder=True,
                     example="dpo-data"),
}
PROGRAM_FILES = frozenset({
    # JSON a program or host reads where it finds it
    "package.json", "package-lock.json", "tsconfig.json", "jsconfig.json", "deno.json",
    "composer.json", "crush.json", "opencode.json", "mcp.json", "devcontainer.json",
    "renovate.json", "vercel.json", "turbo.json", "nx.json", "lerna.json", "biome.json",
    "pyrightconfig.json", "babel.config.json", "devbox.json", "lefthook.json",
    "lefthook-local.json", "dprint.json", "vcpkg.json", "jsr.json", "angular.json",
    "project.json", "firebase.json",
    # TOML read by a build tool, a test runner or a package manager
    "pyproject.toml", "uv.toml", "ruff.toml", "cargo.toml", "rust-toolchain.toml", "mise.toml",
    "pixi.toml", "poetry.toml", "netlify.toml", "fly.toml", "wrangler.toml", "bunfig.toml",
    "hatch.toml", "pytest.toml", "tox.toml", "ty.toml", "pyrefly.toml", "pdm.toml",
    "lefthook.toml", "lefthook-local.toml", "makefile.toml", "treefmt.toml", "rustfmt.toml",
    "clippy.toml", "deny.toml", "typos.toml", "_typos.toml", "cliff.toml", "taplo.toml",
    "hugo.toml",
    # Markdown an agent obeys as instructions
    "agents.md", "agent.md", "claude.md", "claude.local.md", "gemini.md", "crush.md", "qwen.md",
    "warp.md", "conventions.md", "copilot-instructions.md", "skill.md", "agents.override.md",
    "amazonq.md", "codex.md"})
# names read by a pattern (a variant beside the main file): Codex's AGENTS.override.md and
# Claude Code's CLAUDE.local.md, mise's mise.local.toml and mise.<env>.toml
PROGRAM_NAMES = re.compile(r"(agents|agent|claude|gemini)\..+\.md|mise\..+\.toml")
# a file a program reads by its folder's name too (mise: mise/config.toml in a project)
PROGRAM_PATHS = frozenset({("mise", "config.toml")})


def name_key(name: str) -> str:
    """A file name as a case-insensitive file system compares it: NFKC ('ﬆ' is 'st'), Unicode
    case folding ('AGENTſ.md' is AGENTS.md), less the trailing dots and spaces Windows drops."""
    return unicodedata.normalize("NFKC", name).casefold().rstrip(". ")


def program_file(parts: tuple[str, ...]) -> str | None:
    """The part of ``parts`` that names a file another program reads on its own, or None."""
    if not parts:
        return None
    keys = tuple(name_key(part) for part in parts)
    if keys[-1] in PROGRAM_FILES or PROGRAM_NAMES.fullmatch(keys[-1]):
        return parts[-1]
    if keys[-2:] in PROGRAM_PATHS:
        return "/".join(parts[-2:])
    return None


def write_refusal(parts: tuple[str, ...], output: Output | None,
                  argument: str) -> tuple[str, str] | None:
    """(problem, fix) when a tool may not write ``parts`` (a path below a confined root) as
    ``output`` (its argument's declared kind; None: none declared); None when it may."""
    init = "to register the server with a host, run `whileai-skills init` yourself"
    hidden = next((part for part in parts if name_key(part).startswith(".")), None)
    if hidden is not None:
        is_folder = hidden != parts[-1]
        return (f"is hidden (`{hidden}{'/' if is_folder else ''}`): hosts, git, shells and CI "
                "keep their configuration in hidden files and folders, so no tool writes there",
                f"choose a path with no part starting with '.'; {init}")
    program = program_file(parts)
    if program is not None:
        return (f"is `{program}`, which another program (a build tool, a test runner, an agent "
                "host) reads on its own where it finds it (names compared as a case-blind file "
                "system compares them), so no tool writes it", f"choose another name; {init}")
    if output is None:
        return ("is not an output this tool declares (every write under the workspace is of a "
                "declared kind)", f"write through the tool's own output argument; {init}")
    if parts and not output.allows(parts[-1]):
        return (f"is not {output.what}: `{argument}` writes only {output.words()}, whatever the "
                "name", f"name it like {output.example}")
    return None


# the server's caller passes paths, so the fix is another path (or a copy inside the workspace)
_LINK_FIX_MCP = ("pass the file's real path, or copy the file itself into the workspace root (the "
                 "server follows no links: one can lead out of the root, or be swapped while the "
                 "file is read)")
_NO_LINKS = "no link is followed: one can lead elsewhere, or be swapped while in use"


def link_fix(shown: str, *, folder: bool) -> str:
    """The fix for the refused link ``shown``: to a server or Python caller, pass another path;
    at the shell, where the link is the user's own, replace it with what it stands for."""
    own = (f"replace the link `{shown}` with a real folder (copy in what it points to; "
           f"{_NO_LINKS})" if folder else
           f"replace the link `{shown}` with the file itself, or pass the file's real path "
           f"({_NO_LINKS})")
    return choose(python=_LINK_FIX_MCP, cli=own)


# --- roots -----------------------------------------------------------------------------------

class Root:
    """A folder, opened once as a directory handle; paths below it are opened through it.
    ``confined``: see the module docstring (a user's own path refuses no hard link)."""

    def __init__(self, path: str | os.PathLike, *, confined: bool = True,
                 limits: Limits | None = None, error: type[WhileaiError] = ArgumentError,
                 label: str = "--root") -> None:
        given = Path(path).expanduser()
        try:
            real = Path(os.path.realpath(given))
            fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            what = "is not a folder" if exc.errno in (errno.ENOTDIR, errno.ENOENT) else \
                f"cannot be opened ({exc.strerror})"
            raise error(f"{label} {str(path)!r} {what}. Fix: pass an existing folder (default: "
                        "the current directory)") from None
        self.path = real
        self.alias = Path(os.path.abspath(given))
        self.confined = confined
        self.limits = limits if limits is not None else Limits.from_env()
        self.fd = fd
        self._finalizer = weakref.finalize(self, os.close, fd)

    def __repr__(self) -> str:
        return f"<Root {self.path}{' confined' if self.confined else ''}>"

    def close(self) -> None:
        self._finalizer()

    def locate(self, value: Any, *, argument: str,
               writes: str | Output | None = None) -> UserPath:
        """``value`` (relative to the root, or absolute inside it) as a :class:`UserPath`; only
        the text is checked here. ``writes``: a key of ``OUTPUTS`` or an :class:`Output`."""
        output = OUTPUTS[writes] if isinstance(writes, str) else writes
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value.strip():
            raise ArgumentError(f"`{argument}` is empty", fix="give a path relative to the "
                                f"workspace root {self.path}")
        if "\x00" in value:
            raise ArgumentError(f"`{argument}` contains a NUL byte", fix="give a plain file path")
        given = PurePosixPath(value)
        if ".." in given.parts:
            raise ArgumentError(f"`{argument}` = {value!r} contains '..'; paths may not climb out "
                                f"of the workspace root {self.path}", fix="give the path relative "
                                "to the root without '..'")
        if given.is_absolute():
            for base in (self.path, self.alias):
                if given.is_relative_to(base):
                    given = given.relative_to(base)
                    break
            else:
                raise ArgumentError(f"`{argument}` = {value!r} is outside the workspace root "
                                    f"{self.path}", fix="use a file inside the root, or restart "
                                    "whileai-mcp with --root set to a folder that contains it")
        parts = tuple(p for p in given.parts if p not in (".", ""))
        # under a confined root a path is shown as the caller wrote it, relative to the root
        shown = ("/".join(parts) or ".") if self.confined else None
        return UserPath(self, parts, argument=argument, shown=shown, output=output)

    def relative(self, path: str | os.PathLike) -> str:
        """``path`` as a caller would write it: relative to the root when it is inside."""
        p = Path(os.fspath(path))
        for base in (self.path, self.alias):
            if p.is_relative_to(base):
                return p.relative_to(base).as_posix() or "."
        return str(p)


class UserPath:
    """A path under a :class:`Root`, opened only through the door's methods. ``str()`` is the
    path as the caller wrote it. No ``__fspath__`` on purpose: opening it by name fails loudly."""

    __slots__ = ("root", "parts", "argument", "shown", "output")

    def __init__(self, root: Root, parts: tuple[str, ...], *, argument: str,
                 shown: str | None = None, output: Output | None = None) -> None:
        self.root, self.parts, self.argument, self.output = root, parts, argument, output
        self.shown = shown if shown is not None else str(root.path.joinpath(*parts))

    def __str__(self) -> str:
        return self.shown

    @property
    def where(self) -> str:
        """The path and the argument it came from, for messages (at the shell the path alone)."""
        return self.shown if reader() == CLI else f"{self.shown} (`{self.argument}`)"

    def __repr__(self) -> str:
        return f"<UserPath {self.shown} ({self.argument})>"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, UserPath) and other.root is self.root
                and other.parts == self.parts)

    def __hash__(self) -> int:
        return hash((id(self.root), self.parts))

    @property
    def name(self) -> str:
        return self.parts[-1] if self.parts else ""

    @property
    def suffix(self) -> str:
        return PurePosixPath(self.name).suffix

    @property
    def stem(self) -> str:
        return PurePosixPath(self.name).stem

    @property
    def absolute(self) -> Path:
        """Where it is (for messages and records; never open this by name)."""
        return self.root.path.joinpath(*self.parts)

    # --- walking ---------------------------------------------------------------------------

    def _walk(self, folders: tuple[str, ...], error: type[WhileaiError], *,
              create: bool = False, made: list[tuple[int, str]] | None = None) -> int:
        """A new handle on the folder ``folders`` below the root, no link followed; each folder
        created is added to ``made`` (see :meth:`open_folder`)."""
        fd = os.dup(self.root.fd)
        try:
            for i, part in enumerate(folders):
                try:
                    nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise _fail(error, self.where, "no such file", self._missing_fix(
                            folders[:i + 1])) from None
                    try:
                        os.mkdir(part, 0o777, dir_fd=fd)
                    except FileExistsError:
                        pass
                    except OSError as exc:
                        why, fix = os_reason(exc)
                        raise _fail(error, self.where, f"cannot create the folder `{part}` "
                                    f"({why})", fix) from None
                    else:
                        if made is not None:
                            made.append((os.dup(fd), "/".join(folders[:i + 1])))
                    nxt = self._open_dir(part, fd, folders[:i + 1], error)
                except OSError as exc:
                    nxt = self._dir_error(part, fd, folders[:i + 1], exc, error)
                os.close(fd)
                fd = nxt
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _open_dir(self, part: str, fd: int, upto: tuple[str, ...],
                  error: type[WhileaiError]) -> int:
        try:
            return os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            return self._dir_error(part, fd, upto, exc, error)

    def _dir_error(self, part: str, fd: int, upto: tuple[str, ...], exc: OSError,
                   error: type[WhileaiError]) -> int:
        # under a confined root, the path as the caller wrote it; else the absolute path
        shown = "/".join(upto) if self.root.confined else str(self.root.path.joinpath(*upto))
        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
            mode = _lstat_mode(part, fd)
            if mode is not None and stat.S_ISLNK(mode):
                raise _fail(error, self.where, f"`{shown}` is a symlink"
                            + self._leads(part, fd, upto[:-1]),
                            link_fix(shown, folder=True)) from None
            raise _fail(error, self.where, f"no such file: `{shown}` is "
                        f"{_kind_of(mode or 0)}, not a folder", "check the path") from None
        if exc.errno == errno.EACCES:
            raise _fail(error, self.where, f"the folder `{shown}` cannot be opened (permission "
                        "denied)", "check the folder's permissions") from None
        raise _fail(error, self.where, f"the folder `{shown}` cannot be opened ({exc.strerror})",
                    "check the path") from None

    def _leads(self, name: str, dir_fd: int, folder: tuple[str, ...]) -> str:
        """Where a refused link points, for the message only (nothing is opened through it)."""
        if not self.root.confined:
            return ""
        try:
            target = os.readlink(name, dir_fd=dir_fd)
        except OSError:
            return ""
        real = Path(os.path.realpath(self.root.path.joinpath(*folder, target)))
        if real.is_relative_to(self.root.path):
            inside = real.relative_to(self.root.path).as_posix() or "."
            return choose(python=f" (to {inside} inside the root: pass that path instead)",
                          cli=f" (to {inside}, inside {self.root.path})")
        return choose(python=" that leads outside the workspace root",
                      cli=f" that leads outside {self.root.path}")

    def _missing_fix(self, upto: tuple[str, ...] | None = None) -> str:
        hint = f" (`{'/'.join(upto)}` does not exist)" if upto and upto != self.parts else ""
        return (f"check the path{hint}; "
                + relative_paths(self.root.path if self.root.confined else None))

    # --- reading ---------------------------------------------------------------------------

    def read_bytes(self, kind: str, *, error: type[WhileaiError] = ArgumentError,
                   default_child: str | None = None) -> bytes:
        """The file's bytes. ``kind`` picks the size limit (``FILE_KINDS``); ``default_child``:
        the file read instead when the path is a folder (``tokenizer.json``)."""
        return bytes(self._read(kind, error, default_child))

    def read_text(self, kind: str, *, error: type[WhileaiError] = ArgumentError,
                  default_child: str | None = None, fix: str = "save it as UTF-8 text") -> str:
        """The file as UTF-8 text, line ends normalised to ``\\n`` (as ``open()`` would)."""
        return decode_text(self._read(kind, error, default_child), self.where, error, fix)

    def _read(self, kind: str, error: type[WhileaiError], default_child: str | None) -> bytearray:
        if kind not in FILE_KINDS:
            raise ValueError(f"unknown kind of file {kind!r}")
        if not self.parts:
            if default_child is None:
                raise _fail(error, self.where, "is a directory, not a file",
                            "point at a file inside it")
            fd = os.dup(self.root.fd)
            name: str | None = default_child
        else:
            fd = self._walk(self.parts[:-1], error)
            name = self.parts[-1]
        try:
            shown = self.where
            handle = self._open_file(name, fd, error, shown, allow_dir=default_child is not None)
            if handle is None:  # a folder: read default_child inside it
                sub = self._open_dir(name, fd, self.parts, error)
                os.close(fd)
                fd = sub
                shown = f"{self.shown.rstrip('/')}/{default_child} (`{self.argument}`)"
                handle = self._open_file(default_child, fd, error, shown, allow_dir=False)
        finally:
            os.close(fd)
        try:
            data = self._read_handle(handle, kind, error, shown)
        finally:
            os.close(handle)
        return self._unpacked(data, kind, error, shown)

    def _unpacked(self, data: bytearray, kind: str, error: type[WhileaiError],
                  shown: str) -> bytearray:
        """``data`` as read, or unpacked when it is a gzip rows file (:func:`gunzip`)."""
        if kind != "rows" or data[:2] != GZIP_MAGIC:
            return data
        return bytearray().join(_admitted(gunzip(
            (bytes(data),), self.root.limits.max_bytes(kind), error, shown,
            lambda size: self._too_big(size, kind, error, shown, "unpacks to")), shown))

    def _open_file(self, name: str, dir_fd: int, error: type[WhileaiError], shown: str, *,
                   allow_dir: bool) -> int | None:
        """An fd on the regular file ``name`` in ``dir_fd``; None for a folder when allowed."""
        mode = _lstat_mode(name, dir_fd)
        if mode is None:
            raise _fail(error, shown, "no such file", self._missing_fix())
        if stat.S_ISDIR(mode):
            if allow_dir:
                return None
            raise _fail(error, shown, "is a directory, not a file", "point at a file inside it")
        if stat.S_ISLNK(mode):
            raise _fail(error, shown, "is a symlink" + self._leads(name, dir_fd, self.parts[:-1]),
                        link_fix(shown, folder=False))
        if not stat.S_ISREG(mode):  # refused before opening: a device is never even opened
            raise self._special(mode, error, shown)
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _fail(error, shown, "is a symlink", link_fix(shown, folder=False)) from None
            if exc.errno == errno.ENOENT:
                raise _fail(error, shown, "no such file", self._missing_fix()) from None
            if exc.errno == errno.ENXIO:
                raise _fail(error, shown, "is a socket, not a regular file",
                            "write the data to a regular file and pass that") from None
            reason = "permission denied" if exc.errno == errno.EACCES else exc.strerror
            raise _fail(error, shown, f"cannot be read ({reason})",
                        "check the file's permissions") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):  # swapped between the look and the open
                if stat.S_ISDIR(st.st_mode):
                    raise _fail(error, shown, "is a directory, not a file",
                                "point at a file inside it")
                raise self._special(st.st_mode, error, shown)
            if self.root.confined and st.st_nlink > 1:
                raise _fail(error, shown, f"has {st.st_nlink} hard links; the workspace refuses "
                            "hard-linked files, because a hard link to a file outside the root "
                            "cannot be told apart from a file inside it",
                            "copy the file (cp FILE FILE.copy) and pass the copy")
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        except BaseException:
            os.close(fd)
            raise
        return fd

    @staticmethod
    def _special(mode: int, error: type[WhileaiError], shown: str) -> WhileaiError:
        return _fail(error, shown, f"is {_kind_of(mode)}, not a regular file; reading it could "
                     "block or never end", "write the data to a regular file and pass that")

    def _read_handle(self, fd: int, kind: str, error: type[WhileaiError], shown: str) -> bytearray:
        limits = self.root.limits
        cap = limits.max_bytes(kind)
        size = os.fstat(fd).st_size
        if size > cap:
            raise self._too_big(size, kind, error, shown)
        if kind == "rows":
            admit(size, shown)  # a heavy read waits for its place (whileai_core.admission)
        deadline = time.monotonic() + limits.timeout_s
        buf = bytearray(size + 1)
        view = memoryview(buf)
        got = 0
        try:
            while True:
                if got == len(buf):  # the file grew while read: keep going, up to the cap
                    if got > cap:
                        raise self._too_big(got, kind, error, shown)
                    view.release()
                    buf.extend(bytes(min(_CHUNK, cap + 1 - got)))
                    view = memoryview(buf)
                n = os.readv(fd, [view[got:got + _CHUNK]])
                if n == 0:
                    break
                got += n
                if time.monotonic() > deadline:
                    raise _too_slow(error, shown, limits.timeout_s, got)
        except OSError as exc:
            raise _fail(error, shown, f"cannot be read ({exc.strerror})",
                        "check the file and its disk") from None
        finally:
            view.release()
        if got > cap:
            raise self._too_big(got, kind, error, shown)
        del buf[got:]
        return buf

    def _too_big(self, size: int, kind: str, error: type[WhileaiError], shown: str,
                 verb: str = "is") -> WhileaiError:
        limit = self.root.limits.max_mb[kind]
        what, var = FILE_KINDS[kind]
        need = math.ceil(size / (1 << 20)) + 1
        return _fail(error, shown, f"{verb} {size / (1 << 20):.1f} MB, over the {limit:g} MB "
                     f"limit for {what}", f"split it into smaller files, or raise the limit: "
                     f"{var}={need} in the environment (whileai-mcp: --max-file-mb {kind}={need})")

    # --- folders ---------------------------------------------------------------------------

    def child(self, *names: str) -> UserPath:
        """The path ``names`` below this one (each a single plain name: no '/', no '..')."""
        for name in names:
            if not isinstance(name, str) or name in ("", ".", "..") or "/" in name \
                    or "\x00" in name:
                raise ArgumentError(f"{self.where}: {name!r} is not a plain file name")
        parts = self.parts + tuple(names)
        shown = self.shown.rstrip("/") + "/" + "/".join(names) if names else self.shown
        # a data folder's files are the tool's own names: they keep the folder's kind
        output = self.output if self.output is not None and self.output.folder else None
        return UserPath(self.root, parts, argument=self.argument, shown=shown, output=output)

    @property
    def parent(self) -> UserPath:
        """The folder holding this path (the root's own path stays the root)."""
        if not self.parts:
            return self
        shown = str(Path(self.shown).parent)
        return UserPath(self.root, self.parts[:-1], argument=self.argument, shown=shown)

    def list_dir(self, *, error: type[WhileaiError] = ArgumentError) -> list[tuple[str, str]]:
        """``(name, kind)`` of each entry of this folder, sorted by name, no link followed
        (``kind`` as :meth:`kind` gives it)."""
        fd = self._walk(self.parts, error)
        try:
            entries = []
            with os.scandir(fd) as it:
                for entry in it:
                    try:
                        mode = entry.stat(follow_symlinks=False).st_mode
                    except OSError:
                        continue
                    entries.append((entry.name, _short_kind(mode)))
        except OSError as exc:
            raise _fail(error, self.where, f"cannot be listed ({exc.strerror})",
                        "check the folder's permissions") from None
        finally:
            os.close(fd)
        return sorted(entries)

    def open_folder(self, *, create: bool = False, made: list[tuple[int, str]] | None = None,
                    error: type[WhileaiError] = ArgumentError) -> int:
        """A descriptor on this folder, walked from the root without following a link (missing
        folders made with ``create``); the caller closes it. ``made``: each folder created is
        appended as (a descriptor on its parent, its ``/``-separated path below the root), so
        the caller can remove it by that descriptor; the caller closes those too."""
        return self._walk(self.parts, error, create=create, made=made)

    def __truediv__(self, name: str) -> UserPath:
        return self.child(*[n for n in str(name).split("/") if n not in ("", ".")])

    def with_name(self, name: str) -> UserPath:
        return self.parent.child(name)

    def iterdir(self, *, error: type[WhileaiError] = ArgumentError) -> list[UserPath]:
        """The entries of this folder as paths (links and special files included)."""
        return [self.child(name) for name, _ in self.list_dir(error=error)]

    def is_symlink(self) -> bool:
        return self.kind() == "link"

    def is_file(self) -> bool:
        return self.kind() == "file"

    def is_dir(self) -> bool:
        return self.kind() == "dir"

    def exists(self) -> bool:
        return self.kind() is not None

    def _open_leaf(self, error: type[WhileaiError]) -> int:
        """A descriptor on this path's file, opened through the door (the caller closes it)."""
        if not self.parts:
            raise _fail(error, self.where, "is a directory, not a file",
                        "point at a file inside it")
        fd = self._walk(self.parts[:-1], error)
        try:
            return self._open_file(self.parts[-1], fd, error, self.where, allow_dir=False)
        finally:
            os.close(fd)

    def _open_checked(self, kind: str, error: type[WhileaiError]) -> tuple[int, os.stat_result]:
        """A handle on this file, checked as :meth:`read_bytes` checks it, and its stat."""
        if kind not in FILE_KINDS:
            raise ValueError(f"unknown kind of file {kind!r}")
        handle = self._open_leaf(error)
        try:
            st = os.fstat(handle)
            if st.st_size > self.root.limits.max_bytes(kind):
                raise self._too_big(st.st_size, kind, error, self.where)
        except BaseException:
            os.close(handle)
            raise
        return handle, st

    def open_binary(self, kind: str, *, error: type[WhileaiError] = ArgumentError):
        """A read-only binary file object on the checked handle (for a zip archive, say); the
        caller closes it. Reads through it are not timed."""
        handle, st = self._open_checked(kind, error)
        if kind == "rows":
            try:
                admit(st.st_size, self.where)  # a heavy read waits for its place (admission)
            except BaseException:
                os.close(handle)
                raise
        return os.fdopen(handle, "rb")

    def open_stream(self, kind: str, *, error: type[WhileaiError] = ArgumentError) -> OpenFile:
        """The checked file for reading in chunks within the limits (:class:`OpenFile`)."""
        handle, st = self._open_checked(kind, error)
        return OpenFile(self, handle, st, kind, error)

    def check_file(self, *, error: type[WhileaiError] = ArgumentError) -> None:
        """Raise unless this path opens as a regular file by the door's rules; nothing is read
        (for a file another program opens by name, which can still change after)."""
        handle = self._open_leaf(error)
        os.close(handle)

    def open_archive(self, kind: str, *, error: type[WhileaiError] = ArgumentError):
        """:meth:`open_binary` for a zip archive (an Inspect ``.eval`` log), checked unpacked.

        Against a zip bomb, every member is unpacked here in bounded steps and counted, not
        kept: the total must fit both the ``kind`` and the ``archive`` limit, and no member may
        unpack past the size its header declares (a caller's zip reader stops there). Encrypted
        members and methods other than stored, deflate and zstd are refused. Timed."""
        limits = self.root.limits
        bound = "archive" if limits.max_bytes("archive") < limits.max_bytes(kind) else kind
        fh = self.open_binary(bound, error=error)
        try:
            unpacked = _check_archive(
                fh, limits, bound, error, self.where,
                lambda size: self._too_big(size, bound, error, self.where, "unpacks to"))
            admit(unpacked, self.where)  # counted by what it unpacks to
            fh.seek(0)
        except BaseException:
            fh.close()
            raise
        return fh

    # --- looking ---------------------------------------------------------------------------

    def kind(self) -> str | None:
        """"file", "dir", "link", "special", or None when nothing is there (no link followed).
        For messages and choices only: it can be stale by the time anything is opened."""
        if not self.parts:
            return "dir"
        try:
            fd = self._walk(self.parts[:-1], ArgumentError)
        except ArgumentError:
            return None
        try:
            mode = _lstat_mode(self.parts[-1], fd)
        finally:
            os.close(fd)
        return None if mode is None else _short_kind(mode)

    # --- writing ---------------------------------------------------------------------------

    def write_bytes(self, data: bytes, *, overwrite: bool = False,
                    error: type[WhileaiError] = ConfigError) -> Path:
        """Write ``data`` atomically (module docstring); missing folders are created."""
        if not self.parts:
            raise _fail(error, self.where, "is a directory, not a file",
                        "name a file to write, e.g. out/result.jsonl")
        self.check_writable(error)
        name = self.parts[-1]
        fd = self._walk(self.parts[:-1], error, create=True)
        tmp = temp_name(name)
        try:
            self._check_target(name, fd, overwrite, error)
            sweep_temps(fd)  # what a killed write left in this folder
            try:
                out = os.open(tmp, _TEMP_FLAGS, 0o666, dir_fd=fd)  # 0o666 less the umask
            except OSError as exc:
                why, fix = os_reason(exc)
                raise _fail(error, self.where, f"cannot be written ({why})", fix) from None
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(out, view):]
                kept = _lstat_mode(name, fd)  # a file replaced keeps its permissions (0600...)
                if kept is not None and stat.S_ISREG(kept):
                    os.fchmod(out, stat.S_IMODE(kept))
                os.fsync(out)
            finally:
                os.close(out)
            if overwrite:
                self._check_target(name, fd, overwrite, error)
                os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            else:
                try:  # link() fails if the target appeared meanwhile: no clobber in a race
                    os.link(tmp, name, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
                except FileExistsError:
                    raise self._exists(error) from None
                except OSError:  # a file system without hard links
                    self._check_target(name, fd, overwrite, error)
                    os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
                else:
                    os.unlink(tmp, dir_fd=fd)
            with suppress(OSError):
                os.fsync(fd)
        except OSError as exc:
            why, fix = os_reason(exc)
            raise _fail(error, self.where, f"cannot be written ({why})", fix) from None
        finally:
            with suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
            os.close(fd)
        return self.absolute

    def check_writable(self, error: type[WhileaiError] = ConfigError) -> None:
        """Raise unless a tool may write here: under a confined root, a name that fits the
        argument's declared kind (``write_refusal``); anywhere else, the user's own path."""
        refusal = (write_refusal(self.parts, self.output, self.argument)
                   if self.root.confined else None)
        if refusal is not None:  # decided from the argument's declared kind (OUTPUTS)
            raise _fail(error, self.where, *refusal)

    def write_text(self, text: str, *, overwrite: bool = False,
                   error: type[WhileaiError] = ConfigError) -> Path:
        return self.write_bytes(text.encode("utf-8"), overwrite=overwrite, error=error)

    def _check_target(self, name: str, fd: int, overwrite: bool,
                      error: type[WhileaiError]) -> None:
        mode = _lstat_mode(name, fd)
        if mode is None:
            return
        if not stat.S_ISREG(mode):
            raise _fail(error, self.where, f"exists and is {_kind_of(mode)}, not a regular file; "
                        f"it is never replaced, with or without {arg('overwrite')}",
                        "choose another path")
        if not overwrite:
            raise self._exists(error)

    def _exists(self, error: type[WhileaiError]) -> WhileaiError:
        return error(f"{self.where} already exists; not overwriting it. Fix: pass "
                     f"{arg('overwrite', True)} or choose another path")


class OpenFile:
    """A regular file opened through the door (:meth:`UserPath.open_stream`): its ``stat`` as
    opened, and reads that keep the door's limits (the size, even for a file that grows while
    read; the time spent reading, not what the caller does between chunks)."""

    __slots__ = ("path", "fd", "stat", "kind", "error", "_closed")

    def __init__(self, path: UserPath, fd: int, st: os.stat_result, kind: str,
                 error: type[WhileaiError]) -> None:
        self.path, self.fd, self.stat, self.kind, self.error = path, fd, st, kind, error
        self._closed = False

    def __enter__(self) -> OpenFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self.fd)

    def read_at(self, offset: int, size: int) -> bytes:
        try:
            return os.pread(self.fd, size, offset)
        except OSError as exc:
            raise _fail(self.error, self.path.where, f"cannot be read ({exc.strerror})",
                        "check the file and its disk") from None

    def read_all(self) -> bytearray:
        """The whole file, read in chunks into one buffer (no second copy)."""
        buf = bytearray(self.stat.st_size)
        got = 0
        for data in self.chunks():
            if got + len(data) > len(buf):  # the file grew while read
                del buf[got:]
                buf += data
            else:
                buf[got:got + len(data)] = data
            got += len(data)
        del buf[got:]
        return buf

    def chunks(self, size: int = _CHUNK):
        """The file's bytes from the start, ``size`` at a time; a rows file is admitted first
        (``whileai_core.admission``) and unpacked as read when gzip (:func:`gunzip`)."""
        if self.kind != "rows" or self.read_at(0, 2) != GZIP_MAGIC:
            return self._raw_chunks(size, self.stat.st_size)
        # admitted by what it unpacks to, counted as it unpacks (a trailer's size is only its
        # last member's, mod 2**32: RFC 1952)
        where, error = self.path.where, self.error
        return _admitted(gunzip(
            self._raw_chunks(size, self.stat.st_size), self.path.root.limits.max_bytes(
                self.kind), error, where, lambda got: self.path._too_big(got, self.kind, error,
                                                                         where, "unpacks to"),
            size), where)

    def _raw_chunks(self, size: int, admitted: int):
        if self.kind == "rows":
            admit(admitted, self.path.where)
        limits = self.path.root.limits
        cap = limits.max_bytes(self.kind)
        spent = 0.0
        offset = 0
        while True:
            t0 = time.monotonic()
            data = self.read_at(offset, min(size, cap + 1 - offset))
            spent += time.monotonic() - t0
            if not data:
                return
            offset += len(data)
            if offset > cap:
                raise self.path._too_big(offset, self.kind, self.error, self.path.where)
            if spent > limits.timeout_s:
                raise _too_slow(self.error, self.path.where, limits.timeout_s, offset)
            if self.kind == "rows":  # a long parse reports, and a cancelled call stops, here
                step(1 + 0.99 * offset / max(self.stat.st_size, offset), 3,
                     f"parsing: {offset:,} of {self.stat.st_size:,} bytes")
            yield data


def decode_text(data: bytes | bytearray, where: str, error: type[WhileaiError],
                fix: str = "save it as UTF-8 text") -> str:
    """``data`` as UTF-8 text: a leading byte-order mark dropped (RFC 8259 section 8.1 lets a
    reader ignore it), line ends normalised to ``\\n`` as ``open()`` would."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(error, where, f"is not UTF-8 text (byte {exc.start})", fix) from None
    if text.startswith(BOM):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


BOM = "\ufeff"


def _too_slow(error: type[WhileaiError], shown: str, timeout_s: float, got: int) -> WhileaiError:
    return _fail(error, shown, f"reading took longer than {timeout_s:g} s "
                 f"({got / (1 << 20):.1f} MB read)",
                 "copy the file to a local disk, or raise the limit: "
                 f"{TIMEOUT_ENV}=<seconds> (whileai-mcp: --read-timeout S)")


# --- temporary files of writes: named so a killed write's leftovers can be told and removed ---

_TEMP = re.compile(r"^\.(?P<name>.+)\.whileai-(?P<pid>\d+)-[0-9a-f]{12}\.tmp$")


def temp_name(name: str) -> str:
    """The temporary file a write of ``name`` goes through: hidden, beside it, carrying the
    writer's pid, so one left by a killed process can be told and removed."""
    return f".{name[:160]}.whileai-{os.getpid()}-{secrets.token_hex(6)}.tmp"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def sweep_temps(dir_fd: int) -> int:
    """Remove, in the folder ``dir_fd``, the temporary files of writes whose process is gone
    (regular files named by :func:`temp_name`, nothing followed); how many were removed."""
    removed = 0
    try:
        with os.scandir(dir_fd) as entries:
            names = [e.name for e in entries if e.name.startswith(".") and e.name.endswith(".tmp")]
    except OSError:
        return 0
    for name in names:
        match = _TEMP.match(name)
        if match is None or _alive(int(match["pid"])):
            continue
        mode = _lstat_mode(name, dir_fd)
        if mode is not None and stat.S_ISREG(mode):
            with suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
                removed += 1
    return removed


def sweep_root(root: Root, *, max_folders: int = 10_000) -> int:
    """:func:`sweep_temps` in the root and the folders below it (no link followed, at most
    ``max_folders``, skipping ``_SWEEP_SKIP``), as the server starts; how many were removed."""
    removed, queue, seen = 0, [os.dup(root.fd)], 0
    while queue and seen < max_folders:
        fd = queue.pop()
        seen += 1
        try:
            removed += sweep_temps(fd)
            with os.scandir(fd) as entries:
                folders = [e.name for e in entries if e.is_dir(follow_symlinks=False)
                           and e.name not in _SWEEP_SKIP]
            for name in folders:
                with suppress(OSError):
                    queue.append(os.open(name, _DIR_FLAGS, dir_fd=fd))
        except OSError:
            pass
        finally:
            os.close(fd)
    for fd in queue:
        os.close(fd)
    return removed


_SWEEP_SKIP = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__",
                         ".mypy_cache", ".pytest_cache", ".tox"})


GZIP_MAGIC = b"\x1f\x8b"  # RFC 1952, section 2.3.1


def gunzip(chunks, cap: int, error: type[WhileaiError], shown: str, too_big,
           step: int = _CHUNK):
    """The bytes the gzip stream ``chunks`` unpacks to, about ``step`` at a time, every member
    in turn (``cat a.gz b.gz`` is valid gzip). The total is counted as it is produced, at most
    ``_UNPACK_STEP`` per call, and ``too_big(total)`` raised once it passes ``cap``."""
    pending, held = [], 0
    for piece in _gunzip(chunks, cap, error, shown, too_big, min(step, _UNPACK_STEP)):
        pending.append(piece)
        held += len(piece)
        if held >= step:
            yield b"".join(pending)
            pending, held = [], 0
    if pending:
        yield b"".join(pending)


def _admitted(pieces, where: str):
    """``pieces`` (a rows file's unpacked bytes) as they come, the read admitted
    (``whileai_core.admission``) by the bytes unpacked so far: heavy once they are."""
    total = 0
    for piece in pieces:
        total += len(piece)
        admit(total, where)
        yield piece


def _gunzip(chunks, cap: int, error: type[WhileaiError], shown: str, too_big, step: int):
    total = 0
    inflate, fed = zlib.decompressobj(31), False
    for data in chunks:
        if not fed:
            data = data.lstrip(b"\x00")  # zero padding after a member (gzip(1) skips it too)
        while data or (fed and not inflate.eof):  # (no input left: drain what is pending)
            fed = True
            try:
                piece = inflate.decompress(data, step)
            except zlib.error as exc:
                raise _fail(error, shown, f"is not valid gzip data ({exc})",
                            "check the file (gzip -t FILE), or pass it uncompressed") from None
            total += len(piece)
            if total > cap:
                raise too_big(total)
            if piece:
                yield piece
            if inflate.eof:  # one member ended; what follows is the next one
                data = inflate.unused_data.lstrip(b"\x00")
                inflate, fed = zlib.decompressobj(31), False
            else:
                data = inflate.unconsumed_tail
                if not data and not piece:
                    break  # the next chunk carries on
    if fed and not inflate.eof:
        raise _fail(error, shown, "is a gzip file cut short (its stream does not end)",
                    "check the file (gzip -t FILE): copy it again, or pass it uncompressed")


_ZIP_STORED, _ZIP_DEFLATED, _ZIP_ZSTANDARD = 0, 8, 93
_UNPACK_STEP = 1 << 20        # at most this many unpacked bytes held at once while counting
_MAX_MEMBERS = 200_000


def _check_archive(fh, limits: Limits, kind: str, error: type[WhileaiError], shown: str,
                   too_big) -> int:
    """What the zip ``fh`` unpacks to; raise unless every member unpacks within its declared
    size and the total within the ``kind`` limit (see :meth:`UserPath.open_archive`)."""
    import struct
    import zipfile

    def bad(problem: str, fix: str = "pass the archive the tool wrote, unmodified"):
        return _fail(error, shown, problem, fix)

    try:
        infos = zipfile.ZipFile(fh).infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise bad(f"is not a readable zip archive ({exc})") from None
    if len(infos) > _MAX_MEMBERS:
        raise bad(f"holds {len(infos)} members, over the {_MAX_MEMBERS} accepted")
    cap = limits.max_bytes(kind)
    declared = sum(i.file_size for i in infos)
    if declared > cap:
        raise too_big(declared)
    unpacked = 0
    deadline = time.monotonic() + limits.timeout_s
    for info in infos:
        if info.flag_bits & 0x1:
            raise bad(f"member {info.filename!r} is encrypted", "pass an unencrypted archive")
        fh.seek(info.header_offset)
        head = fh.read(30)
        if len(head) != 30 or head[:4] != b"PK\x03\x04":
            raise bad(f"member {info.filename!r} has no local header where the directory says")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        fh.seek(info.header_offset + 30 + name_len + extra_len)
        got = _unpacked_size(fh, info.compress_size, info.compress_type, info.file_size,
                             bad, info.filename, deadline, limits.timeout_s)
        if got > info.file_size:
            raise bad(f"member {info.filename!r} unpacks past the {info.file_size} bytes its "
                      "header declares (a zip bomb's trick)")
        unpacked += got
    return unpacked


def _unpacked_size(fh, packed: int, method: int, declared: int, bad, member: str,
                   deadline: float, timeout_s: float) -> int:
    """How many bytes the member at ``fh`` unpacks to, counted up to ``declared + 1``."""
    def chunks():
        left = packed
        while left > 0:
            if time.monotonic() > deadline:
                raise bad(f"unpacking took longer than {timeout_s:g} s", "raise the limit: "
                          f"{TIMEOUT_ENV}=<seconds> (whileai-mcp: --read-timeout S)")
            data = fh.read(min(left, 1 << 16))
            if not data:
                raise bad(f"member {member!r} is cut short")
            left -= len(data)
            yield data

    if method == _ZIP_STORED:
        return packed
    total = 0
    if method == _ZIP_DEFLATED:
        inflate = zlib.decompressobj(-15)
        try:
            for data in chunks():
                while data:
                    total += len(inflate.decompress(data, _UNPACK_STEP))
                    if total > declared:
                        return total
                    data = inflate.unconsumed_tail
        except zlib.error as exc:
            raise bad(f"member {member!r} is not valid deflate data ({exc})") from None
        return total
    if method == _ZIP_ZSTANDARD:
        try:
            import zstandard
        except ImportError:
            raise bad(f"member {member!r} is zstd-compressed and the zstandard package is not "
                      "installed", "pip install zstandard (inspect_ai installs it)") from None

        class _Source:  # the member's packed bytes, for zstandard's bounded reader
            def __init__(self) -> None:
                self.it = chunks()

            def read(self, n: int = -1) -> bytes:
                return next(self.it, b"")

        try:
            with zstandard.ZstdDecompressor().stream_reader(
                    _Source(), read_across_frames=True, closefd=False) as reader:
                while True:
                    piece = reader.read(_UNPACK_STEP)
                    if not piece:
                        return total
                    total += len(piece)
                    if total > declared:
                        return total
        except zstandard.ZstdError as exc:
            raise bad(f"member {member!r} is not valid zstd data ({exc})") from None
    raise bad(f"member {member!r} uses compression method {method}, which is not read here",
              "write the archive with deflate or zstd (Inspect's own writer does)")


def _short_kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    return "link" if stat.S_ISLNK(mode) else "special"


def _lstat_mode(name: str, dir_fd: int) -> int | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None
    except OSError:
        return 0


# --- a user's own path (CLI, library, recipes) -------------------------------------------------

def user_path(path: str | os.PathLike, *, argument: str = "path", for_write: bool = False,
              limits: Limits | None = None, error: type[WhileaiError] = ArgumentError) -> UserPath:
    """A path the user typed, resolved as their shell would (``os.path.realpath``), then
    walked from ``/`` and opened by the door's rules, hard links allowed. ``for_write`` creates
    the missing parent folders first."""
    if isinstance(path, UserPath):
        if for_write and isinstance(path, StreamPath):
            raise path._not_written(argument, error)
        return path
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip():
        raise ArgumentError(f"`{argument}` is empty", fix="give a file path")
    if "\x00" in text:
        raise ArgumentError(f"`{argument}` contains a NUL byte", fix="give a plain file path")
    fd = stream_fd(text)
    if fd is not None or (for_write and text in OUTPUT_STREAMS):
        stream = StreamPath(1 if fd is None else fd, text, argument=argument, limits=limits)
        if for_write:
            raise stream._not_written(argument, error)
        return stream
    given = Path(text).expanduser()
    if for_write:
        folder = Path(os.path.realpath(given)).parent
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            why, fix = os_reason(exc, exc.filename)
            raise _fail(error, text, f"cannot create the folder {folder} ({why})", fix) from None
    real = Path(os.path.realpath(given))
    root = Root(real.anchor or "/", confined=False, limits=limits, error=error,
                label="the file-system root")
    return UserPath(root, real.parts[1:], argument=argument, shown=str(given))


# --- standard input and inherited pipes ------------------------------------------------------

STDIN_NAMES = ("-", "/dev/stdin")   # `-`: the POSIX utilities' convention for standard input
OUTPUT_STREAMS = ("/dev/stdout", "/dev/stderr")
# a descriptor the shell hands over: bash and zsh pass `<(cmd)` as /dev/fd/N (Linux and macOS);
# /proc/self/fd/N is the same descriptor named through procfs
_FD_PATH = re.compile(r"^/(?:dev|proc/self)/fd/(\d{1,9})$")
_STREAMS: dict[tuple[int, int, int], bytes] = {}  # what each stream held, read once: by
# descriptor and the pipe's identity (a descriptor number is reused by the next pipe opened)
_STREAMS_LOCK = threading.Lock()


def stream_fd(text: str) -> int | None:
    """The descriptor ``text`` names when it is standard input (``-``, ``/dev/stdin``) or an
    inherited one (``/dev/fd/N``, a shell's process substitution), else None."""
    if text in STDIN_NAMES:
        return 0
    match = _FD_PATH.match(text)
    return int(match[1]) if match else None


class StreamPath(UserPath):
    """Standard input, or a descriptor the shell passed (``<(cmd)``), read as a file would be.

    The first read takes all of it into memory, within the size and time limits, and later
    reads of the same descriptor get the same bytes. A terminal and an empty stream are
    refused; nothing is written to one. Only :func:`user_path` makes one, never a confined root
    (the server never reads its own protocol stream)."""

    __slots__ = ("fd",)

    def __init__(self, fd: int, text: str, *, argument: str, limits: Limits | None) -> None:
        root = Root("/", confined=False, limits=limits, label="the file-system root")
        super().__init__(root, (), argument=argument,
                         shown="<stdin>" if text in STDIN_NAMES else text)
        self.fd = fd

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StreamPath) and other.fd == self.fd

    def __hash__(self) -> int:
        return hash(("stream", self.fd))

    @property
    def name(self) -> str:
        return self.shown

    @property
    def suffix(self) -> str:
        return ""

    @property
    def absolute(self) -> Path:
        return Path("/dev/stdin" if self.fd == 0 else f"/dev/fd/{self.fd}")

    def kind(self) -> str | None:
        return "file"

    def check_file(self, *, error: type[WhileaiError] = ArgumentError) -> None:
        return None

    def _read(self, kind: str, error: type[WhileaiError], default_child: str | None) -> bytearray:
        return self._unpacked(bytearray(self._bytes(kind, error)), kind, error, self.where)

    def open_stream(self, kind: str, *, error: type[WhileaiError] = ArgumentError) -> OpenFile:
        return _BufferFile(self, self._bytes(kind, error), kind, error)

    def open_binary(self, kind: str, *, error: type[WhileaiError] = ArgumentError):
        return io.BytesIO(self._bytes(kind, error))

    def list_dir(self, *, error: type[WhileaiError] = ArgumentError) -> list[tuple[str, str]]:
        raise _fail(error, self.where, "is a stream, not a folder", "pass the folder's path")

    def open_folder(self, *, create: bool = False,
                    error: type[WhileaiError] = ArgumentError) -> int:
        raise _fail(error, self.where, "is a stream, not a folder", "pass the folder's path")

    def child(self, *names: str) -> UserPath:
        raise ArgumentError(f"{self.where} is a stream, not a folder", fix="pass the folder's path")

    def write_bytes(self, data: bytes, *, overwrite: bool = False,
                    error: type[WhileaiError] = ConfigError) -> Path:
        raise self._not_written(self.argument, error)

    def _not_written(self, argument: str, error: type[WhileaiError]) -> WhileaiError:
        return _fail(error, self.shown, "is a stream; results are written to files here, never "
                     "to standard input or output", f"give {arg(argument)} a file path, e.g. "
                     "result.jsonl")

    def _bytes(self, kind: str, error: type[WhileaiError]) -> bytes:
        """The descriptor's bytes, read once (the class docstring), within ``kind``'s limit."""
        if kind not in FILE_KINDS:
            raise ValueError(f"unknown kind of file {kind!r}")
        try:
            st = os.fstat(self.fd)
        except OSError:
            raise _fail(error, self.where, "is not open in this process", "pipe the data in "
                        "(e.g. `cat rows.jsonl | whileai-skills pass-at -`) or pass a file path"
                        ) from None
        key = (self.fd, st.st_dev, st.st_ino)
        with _STREAMS_LOCK:
            data = _STREAMS.get(key)
            if data is None:
                data = _STREAMS[key] = self._drain(st.st_mode, kind, error)
        if len(data) > self.root.limits.max_bytes(kind):
            raise self._too_big(len(data), kind, error, self.where)
        if kind == "rows":
            admit(len(data), self.where)
        return data

    def _drain(self, mode: int, kind: str, error: type[WhileaiError]) -> bytes:
        if os.isatty(self.fd):
            raise _fail(error, self.where, "is a terminal: nothing is piped in", "pipe the data "
                        "in (e.g. `cat rows.jsonl | whileai-skills pass-at -`) or pass a file path")
        if stat.S_ISDIR(mode):
            raise _fail(error, self.where, "is a directory, not a file", "pipe a file in")
        limits = self.root.limits
        cap = limits.max_bytes(kind)
        deadline = time.monotonic() + limits.timeout_s
        parts, got = [], 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise _too_slow(error, self.where, limits.timeout_s, got)
            try:
                data = os.read(self.fd, min(_CHUNK, cap + 1 - got))
            except OSError as exc:
                raise _fail(error, self.where, f"cannot be read ({exc.strerror})",
                            "pipe the data in again, or pass a file path") from None
            if not data:
                break
            got += len(data)
            if got > cap:
                raise self._too_big(got, kind, error, self.where)
            parts.append(data)
        if not got:
            raise _fail(error, self.where, "is empty: nothing was piped in", "check the command "
                        "before the pipe (it wrote nothing), or pass a file path")
        return b"".join(parts)


class _BufferFile(OpenFile):
    """An :class:`OpenFile` over bytes already read (a stream's): the same chunks and limits."""

    __slots__ = ("data",)

    def __init__(self, path: StreamPath, data: bytes, kind: str,
                 error: type[WhileaiError]) -> None:
        mode = stat.S_IFREG | 0o400
        st = os.stat_result((mode, path.fd, 0, 1, os.getuid(), os.getgid(), len(data), 0, 0, 0))
        super().__init__(path, -1, st, kind, error)
        self.data = data

    def close(self) -> None:
        self._closed = True

    def read_at(self, offset: int, size: int) -> bytes:
        return self.data[offset:offset + size]


def as_user_path(source: Any, root: Root | None, *, argument: str, for_write: bool = False,
                 error: type[WhileaiError] = ArgumentError) -> UserPath:
    """``source`` through the door: a :class:`UserPath` as it is; a str or path under ``root``
    when one is given (confined), else as the user's own path (:func:`user_path`)."""
    if isinstance(source, UserPath):
        return source
    if root is not None:
        return root.locate(source, argument=argument)
    return user_path(source, argument=argument, for_write=for_write, error=error)


def is_path(source: Any) -> bool:
    """Whether ``source`` names a file (a str, an ``os.PathLike`` or a :class:`UserPath`)."""
    return isinstance(source, (str, os.PathLike, UserPath))


def read_text(path: Any, kind: str, *, root: Root | None = None, argument: str = "path",
              error: type[WhileaiError] = ArgumentError, fix: str = "save it as UTF-8 text") -> str:
    """Convenience: ``as_user_path(path, root).read_text(kind)``."""
    return as_user_path(path, root, argument=argument, error=error).read_text(
        kind, error=error, fix=fix)


def write_text(path: Any, text: str | bytes, *, overwrite: bool = False, root: Root | None = None,
               argument: str = "out", error: type[WhileaiError] = ConfigError) -> Path:
    """Convenience: write through the door (atomic; see :meth:`UserPath.write_bytes`)."""
    target = as_user_path(path, root, argument=argument, for_write=True, error=error)
    data = text.encode("utf-8") if isinstance(text, str) else text
    return target.write_bytes(data, overwrite=overwrite, error=error)
