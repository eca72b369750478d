"""The Modal backend: spawn a recipe's deployed function, keep its call id, poll it, cancel it.

Modal's client does the work [1]: ``Function.from_name(app, function).with_options(gpu=...)
.spawn(...)`` starts a call whose ``object_id`` is stored; ``FunctionCall.from_id`` finds it,
``.get(timeout=0)`` polls and ``.cancel()`` stops it. The recipe's ``run.py`` says what to call
(its ``modal_call`` hook); a returned dict whose ``returncode`` is not 0 is a failed run.
Credentials stay Modal's (its environment variables or ``~/.modal.toml``): only whether they are
set is asked, never their values.

[1] Modal, "Job processing", https://modal.com/docs/guide/job-queue (spawn, FunctionCall.from_id,
    get(timeout=0), cancel).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..extras import install_fix
from ..voice import arg, choose
from ..io import write_atomic
from . import lock
from .backend import NEVER_STARTED, Observation
from .registry import RunRecord
from .targets import RECIPE_ENTRY, Target
import inspect

CREDENTIALS_FIX = ("set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET in the environment, or run "
                   "`modal token new` (it writes ~/.modal.toml)")
HOOK = "modal_call"
DATA_HOOK = "describe_data"  # what a plan says of a data folder (read before planning)
HOLDOUT_HOOK = "data_holdout"  # the content name of the held-out set a data folder holds
TEACHER_HOOK = "starts_teacher"
CONFIG_COPY = "config.toml"  # in the run's folder: the bytes that were hashed, as launched


def _modal():
    try:
        import modal  # lazy: modal is the launch extra
    except ImportError:
        raise ConfigError("the Modal backend needs the `modal` package, which is not installed",
                          fix=f"{install_fix('launch')}; or use {arg('backend', 'local')} for a "
                          "recipe's CPU smoke") from None
    return modal


def _auth_error(action: str) -> ConfigError:
    return ConfigError(f"Modal refused to {action}: no valid token", fix=f"{CREDENTIALS_FIX}")


def _shown(value: Any) -> str:
    """An argument of the call as a reader wants it: a short one-line string or a number as
    written, a mapping by its keys, anything longer by its size (never a whole config)."""
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, str):
        if len(value) <= 64 and "\n" not in value:
            return repr(value)
        return f"<text, {len(value.splitlines())} lines>"
    if isinstance(value, dict):
        keys = [str(k) for k in value]
        more = f", ... {len(keys) - 6} more" if len(keys) > 6 else ""
        return "{" + ", ".join(keys[:6]) + more + "}"
    if isinstance(value, (list, tuple)):
        return f"<{len(value)} items>"
    return f"<{type(value).__name__}>"


@dataclass(frozen=True)
class ModalCall:
    """The deployed function a run spawns, and what it is called with."""

    app: str
    function: str
    args: tuple
    kwargs: dict[str, Any]

    def describe(self, gpu: str | None) -> str:
        shown = [_shown(a) for a in self.args]
        shown += [f"{k}={_shown(v)}" for k, v in self.kwargs.items()]
        options = f".with_options(gpu={gpu!r})" if gpu else ""
        at_shell = [_shown(a) for a in self.args] + [
            f"{k.replace('_', '-')} {_shown(v)}" for k, v in self.kwargs.items()]
        return choose(  # the shell reader gets the call in words, not Modal's Python
            python=(f"modal.Function.from_name({self.app!r}, {self.function!r}){options}"
                    f".spawn({', '.join(shown)})"),
            cli=(f"Modal function {self.function} of app {self.app}"
                 + (f" on {gpu}" if gpu else "") + f", spawned with {', '.join(at_shell)}"))


def _recipe_module(target: Target):
    """The recipe's run.py, imported (its hooks say what a Modal run of it does)."""
    entry = (target.recipe_dir or Path(target.recipe)) / RECIPE_ENTRY
    where = f"recipes/{target.recipe}/{RECIPE_ENTRY}"
    if not entry.is_file():
        raise ConfigError(f"{where} not found ({entry}); a Modal run of {target.label} needs the "
                          f"{target.recipe} recipe", fix="pass --recipes-dir (or set "
                          "WHILEAI_RECIPES_DIR) to the folder holding it")
    spec = importlib.util.spec_from_file_location(f"_whileai_recipe_{target.recipe}", entry)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(entry.parents[2]))  # recipes import their siblings as recipes.*
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(entry.parents[2]))
    return module, where


