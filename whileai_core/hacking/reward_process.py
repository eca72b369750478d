"""A reward run in a child process (:mod:`.reward` says how): its start, its output read as it
streams within bounds, its end read as the error a user can act on, its stdout as the rewards.

No message quotes what the reward printed or the message of an exception that can carry data
(a file's contents, a key): a failure names the exception's type and where the reward raised
it, a stdout line that is not a number is described by its length, stderr only by its size.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import confine, safejson
from ._reward_child import SHOWN_MESSAGES
from ..defaults import CHILD_STOP_GRACE_S, REWARD_OUTPUT_MAX_BYTES, REWARD_STDERR_MAX_BYTES
from ..errors import WhileaiError, did_you_mean
from ..failures import child_env, mask_secrets
from ..voice import arg

CHILD = Path(__file__).with_name("_reward_child.py")
MEMORY_ENV, PROCESSES_ENV = "WHILEAI_CHILD_MEMORY_MB", "WHILEAI_CHILD_PROCESSES"
# what each stream of the child may carry before the child is stopped (the report: the
# supervisor's few lines, on a descriptor of whileai's own)
CAPS = {"stdout": REWARD_OUTPUT_MAX_BYTES, "stderr": REWARD_STDERR_MAX_BYTES, "report": 64 << 10}
_READ = 1 << 16


class RewardError(WhileaiError):
    """The user's reward failed, hung, or returned something that is not one number per item."""


@dataclass
class Streams:
    """What came back from a child, bounded while it streamed: its stdout (at most
    ``REWARD_OUTPUT_MAX_BYTES``), the size of its stderr (never kept), its reports, and the
    stream that went past its cap (the child was then stopped)."""

    stdout: bytearray = field(default_factory=bytearray)
    stderr_bytes: int = 0
    report: bytearray = field(default_factory=bytearray)
    over: str | None = None


def exchange(proc: subprocess.Popen, payload: bytes, report_fd: int, timeout_s: float) -> Streams:
    """Write ``payload`` to the child's stdin and read its stdout, stderr and report pipe at
    once, as they stream, until all close or ``timeout_s`` passes: stdout is kept up to its cap,
    stderr only counted, and a stream past its cap stops the child (SIGTERM to its supervisor,
    which kills its tree); the rest is drained and dropped, so memory stays within the caps
    whatever the child prints."""
    got = Streams()
    sel = selectors.DefaultSelector()
    for name, pipe in (("stdout", proc.stdout.fileno()), ("stderr", proc.stderr.fileno()),
                       ("report", report_fd)):
        os.set_blocking(pipe, False)
        sel.register(pipe, selectors.EVENT_READ, name)
    stdin, sent = proc.stdin.fileno(), 0
    os.set_blocking(stdin, False)
    sel.register(stdin, selectors.EVENT_WRITE, "stdin")
    end = time.monotonic() + timeout_s
    try:
        while sel.get_map():
            left = end - time.monotonic()
            if left <= 0:
                break
            for key, _ in sel.select(min(left, 1.0)):
                if key.data == "stdin":
                    try:
                        sent += os.write(stdin, payload[sent:sent + _READ])
                    except (BrokenPipeError, ConnectionResetError):
                        sent = len(payload)  # the child stopped reading: its own business
                    if sent >= len(payload):
                        sel.unregister(stdin)
                        proc.stdin.close()
                    continue
                data = os.read(key.fd, _READ)
                if not data:
                    sel.unregister(key.fd)
                    continue
                _keep(got, key.data, data, proc)
    finally:
        sel.close()
        if not proc.stdin.closed:
            proc.stdin.close()
    return got


def _keep(got: Streams, name: str, data: bytes, proc: subprocess.Popen) -> None:
    size = {"stdout": len(got.stdout), "stderr": got.stderr_bytes,
            "report": len(got.report)}[name] + len(data)
    if size > CAPS[name] and got.over is None:
        got.over = name
        _signal(proc, signal.SIGTERM)
    if name == "stderr":
        got.stderr_bytes = size
    elif got.over is None:
        (got.stdout if name == "stdout" else got.report).extend(data)


def _signal(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.kill(proc.pid, sig)
    except ProcessLookupError:
        pass


def _end(proc: subprocess.Popen) -> None:
    """Wait for the supervisor at most ``CHILD_STOP_GRACE_S``, then kill whatever is left in its
    process group (a supervisor that hangs, or the processes of one the reward killed, when it
    did not run isolated), then reap it. Its pid stays reserved until it is reaped, so the group
    id names no other process."""
    end = time.monotonic() + CHILD_STOP_GRACE_S
    while time.monotonic() < end:
        try:
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):
                break
        except ChildProcessError:
            break
        time.sleep(0.005)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def run_child(spec: dict, code: str, items: list[dict], cwd: Path, timeout_s: float, label: str,
              pass_env: tuple[str, ...], processes: int) -> str:
    """Run the reward child (see the module docstring) on ``items``; its stdout."""
    payload = "".join(json.dumps(it, ensure_ascii=False) + "\n" for it in items).encode()
    env = child_env({"PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"}, pass_env=pass_env)
    confine.undumpable()  # this process's /proc (environment, memory) is closed to the child
    report_r, report_w = os.pipe()
    shown = {**spec, "report_fd": report_w}  # the number the child knows it by, for messages
    try:
        with tempfile.TemporaryFile() as source:  # no name: the child gets it by descriptor only
            source.write(code.encode("utf-8"))
            source.flush()
            source.seek(0)
            fd = source.fileno()
            argv = [sys.executable, "-I", str(CHILD), json.dumps(
                {**spec, "code_fd": fd, "report_fd": report_w, "timeout_s": timeout_s,
                 "processes": processes})]
            try:
                proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        start_new_session=True, pass_fds=(fd, report_w))
            except OSError as exc:
                raise RewardError(f"reward {label!r} could not start: {exc.strerror or exc}",
                                  fix="check that the workspace folder exists") from None
        os.close(report_w)
        report_w = -1
        try:
            got = exchange(proc, payload, report_r, timeout_s + CHILD_STOP_GRACE_S)
        finally:
            _end(proc)
            proc.stdout.close()
            proc.stderr.close()
    finally:
        os.close(report_r)
        if report_w >= 0:
            os.close(report_w)
    return _outcome(proc.returncode, got, shown, items, timeout_s, label, processes)


