"""README.md says what the code does: the tool table is the server's, the set-up is two commands
that need no activated venv, every command the README and docs/ tell a reader to type uses a
program that exists, every page they link to exists, and the README stays a front door."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {path: path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").glob("*.md"))}
SKILLS = sorted(p.name for p in (ROOT / "skills").iterdir() if (p / "SKILL.md").is_file())


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def bash_lines(text: str) -> list[list[str]]:
    """The command lines (comments and blanks dropped) of each ```bash block, in order."""
    blocks = re.findall(r"^```bash\n(.*?)^```", text, re.S | re.M)
    return [[line.split("  #")[0].strip() for line in block.splitlines()
             if line.strip() and not line.lstrip().startswith("#")] for block in blocks]


def test_the_tool_table_is_the_servers():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_tools.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_every_tool_is_in_the_table():
    from server.registry import tool_specs

    table = README.split("<!-- tools:begin", 1)[1].split("<!-- tools:end -->", 1)[0]
    for spec in tool_specs():
        assert f"| `{spec.name}` |" in table


def test_get_started_is_two_one_liners_that_need_no_activation():
    first, *_ = bash_lines(section(README, "## Get started"))
    assert len(first) == 2, first
    setup, tests = first
    assert setup.startswith("python3 -m venv .venv && ")
    # every program after the venv exists is the venv's own, called by path
    for step in setup.split(" && ")[1:]:
        assert step.startswith(".venv/bin/"), step
    assert ".venv/bin/whileai-skills route examples/" in setup
    assert (ROOT / setup.split("route ", 1)[1].split()[0]).is_file()
    assert tests == "bash scripts/test.sh"
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == "exec bash scripts/test.sh"


def test_get_started_activates_the_venv_before_bare_commands():
    activated = False
    for block in bash_lines(section(README, "## Get started")):
        for line in block:
            activated = activated or line.startswith(". .venv/bin/activate")
            if re.match(r"(whileai-skills|whileai-mcp|python|pip) ", line):
                assert activated, f"{line!r} runs before the venv is activated"
    assert activated


def test_the_intro_and_the_skills_table_name_every_skill():
    intro = README[:README.index("## Get started")]
    table = section(README, "## Skills")
    for name in SKILLS:
        assert name in intro, name
        assert f"| `{name}` |" in table, name
    assert len(SKILLS) == 5


def test_the_readme_is_a_front_door():
    """Reference-sized blocks (the study's tables, host configs, recipes) live in docs/."""
    assert README.count("\n") < 450
    for name in ("core.md", "statistics-study.md", "mcp-server.md", "launching.md",
                 "importing.md", "methods.md", "reward-hacking.md", "development.md"):
        assert f"](docs/{name})" in README, name


def test_every_local_link_leads_to_a_file():
    pages = {ROOT / "README.md": README, **DOCS}
    for page, text in pages.items():
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def test_every_cli_subcommand_in_the_readme_exists():
    from whileai_core.cli import build_parser

    parser = build_parser()
    commands = set(parser._subparsers._group_actions[0].choices)  # noqa: SLF001
    for page, text in {"README.md": README, **{p.name: t for p, t in DOCS.items()}}.items():
        used = set(re.findall(r"whileai-skills ([a-z][a-z-]+)", text))
        assert used - commands == set(), f"{page} names commands that do not exist: {used - commands}"
