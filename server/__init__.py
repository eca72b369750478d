"""The whileai MCP server: wiring only. Every tool is an operation of the core
(``whileai_core.operations``), declared once there and generated here.

Layout: ``main`` (the ``whileai-mcp`` console script), ``app`` (builds the server: the toolsets
on, the toolset switch, read-only), ``registry`` (the operations MCP serves), ``tooling`` (an
operation as an SDK tool), ``schema_cache`` (tools/list from ``tools.json``; each operation
imported on its first call), ``errors`` (failures -> tool errors), ``paths`` (the workspace
root), ``pool`` (the threads tool calls run on), ``transport`` (stdio and HTTP), ``skills`` and
``skills_extension`` (the skill:// resources, prompts and SEP-2640), ``method_schema`` (every
method's knobs, a resource).
"""
