"""The fourth red-team round, on the wire: every answer
can be sent, on stdio and HTTP, ``--read-only`` too; a looping client displaces no session in
use; a task id or a skills list never makes an answer unbounded.

A lone UTF-16 surrogate (the JSON escape ``\\ud800`` with no pair) becomes a Python string the
SDK's writer cannot encode. Over the wire a frame holding one is refused before any tool runs
(a parse error saying so); one reaches an answer from a file: a row's task id (the reader may
clean those where rows enter, so a test takes either answer), or, in process (no frame), a path
argument echoed by the error that names it.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path

import anyio
import pytest

from test_server_support import call, make_workspace, ok
from test_server_wire import INIT, SCRIPT, TOKEN, Http, _env
from test_server_wire3 import _serve_with

pytestmark = pytest.mark.skipif(not SCRIPT.exists(),
                                reason="whileai-mcp not installed (pip install -e .)")

LONE = "\ud800"
MISSING = "evals/nope\udcff.jsonl"  # what a JSON "\udcff" escape in a path reads as


def _surrogate_rows(ws: Path) -> None:
    (ws / "evals" / "lone.jsonl").write_text(
        '{"task_id": "\\ud800", "reward": 1}\n{"task_id": "b", "reward": 0}\n')


class Stdio:
    """whileai-mcp over stdio, spoken to line by line (each reply awaited with a bound)."""

    def __init__(self, root: Path, *args: str) -> None:
        self.proc = subprocess.Popen([str(SCRIPT), "--root", str(root), *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=_env())
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"}}})
        assert "result" in self.reply()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict) -> None:
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def reply(self, wait_s: float = 60.0) -> dict | None:
        """The next frame; None when stdout closed (the server died); a liveness bound."""
        try:
            line = self.lines.get(timeout=wait_s)
        except queue.Empty:
            pytest.fail(f"no reply within {wait_s} s")
        return None if line is None else json.loads(line)

    def call(self, request_id: int, name: str, arguments: dict) -> dict | None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": name, "arguments": arguments}})
        return self.reply()

    def stop(self) -> int | None:
        alive = self.proc.poll()
        self.proc.kill()
        self.proc.wait(30)
        return alive


# --- item 2: every answer can be sent ---------------------------------------------------------

@pytest.mark.parametrize("flags", [(), ("--read-only",)])
def test_a_lone_surrogate_is_an_error_answer_on_stdio_never_a_dead_server(tmp_path, flags):
    """Before: no answer to `rate` on a two-line file with "task_id": "\\ud800", and the
    server exited 1 (its stdout writer could not encode it); --read-only too."""
    ws = make_workspace(tmp_path / "ws")
    _surrogate_rows(ws)
    server = Stdio(ws, *flags)
    try:
        rows = server.call(1, "rate", {"rows": "evals/lone.jsonl"})
        assert rows is not None, "the server died"
        assert rows["id"] == 1  # answered: an error naming the field, or the reader cleaned it
        if rows["result"].get("isError"):
            text = rows["result"]["content"][0]["text"]
            assert "not valid Unicode" in text and "task_id`" in text and "Fix:" in text
        framed = server.call(2, "rate", {"rows": MISSING})  # the frame itself holds one
        assert framed["id"] == 2 and framed["error"]["code"] == -32700
        assert "lone UTF-16 surrogate" in framed["error"]["message"]
        listed = server.call(3, "rate", {"rows": "evals/grpo.jsonl"})
        assert listed["result"]["structuredContent"]["rate"]["value"] == 0.5
    finally:
        assert server.stop() is None  # still running when stopped


def test_a_lone_surrogate_is_an_error_answer_over_http(tmp_path):
    """Before: HTTP 200 with an empty body (the SSE writer failed): the client waited."""
    ws = make_workspace(tmp_path / "ws")
    _surrogate_rows(ws)
    server = Http(ws, "127.0.0.1")
    try:
        session = server.initialize()
        status, payload, _ = server.post(json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "rate", "arguments": {"rows": "evals/lone.jsonl"}}}),
            session=session)
        assert status == 200 and payload["id"] == 1, (status, payload)
        if payload["result"].get("isError"):
            assert "not valid Unicode" in payload["result"]["content"][0]["text"]
        status, payload, _ = server.post(json.dumps({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "rate", "arguments": {"rows": "evals/grpo.jsonl"}}}),
            session=session)
        assert payload["result"]["structuredContent"]["rate"]["value"] == 0.5
        assert server.proc.poll() is None
    finally:
        server.stop()


def test_an_argument_echoed_back_is_named_as_the_field_that_cannot_be_sent(tmp_path):
    """In process (no frame to refuse): the missing file's name comes back in the error text,
    and the answer names that field instead of breaking the writer."""
    from server.app import build_server

    ws = make_workspace(tmp_path / "ws")
    result = call(build_server(ws, skills_dir=ws / "none"), "rate", {"rows": MISSING})
    assert result.is_error
    text = result.content[0].text
    assert "field `content[0].text`" in text and "not valid Unicode" in text
    assert "still running" in text and MISSING not in text


def test_the_field_named_is_the_one_holding_the_surrogate(tmp_path):
    """In process, a row's task id: the answer names the structured field it reached."""
    ws = make_workspace(tmp_path / "ws")
    _surrogate_rows(ws)
    from server.app import build_server

    result = call(build_server(ws, skills_dir=ws / "none"), "rate",
                  {"rows": "evals/lone.jsonl"})
    if result.is_error:  # the reader may clean it where rows enter; if not, it is named
        text = result.content[0].text
        assert "field `structuredContent." in text and "task_id`" in text
        assert LONE not in text


