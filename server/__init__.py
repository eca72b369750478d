"""The whileai MCP server: wiring only. Every tool is an operation of the core
(``whileai_core.operations``), declared once there and turned into a tool by ``server.tooling``;
``server.app`` builds the server, ``server.main`` is the ``whileai-mcp`` script.
"""
