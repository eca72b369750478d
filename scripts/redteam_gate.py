"""Re-try the fourth red-team round's cases of the spend gate, the answer path, writes, sessions,
the held-out basis and the lows, and print the totals.

Run from a checkout's root with its own interpreter; the tree it runs is the one under test, so
the same script measures before (``cd /work/main && .venv/bin/python <this file>``) and after::

    .venv/bin/python scripts/redteam_gate.py            # about two minutes on 2 CPUs

Offline: Modal's spawn is replaced in-process by a stand-in that records what would run (the
GPU spec and the config bytes handed to the recipe); the HTTP and stdio servers are real
processes on loopback with a fake token. Prints one line per case (tries, escapes, crashes,
stalls over 1 s, leaks, data loss) and the totals.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path.cwd()
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
TOKEN = "t0ken-Qm3xV9pL2wR7zK4nB8cJ5hT1yF6dS0gAeU"  # a fake secret: it must never come back
SCRIPT = Path(sys.executable).with_name("whileai-mcp")
CASES: list[dict] = []


def case(name: str, tries: int, *, escapes: int = 0, crashes: int = 0, stalls: int = 0,
         leaks: int = 0, lost: int = 0, note: str = "") -> None:
    CASES.append(dict(name=name, tries=tries, escapes=escapes, crashes=crashes, stalls=stalls,
                      leaks=leaks, lost=lost))
    print(f"{name:<58} tries {tries:>4}  escapes {escapes:>3}  crashes {crashes}  stalls {stalls}"
          f"  leaks {leaks}  lost {lost}" + (f"  ({note})" if note else ""), flush=True)


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1", **extra}


# --- item 1: the spend gate --------------------------------------------------------------------

def spend_gate() -> None:
    import anyio
    from mcp import Client
    from mcp.types import ElicitResult

    from server.app import build_server
    from test_runs_support import make_recipes
    from whileai_core.runs.modal_backend import ModalBackend

    tmp = Path(tempfile.mkdtemp(prefix="rt-gate-"))
    os.environ["WHILEAI_STATE_DIR"] = str(tmp / "state")
    os.environ["WHILEAI_RECIPES_DIR"] = str(make_recipes(tmp))
    started: list[tuple[str, bytes]] = []

    def launch(self, record, target, run_dir, lock_fd, starting=None):
        if starting is not None:
            starting()
        started.append((record.gpu, target.data))
        return {"call_id": "fc-01ABCDEFGHJKMNPQRSTVWXYZ00"}

    ModalBackend.check_ready = lambda self, target=None: None
    ModalBackend.launch = launch
    ws = tmp / "ws"
    ws.mkdir()
    server = build_server(ws, skills_dir=ws / "none")
    config = {"taskset": "gsm8k", "method": "grpo", "model": "Qwen/Qwen3-0.6B", "out": "rl.toml",
              "overwrite": True}

    def gpu_of(message: str) -> str:
        return re.search(r"on Modal, (H100(?::\d+)?) \(", message).group(1)

    # (a) 2025-11-25 form gate: the user approves "H100:2" while another client writes 8 GPUs
    escapes = stalls = 0
    for attempt in range(4):
        approved: list[str] = []

        async def go():
            async with Client(server) as other:
                await other.call_tool("prime_rl_config", {**config, "gpus": 2})

                async def host(context, params):
                    if not approved:  # the first question: 2 GPUs, approved; meanwhile 8
                        approved.append(gpu_of(params.message))
                        await other.call_tool("prime_rl_config", {**config, "gpus": 8})
                        return ElicitResult(action="accept", content={"launch": True})
                    return ElicitResult(action="decline")

                async with Client(server, elicitation_callback=host, mode="legacy") as client:
                    return await client.call_tool("launch_run", {
                        "config_or_recipe": "rl.toml", "confirm": True, "name": f"a{attempt}"})
        n, t0 = len(started), time.monotonic()
        anyio.run(go)
        stalls += time.monotonic() - t0 > 30  # a launch plans twice: seconds, not a stall
        escapes += any(gpu not in approved for gpu, _ in started[n:])
    case("gate: approved H100:2, another client writes gpus=8", 4, escapes=escapes,
         stalls=stalls, note="launches of a plan the user did not approve")

    # (b) 2026-07-28: a writer toggles the config between 2 and 8 GPUs during retried calls
    texts = []
    for gpus in (2, 8):
        async def write(gpus=gpus):
            async with Client(server) as other:
                await other.call_tool("prime_rl_config",
                                      {**config, "gpus": gpus, "out": f"rl{gpus}.toml"})
        anyio.run(write)
        texts.append((ws / f"rl{gpus}.toml").read_bytes())
    stop = threading.Event()

    def toggle():
        i = 0
        while not stop.is_set():
            i += 1
            (ws / f".swap{i % 2}").write_bytes(texts[i % 2])
            os.replace(ws / f".swap{i % 2}", ws / "rl.toml")

    last: list[str | None] = []

    async def host(context, params):
        last[-1] = gpu_of(params.message)
        return ElicitResult(action="accept", content={"launch": True})

    differ = launched = 0

    async def calls():
        nonlocal differ, launched
        async with Client(server, elicitation_callback=host) as client:
            for i in range(30):
                last.append(None)
                n = len(started)
                await client.call_tool("launch_run", {"config_or_recipe": "rl.toml",
                                                      "confirm": True, "name": f"t{i}"})
                for gpu, data in started[n:]:
                    launched += 1
                    import tomllib
                    deployment = tomllib.loads(data.decode())["deployment"]
                    counts = deployment["num_train_gpus"] + deployment["num_infer_gpus"]
                    differ += gpu != last[-1] or f"H100:{counts}" != gpu
    thread = threading.Thread(target=toggle, daemon=True)
    thread.start()
    anyio.run(calls)
    stop.set()
    thread.join()
    case("gate: a writer toggles the config during retried calls", 30, escapes=differ,
         note=f"{launched} launched; escapes: launches unlike the last plan approved")

    # (c) an accept with no content, on both revisions
    empty = 0
    for mode in ("auto", "legacy"):
        for content in (None, {}):
            async def go(mode=mode, content=content):
                async def host(context, params):
                    return ElicitResult(action="accept", content=content)
                async with Client(server, elicitation_callback=host, mode=mode) as client:
                    return await client.call_tool("launch_run", {
                        "config_or_recipe": "rl.toml", "confirm": True,
                        "name": f"e-{mode}-{content is None}"})
            n = len(started)
            anyio.run(go)
            empty += len(started) > n
    case("gate: accept with no content (2025-11-25 and 2026-07-28)", 4, escapes=empty)


# --- item 2: every answer can be sent ----------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _workspace() -> Path:
    ws = Path(tempfile.mkdtemp(prefix="rt-ws-"))
    (ws / "lone.jsonl").write_text('{"task_id": "\\ud800", "reward": 1}\n'
                                   '{"task_id": "b", "reward": 0}\n')
    (ws / "ok.jsonl").write_text('{"task_id": "a", "reward": 1}\n{"task_id": "b", "reward": 0}\n')
    odd = 'we\\ird"\x01f'
    (ws / "odd.jsonl").write_text("".join(json.dumps({"task_id": t, "reward": r, odd: "x"}) + "\n"
                                          for t, r in (("a", 1), ("b", 0))))
    return ws


def stdio_answers() -> None:
    for flags in ((), ("--read-only",)):
        ws = _workspace()
        proc = subprocess.Popen([str(SCRIPT), "--root", str(ws), *flags], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env())
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] + [lines.put(None)],
                         daemon=True).start()

        def send(message):
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()

        def reply(wait=20.0):
            try:
                line = lines.get(timeout=wait)
            except queue.Empty:
                return "stall"
            return None if line is None else json.loads(line)

        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "rt", "version": "1"}}})
        reply()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        crashes = stalls = tries = 0
        slow: list[str] = []
        for i, (tool, args) in enumerate([("rate", {"rows": "lone.jsonl"}),
                                          ("select_sft", {"attempts": "lone.jsonl"}),
                                          ("rate", {"rows": "odd.jsonl"}),
                                          ("describe_rows", {"rows": "odd.jsonl"}),
                                          ("rate", {"rows": "ok.jsonl"})]):
            tries += 1
            t0 = time.monotonic()
            send({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                  "params": {"name": tool, "arguments": args}})
            got = reply()
            took = time.monotonic() - t0
            slow.append(f"{tool} {took:.1f} s")
            stalls += got == "stall" or (took > 1.0 and i > 0)  # the first call imports numpy
            if got is None:
                break
        crashes = int(proc.poll() is not None)  # the server exited
        proc.kill()
        proc.wait()
        case(f"answers on stdio{' --read-only' if flags else ''}: lone surrogate, odd fields",
             tries, crashes=crashes, stalls=stalls, note=", ".join(slow))


def http_answers() -> None:
    ws = _workspace()
    port = _free_port()
    proc = subprocess.Popen([str(SCRIPT), "--http", "--port", str(port), "--root", str(ws)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=_env(WHILEAI_MCP_TOKEN=TOKEN))
    _wait(port)
    try:
        session = _init(port)
        stalls = leaks = tries = 0
        for tool, args in [("rate", {"rows": "lone.jsonl"}), ("rate", {"rows": "odd.jsonl"}),
                           ("rate", {"rows": "ok.jsonl"})]:
            tries += 1
            t0 = time.monotonic()
            status, body = _post(port, {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                                        "params": {"name": tool, "arguments": args}}, session)
            stalls += not body.strip() or time.monotonic() - t0 > 1.0  # an empty reply waits
            leaks += TOKEN in body
        case("answers over HTTP: lone surrogate, odd fields", tries, stalls=stalls,
             crashes=int(proc.poll() is not None), leaks=leaks)
    finally:
        proc.kill()
        proc.wait()


def _wait(port: int) -> None:
    for _ in range(600):
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)


def _post(port: int, message: dict, session: str | None = None,
          token: str | None = TOKEN) -> tuple[int, str]:
    headers = {"Content-Type": "application/json", "Host": f"127.0.0.1:{port}",
               "Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if session:
        headers.update({"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"})
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", method="POST",
                                     data=json.dumps(message).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as got:
            return got.status, got.read().decode("utf-8", "replace") + "\n" + got.headers.get(
                "mcp-session-id", "")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException):  # a reply cut off: no answer
        return 0, ""


def _init(port: int, token: str | None = TOKEN) -> str | None:
    status, body = _post(port, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "rt", "version": "1"}}}, token=token)
    return body.rsplit("\n", 1)[-1] or None if status == 200 else None


# --- item 10: sessions ---------------------------------------------------------------------------

def sessions() -> None:
    port = _free_port()
    proc = subprocess.Popen([str(SCRIPT), "--http", "--port", str(port), "--root",
                             str(_workspace())], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=_env(WHILEAI_MCP_TOKEN=TOKEN))
    _wait(port)
    try:
        mine = _init(port)
        stop = threading.Event()
        loops = [0]

        def loop():  # the red team's looping client, with and without the token
            while not stop.is_set():
                _init(port, token=TOKEN if loops[0] % 2 else None)
                loops[0] += 1

        threads = [threading.Thread(target=loop, daemon=True) for _ in range(2)]
        for thread in threads:
            thread.start()
        failed = 0
        for _ in range(10):
            time.sleep(0.5)
            status, body = _post(port, {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                        "params": {"name": "rate",
                                                   "arguments": {"rows": "ok.jsonl"}}}, mine)
            failed += status != 200 or '"isError":true' in body
        stop.set()
        for thread in threads:
            thread.join(30)
        case("sessions: a client loops on initialize beside a working one", 10, escapes=failed,
             crashes=int(proc.poll() is not None),
             note=f"{loops[0]} initializes looped; escapes: the working client's failed calls")
    finally:
        proc.kill()
        proc.wait()


# --- item 9: writes by allow-list --------------------------------------------------------------

TARGETS = [".devcontainer.json", "crush.json", ".aider.conf.yml", "proj.code-workspace",
           "package.json", ".github/workflows/ci.yml", ".gitlab-ci.yml", "azure-pipelines.yml",
           "bitbucket-pipelines.yml", ".circleci/config.yml", "CLAUDE.local.md", "AGENT.md",
           "AGENTS.md", "CLAUDE.md", "GEMINI.md", ".mcp.json", ".envrc", "pyproject.toml",
           "uv.toml", "opencode.json", ".vscode/settings.json", ".claude/settings.json",
           "skills/x/SKILL.md", "sub/.cursor/mcp.json"]
FOLDERS = [".github/workflows", ".devcontainer", ".husky", ".claude/skills/x", ".git/hooks",
           ".circleci", "ok/.vscode"]


def writes() -> None:
    import tool_calls
    from server.app import build_server
    from test_server_support import call
    from whileai_core.operations import operations
    from whileai_core.operations.args import OUT
    from whileai_core.operations.surface import params

    root = tool_calls.build(Path(tempfile.mkdtemp(prefix="rt-writes-")))
    server = build_server(root, skills_dir=root / "none")
    landed = tries = lost = 0
    for op in operations().values():
        names = {p.name for p in params(op, "mcp")}
        for p in params(op, "mcp"):
            if p.arg.kind != OUT or op.name not in tool_calls.CALLS:
                continue
            folder = p.arg.metavar == "DIR"
            for target in FOLDERS if folder else TARGETS:
                tries += 1
                before = {q: q.read_bytes() for q in root.rglob("*") if q.is_file()}
                arguments = {**tool_calls.CALLS[op.name], p.name: target}
                if "overwrite" in names:
                    arguments["overwrite"] = True
                call(server, op.name, arguments)
                after = {q for q in root.rglob("*") if q.is_file()}
                landed += bool(after - set(before))
                lost += sum(q.read_bytes() != data for q, data in before.items()
                            if q.exists() and q.name.endswith((".json", ".toml", ".md")))
                for new in after - set(before):
                    new.unlink()
    case("writes: every writing argument x host/CI/build/agent files", tries, escapes=landed,
         lost=lost, note="escapes: writes that landed")


# --- item 8: the held-out basis ----------------------------------------------------------------

RECIPE = """
import argparse, json, pathlib


