"""`whileai-mcp` as a real process: stdio (what agent hosts spawn) and streamable HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from test_server_support import MODEL, make_workspace
from whileai_core import __version__

SCRIPT = Path(sys.executable).with_name("whileai-mcp")
pytestmark = pytest.mark.skipif(not SCRIPT.exists(),
                                reason="whileai-mcp not installed (pip install -e .)")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


def test_stdio_route(tmp_path):
    ws = make_workspace(tmp_path / "ws")

    async def go():
        params = StdioServerParameters(command=str(SCRIPT), args=["--root", str(ws)],
                                       env=_env(), cwd=str(tmp_path))
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            result = await client.call_tool("route_rows", {"rows": "evals/grpo.jsonl",
                                                           "model": MODEL})
            refused = await client.call_tool("route_rows", {"rows": "../x.jsonl", "model": MODEL})
            return names, result, refused

    names, result, refused = anyio.run(go)
    assert "route_rows" in names
    assert not result.is_error
    # 4 tasks: the route says they are too few for a verdict (see test_server.py)
    assert result.structured_content["route"] == "too_few_tasks"
    assert result.structured_content["answers"][1]["evidence"]["k"] == 4
    assert refused.is_error and "contains '..'" in refused.content[0].text


def test_version_and_bad_root():
    out = subprocess.run([str(SCRIPT), "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == f"whileai-mcp {__version__}"
    bad = subprocess.run([str(SCRIPT), "--root", "/no/such/folder"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2
    assert "--root '/no/such/folder' is not a folder" in bad.stderr and "Fix" in bad.stderr


def test_host_without_http_is_refused():
    out = subprocess.run([str(SCRIPT), "--port", "9999"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and "add --http" in out.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_streamable_http_rate(tmp_path):
    ws = make_workspace(tmp_path / "ws")
    port = _free_port()
    token = "t0ken-Qm3xV9pL2wR7zK4nB8cJ5hT1yF6dS0gAeU"  # every HTTP bind needs one
    proc = subprocess.Popen([str(SCRIPT), "--http", "--port", str(port), "--root", str(ws)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**_env(), "WHILEAI_MCP_TOKEN": token})
    try:
        for _ in range(600):  # wait for the port to open (start-up time is not under test)
            if proc.poll() is not None:
                pytest.fail(f"server exited: {proc.stderr.read().decode()}")
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)

        async def go():
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
            async with http, Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp",
                                                           http_client=http)) as client:
                return await client.call_tool("rate", {"rows": "evals/grpo.jsonl", "k": 2})

        result = anyio.run(go)
        assert not result.is_error
        out = result.structured_content
        assert out["rate"]["value"] == 0.5                 # (3+1+4+0)/16, by task
        assert out["pass_at_k"]["value"] == 0.625          # see test_server.py
    finally:
        proc.terminate()
        proc.wait(timeout=30)
