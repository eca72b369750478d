"""Fixtures shared by the server tests: an empty workspace root and a server on it.

A test module that needs files in the workspace overrides ``ws`` (tests/test_server.py does).
"""

from __future__ import annotations

import pytest


@pytest.fixture()
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture()
def server(ws):
    from server.app import build_server

    return build_server(ws, skills_dir=ws / "no-skills")


# --- the slow group ------------------------------------------------------------------------------
# Tests marked ``slow`` (each trains a tiny model for tens of seconds, builds and installs the
# wheel, or runs check.py end to end) are skipped by a plain ``pytest``; ``bash scripts/test.sh``
# (and ``.ci/run``) passes ``--slow`` and runs them too. ``pytest --slow -m slow`` runs only them.


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run the tests marked slow (bash scripts/test.sh does)")


# Tests marked ``train`` need the `train` extra (torch, transformers, trl...): without it they
# skip, naming what is missing and the install command, instead of failing.


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a test of tens of seconds (a tiny model trained, "
                                       "the wheel installed, check.py run): pytest --slow runs it")
    config.addinivalue_line("markers", "train: needs the `train` extra; skipped without it")


def pytest_collection_modifyitems(config, items):
    from whileai_core.extras import install_command, missing

    absent = missing("train")
    if absent:
        needs = pytest.mark.skip(reason=f"needs the `train` extra ({', '.join(absent)} not "
                                        f"installed): {install_command('train')}")
        for item in items:
            if "train" in item.keywords:
                item.add_marker(needs)
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow: pytest --slow (or bash scripts/test.sh) runs it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
