"""`whileai-skills init`: host configs merged (never overwritten), skills installed, a marked
AGENTS.md section; refusals write nothing; a second run changes nothing.

Expected files are written out here by hand from each host's documented shape (Claude Code and
Cursor: ``mcpServers``; VS Code: ``servers`` with ``type: stdio``; Codex: ``[mcp_servers.NAME]``).
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from whileai_core.cli import main
from whileai_core.defaults import AGENTS_SECTION_BEGIN, AGENTS_SECTION_END
from whileai_core.errors import ArgumentError, ConfigError
from whileai_core.init import HOSTS, bundled_skills_dir, init_project

CMD = "/opt/whileai/bin/whileai-mcp"
SKILLS = sorted(p.parent.name for p in bundled_skills_dir().glob("*/SKILL.md"))


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under root (links as their target text) with its bytes and mtime."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = (os.readlink(path).encode(), 0)
        elif path.is_file():
            out[rel] = (path.read_bytes(), path.stat().st_mtime_ns)
    return out


def _init(root, **kw):
    kw.setdefault("command", CMD)
    return init_project(root, **kw)


def test_keeps_another_server_in_mcp_json(tmp_path):
    (tmp_path / ".mcp.json").write_text(
        '{\n  "mcpServers": {\n    "github": {"command": "gh-mcp", "args": ["--x"]}\n  },\n'
        '  "other": 1\n}\n')
    result = _init(tmp_path)
    assert result.hosts == ["claude"] and result.found == {"claude": "found .mcp.json"}
    data = json.loads((tmp_path / ".mcp.json").read_text())
    assert data == {"mcpServers": {
        "github": {"command": "gh-mcp", "args": ["--x"]},
        "whileai": {"command": CMD, "args": ["--root", str(tmp_path.resolve())]}},
        "other": 1}
    for name in SKILLS:  # Claude Code reads project skills from .claude/skills/<name>/SKILL.md
        copied = tmp_path / ".claude" / "skills" / name / "SKILL.md"
        assert copied.read_bytes() == (bundled_skills_dir() / name / "SKILL.md").read_bytes()
        assert not (copied.parent / "fixtures.py").exists()  # check.py's, not the agent's
    agents = (tmp_path / "AGENTS.md").read_text()
    assert agents.startswith(AGENTS_SECTION_BEGIN) and agents.rstrip().endswith(AGENTS_SECTION_END)
    assert all(f"- `{n}`\n" in agents for n in SKILLS) and "`.claude/skills/`" in agents


def test_rerun_changes_nothing(tmp_path):
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".codex").mkdir()
    (tmp_path / "AGENTS.md").write_text("# Agents\n\nRun the tests.\n")
    first = _init(tmp_path)
    before = _snapshot(tmp_path)
    second = _init(tmp_path)
    assert {a.action for a in second.actions} == {"unchanged"} and second.changed == 0
    assert _snapshot(tmp_path) == before
    assert first.changed == len(first.actions)
    assert "already set up" in str(second)


def test_each_host_gets_its_documented_shape(tmp_path):
    result = _init(tmp_path, hosts=["all"])
    root = str(tmp_path.resolve())
    entry = {"command": CMD, "args": ["--root", root]}
    assert json.loads((tmp_path / ".mcp.json").read_text()) == {"mcpServers": {"whileai": entry}}
    assert json.loads((tmp_path / ".cursor/mcp.json").read_text()) == {
        "mcpServers": {"whileai": entry}}
    assert json.loads((tmp_path / ".vscode/mcp.json").read_text()) == {
        "servers": {"whileai": {"type": "stdio", **entry}}}
    codex = (tmp_path / ".codex/config.toml").read_text()
    assert codex.startswith("[mcp_servers.whileai]\n")
    assert tomllib.loads(codex) == {"mcp_servers": {"whileai": entry}}
    # Codex, Cursor and VS Code share .agents/skills; Claude Code reads .claude/skills
    for folder in (".claude/skills", ".agents/skills"):
        assert sorted(p.name for p in (tmp_path / folder).iterdir()) == SKILLS
    words = " ".join((tmp_path / "AGENTS.md").read_text().split())
    assert "`.claude/skills/` and `.agents/skills/`" in words
    assert any("trusted project" in n for n in result.notes)
    assert result.hosts == list(HOSTS)


def test_hosts_are_found_by_their_folders(tmp_path):
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".vscode").mkdir()
    result = _init(tmp_path)
    assert result.found == {"cursor": "found .cursor", "vscode": "found .vscode"}
    assert not (tmp_path / ".mcp.json").exists() and not (tmp_path / ".claude").exists()


def test_codex_toml_is_appended_keeping_comments_and_servers(tmp_path):
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    old = ('# my settings\nmodel = "gpt-5"\n\n[mcp_servers.docs]\ncommand = "npx"\n'
           'args = ["-y", "docs-mcp"]  # keep me\n')
    config.write_text(old)
    _init(tmp_path)
    text = config.read_text()
    assert text.startswith(old)  # the user's bytes, comments included, untouched
    assert tomllib.loads(text) == {"model": "gpt-5", "mcp_servers": {
        "docs": {"command": "npx", "args": ["-y", "docs-mcp"]},
        "whileai": {"command": CMD, "args": ["--root", str(tmp_path.resolve())]}}}


def test_codex_inline_table_is_refused(tmp_path):
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('mcp_servers = { docs = { command = "npx" } }\n')
    with pytest.raises(ConfigError, match=r"\.codex/config\.toml: .*inline table"):
        _init(tmp_path)
    assert config.read_text() == 'mcp_servers = { docs = { command = "npx" } }\n'


def test_malformed_json_is_refused_naming_file_and_line_and_nothing_is_written(tmp_path):
    (tmp_path / ".cursor").mkdir()
    # line 3 has a trailing comma; the "}" after it (column 26: 4 spaces, `"x": ` to 9,
    # `{"command": ` to 21, `"y"` 22-24, `,` 25) is where a property name was expected
    bad = '{\n  "mcpServers": {\n    "x": {"command": "y",}\n  }\n}\n'
    (tmp_path / ".mcp.json").write_text(bad)
    before = _snapshot(tmp_path)
    with pytest.raises(ConfigError) as err:
        _init(tmp_path)
    msg = str(err.value)
    assert ".mcp.json: line 3, column 26: invalid JSON" in msg and "changed nothing" in msg
    assert _snapshot(tmp_path) == before  # not even the Cursor file or the skills


def test_jsonc_comments_are_refused_with_the_entry_to_add(tmp_path):
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode/mcp.json").write_text('// servers\n{"servers": {}}\n')
    with pytest.raises(ConfigError, match=r"\.vscode/mcp\.json: line 1, column 1: .*by hand: "
                                          r'\{"servers": \{"whileai": \{"type": "stdio"'):
        _init(tmp_path)


@pytest.mark.parametrize("text, problem", [
    ('["a"]', "is a JSON list"),
    ('{"mcpServers": ["a"]}', "`mcpServers` is a list"),
    ('{"mcpServers": {"whileai": {"command": "old"}}}', "already has a server `whileai` that differs"),
])
def test_json_that_cannot_be_merged_is_refused(tmp_path, text, problem):
    (tmp_path / ".mcp.json").write_text(text)
    with pytest.raises(ConfigError, match=problem):
        _init(tmp_path)
    assert (tmp_path / ".mcp.json").read_text() == text
    assert not (tmp_path / "AGENTS.md").exists()


def test_merged_json_keeps_its_indent(tmp_path):
    (tmp_path / ".mcp.json").write_text('{\n    "mcpServers": {}\n}\n')
    _init(tmp_path)
    assert (tmp_path / ".mcp.json").read_text().startswith('{\n    "mcpServers": {\n        "')


def test_agents_md_section_is_replaced_not_duplicated(tmp_path):
    (tmp_path / ".claude").mkdir()
    agents = tmp_path / "AGENTS.md"
    agents.write_text("# Agents\n\nUse uv.\n")
    _init(tmp_path)
    text = agents.read_text()
    assert text.startswith("# Agents\n\nUse uv.\n\n" + AGENTS_SECTION_BEGIN)
    # someone edits inside the section and adds a line after it: the section is put back, the
    # rest is kept, and there is still exactly one section
    edited = text.replace("## Post-training", "## Edited").rstrip("\n") + "\n\nMore notes.\n"
    agents.write_text(edited)
    result = _init(tmp_path)
    again = agents.read_text()
    assert again == text.rstrip("\n") + "\n\nMore notes.\n"
    assert again.count(AGENTS_SECTION_BEGIN) == 1 and again.count(AGENTS_SECTION_END) == 1
    assert [a.action for a in result.actions if a.path == "AGENTS.md"] == ["update"]


@pytest.mark.parametrize("text, lines", [
    (f"a\n{AGENTS_SECTION_BEGIN}\nb\n", "line 2"),
    (f"{AGENTS_SECTION_END}\nx\n{AGENTS_SECTION_BEGIN}\n", "line 1, line 3"),
    (f"{AGENTS_SECTION_BEGIN}\n{AGENTS_SECTION_END}\n{AGENTS_SECTION_BEGIN}\n{AGENTS_SECTION_END}\n",
     "line 1, line 2, line 3, line 4"),
])
def test_broken_markers_are_refused_with_their_lines(tmp_path, text, lines):
    (tmp_path / ".claude").mkdir()
    (tmp_path / "AGENTS.md").write_text(text)
    with pytest.raises(ConfigError, match=f"AGENTS.md: its whileai markers .*\\({lines}\\)"):
        _init(tmp_path)
    assert not (tmp_path / ".mcp.json").exists()


def test_an_edited_skill_is_refused_by_name(tmp_path):
    (tmp_path / ".claude").mkdir()
    _init(tmp_path)
    mine = tmp_path / ".claude/skills" / SKILLS[0] / "SKILL.md"
    mine.write_text("my own version\n")
    (tmp_path / ".mcp.json").unlink()
    with pytest.raises(ConfigError, match=f".claude/skills/{SKILLS[0]}/SKILL.md: differs"):
        _init(tmp_path)
    assert mine.read_text() == "my own version\n" and not (tmp_path / ".mcp.json").exists()


def test_link_mode_links_and_reruns_clean(tmp_path):
    (tmp_path / ".codex").mkdir()
    result = _init(tmp_path, link=True)
    for name in SKILLS:
        dest = tmp_path / ".agents/skills" / name
        assert dest.is_symlink() and dest.resolve() == (bundled_skills_dir() / name).resolve()
    assert {a.action for a in result.actions if a.path.startswith(".agents")} == {"link"}
    # a later copy-mode run sees the links as installed
    assert _init(tmp_path).changed == 0 and _init(tmp_path, link=True).changed == 0


def test_link_mode_refuses_an_existing_copy(tmp_path):
    (tmp_path / ".claude").mkdir()
    _init(tmp_path)
    with pytest.raises(ConfigError, match="link=True will not replace it"):
        _init(tmp_path, link=True)


def test_links_out_of_the_project_are_not_written_through(tmp_path):
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}")
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".mcp.json").symlink_to(outside)
    with pytest.raises(ConfigError, match=r"\.mcp\.json: leads out of .* through a symlink"):
        _init(root)
    assert outside.read_text() == "{}" and (root / ".mcp.json").is_symlink()
    (root / ".mcp.json").unlink()
    (root / ".claude").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(ConfigError, match=r"\.claude/skills: leads out of"):
        _init(root, hosts=["claude"])
    assert not (tmp_path / "skills").exists() and not (root / "AGENTS.md").exists()


def test_links_inside_the_project_are_followed(tmp_path):
    # a common layout: Claude Code's skills folder is a link to the shared one
    (tmp_path / ".agents" / "skills").mkdir(parents=True)
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "skills").symlink_to("../.agents/skills", target_is_directory=True)
    (tmp_path / ".mcp.json").write_text("{}")
    (tmp_path / "shared.json").write_text('{"servers": {}}')
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "mcp.json").symlink_to("../shared.json")
    _init(tmp_path, hosts=["claude", "vscode"])
    assert (tmp_path / ".claude/skills").is_symlink()             # still a link
    assert sorted(p.name for p in (tmp_path / ".agents/skills").iterdir()) == SKILLS
    assert (tmp_path / ".vscode/mcp.json").is_symlink()           # written where it points
    assert "whileai" in json.loads((tmp_path / "shared.json").read_text())["servers"]
    assert _init(tmp_path, hosts=["claude", "vscode"]).changed == 0


def test_dry_run_writes_nothing_and_prints_the_files(tmp_path):
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"a": {"command": "b"}}}')
    before = _snapshot(tmp_path)
    result = _init(tmp_path, dry_run=True)
    assert _snapshot(tmp_path) == before
    text = str(result)
    assert text.startswith("dry run, nothing written")
    assert f'      |       "command": "{CMD}",' in text and "would change" in text
    assert f"      | {AGENTS_SECTION_BEGIN}" in text


def test_no_host_found_says_how_to_name_one(tmp_path):
    with pytest.raises(ArgumentError, match="no agent host found .* hosts"):
        _init(tmp_path)


def test_cli_init_and_its_errors(tmp_path, capsys):
    (tmp_path / ".mcp.json").write_text("{oops}\n")
    assert main(["init-project", str(tmp_path), "--command", CMD]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ".mcp.json: line 1, column 2: invalid JSON" in err
    (tmp_path / ".mcp.json").unlink()
    assert main(["init-project", str(tmp_path), "--hosts", "vscode", "--command", CMD,
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["hosts"] == ["vscode"] and data["server"]["command"] == CMD
    assert {a["path"] for a in data["actions"]} == (
        {".vscode/mcp.json", "AGENTS.md"} | {f".agents/skills/{n}/" for n in SKILLS})
    assert main(["init-project", str(tmp_path), "--hosts", "vscode", "--command", CMD,
                 "--dry-run"]) == 0
    assert "would change 0 of" in capsys.readouterr().out


def test_default_command_is_the_server_beside_this_python():
    from whileai_core.init import default_server_command

    import sys
    beside = Path(sys.executable).with_name("whileai-mcp")
    if beside.is_file():
        assert default_server_command() == str(beside.absolute())
    else:  # pragma: no cover - the test venv installs the console script
        assert default_server_command().endswith("whileai-mcp")


def test_the_written_entry_starts_the_server(tmp_path):
    """What a host does with .mcp.json: spawn command + args over stdio, list the skills."""
    import sys

    import anyio
    from mcp import Client, StdioServerParameters

    if not Path(sys.executable).with_name("whileai-mcp").is_file():  # pragma: no cover
        pytest.skip("whileai-mcp not installed (pip install -e .)")
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {}}')
    init_project(tmp_path)                                   # the default command
    entry = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["whileai"]

    async def go():
        params = StdioServerParameters(command=entry["command"], args=entry["args"],
                                       env=dict(os.environ), cwd="/")
        async with Client(params) as client:
            # the skills toolset is off by default (the skills are resources either way)
            await client.call_tool("enable_toolset", {"toolset": "skills"})
            return await client.call_tool("list_skills", {})

    result = anyio.run(go)
    assert not result.is_error
    assert sorted(s["name"] for s in result.structured_content["skills"]) == SKILLS


def test_a_fifo_in_place_of_a_config_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / ".mcp.json")
    with pytest.raises(ConfigError, match=r"\.mcp\.json.*FIFO"):
        _init(tmp_path)
    assert not (tmp_path / "AGENTS.md").exists()