def recipe_starts_teacher(target: Target, config_text: str) -> tuple[bool, str]:
    """Whether the recipe's Modal function starts the OPD teacher a config expects on localhost
    (its ``starts_teacher(config_text) -> (bool, why)`` hook); a recipe without the hook starts
    none."""
    module, where = _recipe_module(target)
    hook = getattr(module, TEACHER_HOOK, None)
    if not callable(hook):
        return False, f"{where} starts no teacher (it defines no {TEACHER_HOOK} hook)"
    starts, why = hook(config_text)
    return bool(starts), str(why)


@dataclass(frozen=True)
class DataReading:
    """What a recipe says of its data folder before a run: its words (``describe_data``) and the
    content name of the held-out set the run will score (``data_holdout``: None when there is
    none; ``names_holdout`` False when the recipe has no such hook)."""

    words: str
    holdout: str | None = None
    names_holdout: bool = False


def recipe_reads_data(target: Target, *, smoke: bool = False) -> DataReading:
    """The recipe's hooks on its data folder (each raises what the run would); without
    ``describe_data`` the words are the folder's name. ``smoke`` (the local backend's CPU smoke)
    is passed to a hook that takes it."""
    module, _ = _recipe_module(target)
    describe = getattr(module, DATA_HOOK, None)
    told = {"smoke": smoke} if callable(describe) and "smoke" in inspect.signature(
        describe).parameters else {}
    words = str(describe(str(target.data_dir), **told)) if callable(describe) else \
        str(target.data_dir)
    holdout = getattr(module, HOLDOUT_HOOK, None)
    if not callable(holdout):
        return DataReading(words)
    name = holdout(str(target.data_dir))
    return DataReading(words, name if isinstance(name, str) else None, True)


def recipe_call(target: Target, run_name: str, config_path: Path | None = None) -> ModalCall:
    """Ask the recipe's run.py (its ``modal_call`` hook) what to spawn for this run.
    ``config_path``: the launch's copy of the hashed config bytes; default the config's own path
    (a plan only describes the call)."""
    module, where = _recipe_module(target)
    hook = getattr(module, HOOK, None)
    if not callable(hook):
        raise ConfigError(f"{where} defines no {HOOK}(run_name, config_path), so launch_run cannot "
                          "tell which deployed Modal function to spawn", fix="add it (it returns "
                          "{'app', 'function', 'args', 'kwargs'}), or run the recipe's own "
                          f"launcher: python {where}")
    config = str(config_path or target.path) if target.kind == "config" else None
    answer = hook(run_name, config) if target.data_dir is None else hook(
        run_name, config, data=str(target.data_dir))
    if (not isinstance(answer, dict) or not isinstance(answer.get("app"), str)
            or not isinstance(answer.get("function"), str)
            or not isinstance(answer.get("args", ()), (list, tuple))
            or not isinstance(answer.get("kwargs", {}), dict)):
        raise ConfigError(f"{where}: {HOOK}() must return a dict with str 'app' and 'function', "
                          f"a list 'args' and a dict 'kwargs'; got {type(answer).__name__}",
                          fix="return e.g. {'app': 'whileai-grpo', 'function': 'train_grpo', "
                          "'args': [settings, prompts], 'kwargs': {}}")
    return ModalCall(app=answer["app"], function=answer["function"],
                     args=tuple(answer.get("args", ())), kwargs=dict(answer.get("kwargs", {})))


FAILED_TAIL_CHARS = 600  # of the run's own log tail, in the one-line error a status shows


def failed_run_error(code: Any, record: dict[str, Any]) -> str:
    """What a status says of a run whose function returned a record with a non-zero
    ``returncode`` (the recipe keeps its record instead of raising): the code and the end of its
    log, bounded."""
    tail = str(record.get("log_tail") or "").strip()
    if len(tail) > FAILED_TAIL_CHARS:
        tail = "..." + tail[-FAILED_TAIL_CHARS:]
    where = f" under {record['run_dir']}" if record.get("run_dir") else ""
    return (f"the run ended with return code {code} (its record is kept in the results; logs on "
            f"the recipe's volume{where})" + (f"; log tail: {tail}" if tail else ""))


