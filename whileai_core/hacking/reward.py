"""How a reward is called: a Python callable, a ``module:function`` file, or a command.

Every form is called the way TRL calls a reward function [1]: one batch, ``reward(prompts=[...],
completions=[...], **columns)`` where each column is a list holding one field of every item
(the task's own fields: ``task_id``, ``answer``, ``category``...). It returns one number per item.

- **a callable** (library only) is called in this process.
- **"path/to/file.py:function"** or **"package.module:function"** is imported in a child
  process (``python -m whileai_core.hacking._reward_child``) with the workspace root first on
  ``sys.path``, so a reward that hangs or crashes cannot take the caller down.
- **a command** (a list of arguments, never a shell string) gets the batch as JSONL on stdin, one
  ``{"prompt", "completion", ...fields}`` object per line, and prints the rewards on stdout: one
  number (or ``{"reward": number}``) per line, or one JSON array. ``python`` as the first argument
  means this interpreter.

Both child forms run with the root as working directory, the caller's environment, no stdin but
the batch, in their own process group, killed whole after ``timeout_s``; stdout beyond
``REWARD_OUTPUT_MAX_BYTES`` is refused. The server passes only files it resolved inside its
workspace root (:func:`reward_spec`). A failure is a :class:`RewardError` naming the reward,
the exit status and the last lines of its stderr (values of environment variables whose names
look secret are masked).

[1] TRL ``GRPOTrainer`` reward functions: ``reward_func(prompts, completions, **kwargs)`` with
    the dataset's other columns as keyword lists (trl 1.16 documentation, "Using a custom reward
    function").
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..defaults import REWARD_OUTPUT_MAX_BYTES, REWARD_TIMEOUT_S
from ..errors import ArgumentError, WhileaiError
from ..failures import child_env, mask_secrets
from ..safepath import UserPath, user_path
from .. import safejson

_MODULE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")
_STDERR_LINES = 5


class RewardError(WhileaiError):
    """The user's reward failed, hung, or returned something that is not one number per item."""


@dataclass(frozen=True)
class RewardFile:
    """A ``module:function`` reward whose file was located under a root (the server's
    workspace): its bytes are read through the path door and handed to the child, which runs
    exactly them, never the file's name again (a file swapped meanwhile cannot be run)."""

    path: UserPath
    function: str

    def __str__(self) -> str:
        return f"{self.path}:{self.function}"


def trl_columns(items: Sequence[dict]) -> dict[str, list]:
    """Every field but prompt and completion, as one list per field (None where an item lacks it)."""
    names = dict.fromkeys(k for it in items for k in it if k not in ("prompt", "completion"))
    return {k: [it.get(k) for it in items] for k in names}


def _check_rewards(values: Any, n: int, label: str) -> np.ndarray:
    try:
        out = list(values)
    except TypeError:
        raise RewardError(f"reward {label} returned a {type(values).__name__}, not a list. Fix: "
                          "return one number per completion") from None
    if len(out) != n:
        raise RewardError(f"reward {label} returned {len(out)} values for {n} completions. "
                          "Fix: return exactly one number per completion, in order")
    for i, v in enumerate(out):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise RewardError(f"reward {label} returned {v!r} for item {i + 1} (task "
                              "shown in the input's order); every reward must be a finite "
                              "number. Fix: return 0.0 for a failed grade, never None or NaN")
    return np.asarray(out, dtype=np.float64)


class RewardRunner:
    """A reward in one of its three forms; ``runner(items)`` scores a batch (numpy array)."""

    def __init__(self, label: str, call: Callable[[list[dict]], Any]) -> None:
        self.label = label
        self._call = call

    def __repr__(self) -> str:
        return f"<RewardRunner {self.label}>"

    def __call__(self, items: list[dict]) -> np.ndarray:
        if not items:
            return np.zeros(0)
        return _check_rewards(self._call(items), len(items), self.label)


