"""The supervisor of user code (whileai_core.confine) read from the caller's side."""

from __future__ import annotations

import os
import time

from whileai_core import confine


def test_an_outcome_that_arrives_with_the_start_lines_is_kept(monkeypatch):
    # A busy machine: the caller reads the namespace's pipe only after the worker has started
    # and ended, so "ready", the init's pid and the outcome come in one read. The outcome was
    # dropped and the run read as stopped (a reward's exit status 126 under a loaded suite).
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

    monkeypatch.setattr(confine, "_lines", late)
    got = confine.contain(start, timeout_s=20, max_processes=8)
    assert (got.how, got.code) == (confine.EXITED, 3), got
