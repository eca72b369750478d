"""The Skills extension checked by a client we did not write: the MCP Inspector CLI.

The Inspector (npm ``@modelcontextprotocol/inspector`` 2.x, Node >= 22.19) spawns ``whileai-mcp``
over stdio, negotiates protocol 2026-07-28 (``--protocol-era modern``: the extension capability
exists only in that revision) and with ``--verify`` runs its own SEP-2640 conformance checks:
every entry's shape, each file read with resources/read and compared with its digest and size,
the frontmatter against the SKILL.md read. Exit 0 only when every skill verifies.

Where the Inspector or a Node >= 22.19 cannot be found, these tests are skipped and say how to get
them (no network in tests). They are looked for, in order: ``WHILEAI_INSPECTOR`` (the
``mcp-inspector`` program) and ``WHILEAI_NODE_BIN`` (the folder holding ``node``); the repository's
``.tools/node_modules/.bin``, where one command installs both (``scripts/test.sh`` runs it when npm
is there): ``npm install --prefix .tools node@22 @modelcontextprotocol/inspector@2``; then the
PATH. npm's ``node@22`` package is Node 22 itself (the newest 22.x), so no other installer is
needed.
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
TOOLS_BIN = ROOT / ".tools" / "node_modules" / ".bin"
SERVER = Path(sys.executable).with_name("whileai-mcp")
NODE_MIN = (22, 19)
HOW = ("install both with `npm install --prefix .tools node@22 @modelcontextprotocol/inspector@2` "
       "(or point WHILEAI_INSPECTOR and WHILEAI_NODE_BIN at yours)")


def _node_version(node: Path) -> tuple[int, ...] | None:
    try:
        out = subprocess.run([str(node), "--version"], capture_output=True, text=True,
                             timeout=30, check=False).stdout.strip()
        return tuple(int(x) for x in out.lstrip("v").split(".")[:2])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def find_tools() -> tuple[Path | None, Path | None, str]:
    """(the Inspector program, the folder of a Node >= 22.19, why not) from the environment,
    the repository's .tools folder, then the PATH."""
    inspector = os.environ.get("WHILEAI_INSPECTOR")
    candidates = [Path(inspector)] if inspector else [TOOLS_BIN / "mcp-inspector"]
    found = shutil.which("mcp-inspector")
    candidates += [Path(found)] if found and not inspector else []
    program = next((c for c in candidates if c.is_file()), None)
    node_dirs = [Path(os.environ["WHILEAI_NODE_BIN"])] if os.environ.get("WHILEAI_NODE_BIN") \
        else [TOOLS_BIN] + ([Path(shutil.which("node")).parent] if shutil.which("node") else [])
    node_bin, seen = None, []
    for folder in node_dirs:
        version = _node_version(folder / "node") if (folder / "node").is_file() else None
        if version is not None:
            seen.append(f"{folder / 'node'} is {'.'.join(map(str, version))}")
        if version is not None and version >= NODE_MIN:
            node_bin = folder
            break
    if program is None:
        return None, node_bin, f"MCP Inspector CLI not found: {HOW}"
    if node_bin is None:
        have = "; ".join(seen) or "no node found"
        return program, None, f"the Inspector needs Node >= 22.19 ({have}): {HOW}"
    return program, node_bin, ""


INSPECTOR, NODE_BIN, MISSING = find_tools()
pytestmark = pytest.mark.skipif(bool(MISSING) or not SERVER.exists(),
                                reason=MISSING or "whileai-mcp not installed (pip install -e .)")


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
        # fixtures.py is check.py's helper, never an agent's: only the skill's own files
        assert files == {f"skill://{report['name']}/SKILL.md"}, files
        assert all(f["status"] == "verified" for f in report["files"])


def test_inspector_gets_one_skill_and_no_check_helper():
    done = inspector("--method", "skills/get", "--uri", "skill://pick-a-method/SKILL.md",
                     "--verify")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Verified 1 skill" in done.stdout + done.stderr
    read = inspector("--method", "resources/read", "--uri", "skill://pick-a-method/SKILL.md")
    assert read.returncode == 0, read.stderr[-2000:]
    content = json.loads(read.stdout)["contents"][0]
    assert content["text"] == (ROOT / "skills" / "pick-a-method" / "SKILL.md").read_text()
    # the skill folder's fixtures.py (check.py's helper) is not served
    helper = inspector("--method", "resources/read", "--uri", "skill://pick-a-method/fixtures.py")
    assert helper.returncode != 0 and "Unknown resource" in helper.stdout + helper.stderr


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
