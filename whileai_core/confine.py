"""What holds a process that runs user code (a reward, a local run's recipe and its grader):
its privileges, its limits, what it can see and its whole process tree.

The supervisor (``hacking._reward_child``, ``runs._wrapper``) hands :func:`contain` a function
that starts the worker (the process that runs user code). Where the kernel allows it
(unprivileged user namespaces), the worker starts in namespaces of its own [4]:

- a **PID namespace** whose init (ours) supervises it: the worker cannot signal or trace any
  process outside, nor kill its init; when the init ends, the kernel kills every process left;
- a **mount namespace** with that namespace's ``/proc``: no other process's environment or
  command line can be read;
- a **user namespace** mapping the user to itself, needed to make the other two unprivileged.

Two helper processes stand between, each killed with its parent (``PR_SET_PDEATHSIG``). Where the
namespaces cannot be made, the worker starts under the caller and :attr:`Contained.isolated`
says so. Either way the supervisor, before user code starts, calls :func:`become_subreaper`
(what user code leaves behind comes back to it, for :func:`kill_tree` [1]),
:func:`drop_privileges` (no new privileges, no capability: without ``CAP_SYS_PTRACE`` even uid 0
cannot read a non-dumpable process [2]) and :func:`limit_processes` (``RLIMIT_NPROC``, which
the kernel does not apply to uid 0 outside a user namespace [3]: there :func:`supervise` counts
the tree every ``POLL_S``). :func:`supervise` then waits with the time limit and kills every
descendant. The server calls :func:`undumpable` on itself first, so a child of the same user
cannot read its environment, memory or descriptors [2].

Standard library only: the reward child loads this file by its path under ``python -I``. Off
Linux every call is a no-op that says so (returns False or None).

[1] prctl(2), PR_SET_CHILD_SUBREAPER. [2] ptrace(2), "Ptrace access mode checking"; proc(5),
    /proc/pid/environ. [3] setrlimit(2), RLIMIT_NPROC. [4] user_namespaces(7),
    pid_namespaces(7) ("The namespace init process"), mount_namespaces(7), unshare(2).
"""

import ctypes
import ctypes.util
import json
import os
import select
import signal
import sys
import time
from contextlib import suppress
from typing import Callable, NamedTuple

PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 4, 24
PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 36, 38
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
START_WAIT_S = 10.0  # how long contain() waits for the namespaces before it goes without
_CAP_VERSION_3 = 0x20080522
POLL_S = 0.05  # how often supervise() counts the tree (uid 0 only needs it; cheap otherwise)
KILL_ROUNDS_S = 5.0  # kill_tree keeps killing what appears for at most this long

# how supervise() says a worker ended (its exit code is the second item); contain() adds
# NOT_STARTED (the function that starts the worker raised OSError)
EXITED, TIMED_OUT, TOO_MANY, STOPPED = "exited", "timed_out", "too_many_processes", "stopped"
NOT_STARTED = "not_started"

_libc_handle = None


def _libc():
    global _libc_handle
    if _libc_handle is None:
        try:
            _libc_handle = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        except OSError:
            _libc_handle = False
    return _libc_handle or None


def _signal(pid: int, signum: int) -> None:
    with suppress(ProcessLookupError):
        os.kill(pid, signum)


def _wait(pid: int) -> None:
    """Reap the child ``pid`` (nothing to do when it was reaped already)."""
    while True:
        try:
            os.waitpid(pid, 0)
            return
        except InterruptedError:
            continue
        except ChildProcessError:
            return


def _prctl(option: int, value: int = 0) -> bool:
    libc = _libc()
    if libc is None or not hasattr(libc, "prctl"):
        return False
    return libc.prctl(option, ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
                      ctypes.c_ulong(0)) == 0


def undumpable() -> bool:
    """Make this process non-dumpable (see the module docstring): its ``/proc`` files and memory
    are closed to the children it starts. True when it took effect."""
    return _prctl(PR_SET_DUMPABLE, 0)


