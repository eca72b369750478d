"""The host configurations in docs/mcp-server.md work: each is read from that page itself, checked
against its host's format, and the server is started exactly as that host would start it.

Formats, from each host's own documentation: Claude Code (`claude mcp add NAME -- COMMAND ARGS`,
or `.mcp.json` with `mcpServers`), Claude Desktop (`claude_desktop_config.json`, `mcpServers`,
stdio with `command` and `args`), VS Code (`.vscode/mcp.json`, top-level `servers`, each with
`"type": "stdio"`, `${workspaceFolder}` for the open folder), Cursor (`.cursor/mcp.json`,
`mcpServers`), Codex (`config.toml`, a `[mcp_servers.NAME]` table with `command` and `args`, or
`codex mcp add NAME -- COMMAND ARGS`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tomllib
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "docs" / "mcp-server.md").read_text(encoding="utf-8")   # the hosts page
SCRIPT = Path(sys.executable).with_name("whileai-mcp")
COMMAND = "/path/to/repo/.venv/bin/whileai-mcp"   # the README's placeholder for the server
PROJECT = "/path/to/your/project"                  # ... and for the project folder
HOSTS = ("claude-code-cli", "claude-code", "claude-desktop", "vscode", "cursor", "codex",
         "codex-cli")
_BLOCK = re.compile(r"<!-- host: ([\w-]+) -->\n```(\w+)\n(.*?)\n```", re.S)
pytestmark = pytest.mark.skipif(not SCRIPT.exists(),
                                reason="whileai-mcp not installed (pip install -e .)")


def blocks() -> dict[str, tuple[str, str]]:
    found = {host: (lang, text) for host, lang, text in _BLOCK.findall(README)}
    assert sorted(found) == sorted(HOSTS), "the host blocks of docs/mcp-server.md changed: update HOSTS"
    return found


def server_entry(host: str, lang: str, text: str) -> tuple[str, list[str]]:
    """The command and arguments the host would run, checked against the host's format."""
    if lang == "bash":
        words = shlex.split(text)
        program = {"claude-code-cli": "claude", "codex-cli": "codex"}[host]
        assert words[:4] == [program, "mcp", "add", "whileai"] and words[4] == "--", words
        return words[5], words[6:]
    if lang == "toml":
        entry = tomllib.loads(text)["mcp_servers"]["whileai"]
        assert set(entry) <= {"command", "args", "env", "cwd"}
        return entry["command"], entry["args"]
    data = json.loads(text)
    if host == "vscode":
        assert list(data) == ["servers"]
        entry = data["servers"]["whileai"]
        assert entry["type"] == "stdio"
    else:
        assert list(data) == ["mcpServers"]
        entry = data["mcpServers"]["whileai"]
        assert entry.get("type", "stdio") == "stdio"
    assert isinstance(entry["command"], str) and all(isinstance(a, str) for a in entry["args"])
    return entry["command"], entry["args"]


@pytest.mark.parametrize("host", HOSTS)
def test_host_config_starts_the_server(host, tmp_path):
    lang, text = blocks()[host]
    command, args = server_entry(host, lang, text)
    assert command == COMMAND
    project = tmp_path / "project"
    project.mkdir()
    (project / "graded.jsonl").write_text(
        "".join(json.dumps({"task_id": t, "reward": r}) + "\n"
                for t, r in (("a", 1.0), ("a", 0.0), ("b", 1.0), ("b", 1.0))))
    # fill the placeholders as the user (or the host) would: the project folder, absolute
    args = [a.replace(PROJECT, str(project)).replace("${workspaceFolder}", str(project))
            for a in args]
    assert "--root" in args

    async def go():
        # hosts start servers in the project folder (Claude Code, Cursor) or elsewhere (Claude
        # Desktop): a relative --root only appears where the host starts in the project
        cwd = project if "." in args else tmp_path
        params = StdioServerParameters(command=str(SCRIPT), args=args, cwd=str(cwd),
                                       env={"PATH": os.environ.get("PATH", "")})
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            await client.call_tool("enable_toolset", {"toolset": "skills"})
            skills = await client.call_tool("list_skills", {})
            rate = await client.call_tool("rate", {"rows": "graded.jsonl"})
            return tools, skills, rate

    tools, skills, rate = anyio.run(go)
    assert {"route_rows", "teacher_clears", "launch_run", "enable_toolset"} <= tools   # the default toolset
    listed = sorted(s["name"] for s in skills.structured_content["skills"])
    assert listed == sorted(p.parent.name for p in (ROOT / "skills").glob("*/SKILL.md"))
    assert not rate.is_error and rate.structured_content["rate"]["value"] == (0.5 + 1.0) / 2


def test_desktop_and_codex_use_absolute_roots():
    """Hosts that do not start in the project get an absolute --root (a relative one would be
    resolved against wherever the host happens to start)."""
    for host in ("claude-desktop", "cursor", "codex", "codex-cli"):
        lang, text = blocks()[host]
        _, args = server_entry(host, lang, text)
        assert args[args.index("--root") + 1] == PROJECT, host