def reward_runner(reward: Any, *, root: str | os.PathLike | None = None,
                  timeout_s: float = REWARD_TIMEOUT_S) -> RewardRunner:
    """A :class:`RewardRunner` for a callable, a ``"module:function"`` string or a command list.

    ``root``: working directory of a child reward and where a ``module:function`` is looked up
    (default: the current directory). ``timeout_s``: wall-clock limit of one batch in a child.
    """
    if isinstance(reward, RewardRunner):
        return reward
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not (
            0 < timeout_s <= 86_400):
        raise ArgumentError(f"`timeout_s` must be a number of seconds in (0, 86400], got "
                            f"{timeout_s!r}. Fix: e.g. timeout_s={REWARD_TIMEOUT_S:g}")
    base = Path(root if root is not None else ".").resolve()
    if callable(reward):
        name = getattr(reward, "__name__", type(reward).__name__)

        def call(items: list[dict]) -> Any:
            return reward(prompts=[it.get("prompt") for it in items],
                          completions=[it.get("completion") for it in items],
                          **trl_columns(items))
        return RewardRunner(name, call)
    if isinstance(reward, (str, RewardFile)):
        if isinstance(reward, RewardFile):
            code_path, function = reward.path, reward.function
        else:
            file, function = locate_function(reward, base)
            code_path = user_path(file, argument="reward")
        if not re.fullmatch(r"[A-Za-z_]\w*", function):
            raise ArgumentError(f"`reward` function {function!r} is not a Python name. Fix: "
                                "e.g. 'rewards/grade.py:score'")
        # the child runs these bytes, read once through the path door
        code = code_path.read_text("config", error=ArgumentError, fix="save the reward as UTF-8")
        label = str(reward)
        argv = [sys.executable, "-m", "whileai_core.hacking._reward_child", str(base),
                str(code_path), function]
        env = {"PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")])}
        preamble = (json.dumps(code) + "\n").encode()
        return RewardRunner(label, lambda items: _parse_stdout(
            _run_child(argv, items, base, timeout_s, label, env, preamble), label))
    if isinstance(reward, (list, tuple)) and reward and all(isinstance(a, str) for a in reward):
        argv = list(reward)
        if argv[0] in ("python", "python3"):
            argv[0] = sys.executable
        label = " ".join(reward)
        return RewardRunner(label, lambda items: _parse_stdout(
            _run_child(argv, items, base, timeout_s, label, {}), label))
    raise ArgumentError(f"`reward` must be a callable, a 'module:function' string or a command "
                        f"(a list of strings), got {type(reward).__name__} {reward!r:.80}. Fix: "
                        "e.g. reward='rewards/grade.py:score' or reward=['python', "
                        "'rewards/grade.py']")


def locate_function(spec: str, root: Path) -> tuple[Path, str]:
    """``"file.py:fn"`` or ``"pkg.mod:fn"`` -> (the module's file under ``root``, ``fn``)."""
    module, sep, function = spec.rpartition(":")
    if not sep or not module or not re.fullmatch(r"[A-Za-z_]\w*", function):
        raise ArgumentError(f"`reward` {spec!r} is not 'module:function'. Fix: e.g. "
                            "'rewards/grade.py:score' or 'rewards.grade:score'")
    if module.endswith(".py") or "/" in module or os.sep in module:
        file = Path(module) if Path(module).is_absolute() else root / module
    elif _MODULE.match(module):
        stem = root.joinpath(*module.split("."))
        file = stem.with_suffix(".py") if stem.with_suffix(".py").is_file() else stem / "__init__.py"
    else:
        raise ArgumentError(f"`reward` module {module!r} is neither a .py path nor a dotted "
                            "module name. Fix: e.g. 'rewards/grade.py:score'")
    if not file.is_file():
        raise ArgumentError(f"`reward` {spec!r}: no file {file}. Fix: give a .py file (or a "
                            f"dotted module) inside {root} that defines {function}()")
    return file, function


