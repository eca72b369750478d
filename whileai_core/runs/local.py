"""The local backend: a recipe's offline CPU smoke (``run.py --smoke --out DIR``) as a subprocess.
A GPU run (any prime-rl config, any recipe's training) goes to Modal.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import whileai_core

from ..defaults import CANCEL_GRACE_S, LOCAL_RUN_TIMEOUT_S
from ..errors import ArgumentError, ConfigError
from ..extras import install_fix, missing
from .. import confine, safejson
from ..failures import child_env, mask_secrets
from ..safepath import Root
from ..voice import arg, call
from . import lock
from ._wrapper import EXIT_FILE, LOG_FILE, PID_FILE
from .backend import NEVER_STARTED, Observation
from .registry import RunRecord
from .targets import RECIPE_ENTRY, Target
from ..hacking.reward import child_memory_mb, child_processes

# the pyproject extra a recipe's smoke imports (a recipe not listed needs only the core)
SMOKE_EXTRA = {"grpo": "train", "dpo": "train", "sft": "train"}
RESULTS_FILE = "results.json"
OUT_DIR = "out"
_LOG_TAIL_LINES = 5


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


_LOG_TAIL_BYTES = 64 << 10


def log_tail(path: Path, lines: int = _LOG_TAIL_LINES) -> str:
    try:
        with open(path, "rb") as fh:  # the run's own log, in the state folder: its tail only
            fh.seek(max(0, os.fstat(fh.fileno()).st_size - _LOG_TAIL_BYTES))
            text = fh.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return "(no log)"
    return mask_secrets(" | ".join(text.strip().splitlines()[-lines:])) or "(empty log)"


class LocalBackend:
    name = "local"
    spends_money = False

    def check_target(self, target: Target) -> None:
        if target.kind == "config":
            raise ArgumentError(
                f"the local backend runs only a recipe's CPU path (recipes/<name>/{RECIPE_ENTRY} "
                f"--smoke); {target.path} is a prime-rl config, which needs GPUs", fix="launch it "
                f"with {arg('backend', 'modal')}, or run the offline smoke of its recipe: "
                f"{call('launch_run', config_or_recipe=target.recipe, backend='local')}")

    def check_ready(self, target: Target | None = None) -> None:
        """The recipe's smoke imports its extra (torch, trl...): refuse before anything runs."""
        extra = SMOKE_EXTRA.get(target.recipe) if target is not None else None
        absent = missing(extra) if extra else []
        if absent:
            raise ConfigError(
                f"the {target.recipe} smoke needs the `{extra}` extra, and "
                f"{', '.join(absent)} {'is' if len(absent) == 1 else 'are'} not installed in "
                f"{sys.executable}", fix=f"{install_fix(extra)}")

    def command(self, target: Target, run_dir: Path, gpu: str | None) -> list[str]:
        data = [] if target.data_dir is None else ["--data", str(target.data_dir)]
        # -s -P: no user site, neither the script's folder nor the working directory on
        # sys.path (the product sets PYTHONPATH itself: the recipes and whileai_core)
        return [sys.executable, "-s", "-P", str(target.path / RECIPE_ENTRY), "--smoke",
                "--out", str(run_dir / OUT_DIR), *data]

    def describe(self, target: Target, run_dir: Path, gpu: str | None, run_name: str) -> str:
        return shlex.join(self.command(target, run_dir, gpu))

    def launch(self, record: RunRecord, target: Target, run_dir: Path, lock_fd: int,
               starting: Callable[[], None] = lambda: None) -> dict[str, Any]:
        for stale in (PID_FILE, EXIT_FILE):  # a relaunch of a run that never started
            (run_dir / stale).unlink(missing_ok=True)
        (run_dir / OUT_DIR).mkdir(parents=True, exist_ok=True)
        repo = target.path.parent.parent
        package_parent = Path(whileai_core.__file__).resolve().parents[1]
        # a clean environment (no token or key: the smoke is offline), and a sys.path the
        # product builds: the recipes' checkout and this whileai_core, nothing of the caller's
        env = child_env({"PYTHONUNBUFFERED": "1", "PYTHONPATH": os.pathsep.join(
            dict.fromkeys((str(repo), str(package_parent))))})

        wrapper = [sys.executable, "-m", "whileai_core.runs._wrapper",
                   "--timeout", f"{LOCAL_RUN_TIMEOUT_S:g}", "--memory-mb", str(child_memory_mb()),
                   "--processes", str(child_processes()),
                   str(run_dir), str(lock_fd), "--", *self.command(target, run_dir, record.gpu)]
        confine.undumpable()  # this process's /proc (environment, memory) is closed to the run
        starting()
        with open(run_dir / "wrapper.err", "ab") as err:
            proc = subprocess.Popen(wrapper, pass_fds=(lock_fd,), start_new_session=True,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err, cwd=repo, env=env)
        # reap it when it ends, so a long-lived server does not collect zombies
        threading.Thread(target=proc.wait, daemon=True).start()
        return {"pid": proc.pid, "log": str(run_dir / LOG_FILE), "out": str(run_dir / OUT_DIR)}

    def _handle(self, run_dir: Path, pid: int) -> dict[str, Any]:
        started = datetime.fromtimestamp((run_dir / PID_FILE).stat().st_mtime, timezone.utc)
        return {"pid": pid, "log": str(run_dir / LOG_FILE), "out": str(run_dir / OUT_DIR),
                "started_at": started.isoformat(timespec="microseconds")}

    def poll(self, record: RunRecord, run_dir: Path) -> Observation:
        held = lock.is_held(run_dir)  # first: the files below are final once it is free
        pid = _read_int(run_dir / PID_FILE)
        handle = record.handle
        if pid is not None and "pid" not in (handle or {}):  # the launcher died before recording it
            handle = self._handle(run_dir, pid)
        if held:
            return Observation("launching" if pid is None else "running", handle=handle)
        code = _read_int(run_dir / EXIT_FILE)
        log = run_dir / LOG_FILE
        if code is None:
            if pid is None:
                return Observation("failed", error=NEVER_STARTED, never_started=True)
            return Observation("failed", handle=handle, error=(
                f"the run's process (pid {pid}) ended without writing an exit code: killed, or "
                f"the machine restarted. Log: {log} (last lines: {log_tail(log)})"))
        if code != 0:
            return Observation("failed", handle=handle, error=(
                f"the recipe exited with code {code}. Log: {log} (last lines: {log_tail(log)})"))
        results_path = run_dir / OUT_DIR / RESULTS_FILE
        if not results_path.exists() and not results_path.is_symlink():
            return Observation("failed", handle=handle, error=(
                f"the recipe exited 0 but wrote no {results_path}. Fix: its run.py --smoke "
                f"--out DIR must write DIR/{RESULTS_FILE}. Log: {log}"))
        try:  # the recipe wrote it: read through the door (no FIFO, no link, size-limited)
            out = Root(run_dir / OUT_DIR, error=ConfigError, label="the run's out folder")
            results = safejson.loads(out.locate(RESULTS_FILE, argument="results").read_text(
                "rows", error=ConfigError))
        except ConfigError as exc:
            return Observation("failed", handle=handle, error=f"{exc}. Log: {log}")
        except json.JSONDecodeError as exc:
            return Observation("failed", handle=handle, error=(
                f"{results_path} is not valid JSON ({exc}). Log: {log}"))
        if not isinstance(results, dict):
            return Observation("failed", handle=handle, error=(
                f"{results_path} holds a {type(results).__name__}, not a JSON object"))
        return Observation("succeeded", handle=handle, results=results)

    def cancel(self, record: RunRecord, run_dir: Path) -> str:
        pid = (record.handle or {}).get("pid") or _read_int(run_dir / PID_FILE)
        if pid is None or not lock.is_held(run_dir):
            return "no live process to stop"
        # only while the lock is held is pid still our wrapper (a session leader: pgid == pid)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pid, sig)
            except ProcessLookupError:
                return f"stopped process group {pid}"
            deadline = time.monotonic() + CANCEL_GRACE_S
            while time.monotonic() < deadline:
                if not lock.is_held(run_dir):
                    return f"stopped process group {pid} ({signal.Signals(sig).name})"
                time.sleep(0.05)
        return f"sent SIGKILL to process group {pid}; it still holds the run's lock"
