"""The whileai MCP server: wiring only. Every tool is one call into ``whileai_core``.

Layout: ``main`` (the ``whileai-mcp`` console script), ``app`` (builds the ``MCPServer``),
``registry`` (table of contents of the tool modules), ``tooling`` (the pattern: input model,
plain function, spec), ``errors`` (failures -> tool errors), ``paths`` (the workspace root),
``schema_cache`` (tools/list from ``tools.json``; each domain imported on first call), and one
module per domain of tools: ``stats_tools``, ``config_tools``, ``judge_tools``,
``traces_tools``, ``runs_tools``, ``skills`` (also the skill:// resources and prompts).
"""