def reward_spec(reward: Any, root: Any = None) -> Any:
    """A reward as the caller wrote it -> the form :func:`reward_runner` runs, every file it names
    located under ``root`` (a ``whileai_core.safepath.Root``: the MCP server's workspace) when one
    is given. The one grammar of every surface:

    - ``"file.py:function"`` or ``"package.module:function"`` (no whitespace): a function, called
      like a TRL reward; under ``root`` it becomes a :class:`RewardFile` (its bytes read through
      the door and run as read, never reopened by name);
    - a list of arguments, or a string with whitespace or without ``:`` (split like a shell,
      never run by one): a command. Under ``root`` its script (``python SCRIPT``) or program must
      be a regular file with no link anywhere on its path (checked without following links);
      it is run by its path, so a process that can write in the root at that very moment could
      still swap it (README, Security: prefer the function form).

    Anything else (a callable) is returned as is.
    """
    import shlex

    if isinstance(reward, str):
        text = reward.strip()
        if ":" in text and not any(c.isspace() for c in text):
            return text if root is None else _confined_function(text, root)
        try:
            reward = shlex.split(text)
        except ValueError as err:
            raise ArgumentError(f"`reward` {reward!r} cannot be split into a command ({err}). "
                                "Fix: e.g. 'rewards/grade.py:score', or a command such as "
                                "'python rewards/grade.py'") from None
    if isinstance(reward, (list, tuple)):
        argv = [str(a) for a in reward]
        if not argv or not argv[0]:
            raise ArgumentError("`reward` is an empty command. Fix: e.g. ['python', "
                                "'rewards/grade.py'], or 'rewards/grade.py:score'")
        if root is None:
            return argv
        if argv[0] in ("python", "python3"):
            if len(argv) < 2 or not argv[1].endswith(".py"):
                raise ArgumentError("`reward` ['python', ...] must name a .py script inside the "
                                    "workspace next. Fix: e.g. ['python', 'rewards/grade.py']")
            argv[1] = _confined_program(argv[1], root)
        else:
            argv[0] = _confined_program(argv[0], root)
        return argv
    return reward


def _confined_function(spec: str, root: Any) -> RewardFile:
    from pathlib import PurePath

    module, _, function = spec.rpartition(":")
    if not module:
        raise ArgumentError(f"`reward` {spec!r} is not 'file.py:function'. Fix: e.g. "
                            "'rewards/grade.py:score'")
    if not module.endswith(".py") and "/" not in module:
        stem = PurePath(*module.split("."))
        candidates = [f"{stem}.py", f"{stem}/__init__.py"]
        module = next((c for c in candidates
                       if root.locate(c, argument="reward").kind() == "file"), candidates[0])
    return RewardFile(root.locate(module, argument="reward"), function)


def _confined_program(value: str, root: Any) -> str:
    path = root.locate(value, argument="reward")
    path.check_file()  # as strict as a read: no link anywhere, regular, not hard-linked
    return str(path)


def _run_child(argv: list[str], items: list[dict], cwd: Path, timeout_s: float, label: str,
               extra_env: dict[str, str], preamble: bytes = b"") -> str:
    payload = preamble + "".join(json.dumps(it, ensure_ascii=False) + "\n"
                                 for it in items).encode()
    env = child_env({**extra_env, "PYTHONUNBUFFERED": "1"})
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as exc:
        raise RewardError(f"reward {label!r} could not start: {exc.strerror or exc} "
                          f"({argv[0]}). Fix: check the command, and that it is executable") from None
    try:
        out, err = proc.communicate(payload, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise RewardError(f"reward {label!r} did not finish {len(items)} completions within "
                          f"{timeout_s:g} s; its process group was killed. Fix: make it faster, "
                          "or raise timeout_s") from None
    finally:
        if proc.poll() is None:
            _kill_group(proc)
    if proc.returncode != 0:
        tail = " | ".join(err.decode("utf-8", "replace").strip().splitlines()[-_STDERR_LINES:])
        raise RewardError(f"reward {label!r} exited with status {proc.returncode}; stderr: "
                          f"{mask_secrets(tail)[:800] or '(empty)'}. Fix: run it by hand on a "
                          "line of the batch and correct it")
    if len(out) > REWARD_OUTPUT_MAX_BYTES:
        raise RewardError(f"reward {label!r} printed {len(out)} bytes, over the "
                          f"{REWARD_OUTPUT_MAX_BYTES} accepted. Fix: print only the rewards")
    return out.decode("utf-8", "replace")


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _parse_stdout(text: str, label: str) -> list:
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
