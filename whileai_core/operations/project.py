"""Wiring a project to the pack: init_project (at the shell only; an agent's host is set up by
its user, not by the agent)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..init import HOSTS, HostName
from . import WRITES_NEW, operation
from .args import Arg

Host = HostName | Literal["all"]


@operation(
    cli="init", toolset="core", effect=WRITES_NEW,
    title="Wire a project to the pack: MCP server entry per host, skills, AGENTS.md",
    description=(
        "Write the MCP server entry for the agent hosts found in the folder (or named with "
        "hosts; with none found, the portable .mcp.json), copy the skills where those hosts "
        "read them, add a marked section to AGENTS.md and an @AGENTS.md line to an existing "
        "CLAUDE.md. What it writes can be committed (no path of this machine). Merges into "
        "existing files, never overwrites what is there; refuses (writing nothing) when a file "
        "cannot be merged. Re-running changes nothing."),
    result="whileai_core.init:InitResult", doing="wiring a project",
    surfaces=frozenset({"cli"}))
def init_project(
        root: Annotated[str, Field(min_length=1, max_length=4096, description=(
            "The project's root folder.")), Arg(positional=True, metavar="DIR")] = ".", *,
        hosts: Annotated[list[Host] | None, Field(max_length=5, description=(
            "The hosts to set up: " + ", ".join(f"{h.name} ({h.config})" for h in HOSTS.values())
            + ", or all; null: every host whose files are in the folder, else the portable "
            ".mcp.json."))] = None,
        dry_run: Annotated[bool, Field(description=(
            "Say what would be written; write nothing."))] = False,
        link: Annotated[bool, Field(description=(
            "Symlink the skill folders to the pack's instead of copying them."))] = False,
        command: Annotated[str | None, Field(max_length=4096, description=(
            "The server program in the entries (null: the whileai-mcp of a venv inside the "
            "folder, by its path from there, else whileai-mcp on the PATH).")),
            Arg(metavar="PATH")] = None,
        skills_dir: Annotated[str | None, Field(max_length=4096, description=(
            "The skills to install (null: $WHILEAI_SKILLS_DIR, else the pack's skills/ "
            "folder).")), Arg(metavar="DIR")] = None):
    from ..init import init_project as wire  # lazy: loads with the call

    return wire(root, hosts=hosts, dry_run=dry_run, link=link, command=command,
                skills_dir=skills_dir)