def _reports(got: Streams) -> dict:
    """The child's report lines as one mapping (later keys win; a line that is not a JSON
    object is skipped: the reward can write there too, so nothing in it is trusted as text)."""
    merged: dict = {}
    for line in got.report.decode("utf-8", "replace").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            merged.update(value)
    return merged


def _outcome(code: int, got: Streams, spec: dict, items: list[dict], timeout_s: float,
             label: str, processes: int) -> str:
    report = _reports(got)
    ended = report.get("ended")
    left = report.get("killed") if isinstance(report.get("killed"), int) else 0
    if got.over == "report":
        raise RewardError(f"reward {label!r} wrote more than {CAPS['report']} bytes to "
                          f"descriptor {spec['report_fd']}, whileai's own (the supervisor's "
                          "report); it was stopped and its processes killed", fix="write only to "
                          "stdout and stderr")
    if got.over is not None:
        raise RewardError(f"reward {label!r} printed more than {CAPS[got.over]} bytes to "
                          f"{got.over}; it was stopped and its processes killed", fix="print only "
                          "the rewards on stdout, and far less on stderr")
    if ended == "not_started":
        raise RewardError(f"reward {label!r} could not start its process: "
                          f"{str(report.get('error'))[:200]}", fix="free processes or memory, or "
                          "raise the limits (" + PROCESSES_ENV + ", " + MEMORY_ENV + ")")
    if ended == "timed_out" or ended is None and code < 0:
        raise RewardError(f"reward {label!r} did not finish {len(items)} completions within "
                          f"{timeout_s:g} s; its whole process tree was killed ({left} "
                          "processes)", fix="make it faster, or raise "
                          f"{arg('timeout_s', op='cheat_probes')}")
    if ended == "too_many_processes" or code == 125 and ended is None:
        raise RewardError(f"reward {label!r} started more than the {processes} processes "
                          "allowed; it was killed with all of them", fix="start fewer, or raise "
                          f"{PROCESSES_ENV}")
    if isinstance(report.get("no_function"), str):
        name = report["no_function"]
        defined = [str(d) for d in report.get("defined", []) if isinstance(d, str)]
        close = did_you_mean(name, defined)
        raise RewardError(f"reward {label!r}: the file defines no function `{name}`"
                          + (f" ({close})" if close else ""), fix="name one it defines: "
                          + (", ".join(defined[:20])[:300] or "none"))
    if code != 0:
        raise RewardError(f"reward {label!r} {_failure(code, report, spec)}; it wrote "
                          f"{got.stderr_bytes} bytes to stderr (not quoted)", fix="run it by hand "
                          "on a line of the batch and correct it")
    return got.stdout.decode("utf-8", "replace")


def _failure(code: int, report: dict, spec: dict) -> str:
    """How the reward failed, from its report: the exception's type, where it was raised, and
    its message when the child showed it (the interpreter's own errors about code)."""
    memory = (f" (it may have hit the memory limit of {spec['memory_mb']} MB: {MEMORY_ENV} "
              "raises it)")
    raised = report.get("raised")
    if not isinstance(raised, str):
        return f"exited with status {code}" + (memory if code == 137 else "")
    text = f"raised {raised[:200]}"
    at = report.get("at")
    if isinstance(at, list) and len(at) == 3 and isinstance(at[0], str):
        text += f" at {Path(at[0]).name[:200]} line {at[1]}" + (
            f", in {str(at[2])[:100]}" if at[2] else "")
    message = report.get("message")
    # the report descriptor is the worker's too, so its lines are the reward's word: a message is
    # shown only for the interpreter's own errors about code, whatever the line says
    if isinstance(message, str) and raised in SHOWN_MESSAGES:
        text += f": {mask_secrets(message)[:300]}"
    else:
        text += " (its message is not quoted: it can hold what the reward read)"
    return text + (memory if raised == "MemoryError" else "")


def parse_stdout(text: str, label: str) -> list:
    body = text.strip()
    if body.startswith("["):
        try:
            return safejson.loads(body)
        except json.JSONDecodeError as exc:
            raise RewardError(f"reward {label!r} printed invalid JSON ({exc.msg} at character "
                              f"{exc.pos})", fix="print one JSON array of numbers, or one number "
                              "per line") from None
    values = []
    for i, line in enumerate(body.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = safejson.loads(line)
        except json.JSONDecodeError:
            raise RewardError(f"reward {label!r}: stdout line {i} is not a number (a text of "
                              f"{len(line)} characters, not quoted)", fix="print one number (or "
                              "{\"reward\": number}) per line, and send logs to stderr") from None
        if isinstance(value, dict):
            value = value.get("reward")
        values.append(value)
    return values
