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