def become_subreaper() -> bool:
    """Orphaned descendants are re-parented to this process. True when it took effect."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def capabilities() -> int | None:
    """This process's effective capabilities as a bit mask (``CapEff`` in /proc/self/status),
    or None where that cannot be read."""
    with suppress(OSError, ValueError, IndexError):
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    return None


def drop_privileges() -> bool:
    """No new privileges, and no capability left (a no-op for an unprivileged user, who has
    none). True when this process ends with no effective capability."""
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    if capabilities():
        for cap in range(64):  # the bounding set first: an exec by uid 0 cannot get them back
            if not _prctl(PR_CAPBSET_DROP, cap) and ctypes.get_errno() == 22:  # EINVAL: past the last
                break
        libc = _libc()
        if libc is not None and hasattr(libc, "capset"):
            libc.capset(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), (_CapData * 2)())
    return not capabilities()


def _user_tasks(uid: int) -> int:
    """Tasks (threads included, as RLIMIT_NPROC counts them) whose real user id is ``uid``."""
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as fh:
                real = threads = None
                for line in fh:
                    if line.startswith("Uid:"):
                        real = int(line.split()[1])
                    elif line.startswith("Threads:"):
                        threads = int(line.split()[1])
                        break
        except (OSError, ValueError, IndexError):
            continue
        if real == uid:
            total += threads or 1
    return total


def limit_processes(allowance: int, *, namespaced: bool = False) -> int | None:
    """``RLIMIT_NPROC`` at the user's task count now plus ``allowance`` (never above the hard
    limit already set); the limit set, or None where the kernel does not apply one (uid 0
    outside a user namespace, a platform without it). In a user namespace of its own
    (``namespaced``) the count is the namespace's and the kernel applies it to uid 0 too."""
    try:
        import resource
    except ImportError:
        return None
    uid = os.getuid()
    if uid == 0 and not namespaced or not os.path.isdir("/proc"):
        return None
    _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    limit = _user_tasks(uid) + int(allowance)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit if hard == resource.RLIM_INFINITY
                                                   else hard))
    except (ValueError, OSError):
        return None
    return limit


def limit_memory(megabytes: int) -> bool:
    """Address space at most ``megabytes`` (``RLIMIT_AS``). False where it cannot be set (the
    time limit still holds)."""
    try:
        import resource

        size = int(megabytes) << 20
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file of user code
    except (ImportError, ValueError, OSError):
        return False
    return True


# --- the tree --------------------------------------------------------------------------------

def _children_files(pid: int) -> list[int] | None:
    """Direct children of ``pid`` from /proc/PID/task/*/children, or None where the kernel has no
    such file."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                kids.extend(int(p) for p in fh.read().split())
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{tid}"):
                continue  # the thread ended meanwhile
            return None
        except (OSError, ValueError):
            continue
    return kids


def _parents() -> dict[int, list[int]]:
    """Every process's children, from each /proc/PID/stat (the ppid is the 2nd field after the
    command name, which may hold spaces or parentheses: split at the last ')')."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
    return children


def descendants(pid: int | None = None) -> list[int]:
    """Every live descendant of ``pid`` (default: this process), zombies included."""
    top = os.getpid() if pid is None else pid
    table: dict[int, list[int]] | None = None
    found: list[int] = []
    stack = [top]
    while stack:
        parent = stack.pop()
        kids = _children_files(parent) if table is None else table.get(parent, [])
        if kids is None:
            table = _parents()
            kids = table.get(parent, [])
        found.extend(kids)
        stack.extend(kids)
    return found


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True  # gone


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_tree() -> int:
    """SIGKILL every descendant of this process, round after round until none is left,
    reaping this process's own children; the number of processes killed."""
    killed: set[int] = set()
    end = time.monotonic() + KILL_ROUNDS_S
    while True:
        live = [pid for pid in descendants() if not _zombie(pid)]
        for pid in live:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed.update(live)
        _reap()
        if not live or time.monotonic() > end:
            break
        time.sleep(0.001)
    _reap()
    return len(killed)


class _Stop(Exception):
    pass


