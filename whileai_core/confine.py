"""What holds a process that runs user code (a reward, a local run's recipe and its grader):
its privileges, its limits and its whole process tree.

The supervisor (``whileai_core.hacking._reward_child``, ``whileai_core.runs._wrapper``) calls,
before any user code starts:

- :func:`become_subreaper`: every process the user code leaves behind, a ``setsid``'d or
  double-forked grandchild included, is re-parented to the supervisor instead of to init, so
  :func:`kill_tree` finds it (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux 3.4 [1]);
- :func:`drop_privileges`: no new privileges (a setuid program gives nothing) and, when run as
  root, no capability (an empty bounding set, then empty sets): without ``CAP_SYS_PTRACE`` even
  uid 0 cannot read a non-dumpable process's ``/proc/<pid>/environ`` or memory [2];
- :func:`limit_processes`: ``RLIMIT_NPROC`` at the user's current task count plus the
  allowance, so a fork bomb stops at the allowance. The kernel does not apply it to uid 0 [3];
  there :func:`supervise` counts the tree every ``POLL_S`` and kills it past the allowance.

Then :func:`supervise` waits for the worker with the time limit and kills every descendant when
the worker ends, at the limit, or when the supervisor is told to stop (SIGTERM).

The parent (the server) calls :func:`undumpable` on itself before it starts such a child: a
non-dumpable process's ``/proc/<pid>/`` files belong to root and ptrace access to it is refused
to an unprivileged process, so a child of the same user cannot read its environment, memory or
descriptors (``prctl(PR_SET_DUMPABLE, 0)`` [2]).

Standard library only and no package import: the reward child loads this file by its path under
``python -I``. Off Linux every call is a no-op that says so (returns False or None).

[1] prctl(2), PR_SET_CHILD_SUBREAPER. [2] ptrace(2), "Ptrace access mode checking" (step 5:
    a non-dumpable target needs CAP_SYS_PTRACE); proc(5), /proc/pid/environ. [3] setrlimit(2),
    RLIMIT_NPROC: "not enforced for processes that have either the CAP_SYS_ADMIN or the
    CAP_SYS_RESOURCE capability, or run with real user ID 0".
"""

import ctypes
import ctypes.util
import os
import select
import signal
import time

PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 4, 24, 36, 38
_CAP_VERSION_3 = 0x20080522
POLL_S = 0.05  # how often supervise() counts the tree (uid 0 only needs it; cheap otherwise)
KILL_ROUNDS_S = 5.0  # kill_tree keeps killing what appears for at most this long

# how supervise() says a worker ended (its exit code is the second item)
EXITED, TIMED_OUT, TOO_MANY, STOPPED = "exited", "timed_out", "too_many_processes", "stopped"

_libc_handle = None


def _libc():
    global _libc_handle
    if _libc_handle is None:
        try:
            _libc_handle = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        except OSError:
            _libc_handle = False
    return _libc_handle or None


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
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError, IndexError):
        pass
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


def limit_processes(allowance: int) -> int | None:
    """``RLIMIT_NPROC`` at the user's task count now plus ``allowance`` (never above the hard
    limit already set); the limit set, or None where the kernel does not apply one (uid 0, a
    platform without it)."""
    try:
        import resource
    except ImportError:
        return None
    uid = os.getuid()
    if uid == 0 or not os.path.isdir("/proc"):
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
    """SIGKILL every descendant of this process, again and again until none is left (what
    forks meanwhile is found on the next round; orphans come back to a subreaper), reaping
    this process's own children. The number of processes killed."""
    killed: set[int] = set()
    end = time.monotonic() + KILL_ROUNDS_S
    while True:
        live = [pid for pid in descendants() if not _zombie(pid)]
        for pid in live:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        killed.update(live)
        _reap()
        if not live or time.monotonic() > end:
            break
        time.sleep(0.001)
    _reap()
    return len(killed)


class _Stop(Exception):
    pass


def _stop(signum, frame):
    raise _Stop()


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
            try:
                os.kill(worker, signal.SIGTERM)
            except ProcessLookupError:
                pass
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
