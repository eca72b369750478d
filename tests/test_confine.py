"""The supervisor of user code (whileai_core.confine) read from the caller's side.

``contain`` is called from a process of its own (it takes over that process's signals and, without
namespaces, its privileges), so each test runs it in a child interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

LATE_READER = """
import json, os, time
from whileai_core import confine

real, reads = confine._lines, []

def late(fd, buffer, wait_s):
    if not reads:
        time.sleep(1.0)
    reads.append(fd)
    return real(fd, buffer, wait_s)

def start():
    pid = os.fork()
    if pid == 0:
        os._exit(3)
    return pid

confine._lines = late
got = confine.contain(start, timeout_s=20, max_processes=8)
print(json.dumps([got.how, got.code]))
"""


def test_an_outcome_that_arrives_with_the_start_lines_is_kept():
    # A busy machine: the caller reads the namespace's pipe only after the worker has started
    # and ended, so "ready", the init's pid and the outcome come in one read. The outcome was
    # dropped and the run read as stopped (a reward's exit status 126 under a loaded suite).
    done = subprocess.run([sys.executable, "-c", LATE_READER], capture_output=True, text=True,
                          timeout=60, check=True)
    assert json.loads(done.stdout.splitlines()[-1]) == ["exited", 3], done.stderr