def modal_call(run_name, config_path):
    return {"app": "x", "function": "train", "args": [], "kwargs": {}}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rows = lambda after: [{"task_id": f"t{i:02d}", "prompt": f"other ask {i}",
                           "reward": float(j < (3 if after else 1))}
                          for i in range(40) for j in range(4)]
    pathlib.Path(args.out, "results.json").write_text(json.dumps(
        {"before_rows": rows(False), "after_rows": rows(True)}))


if __name__ == "__main__":
    main()
"""


def held_out_basis() -> None:
    from test_runs_support import wait_until_finished
    from whileai_core import collect_run, freeze_holdout, launch_run, register_experiment

    tmp = Path(tempfile.mkdtemp(prefix="rt-basis-"))
    (tmp / "recipes" / "other").mkdir(parents=True)
    (tmp / "recipes" / "other" / "run.py").write_text(RECIPE)
    (tmp / "tasks.jsonl").write_text("".join(json.dumps({"task_id": f"t{i:02d}",
                                                         "prompt": f"ask {i}"}) + "\n"
                                             for i in range(40)))
    frozen = freeze_holdout(tmp / "tasks.jsonl", tmp / "evals")
    state = tmp / "state"
    register_experiment("exp", question="Does it move?", hypothesis="it moves",
                        arms={"treat": "the change"}, holdout=frozen.path,
                        rule={"ship_if": [{"kind": "delta_above", "bound": 0.05}]},
                        state_dir=state)
    escapes = 0
    for i in range(3):
        run = launch_run("other", backend="local", confirm=True, state_dir=state,
                         recipes_dir=tmp / "recipes", experiment="exp", arm="treat",
                         name=f"other-{i}").run
        wait_until_finished(run.id, state)
        decision = collect_run(run.id, state_dir=state).decision
        escapes += decision.basis == "as_registered"
    case("basis: an arm scored on other asks under the same task ids", 3, escapes=escapes,
         note="escapes: read as_registered")


# --- lows ----------------------------------------------------------------------------------------

def lows() -> None:
    import anyio
    from mcp import Client

    from server.app import build_server
    from test_server_support import call

    ws = _workspace()
    server = build_server(ws)
    listing = call(server, "list_skills", {})
    size = len(listing.content[0].text.encode()) + len(json.dumps(
        listing.structured_content).encode())
    case("lows: list_skills within 8 KB", 1, escapes=int(size > 8192),
         note=f"{size:,} bytes")
    try:
        from server.run_tasks import EXTENSION_ID, GetTaskRequest, TaskParams
    except ImportError:
        return
    from mcp.client.extension import ClientExtension
    from mcp.shared.exceptions import MCPError
    from mcp_types import EmptyResult

    class Tasks(ClientExtension):
        identifier = EXTENSION_ID

    async def go():
        async with Client(server, extensions=[Tasks()]) as client:
            try:
                await client.session.send_request(
                    GetTaskRequest(params=TaskParams(task_id="x" * 3_900_000)), EmptyResult)
            except MCPError as err:
                return len(err.error.message.encode())
        return 0
    echoed = anyio.run(go)
    case("lows: tasks/get of a 3.9 MB task id", 1, escapes=int(echoed > 8192),
         note=f"{echoed:,} bytes echoed")


def main() -> int:
    t0 = time.monotonic()
    for step in (spend_gate, stdio_answers, http_answers, sessions, writes, held_out_basis,
                 lows):
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - a case that cannot run says so and the rest go on
            print(f"{step.__name__}: could not run ({type(exc).__name__}: {exc})"[:300])
    totals = {k: sum(c[k] for c in CASES) for k in ("tries", "escapes", "crashes", "stalls",
                                                      "leaks", "lost")}
    print(f"\ntotal: {len(CASES)} cases, {totals['tries']} tries; escapes {totals['escapes']}, "
          f"crashes {totals['crashes']}, stalls > 1 s {totals['stalls']}, leaks "
          f"{totals['leaks']}, data loss {totals['lost']} ({time.monotonic() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