def supervise(worker: int, *, timeout_s: float, max_processes: int,
              stop_grace_s: float = 0.0) -> tuple[str, int | None, int]:
    """Wait for the child ``worker`` at most ``timeout_s``; stop early when the tree passes
    ``max_processes`` (counted every ``POLL_S``) or this process gets SIGTERM (passed on to the
    worker, which then gets ``stop_grace_s`` to end). Then kill every descendant that is left.
    ``(how, exit code, processes killed)``: how is ``EXITED`` (exit code of the worker,
    negative for a signal), ``TIMED_OUT``, ``TOO_MANY`` or ``STOPPED``."""
    stopped: list[bool] = []

    def stop(signum, frame):
        if not stopped:
            stopped.append(True)
            _signal(worker, signal.SIGTERM)
        raise _Stop()

    signal.signal(signal.SIGTERM, stop)
    try:
        pidfd = os.pidfd_open(worker)
    except (AttributeError, OSError):
        pidfd = None
    end = time.monotonic() + timeout_s
    how, code = TIMED_OUT, None
    while True:
        try:
            try:
                done, status = os.waitpid(worker, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: ended, its status unknown
                how = STOPPED if stopped else EXITED
                break
            if done:
                code = os.waitstatus_to_exitcode(status)
                how = STOPPED if stopped else EXITED
                break
            left = end - time.monotonic()
            if left <= 0:
                break
            if len(descendants()) > max_processes:
                how = TOO_MANY
                break
            wait = min(left, POLL_S)
            if pidfd is not None:
                select.select([pidfd], [], [], wait)
            else:
                time.sleep(min(wait, 0.005))
        except _Stop:
            how = STOPPED
            if stop_grace_s <= 0:
                break
            end = min(end, time.monotonic() + stop_grace_s)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the clean-up below is not interrupted
    if pidfd is not None:
        os.close(pidfd)
    if stopped and how == TIMED_OUT:
        how = STOPPED
    return how, code, kill_tree()


# --- the namespaces --------------------------------------------------------------------------

class Contained(NamedTuple):
    """How a contained worker ended (``how``, exit code as :func:`supervise` says, or
    ``NOT_STARTED`` and ``error``), the processes killed after it, and whether it ran in
    namespaces of its own (``isolated``)."""

    how: str
    code: int | None
    killed: int
    isolated: bool
    error: str | None = None


_PRIVATE: list[int] = []  # the namespace init's descriptor to its caller: never the worker's


def forget() -> None:
    """In a worker forked (not executed) by the start function: close what the supervision
    keeps to itself (an executed worker never inherits it)."""
    while _PRIVATE:
        with suppress(OSError):
            os.close(_PRIVATE.pop())


def _write(path: str, text: str) -> bool:
    try:
        with open(path, "w") as fh:
            fh.write(text)
        return True
    except OSError:
        return False


def _enter_namespaces() -> bool:
    """Move this (single-threaded, freshly forked) process into new user and mount namespaces,
    its next child into a new PID namespace, the user mapped to itself; True when all held."""
    libc = _libc()
    if libc is None or not hasattr(libc, "unshare") or not hasattr(libc, "mount"):
        return False
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(ctypes.c_int(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID)) != 0:
        return False
    _write("/proc/self/setgroups", "deny")  # needed to map the group without privilege
    mapped = (_write("/proc/self/uid_map", f"{uid} {uid} 1\n")
              and _write("/proc/self/gid_map", f"{gid} {gid} 1\n"))
    if not mapped and uid != 0:
        return False
    # uid 0 without CAP_SETFCAP may not map itself: it goes on unmapped (ids read as 65534
    # inside, files keep their real owner); our mounts stay ours
    libc.mount(b"none", b"/", None, ctypes.c_ulong(_MS_REC | _MS_PRIVATE), None)
    return True


def _mount_proc() -> bool:
    """In the new PID namespace's init: a ``/proc`` of this namespace, and proof it is one
    (``/proc/self`` names this process by the pid it has here). Never trust ``/proc`` without it:
    :func:`kill_tree` walks it from ``os.getpid()``."""
    libc = _libc()
    flags = ctypes.c_ulong(_MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    if libc.mount(b"proc", b"/proc", b"proc", flags, None) != 0:
        return False
    try:
        return os.readlink("/proc/self") == str(os.getpid())
    except OSError:
        return False


def _say(fd: int, line: str) -> None:
    data = (line + "\n").encode()
    with suppress(OSError):
        while data:
            data = data[os.write(fd, data):]


def _close_stdin() -> None:
    """The worker's stdin is the worker's alone (its writer sees it close when the worker
    stops reading)."""
    with suppress(OSError):
        os.close(0)


def _let_go(keep: int) -> None:
    """In a process between the caller and the worker, once the worker started: every
    descriptor but ``keep`` closed, 0-2 on /dev/null, so a reader of the worker's output sees
    its end when the worker ends, not when this process does."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        if fd != keep:
            os.dup2(null, fd)
    os.closerange(3, keep)
    os.closerange(max(keep, 2) + 1, 1 << 16)


def _supervised_here(start: Callable[[], int], *, timeout_s: float, max_processes: int,
                     stop_grace_s: float, namespaced: bool,
                     started: Callable[[], None] = _close_stdin) -> Contained:
    become_subreaper()
    drop_privileges()
    limit_processes(max_processes, namespaced=namespaced)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        worker = start()
    except OSError as exc:
        return Contained(NOT_STARTED, None, 0, namespaced, str(exc.strerror or exc))
    started()

    signal.signal(signal.SIGINT, lambda signum, frame: _signal(worker, signum))  # the worker's
    how, code, killed = supervise(worker, timeout_s=timeout_s, max_processes=max_processes,
                                  stop_grace_s=stop_grace_s)
    return Contained(how, code, killed, namespaced)


def _init(out: int, start: Callable[[], int], limits: dict) -> None:
    """The new PID namespace's first process: its ``/proc``, then the supervision."""
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if not _mount_proc():
            _say(out, "no")
            return
        undumpable()  # the worker (no capability) cannot trace or read it either
        _say(out, "ready")
        _PRIVATE.append(out)
        outcome = _supervised_here(start, namespaced=True, started=lambda: _let_go(out),
                                   **limits)
        _say(out, json.dumps(outcome._asdict()))
    finally:
        os._exit(0)  # the namespace ends with it: the kernel kills what is left


def _helper(out: int, start: Callable[[], int], limits: dict) -> None:
    """Between the caller and the namespace's init: enters the namespaces, starts the init,
    waits for it; ignores stop signals (the caller passes them on to the init)."""
    try:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if not _enter_namespaces():
            _say(out, "no")
            return
        sys.stdout.flush()
        sys.stderr.flush()
        init = os.fork()
        if init == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)  # ignored until supervise() answers it
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _init(out, start, limits)
        _say(out, f"init {init}")
        _let_go(out)
        _wait(init)
    finally:
        os._exit(0)


def _lines(fd: int, buffer: bytearray, wait_s: float) -> list[str] | None:
    """Complete lines that arrived on ``fd`` within ``wait_s``; None at its end."""
    ready, _, _ = select.select([fd], [], [], max(wait_s, 0.0))
    if ready:
        data = os.read(fd, 1 << 16)
        if not data:
            return None
        buffer.extend(data)
    lines = []
    while b"\n" in buffer:
        line, _, rest = bytes(buffer).partition(b"\n")
        buffer[:] = rest
        lines.append(line.decode("utf-8", "replace"))
    return lines


def _in_namespaces(start: Callable[[], int], limits: dict) -> Contained | None:
    """:func:`contain` in namespaces of its own, or None when they cannot be made (nothing of
    the user's started then)."""
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    helper = os.fork()
    if helper == 0:
        os.close(read)
        _helper(write, start, limits)
    os.close(write)
    outcome = None
    try:
        buffer = bytearray()
        started = _started(read, buffer)
        if started is None:
            return None
        _close_stdin()
        outcome = _outcome(read, buffer, *started, limits)
        return outcome
    finally:
        os.close(read)
        if outcome is None:  # no namespaces: the helper and what it started go now
            _signal(helper, signal.SIGKILL)
        _wait(helper)  # reaped here: a server grading for hours keeps no zombies


def _started(read: int, buffer: bytearray) -> tuple[int, list[str]] | None:
    """The namespace init's pid once it says it is ready, and the outcome if it came in the
    same read (a busy machine); None when the namespaces could not be made in time."""
    init, ready, early = None, False, []
    end = time.monotonic() + START_WAIT_S
    while not (ready and init) and time.monotonic() < end:
        lines = _lines(read, buffer, end - time.monotonic())
        if lines is None or "no" in lines:
            break
        for line in lines:
            ready = ready or line == "ready"
            if line.startswith("init "):
                init = int(line.split()[1])
            elif line.startswith("{"):
                early.append(line)
    return (init, early) if ready and init else None


def _outcome(read: int, buffer: bytearray, init: int, early: list[str],
             limits: dict) -> Contained:
    """What the namespace init reports, stops and Ctrl-C passed on to it; the init killed
    when it hangs or ends without a word."""
    stopped: list[float] = []

    def forward(signum, frame):  # a stop or a Ctrl-C reaches the init, which passes it on
        if signum == signal.SIGTERM and not stopped:
            stopped.append(time.monotonic())
        _signal(init, signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    slack = limits["stop_grace_s"] + KILL_ROUNDS_S + 2.0
    end = time.monotonic() + limits["timeout_s"] + slack
    ended = False
    outcome = Contained(**json.loads(early[0])) if early else None
    while outcome is None and not ended:
        if stopped:
            end = min(end, stopped[0] + slack)
        left = end - time.monotonic()
        if left <= 0:
            break
        lines = _lines(read, buffer, min(left, 1.0))
        ended = lines is None
        for line in lines or ():
            if line.startswith("{"):
                outcome = Contained(**json.loads(line))
    if outcome is None:  # the namespace goes with its init
        _signal(init, signal.SIGKILL)
        outcome = Contained(STOPPED if stopped or ended else TIMED_OUT, None, 0, True)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    return outcome


def contain(start: Callable[[], int], *, timeout_s: float, max_processes: int,
            stop_grace_s: float = 0.0, isolate: bool = True) -> Contained:
    """Start the worker with ``start()`` (it returns its pid; an ``OSError`` is
    ``NOT_STARTED``) and :func:`supervise` it, in namespaces of its own where the kernel allows
    it (``isolate=False``: never), else in this process. Call it from a single-threaded process
    (user namespaces refuse a threaded one: it then goes without)."""
    limits = {"timeout_s": timeout_s, "max_processes": max_processes,
              "stop_grace_s": stop_grace_s}
    if isolate and sys.platform.startswith("linux"):
        outcome = _in_namespaces(start, limits)
        if outcome is not None:
            return outcome
    return _supervised_here(start, namespaced=False, **limits)
