"""CLI: init (wire a project to the pack: MCP server entries, skills, an AGENTS.md section)."""

from __future__ import annotations


def _init(args):
    from ..init import init_project  # lazy: loads when the command runs, not when the parser is built
    return init_project(args.dir, hosts=args.host, dry_run=args.dry_run, link=args.link,
                        command=args.command, skills_dir=args.skills)


def register(sub) -> None:
    from ..init import HOSTS  # lazy: loads when the command runs, not when the parser is built

    p = sub.add_parser(
        "init", help="wire a project to the pack: MCP server entry per host, skills, AGENTS.md",
        description="Write the MCP server entry for the agent hosts found in DIR (or named with "
                    "--host; with none found, the portable .mcp.json), copy the skills where "
                    "those hosts read them, add a marked section to AGENTS.md and an @AGENTS.md "
                    "line to an existing CLAUDE.md. What it writes can be committed (no path of "
                    "this machine). Merges into existing files, never overwrites what is there; "
                    "refuses (writing nothing) when a file cannot be merged. Re-running changes "
                    "nothing.")
    p.add_argument("dir", nargs="?", default=".", metavar="DIR",
                   help="the project's root folder (default: the current directory)")
    p.add_argument("--host", action="append", choices=[*HOSTS, "all"], default=None,
                   help="a host to set up (repeatable): " + ", ".join(
                       f"{h.name} ({h.config})" for h in HOSTS.values())
                   + "; default: every host whose files are in DIR, else the portable .mcp.json")
    p.add_argument("--dry-run", action="store_true",
                   help="print what would be written, write nothing")
    p.add_argument("--link", action="store_true",
                   help="symlink the skill folders to the pack's instead of copying them")
    p.add_argument("--command", default=None, metavar="PATH",
                   help="the server program in the entries (default: the whileai-mcp of a venv "
                        "inside DIR, by its path from DIR, else whileai-mcp on the PATH)")
    p.add_argument("--skills", default=None, metavar="DIR",
                   help="the skills to install (default: $WHILEAI_SKILLS_DIR, else the pack's "
                        "skills/ folder)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_init)
