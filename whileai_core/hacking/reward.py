"""How a reward is called: a Python callable, a ``module:function`` file, or a script command.

Every form is called the way TRL calls a reward function [1]: one batch, ``reward(prompts=[...],
completions=[...], **columns)``, each column one field of every item (``task_id``, ``answer``,
``category``...); it returns one number per item.

- **a callable** (library only) is called in this process.
- **"path/to/file.py:function"** or **"package.module:function"**: the function is called in a
  child process.
- **a command** ``["python", "path/to/script.py"]``: the script runs with no argument, reads the
  batch as JSONL on stdin (one ``{"prompt", "completion", ...fields}`` object per line) and
  prints one number (or ``{"reward": number}``) per line, or one JSON array. The caller names a
  script, never a program: any argument after it, any other program and any interpreter option
  is refused (:func:`command_script`); a setting lives in the script or in a task field.

Either file must be the project's own code (:mod:`.reward_origin`); its bytes are read once
through the path door and run as read, never reopened by name. Both child forms run as
:mod:`._reward_child` says: isolated, with no token or key in the environment unless
``pass_env`` names it, under memory and process limits, the whole process tree killed after
``timeout_s``, their output bounded as it streams (:mod:`.reward_process`). A failure is a
:class:`RewardError` naming the reward, the exception's type and where it was raised (or the
exit status); never what it printed, nor a message that can carry what it read.

[1] TRL ``GRPOTrainer`` reward functions: ``reward_func(prompts, completions, **kwargs)`` with
    the dataset's other columns as keyword lists (trl 1.16 documentation, "Using a custom reward
    function").
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..defaults import CHILD_MEMORY_MB, CHILD_PROCESSES, REWARD_TIMEOUT_MAX_S, REWARD_TIMEOUT_S
from ..errors import ArgumentError
from ..failures import check_pass_env
from ..safepath import UserPath, user_path
from .reward_origin import own_code
from .reward_process import MEMORY_ENV, PROCESSES_ENV, RewardError, parse_stdout, run_child

PYTHON_NAMES = ("python", "python3")

_MODULE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


@dataclass(frozen=True)
class RewardFile:
    """A ``module:function`` reward whose file was located under a root (the server's
    workspace): the child runs the bytes the door read, never the file's name again (a file
    swapped meanwhile cannot be run)."""

    path: UserPath
    function: str

    def __str__(self) -> str:
        return f"{self.path}:{self.function}"


@dataclass(frozen=True)
class RewardScript:
    """A command-form reward whose script was located under a root: run from the bytes the door
    read, with no argument."""

    path: UserPath

    def __str__(self) -> str:
        return f"python {self.path}"


def command_script(reward: Sequence[str]) -> str:
    """The script of a command-form reward ``["python", "script.py"]``, or an
    :class:`ArgumentError`: the first item must be ``python`` (this interpreter), the second a
    ``.py`` script, and nothing may follow. Any other program (``.venv/bin/pip``, ``torchrun``,
    ``sh``), any interpreter option (``-c``, ``-m``) and any argument is refused: the product
    runs the script one fixed way, the caller names only the script."""
    parts = list(reward)
    fix = ("Fix: give ['python', 'rewards/grade.py'] (a script inside the workspace), or "
           "'rewards/grade.py:score'")
    if not parts or not all(isinstance(a, str) for a in parts):
        raise ArgumentError(f"`reward` must be a non-empty list of strings. {fix}")
    if parts[0] not in PYTHON_NAMES:
        raise ArgumentError(f"`reward` command runs {parts[0][:200]!r}; a command reward runs "
                            "only a Python script with this interpreter, never another program "
                            f"(its arguments could do anything). {fix}")
    if len(parts) < 2 or parts[1].startswith("-") or not parts[1].endswith(".py"):
        shown = parts[1][:200] if len(parts) > 1 else "nothing"
        raise ArgumentError(f"`reward` ['python', ...] must name a .py script next, got {shown!r}"
                            f" (interpreter options such as -c or -m are refused). {fix}")
    if len(parts) > 2:
        raise ArgumentError(f"`reward` gives {len(parts) - 2} argument(s) after "
                            f"{parts[1][:200]!r}; a command reward gets none: it runs one fixed "
                            "way (the batch on stdin, one reward a line on stdout), so no caller "
                            "can turn a script into a program of its choosing", fix="put the "
                            "setting in the script, or in a task field (every field reaches the "
                            "script on stdin), and give ['python', " + repr(parts[1][:200]) + "]")
    return parts[1]


def _limit_from_env(name: str, default: int, least: int, unit: str) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < least:
        raise ArgumentError(f"{name}={value!r} must be a whole number of {unit}, at least "
                            f"{least}", fix=f"e.g. {name}={default}")
    return number


def child_memory_mb() -> int:
    """The address-space limit of a reward child or a local run: ``$WHILEAI_CHILD_MEMORY_MB``,
    else ``CHILD_MEMORY_MB``."""
    return _limit_from_env(MEMORY_ENV, CHILD_MEMORY_MB, 64, "MB")


def child_processes() -> int:
    """How many more tasks than the user has a reward child or a local run may start:
    ``$WHILEAI_CHILD_PROCESSES``, else ``CHILD_PROCESSES``."""
    return _limit_from_env(PROCESSES_ENV, CHILD_PROCESSES, 8, "processes")


def trl_columns(items: Sequence[dict]) -> dict[str, list]:
    """Every field but prompt and completion, as one list per field (None where an item lacks it)."""
    names = dict.fromkeys(k for it in items for k in it if k not in ("prompt", "completion"))
    return {k: [it.get(k) for it in items] for k in names}


def _check_rewards(values: Any, n: int, label: str) -> np.ndarray:
    try:
        out = list(values)
    except TypeError:
        raise RewardError(f"reward {label} returned a {type(values).__name__}, not a list",
                          fix="return one number per completion") from None
    if len(out) != n:
        raise RewardError(f"reward {label} returned {len(out)} values for {n} completions",
                          fix="return exactly one number per completion, in order")
    for i, v in enumerate(out):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise RewardError(f"reward {label} returned {_shape(v)} for item {i + 1} (task "
                              "shown in the input's order); every reward must be a finite "
                              "number", fix="return 0.0 for a failed grade, never None or NaN")
    return np.asarray(out, dtype=np.float64)


def _shape(value: Any) -> str:
    """What a value is, never what it holds (a text may be what the reward read)."""
    if value is None or isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return f"a text of {len(value)} characters (not quoted)"
    return f"a {type(value).__name__}"


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
                  timeout_s: float = REWARD_TIMEOUT_S,
                  pass_env: Sequence[str] | None = None) -> RewardRunner:
    """A :class:`RewardRunner` for a callable, a ``"module:function"`` string or a command list;
    ``root``: a child reward's working directory and where its file is looked up (default: the
    current directory)."""
    if isinstance(reward, RewardRunner):
        return reward
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not (
            0 < timeout_s <= REWARD_TIMEOUT_MAX_S):
        raise ArgumentError(f"`timeout_s` must be a number of seconds in (0, {REWARD_TIMEOUT_MAX_S:g}], got "
                            f"{timeout_s!r}",
                            fix=f"e.g. timeout_s={REWARD_TIMEOUT_S:g}")
    passed = check_pass_env(pass_env)
    base = Path(root if root is not None else ".").resolve()
    if callable(reward):
        name = getattr(reward, "__name__", type(reward).__name__)

        def call(items: list[dict]) -> Any:
            return reward(prompts=[it.get("prompt") for it in items],
                          completions=[it.get("completion") for it in items],
                          **trl_columns(items))
        return RewardRunner(name, call)
    if isinstance(reward, (list, tuple)):
        reward = RewardScript(user_path(base / command_script(reward), argument="reward"))
    if isinstance(reward, (str, RewardFile)):
        if isinstance(reward, RewardFile):
            code_path, function = reward.path, reward.function
        else:
            file, function = locate_function(reward, base)
            code_path = user_path(file, argument="reward")
        if not re.fullmatch(r"[A-Za-z_]\w*", function):
            raise ArgumentError(f"`reward` function {function!r} is not a Python name",
                                fix="e.g. 'rewards/grade.py:score'")
        spec = {"mode": "module", "function": function}
    elif isinstance(reward, RewardScript):
        code_path, spec = reward.path, {"mode": "script"}
    else:
        raise ArgumentError(f"`reward` must be a callable, a 'module:function' string or a "
                            f"command (a list of strings), got {type(reward).__name__} "
                            f"{str(reward)[:80]!r}", fix="e.g. reward='rewards/grade.py:score' or "
                            "reward=['python', 'rewards/grade.py']")
    own_code(code_path, base)  # every form, every surface: a file the project wrote
    code = code_path.read_text("config", error=ArgumentError, fix="save the reward as UTF-8")
    label = str(reward)
    spec.update(file=str(code_path), root=str(base), memory_mb=child_memory_mb())
    processes = child_processes()
    return RewardRunner(label, lambda items: parse_stdout(
        run_child(spec, code, items, base, timeout_s, label, passed, processes), label))


def locate_function(spec: str, root: Path) -> tuple[Path, str]:
    """``"file.py:fn"`` or ``"pkg.mod:fn"`` -> (the module's file under ``root``, ``fn``)."""
    module, sep, function = spec.rpartition(":")
    if not sep or not module or not re.fullmatch(r"[A-Za-z_]\w*", function):
        raise ArgumentError(f"`reward` {spec!r} is not 'module:function'", fix="e.g. "
                            "'rewards/grade.py:score' or 'rewards.grade:score'")
    if module.endswith(".py") or "/" in module or os.sep in module:
        file = Path(module) if Path(module).is_absolute() else root / module
    elif _MODULE.match(module):
        stem = root.joinpath(*module.split("."))
        file = stem.with_suffix(".py") if stem.with_suffix(".py").is_file() else stem / "__init__.py"
    else:
        raise ArgumentError(f"`reward` module {module!r} is neither a .py path nor a dotted "
                            "module name", fix="e.g. 'rewards/grade.py:score'")
    if not file.is_file():
        raise ArgumentError(f"`reward` {spec!r}: no file {file}", fix="give a .py file (or a "
                            f"dotted module) inside {root} that defines {function}()")
    return file, function


def reward_spec(reward: Any, root: Any = None) -> Any:
    """A reward as the caller wrote it -> the form :func:`reward_runner` runs, every file it names
    located under ``root`` (a ``whileai_core.safepath.Root``: the MCP server's workspace) when one
    is given. The one grammar of every surface:

    - ``"file.py:function"`` or ``"package.module:function"`` (no whitespace): a function; under
      ``root`` a :class:`RewardFile`;
    - a list of arguments, or a string with whitespace or without ``:`` (split like a shell,
      never run by one): a command, ``python SCRIPT.py`` only (:func:`command_script`); under
      ``root`` a :class:`RewardScript`;
    - anything else (a callable) as is.
    """
    import shlex

    if isinstance(reward, str):
        text = reward.strip()
        if ":" in text and not any(c.isspace() for c in text):
            return text if root is None else _confined_function(text, root)
        try:
            reward = shlex.split(text)
        except ValueError as err:
            raise ArgumentError(f"`reward` {reward[:200]!r} cannot be split into a command "
                                f"({err})", fix="e.g. 'rewards/grade.py:score', or a command "
                                "such as 'python rewards/grade.py'") from None
    if isinstance(reward, (list, tuple)):
        script = command_script(reward)
        if root is None:
            return ["python", script]
        return RewardScript(root.locate(script, argument="reward"))
    return reward


def _confined_function(spec: str, root: Any) -> RewardFile:
    from pathlib import PurePath

    module, _, function = spec.rpartition(":")
    if not module:
        raise ArgumentError(f"`reward` {spec[:200]!r} is not 'file.py:function'", fix="e.g. "
                            "'rewards/grade.py:score'")
    if not module.endswith(".py") and "/" not in module:
        stem = PurePath(*module.split("."))
        candidates = [f"{stem}.py", f"{stem}/__init__.py"]
        module = next((c for c in candidates
                       if root.locate(c, argument="reward").kind() == "file"), candidates[0])
    return RewardFile(root.locate(module, argument="reward"), function)