class ModalBackend:
    name = "modal"
    spends_money = True

    def check_target(self, target: Target) -> None:
        """Every recipe and config can run on Modal."""

    def has_credentials(self) -> bool:
        from modal.config import config  # lazy: modal is the launch extra

        token = config.get("token_id") and config.get("token_secret")
        return bool(token or config.get("oauth_refresh_token"))

    def check_ready(self, target: Target | None = None) -> None:
        """Raise before anything is recorded when modal or its token is missing."""
        _modal()
        if not self.has_credentials():
            raise ConfigError("no Modal token found", fix=f"{CREDENTIALS_FIX}")

    def describe(self, target: Target, run_dir: Path, gpu: str | None, run_name: str) -> str:
        return recipe_call(target, run_name).describe(gpu)

    def launch(self, record: RunRecord, target: Target, run_dir: Path, lock_fd: int,
               starting: Callable[[], None] = lambda: None) -> dict[str, Any]:
        modal = _modal()
        copy = None
        if target.kind == "config" and target.data is not None:
            copy = write_atomic(run_dir / CONFIG_COPY, target.data, overwrite=True)
        call_spec = recipe_call(target, record.name, copy)
        function = modal.Function.from_name(call_spec.app, call_spec.function)
        if record.gpu:
            function = function.with_options(gpu=record.gpu)
        starting()  # from here on a call may exist on Modal before its id is recorded
        try:
            call = function.spawn(*call_spec.args, **call_spec.kwargs)
        except modal.exception.AuthError:
            raise _auth_error("spawn the run") from None
        except modal.exception.NotFoundError:
            raise ConfigError(
                f"Modal has no deployed function {call_spec.function!r} in app "
                f"{call_spec.app!r}", fix="deploy the recipe's app first (`modal deploy` its "
                f"Modal module, see recipes/{target.recipe}/), then launch again") from None
        return {"call_id": call.object_id, "app": call_spec.app, "function": call_spec.function}

    def poll(self, record: RunRecord, run_dir: Path) -> Observation:
        handle = record.handle or {}
        call_id = handle.get("call_id")
        if not call_id:
            if lock.is_held(run_dir):
                return Observation("launching")
            if handle.get("backend_called_at"):
                return Observation("failed", error=(
                    "the launching process died while spawning on Modal, before it recorded a "
                    f"call id: a call of recipe {record.recipe!r} may be running untracked. Fix: "
                    "look at the app's calls in the Modal dashboard (or `modal app list`) and "
                    "stop any you do not want"))
            return Observation("failed", error=NEVER_STARTED, never_started=True)
        modal = _modal()
        errors = modal.exception
        call = modal.FunctionCall.from_id(call_id)
        try:
            value = call.get(timeout=0)
        except errors.AuthError:
            raise _auth_error(f"report on call {call_id}") from None
        except errors.OutputExpiredError:
            return Observation("failed", error=(
                f"Modal no longer keeps the output of call {call_id} (outputs expire); the run "
                "ended but its results were never collected"))
        except errors.FunctionTimeoutError as exc:
            return Observation("failed", error=f"the run hit its Modal timeout: {exc}")
        except (TimeoutError, errors.TimeoutError):  # get(timeout=0) raises the builtin one
            return Observation("running")
        except Exception as exc:  # the recipe raised remotely; Modal re-raises its exception
            first = str(exc).strip().splitlines()[:1]
            return Observation("failed", error=(
                f"the Modal run raised {type(exc).__name__}: {first[0] if first else ''} "
                f"(see `modal app logs {handle.get('app')}`)"))
        if not isinstance(value, dict):
            return Observation("failed", error=(
                f"the recipe's Modal function returned a {type(value).__name__}, not a dict of "
                "results"))
        code = value.get("returncode", 0)
        if code != 0:  # e.g. prime-rl's train(): rl exited non-zero, the record returned, not raised
            return Observation("failed", results=value, error=failed_run_error(code, value))
        return Observation("succeeded", results=value)

    def cancel(self, record: RunRecord, run_dir: Path) -> str:
        call_id = (record.handle or {}).get("call_id")
        if not call_id:
            return "no Modal call to stop"
        modal = _modal()
        try:
            modal.FunctionCall.from_id(call_id).cancel(terminate_containers=True)
        except modal.exception.AuthError:
            raise _auth_error(f"cancel call {call_id}") from None
        return f"cancelled Modal call {call_id}"
