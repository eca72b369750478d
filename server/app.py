"""Build the whileai MCP server: tools from the registry, the skills as resources and prompts."""

from __future__ import annotations

import logging
import os

from mcp.server.mcpserver import MCPServer

from whileai_core import __version__

from whileai_core.safepath import Limits

from .paths import Workspace
from .pool import ToolPool
from .registry import TOOL_MODULES
from .schema_cache import CACHE, mcp_tools
from .skills import SkillCatalog, register_skills
from .skills_extension import SkillsExtension
from .tooling import Env

NAME = "whileai"

INSTRUCTIONS = """\
Decide how to post-train an open-weight model from graded rollouts, then write the config.
Rows are read from files under the workspace root: pass paths (relative to the root), never paste
large row sets. Before any training, make the eval trustworthy: freeze_holdout (name the test by
its content; eval_fingerprint checks it), failure_capable (can it fail? truncation trap, headroom),
category_table (every behaviour its own line). Typical order: route_rows (which method, and why;
inspect_rows answers every question) -> holdout_size / pass_at / noise_floor / compare_runs (is
the test big enough, did it move; compare_many per category or checkpoint, corrected for how
many) -> prime_rl_config (write the config) -> validate_config ->
launch_run (plan first, free; confirm=true spends money) -> run_status / collect_run (the paired
before/after verdict). Judges: failures_needed, audit_judge, rubric_ablation, order_reversal.
SFT data: split_by_task, failed_asks, select_sft, decontaminate, export_sft. Reward hacking:
cheat_probes (before training), hack_scan, watch_run (during it). Pictures: plot_band,
plot_forest, plot_judge_audit. Answers are summaries; a per-task table is paged (detail=true) or
written (task_table). The playbooks (each step as tool calls) are the skill://<name>/SKILL.md
resources, listed by skills/list (extension io.modelcontextprotocol/skills), list_skills, and the
index whileai://skills/index.md."""

READ_ONLY_NOTE = """
This server is read-only (--read-only): tools that write files, launch or cancel runs are off."""


def build_server(root: str | os.PathLike = ".", *,
                 skills_dir: str | os.PathLike | None = None,
                 log_level: str = "WARNING", lazy: bool = True, limits: Limits | None = None,
                 pool: ToolPool | None = None, read_only: bool = False) -> MCPServer:
    """The server for workspace ``root``; skills from ``skills_dir`` (default: see ``server.skills``).

    ``lazy``: list tools from ``server/tools.json`` and import each tool's module on its first
    call (see ``server.schema_cache``); False builds every tool now. ``limits``: the path door's
    size and time limits (default: ``whileai_core.defaults`` and the environment). ``pool``: the
    threads tool calls run on (``server.pool``). ``read_only``: serve only the tools whose
    annotations say read-only (no file written, nothing launched or cancelled).
    """
    workspace = Workspace(root, limits=limits)
    catalog = SkillCatalog(skills_dir)
    env = Env(workspace=workspace, skills=catalog, pool=pool or ToolPool())
    tools = mcp_tools(TOOL_MODULES, env, cache=CACHE if lazy else None)
    if read_only:
        tools = [t for t in tools if t.annotations is not None and t.annotations.read_only_hint]
    server = MCPServer(NAME, title="whileai skill pack", version=__version__,
                       instructions=INSTRUCTIONS + (READ_ONLY_NOTE if read_only else ""),
                       log_level=log_level, tools=tools,
                       extensions=[SkillsExtension(catalog)])
    register_skills(server, catalog)
    if not catalog.names():  # said once at start-up (stderr), and by list_skills when asked
        logging.getLogger("whileai.server").warning("%s", catalog.missing())
    return server