def test_whatever_else_the_server_sends_is_written_with_the_surrogate_escaped():
    """A notification (progress naming a file) or a request (the spend question naming a
    config) carrying one is written with it escaped; a result that slipped past the check
    becomes an error naming the field."""
    import mcp_types as types

    from server.transport import sendable

    note = types.JSONRPCNotification(jsonrpc="2.0", method="notifications/progress", params={
        "progressToken": 1, "progress": 1, "message": f"reading {MISSING}"})
    sent = sendable(note)
    assert sent.params["message"] == "reading evals/nope\\udcff.jsonl"
    assert json.loads(sent.model_dump_json())["params"]["message"].endswith("\\udcff.jsonl")
    answer = sendable(types.JSONRPCResponse(jsonrpc="2.0", id=7, result={"x": [LONE]}))
    assert answer.id == 7 and answer.error.code == types.INTERNAL_ERROR
    assert "field `result.x[0]`" in answer.error.message
    fine = types.JSONRPCResponse(jsonrpc="2.0", id=8, result={"x": "é"})
    assert sendable(fine) is fine


def test_odd_field_names_leave_the_server_answering(tmp_path):
    """A field name holding a backslash, a quote and a control character: whatever the rows
    tools say of it, the answer is sent and the server goes on (its reading is the reader's)."""
    ws = make_workspace(tmp_path / "ws")
    odd = 'we\\ird"\x01f'
    (ws / "evals" / "odd.jsonl").write_text("".join(
        json.dumps({"task_id": t, "reward": r, odd: "x"}) + "\n" for t, r in (("a", 1), ("b", 0))))
    server = Stdio(ws)
    try:
        for i, (tool, args) in enumerate([("rate", {"rows": "evals/odd.jsonl"}),
                                          ("describe_rows", {"rows": "evals/odd.jsonl"}),
                                          ("compare", {"before": "evals/odd.jsonl",
                                                       "after": "evals/odd.jsonl"})]):
            reply = server.call(10 + i, tool, args)
            assert reply is not None and reply["id"] == 10 + i and "result" in reply
        listed = server.call(20, "rate", {"rows": "evals/grpo.jsonl"})
        assert listed["result"]["structuredContent"]["rate"]["value"] == 0.5
    finally:
        assert server.stop() is None


# --- item 10: sessions ------------------------------------------------------------------------

class _Running(Http):
    """``Http``'s requests against a server started by ``_serve_with``."""

    def __init__(self, proc: subprocess.Popen, port: int) -> None:
        self.host, self.port, self.proc = "127.0.0.1", port, proc


CALL = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
    "name": "rate", "arguments": {"rows": "evals/grpo.jsonl"}}})


def test_a_client_looping_on_initialize_displaces_no_session_in_use(tmp_path):
    """The red team's case: a client opens sessions in a loop while another works. Before, every
    idle session gave way and the working client failed 10 of 10 calls; now a session used in
    the last minute is never displaced (the looper gets 503 once all are taken)."""
    proc, port = _serve_with(tmp_path, max_sessions=8)
    server = _Running(proc, port)
    try:
        mine = server.initialize()
        answered, refused, stop = [], [], threading.Event()

        def loop():
            while not stop.is_set():
                status = server.post(INIT)[0]
                (refused if status == 503 else answered).append(status)

        looper = threading.Thread(target=loop, daemon=True)
        looper.start()
        results = []
        for _ in range(10):
            time.sleep(0.3)
            status, payload, _ = server.post(CALL, session=mine)
            results.append(status == 200 and payload["result"]["structuredContent"]["rate"]
                           ["value"] == 0.5)
        stop.set()
        looper.join(30)
        assert results == [True] * 10
        assert refused, "the looper never filled the sessions: the test proves nothing"
    finally:
        proc.kill()
        proc.wait(30)


def test_a_session_idle_past_the_recent_window_still_gives_way(tmp_path):
    """Sessions are not held forever: one idle longer than the recent window makes room."""
    proc, port = _serve_with(tmp_path, max_sessions=2, session_recent_s=1.0)
    server = _Running(proc, port)
    try:
        first, second = server.initialize(), server.initialize()
        assert server.post(INIT)[0] == 503           # both used within the last second
        time.sleep(1.5)
        assert server.post(CALL, session=second)[0] == 200  # second is used again: recent
        newcomer = server.initialize()               # first, idle 1.5 s, gives way
        assert server.post(CALL, session=first)[0] == 404
        assert server.post(CALL, session=second)[0] == 200
        assert server.post(CALL, session=newcomer)[0] == 200
    finally:
        proc.kill()
        proc.wait(30)
