"""Crash safety: a launching process killed (SIGKILL) at the worst moments.

Each case runs launch_run in a child process whose backend call is patched to kill the process
with SIGKILL at one point. The registry is then read raw (the run is left ``launching``), and a
status call from this process reconciles it from what the run's lock and files prove.
"""

from __future__ import annotations

import signal
import subprocess
import textwrap

import pytest

from whileai_core.runs import Registry, launch_run, run_status
from whileai_core.runs.backend import NEVER_STARTED
from test_runs_support import PYTHON, launches, make_recipes, wait_for, wait_until_finished

_CHILD = """
import os, signal, sys, time
from pathlib import Path
from whileai_core.runs import launch_run
from whileai_core.runs.local import LocalBackend

state, recipes, mode = sys.argv[1:4]
original = LocalBackend.launch

def patched(self, record, target, run_dir, lock_fd, *rest):
    if mode == "before-backend":          # registry written, backend never called
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "hang-before-backend":     # still alive, holding the run's lock
        Path(state, "in-launch").write_text(record.id)
        time.sleep(300)
    handle = original(self, record, target, run_dir, lock_fd, *rest)
    if mode == "after-backend":           # the recipe started, its handle never recorded
        os.kill(os.getpid(), signal.SIGKILL)
    return handle

LocalBackend.launch = patched
launch_run("tiny", backend="local", confirm=True, state_dir=state, recipes_dir=recipes)
"""


@pytest.fixture
def where(tmp_path):
    return dict(state_dir=tmp_path / "state", recipes_dir=make_recipes(tmp_path))


def _child(where, mode: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([PYTHON, "-c", textwrap.dedent(_CHILD), str(where["state_dir"]),
                             str(where["recipes_dir"]), mode], **popen)


def _the_run(where):
    runs = Registry(where["state_dir"]).all()
    assert len(runs) == 1, runs
    return runs[0]


def test_killed_between_registry_write_and_backend_call(where):
    assert _child(where, "before-backend").wait() == -signal.SIGKILL
    raw = _the_run(where)
    assert raw.status == "launching"          # what the dead process left behind
    reconciled = run_status(raw.id, state_dir=where["state_dir"])
    assert reconciled.status == "failed"
    assert reconciled.error == NEVER_STARTED and reconciled.handle is None
    assert launches(where["recipes_dir"]) == []  # nothing ran
    # nothing ran, so launching it again is not a second launch: same id, runs once
    again = launch_run("tiny", backend="local", confirm=True, **where)
    assert again.action == "launched" and again.run.id == raw.id
    assert wait_until_finished(raw.id, where["state_dir"]).status == "succeeded"
    assert len(launches(where["recipes_dir"])) == 1


def test_killed_after_the_backend_started_the_recipe(where):
    assert _child(where, "after-backend").wait() == -signal.SIGKILL
    raw = _the_run(where)
    assert raw.status == "launching" and "pid" not in (raw.handle or {})
    done = wait_until_finished(raw.id, where["state_dir"])
    assert done.status == "succeeded"          # found through the run's pid and exit files
    assert done.handle["pid"] > 0 and done.launched_at is not None
    assert len(launches(where["recipes_dir"])) == 1
    again = launch_run("tiny", backend="local", confirm=True, **where)
    assert again.action == "existing" and len(launches(where["recipes_dir"])) == 1


def test_a_launch_in_progress_is_not_mistaken_for_a_dead_one(where):
    child = _child(where, "hang-before-backend")
    try:
        wait_for(where["state_dir"] / "in-launch")
        run = _the_run(where)
        # the launcher is alive and holds the run's lock: status leaves it launching
        assert run_status(run.id, state_dir=where["state_dir"]).status == "launching"
    finally:
        child.kill()
        child.wait()
    assert run_status(run.id, state_dir=where["state_dir"]).status == "failed"
