"""README.md says what the code does: the tool table is the server's, and every command the
README tells a newcomer to type uses a program and flags that exist."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_tool_table_is_the_servers():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_tools.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_every_tool_is_in_the_table():
    from server.registry import tool_specs

    table = README.split("<!-- tools:begin", 1)[1].split("<!-- tools:end -->", 1)[0]
    for spec in tool_specs():
        assert f"| `{spec.name}` |" in table


def test_get_started_activates_the_venv_before_bare_commands():
    start = README.index("## Get started")
    section = README[start:README.index("\n## ", start + 1)]
    activate = section.index(". .venv/bin/activate")
    for bare in ("pip install -e .", "whileai-skills route", "python check.py"):
        assert section.index(bare) > activate, bare


def test_every_cli_subcommand_in_the_readme_exists():
    from whileai_core.cli import build_parser

    parser = build_parser()
    commands = set(parser._subparsers._group_actions[0].choices)  # noqa: SLF001
    used = set(re.findall(r"whileai-skills ([a-z][a-z-]+)", README))
    assert used - commands == set(), f"README names commands that do not exist: {used - commands}"
