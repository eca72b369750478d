"""The Skills extension checked by a client we did not write: the MCP Inspector CLI.

The Inspector (npm ``@modelcontextprotocol/inspector`` 2.x, Node >= 22.19) spawns ``whileai-mcp``
over stdio, negotiates protocol 2026-07-28 (``--protocol-era modern``: the extension capability
exists only in that revision) and with ``--verify`` runs its own SEP-2640 conformance checks:
every entry's shape, each file read with resources/read and compared with its digest and size,
the frontmatter against the SKILL.md read. Exit 0 only when every skill verifies.

Where the Inspector is not installed, these tests are skipped (no network in tests). Install:
``npm install --prefix /work/ext/node22 node@22`` and ``npm install --prefix /work/ext/inspector
@modelcontextprotocol/inspector``, or point ``WHILEAI_INSPECTOR`` and ``WHILEAI_NODE_BIN`` at
them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSPECTOR = Path(os.environ.get("WHILEAI_INSPECTOR",
                                "/work/ext/inspector/node_modules/.bin/mcp-inspector"))
NODE_BIN = Path(os.environ.get("WHILEAI_NODE_BIN", "/work/ext/node22/node_modules/.bin"))
SERVER = Path(sys.executable).with_name("whileai-mcp")

pytestmark = pytest.mark.skipif(
    not INSPECTOR.exists() or not (NODE_BIN / "node").exists() or not SERVER.exists(),
    reason="MCP Inspector CLI or Node 22 not installed here")


def inspector(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([str(INSPECTOR), "--cli", str(SERVER), "--root", str(ROOT), "--",
                           "--protocol-era", "modern", *args], capture_output=True, text=True,
                          timeout=180, env=env, cwd=ROOT)


def test_inspector_verifies_every_skill_of_skills_list():
    done = inspector("--method", "skills/list", "--verify")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    reports = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    names = sorted(p.parent.name for p in (ROOT / "skills").glob("*/SKILL.md"))
    assert sorted(r["name"] for r in reports) == names
    for report in reports:
        assert report["ok"] and report["outcome"] == "verified", report
        files = {f["uri"] for f in report["files"]}
        assert f"skill://{report['name']}/fixtures.py" in files       # helper files listed
        assert all(f["status"] == "verified" for f in report["files"])


def test_inspector_gets_one_skill_and_reads_a_helper_file():
    done = inspector("--method", "skills/get", "--uri", "skill://pick-a-method/SKILL.md",
                     "--verify")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Verified 1 skill" in done.stdout + done.stderr
    read = inspector("--method", "resources/read", "--uri", "skill://pick-a-method/fixtures.py")
    assert read.returncode == 0, read.stderr[-2000:]
    content = json.loads(read.stdout)["contents"][0]
    assert content["text"] == (ROOT / "skills" / "pick-a-method" / "fixtures.py").read_text()


def test_inspector_sees_an_unknown_skill_refused():
    done = inspector("--method", "skills/get", "--uri", "skill://no-such-skill/SKILL.md")
    assert done.returncode != 0
    assert "No skill is served at skill://no-such-skill/SKILL.md" in done.stdout + done.stderr


@pytest.mark.skipif(shutil.which("true") is None, reason="no POSIX shell tools")
def test_the_index_is_not_a_skill():
    done = inspector("--method", "resources/list")
    assert done.returncode == 0, done.stderr[-2000:]
    uris = [r["uri"] for r in json.loads(done.stdout)["resources"]]
    assert "whileai://skills/index.md" in uris
    assert not any(u.startswith("skill://index") for u in uris)
