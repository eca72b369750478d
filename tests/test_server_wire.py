"""`whileai-mcp` on the wire (real processes): every frame answered, a FIFO flood, HTTP secrets.

Red-team findings, each a test: malformed JSON-RPC frames got no reply (the client waited
forever); 41 FIFO reads at once stopped the server answering anything; any --host but 127.0.0.1
turned DNS-rebinding protection off with no authentication at all.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from test_server_support import make_workspace
from server.limits import MCP_MAX_FRAME_BYTES, MCP_TOKEN_ENV

SCRIPT = Path(sys.executable).with_name("whileai-mcp")
pytestmark = pytest.mark.skipif(not SCRIPT.exists(),
                                reason="whileai-mcp not installed (pip install -e .)")
TOKEN = "t0ken-Qm3xV9pL2wR7zK4nB8cJ5hT1yF6dS0gAeU"  # fixed, 38 different characters


def _env(**extra) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != MCP_TOKEN_ENV}
    return {**env, "PYTHONUNBUFFERED": "1", **extra}


# --- stdio: raw frames -------------------------------------------------------------------------

class Raw:
    """whileai-mcp over stdio, spoken to line by line."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen([str(SCRIPT), "--root", str(root)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=_env())
        self.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}))
        assert self.recv(60)["id"] == 0
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send(self, line: str | bytes) -> None:
        data = line if isinstance(line, bytes) else line.encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 10.0) -> dict | None:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(30)


@pytest.fixture()
def raw(tmp_path):
    conn = Raw(make_workspace(tmp_path / "ws"))
    yield conn
    conn.close()


PARSE, INVALID = -32700, -32600
FRAMES = [
    # (frame, expected error code, expected id)
    ("not json", PARSE, None),
    ("{", PARSE, None),
    ("\x00\xff", PARSE, None),
    ("[]", INVALID, None),
    ("[1, 2]", INVALID, None),
    ('"str"', INVALID, None),
    ("null", INVALID, None),
    ("{}", INVALID, None),
    ('{"jsonrpc": "2.0"}', INVALID, None),
    ('{"jsonrpc": "2.0", "id": 5}', INVALID, 5),
    ('{"jsonrpc": "1.0", "id": 6, "method": "tools/list"}', INVALID, 6),
    ('{"jsonrpc": "2.0", "id": 7, "method": 5}', INVALID, 7),
    ('{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}', INVALID, None),
    ('{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', INVALID, None),
    ('{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}', INVALID, None),
    ('{"jsonrpc": "2.0", "id": true, "method": "tools/list"}', INVALID, None),
    ('{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": 5}', INVALID, 9),
    ('{"jsonrpc": "2.0", "id": 13, "method": "tools/list", "params": []}', INVALID, 13),
    ('{"jsonrpc": "2.0", "id": "s", "method": "nope"}', -32601, "s"),
]


def test_every_malformed_frame_gets_one_json_rpc_error(raw):
    for frame, code, request_id in FRAMES:
        raw.send(frame)
        reply = raw.recv()
        assert reply is not None, f"no reply to {frame!r}"
        assert reply["jsonrpc"] == "2.0" and reply["id"] == request_id, (frame, reply)
        assert reply["error"]["code"] == code, (frame, reply)
    # a response to nothing is not a request: no reply, and the server still answers
    raw.send('{"jsonrpc": "2.0", "id": 99, "result": {}}')
    raw.send('{"jsonrpc": "2.0", "id": 100, "method": "tools/list"}')
    reply = raw.recv()
    assert reply["id"] == 100 and len(reply["result"]["tools"]) > 10


def test_nan_and_infinity_literals_are_input_errors(raw):
    for i, literal in enumerate(["NaN", "Infinity", "1e400", "-1e400"]):
        raw.send(f'{{"jsonrpc": "2.0", "id": {i + 1}, "method": "tools/call", "params": '
                 f'{{"name": "rate", "arguments": {{"rows": "evals/grpo.jsonl", '
                 f'"level": {literal}}}}}}}')
        reply = raw.recv(60)
        result = reply.get("result") or {}
        text = result.get("content", [{}])[0].get("text", "") if result else \
            reply["error"]["message"]
        assert (result.get("isError") or "error" in reply), reply
        assert "unexpected internal error" not in text and "bug" not in text, text


