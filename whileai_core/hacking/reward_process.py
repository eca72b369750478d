"""A reward run in a child process (the module docstring of :mod:`.reward` says how): the
child's start, its time limit and process group, its exit status read as the error a user can
act on, and its stdout read as one number per item."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from .. import safejson
from ..defaults import REWARD_OUTPUT_MAX_BYTES
from ..errors import WhileaiError, did_you_mean
from ..failures import child_env, mask_secrets
from ..voice import arg

CHILD = Path(__file__).with_name("_reward_child.py")
MEMORY_ENV = "WHILEAI_CHILD_MEMORY_MB"
_STDERR_LINES = 5


class RewardError(WhileaiError):
    """The user's reward failed, hung, or returned something that is not one number per item."""


def run_child(spec: dict, code: str, items: list[dict], cwd: Path, timeout_s: float, label: str,
               pass_env: tuple[str, ...]) -> str:
    """Run the reward child (see the module docstring) on ``items``; its stdout."""
    payload = "".join(json.dumps(it, ensure_ascii=False) + "\n" for it in items).encode()
    env = child_env({"PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"}, pass_env=pass_env)
    with tempfile.TemporaryFile() as source:  # no name: the child gets it by descriptor only
        source.write(code.encode("utf-8"))
        source.flush()
        source.seek(0)
        fd = source.fileno()
        argv = [sys.executable, "-I", str(CHILD), json.dumps({**spec, "code_fd": fd})]
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True, pass_fds=(fd,))
        except OSError as exc:
            raise RewardError(f"reward {label!r} could not start: {exc.strerror or exc}. Fix: "
                              "check that the workspace folder exists") from None
    try:
        out, err = proc.communicate(payload, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise RewardError(f"reward {label!r} did not finish {len(items)} completions within "
                          f"{timeout_s:g} s; its process group was killed. Fix: make it faster, "
                          f"or raise {arg('timeout_s', op='cheat_probes')}") from None
    finally:
        if proc.poll() is None:
            _kill_group(proc)
    if proc.returncode == _NO_FUNCTION:
        missing = _no_function(out)
        if missing is not None:
            name, defined = missing
            close = did_you_mean(name, defined)
            raise RewardError(f"reward {label!r}: the file defines no function `{name}`"
                              + (f" ({close})" if close else "") + ". Fix: name one it defines: "
                              + (", ".join(defined[:20])[:300] or "none"))
    if proc.returncode != 0:
        tail = " | ".join(err.decode("utf-8", "replace").strip().splitlines()[-_STDERR_LINES:])
        memory = (" (it may have hit the memory limit of "
                  f"{spec['memory_mb']} MB: {MEMORY_ENV} raises it)"
                  if "MemoryError" in tail or proc.returncode in (-9, 137) else "")
        raise RewardError(f"reward {label!r} exited with status {proc.returncode}{memory}; "
                          f"stderr: {mask_secrets(tail)[:800] or '(empty)'}. Fix: run it by hand "
                          "on a line of the batch and correct it")
    if len(out) > REWARD_OUTPUT_MAX_BYTES:
        raise RewardError(f"reward {label!r} printed {len(out)} bytes, over the "
                          f"{REWARD_OUTPUT_MAX_BYTES} accepted. Fix: print only the rewards")
    return out.decode("utf-8", "replace")


_NO_FUNCTION = 3  # _reward_child.NO_FUNCTION (not imported: the child runs alone, under -I)


def _no_function(out: bytes) -> tuple[str, list[str]] | None:
    """The child's report of a function its file does not define: (the name, the file's
    functions), or None when the output is something else (a script's own exit status 3)."""
    try:
        data = json.loads(out.decode("utf-8", "replace"))
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("no_function"), str):
        return None
    return data["no_function"], [str(d) for d in data.get("defined", [])]


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def parse_stdout(text: str, label: str) -> list:
    body = text.strip()
    if body.startswith("["):
        try:
            return safejson.loads(body)
        except json.JSONDecodeError as exc:
            raise RewardError(f"reward {label!r} printed invalid JSON ({exc.msg}). Fix: print "
                              "one JSON array of numbers, or one number per line") from None
    values = []
    for i, line in enumerate(body.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = safejson.loads(line)
        except json.JSONDecodeError:
            shown = mask_secrets(line)[:60]
            raise RewardError(f"reward {label!r}: stdout line {i} is {shown!r}, not a "
                              "number. Fix: print one number (or {\"reward\": number}) per "
                              "line, and send logs to stderr") from None
        if isinstance(value, dict):
            value = value.get("reward")
        values.append(value)
    return values