def test_a_frame_over_the_limit_is_refused_and_the_server_goes_on(raw):
    big = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": "' \
        + b"a" * (MCP_MAX_FRAME_BYTES + 10) + b'"}}'
    raw.send(big)
    reply = raw.recv(60)
    assert reply["id"] is None and reply["error"]["code"] == INVALID
    assert f"over {MCP_MAX_FRAME_BYTES} bytes" in reply["error"]["message"]
    raw.send('{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}')
    assert raw.recv(30)["id"] == 2


# --- stdio: a FIFO flood -----------------------------------------------------------------------

def test_a_hundred_fifo_reads_at_once_and_tools_list_within_a_second(tmp_path):
    ws = make_workspace(tmp_path / "ws")
    for i in range(100):
        os.mkfifo(ws / f"pipe-{i}.jsonl")

    async def go():
        params = StdioServerParameters(command=str(SCRIPT), args=["--root", str(ws)],
                                       env=_env(), cwd=str(tmp_path))
        results: dict = {}
        async with Client(params) as client:
            # started, and rate's module loaded (start-up is not under test)
            await client.call_tool("rate", {"rows": "evals/grpo.jsonl"})

            async def read(i):
                results[i] = await client.call_tool("rate", {"rows": f"pipe-{i}.jsonl"})

            with anyio.fail_after(120):
                async with anyio.create_task_group() as tg:
                    for i in range(100):
                        tg.start_soon(read, i)
                    # let them take every thread they can (the old server's 40 then sat blocked
                    # on open() and tools/list was never read: timed out after 15 s)
                    await anyio.sleep(1.0)
                    started = anyio.current_time()
                    await client.list_tools()
                    results["list_s"] = anyio.current_time() - started
        return results

    results = anyio.run(go)
    assert results["list_s"] < 1.0
    for i in range(100):
        assert results[i].is_error and "is a FIFO" in results[i].content[0].text


# --- HTTP --------------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.2", "::", "127.0.0.1", "localhost"])
def test_a_bind_without_a_token_does_not_start(tmp_path, host):
    """Loopback included: without a token any local process could open
    sessions that displaced a working client's."""
    out = subprocess.run([str(SCRIPT), "--http", "--host", host, "--root", str(tmp_path)],
                         capture_output=True, text=True, timeout=60, env=_env())
    assert out.returncode == 2
    assert "--http needs a bearer token whatever the address" in out.stderr
    assert ("any program on this machine" if host in ("127.0.0.1", "localhost") else
            f"--host {host} from another machine") in out.stderr
    assert MCP_TOKEN_ENV in out.stderr and "Fix" in out.stderr


def test_a_wildcard_bind_needs_its_host_names(tmp_path):
    out = subprocess.run([str(SCRIPT), "--http", "--host", "0.0.0.0", "--root", str(tmp_path)],
                         capture_output=True, text=True, timeout=60,
                         env=_env(**{MCP_TOKEN_ENV: TOKEN}))
    assert out.returncode == 2 and "--allowed-host NAME:" in out.stderr


def test_a_weak_token_is_refused_without_being_shown(tmp_path):
    weak = "hunter2-short"
    token_file = tmp_path / "token"
    token_file.write_text(weak + "\n")
    token_file.chmod(0o600)
    for extra, env in ((["--token-file", str(token_file)], _env()),
                       ([], _env(**{MCP_TOKEN_ENV: weak}))):
        out = subprocess.run([str(SCRIPT), "--http", "--host", "127.0.0.2", "--root",
                              str(tmp_path), *extra], capture_output=True, text=True, timeout=60,
                             env=env)
        assert out.returncode == 2 and "is unusable" in out.stderr
        assert weak not in out.stderr and weak not in out.stdout


def test_http_flags_need_http(tmp_path):
    out = subprocess.run([str(SCRIPT), "--token-file", "x", "--root", str(tmp_path)],
                         capture_output=True, text=True, timeout=60, env=_env())
    assert out.returncode == 2 and "only apply with --http" in out.stderr


class Http:
    def __init__(self, root: Path, host: str, *args: str, env: dict | None = None) -> None:
        self.host, self.port = host, _free_port()
        self.proc = subprocess.Popen([str(SCRIPT), "--http", "--host", host, "--port",
                                      str(self.port), "--root", str(root), *args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     env=env or _env(**{MCP_TOKEN_ENV: TOKEN}))
        for _ in range(600):
            if self.proc.poll() is not None:
                pytest.fail(f"server exited: {self.proc.stderr.read().decode()}")
            with socket.socket() as sock:
                if sock.connect_ex((host, self.port)) == 0:
                    return
            time.sleep(0.1)
        pytest.fail("server did not start")

    def post(self, body: str | bytes, *, token: str | None = TOKEN, host: str | None = None,
             session: str | None = None) -> tuple[int, dict, dict]:
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream",
                   "Host": host or f"{self.host}:{self.port}"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if session:
            headers["mcp-session-id"] = session
            headers["mcp-protocol-version"] = "2025-06-18"
        data = body if isinstance(body, bytes) else body.encode()
        request = urllib.request.Request(f"http://{self.host}:{self.port}/mcp", data=data,
                                         headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return reply.status, _payload(reply.read()), dict(reply.headers)
        except urllib.error.HTTPError as err:
            return err.code, _payload(err.read()), dict(err.headers)

    def initialize(self, **kwargs) -> str:
        status, payload, headers = self.post(INIT, **kwargs)
        assert status == 200 and payload["id"] == 0, (status, payload)
        return headers["mcp-session-id"]

    def stop(self) -> str:
        self.proc.terminate()
        self.proc.wait(30)
        return self.proc.stderr.read().decode()


def _payload(raw: bytes) -> dict:
    text = raw.decode()
    if text.startswith("event:") or "data:" in text:        # one SSE event
        text = next(ln[5:] for ln in text.splitlines() if ln.startswith("data:"))
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return {"text": text}                       # e.g. the SDK's "Invalid Host header"


INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "probe", "version": "1"}}})


def test_a_token_is_checked_on_every_request_and_hosts_are_checked(tmp_path):
    ws = make_workspace(tmp_path / "ws")
    server = Http(ws, "127.0.0.2", env=_env(**{MCP_TOKEN_ENV: TOKEN}))
    try:
        for token in (None, "wrong-" + "y" * 40, TOKEN[:-1]):
            status, payload, headers = server.post(INIT, token=token)
            assert status == 401 and payload["error"]["code"] == -32001
            assert headers.get("www-authenticate", "").startswith("Bearer")
            assert TOKEN not in json.dumps(payload)
        session = server.initialize()
        call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "rate", "arguments": {"rows": "evals/grpo.jsonl"}}})
        status, payload, _ = server.post(call, session=session)
        assert status == 200 and payload["result"]["structuredContent"]["rate"]["value"] == 0.5
        # the session alone is not enough: every request needs the token
        status, _, _ = server.post(call, session=session, token=None)
        assert status == 401
        # a Host header that is not the bind address (DNS rebinding) is refused
        status, _, _ = server.post(INIT, host=f"evil.example:{server.port}")
        assert status in (400, 421)
    finally:
        notice = server.stop()
    assert "every request needs 'Authorization: Bearer <token>'" in notice
    assert f"Host must be one of: 127.0.0.2:{server.port}" in notice
    assert TOKEN not in notice


def test_http_frames_get_json_rpc_errors(tmp_path):
    server = Http(make_workspace(tmp_path / "ws"), "127.0.0.1")
    try:
        session = server.initialize()
        for frame, code, request_id in FRAMES[:-1]:
            status, payload, _ = server.post(frame, session=session)
            assert status == 400, (frame, status, payload)
            assert payload["id"] == request_id and payload["error"]["code"] == code, frame
        status, payload, _ = server.post(b"", session=session)
        assert status == 400 and payload["error"]["code"] == PARSE
    finally:
        server.stop()


def test_sessions_expire_when_idle_and_read_only_is_announced(tmp_path):
    server = Http(make_workspace(tmp_path / "ws"), "127.0.0.1", "--session-idle", "1",
                  "--read-only")
    try:
        session = server.initialize()
        listing = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        status, payload, _ = server.post(listing, session=session)
        assert status == 200
        names = {t["name"] for t in payload["result"]["tools"]}
        assert "launch_run" not in names and "rate" in names
        time.sleep(3)                              # idle for three times the limit
        status, _, _ = server.post(listing, session=session)
        assert status == 404                       # the idle session is gone
        assert server.initialize()       # a client starts a new one
    finally:
        notice = server.stop()
    assert "sessions close after 1 s idle" in notice and "read-only" in notice
