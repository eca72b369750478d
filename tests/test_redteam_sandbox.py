"""An outside red team of the reward sandbox, after the
"sandbox" round: each break found on inputs that round did not try, a test that failed before
its fix. The same cases at their full sizes, with totals: ``bench/redteam_sandbox.py``.

- whose code: a conda or pixi environment, a Python installation's standard library
  (``env/lib/python3.11/http/server.py`` serves the folder), ``node_modules``, eggs, an
  unpacked sdist, a legacy ``--target .`` install and a RECORD path CSV quotes all ran as
  rewards, in both forms, over MCP and the library;
- the tree: a reward that killed (or stopped) its supervisor left its ``setsid``'d processes
  alive (8 of 8), and a reward could signal the server that ran it; now the worker runs in PID,
  mount and user namespaces of its own where the kernel allows it (``confine.contain``);
- secrets: a reward read the keys from the environment of the process that started the server
  (an MCP host started from a shell that exported them) and the HTTP token from the file the
  server's command line names: its ``/proc`` now shows its own processes only;
- the report: a line the reward wrote on the report descriptor had its message quoted whatever
  the exception it named, and one past its cap was described as 64 MB "to report".
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from test_server_support import call, error_text, write_jsonl
from whileai_core.hacking.reward import RewardError, reward_runner

ONE = [{"prompt": "p", "completion": "c"}]
MARK = ("open('pwned', 'w').close()\nimport sys\nfor line in sys.stdin: print(0.0)\n"
        "def main(prompts, completions, **kw):\n    return [0.0] * len(prompts)\n")
OWN = "import sys\nfor line in sys.stdin: print(0.5)\n"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


# --- whose code: installed layouts the first round did not know --------------------------------

# layout -> (the files, the script given as the reward, the reason its refusal must give)
INSTALLED = {
    "conda env script": ({"env/conda-meta/history": "", "env/bin/jp.py": MARK}, "env/bin/jp.py",
                         "conda environment (env holds conda-meta)"),
    "conda env stdlib": ({"env/conda-meta/history": "", "env/lib/python3.11/http/server.py": MARK},
                         "env/lib/python3.11/http/server.py",
                         "a Python installation's standard library (env/lib/python3.11)"),
    "pixi": ({".pixi/envs/default/conda-meta/history": "",
              ".pixi/envs/default/lib/python3.11/ensurepip/__main__.py": MARK},
             ".pixi/envs/default/lib/python3.11/ensurepip/__main__.py",
             "standard library (.pixi/envs/default/lib/python3.11)"),
    "standalone build": ({".python/bin/python3.11": "", ".python/lib/python3.11/compileall.py":
                          MARK}, ".python/lib/python3.11/compileall.py",
                         "standard library (.python/lib/python3.11)"),
    "prefix's own script": ({".python/bin/python3.11": "", ".python/tools/run.py": MARK},
                            ".python/tools/run.py", "(.python holds bin/python3.11)"),
    "windows prefix": ({"py/python.exe": "", "py/Lib/http/server.py": MARK},
                       "py/Lib/http/server.py", "(py holds python.exe)"),
    "a standard library alone": ({"std/os.py": "", "std/site.py": "",
                                  "std/_collections_abc.py": "", "std/compileall.py": MARK},
                                 "std/compileall.py",
                                 "std holds os.py, site.py and _collections_abc.py"),
    "node_modules": ({"node_modules/node-gyp/gyp/gyp_main.py": MARK},
                     "node_modules/node-gyp/gyp/gyp_main.py", "installed package (node_modules/)"),
    ".eggs": ({".eggs/foo-1.0-py3.11.egg/foo/cli.py": MARK}, ".eggs/foo-1.0-py3.11.egg/foo/cli.py",
              "installed package (.eggs/)"),
    "egg folder": ({"lib/foo-1.0.egg/foo/__main__.py": MARK}, "lib/foo-1.0.egg/foo/__main__.py",
                   "installed package (foo-1.0.egg/)"),
    "EGG-INFO": ({"vendor/foo/EGG-INFO/PKG-INFO": "", "vendor/foo/foo/run.py": MARK},
                 "vendor/foo/foo/run.py", "install target (vendor/foo holds EGG-INFO)"),
    "unpacked sdist": ({"vendor/pip-24.0/PKG-INFO": "Name: pip\n",
                        "vendor/pip-24.0/src/pip/__main__.py": MARK},
                       "vendor/pip-24.0/src/pip/__main__.py", "(vendor/pip-24.0 holds PKG-INFO)"),
    "legacy --target .": ({"old-1.0.egg-info/installed-files.txt": "../old/run.py\n",
                           "old/run.py": MARK}, "old/run.py",
                          "old-1.0.egg-info/installed-files.txt lists it"),
    "quoted RECORD path": ({"weird-1.0.dist-info/RECORD": '"weird/a,b.py",sha256=x,1\n',
                            "weird/a,b.py": MARK}, "weird/a,b.py",
                           "weird-1.0.dist-info/RECORD lists it"),
}


@pytest.mark.parametrize("layout", INSTALLED)
@pytest.mark.parametrize("form", ["command", "function"])
def test_an_installed_layout_is_never_a_reward(server, ws, layout, form):
    files, script, reason = INSTALLED[layout]
    for path, text in files.items():
        _write(ws / path, text)
    write_jsonl(ws / "tasks.jsonl", [{"task_id": "t1", "prompt": "p"}])
    reward = ["python", script] if form == "command" else f"{script}:main"
    text = error_text(call(server, "cheat_probes", {"reward": reward, "tasks": "tasks.jsonl"}),
                      "cheat_probes")
    assert "is not your own code" in text and reason in text, text
    assert not (ws / "pwned").exists()  # before: the installed file's code ran (48 of 48 tries)


def test_the_projects_own_code_beside_every_installed_layout_still_runs(tmp_path):
    for files, _, _ in INSTALLED.values():
        for path, text in files.items():
            _write(tmp_path / path, text)
    # the project's own folders, named like nothing an installer makes: a lib/ of its own code,
    # a bin/ of its own scripts, a package with a version in its name, an egg-info of its own
    # (editable, no installed-files.txt) in the root
    _write(tmp_path / "bin/tool.sh", "")
    _write(tmp_path / "mine.egg-info/PKG-INFO", "Name: mine\n")
    for script in ("grade.py", "lib/grading/score.py", "bin/grade.py", "rewards/v1.0/grade.py",
                   "old/mine.py", "weird/own.py"):
        _write(tmp_path / script, OWN)
        assert list(reward_runner(["python", script], root=tmp_path)(ONE)) == [0.5], script


# --- the tree: a worker that kills its supervisor, or signals its server ----------------------

# whether this kernel lets an unprivileged process make user, PID and mount namespaces and
# mount a /proc of its own, asked without whileai's code (so the tests below skip, or run, the
# same on main and here)
NAMESPACES = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
uid = os.getuid()
# as a process of no privilege (uid 0 without capabilities may not map itself: it goes unmapped)
libc.prctl(38, 1, 0, 0, 0)
if libc.unshare(0x10000000 | 0x00020000 | 0x20000000) != 0:
    raise SystemExit(1)
pid = os.fork()
if pid == 0:
    ok = libc.mount(b"proc", b"/proc", b"proc", ctypes.c_ulong(0xE), None) == 0
    os._exit(0 if ok and os.readlink("/proc/self") == "1" else 1)
raise SystemExit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def _isolated() -> bool:
    return subprocess.run([sys.executable, "-c", NAMESPACES], timeout=60).returncode == 0


needs_namespaces = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not _isolated(),
    reason="the kernel gives no user namespaces here: the supervisor can then be killed "
           "(docs/reward-hacking.md, what it does not hold)")


def _in(folder: Path) -> list[int]:
    """Live processes whose working directory is ``folder``: every process a reward there
    starts, by the pids this process sees."""
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and os.readlink(f"/proc/{name}/cwd") == str(folder):
                state = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
                if state not in (b"Z", b"X"):
                    found.append(int(name))
        except (OSError, IndexError):
            pass
    return found


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


@needs_namespaces
@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP"])
def test_a_reward_that_kills_its_supervisor_leaves_nothing_alive(tmp_path, how):
    _write(tmp_path / "esc.py", ESCAPE)
    runner = reward_runner("esc.py:score", root=tmp_path, timeout_s=3)
    try:
        with pytest.raises(RewardError, match="did not finish"):
            runner([{"prompt": "p", "completion": "c", "how": how}])
        assert len(list(tmp_path.glob("pid*"))) == 8  # every sleeper started
        deadline = time.monotonic() + 10
        while _in(tmp_path):  # before: 8 of 8 alive, re-parented to init
            assert time.monotonic() < deadline, f"{len(_in(tmp_path))} processes survived"
            time.sleep(0.05)
    finally:
        for pid in _in(tmp_path):  # never leave the machine a sleeper, whatever happened
            os.kill(pid, 9)


SIGNAL = """
import os
def score(prompts, completions, server, **kw):
    try:
        os.kill(server[0], 0)  # a permission check only: nothing is delivered
        return [1.0]
    except OSError:
        return [0.0]
"""


@needs_namespaces
def test_a_reward_cannot_name_the_process_that_runs_it(tmp_path):
    _write(tmp_path / "sig.py", SIGNAL)
    runner = reward_runner("sig.py:score", root=tmp_path)
    # before: 1.0 (it could have killed the server, or any process of the user)
    assert list(runner([{"prompt": "p", "completion": "c", "server": os.getpid()}])) == [0.0]


# --- secrets: the host's environment, the token file the server's command line names ---------

SPY = """
import json, os, sys
mark = {mark!r}.encode()
seen = {{"environ": [], "token": False}}
for pid in os.listdir('/proc'):
    if not pid.isdigit():
        continue
    try:
        if mark in open(f'/proc/{{pid}}/environ', 'rb').read():
            seen["environ"].append(int(pid))
    except OSError:
        pass
    try:
        args = open(f'/proc/{{pid}}/cmdline', 'rb').read().split(b'\\0')
    except OSError:
        continue
    if b'--token-file' in args[:-1]:
        try:
            seen["token"] = mark in open(args[args.index(b'--token-file') + 1], 'rb').read()
        except OSError:
            pass
open({out!r}, 'w').write(json.dumps(seen))
for line in sys.stdin:
    print(0.0)
"""

# the MCP host: a process of the user (no privilege, as a process of any other user has none)
# whose own environment holds the keys, as an agent started from a shell that exported them
HOST = """
import anyio, json, os, sys
from whileai_core import confine
confine.drop_privileges()
from mcp import Client, StdioServerParameters
ws, mcp = sys.argv[1], sys.argv[2]
async def go():
    params = StdioServerParameters(command=mcp, env=dict(os.environ), cwd=ws,
                                   args=["--root", ws, "--toolsets", "all"])
    async with Client(params) as client:
        result = await client.call_tool("cheat_probes", {
            "reward": ["python", "spy.py"], "tasks": "tasks.jsonl", "probes": ["empty"]})
        return result.content[0].text
print(anyio.run(go))
"""
MCP = Path(sys.executable).with_name("whileai-mcp")


def _spy_workspace(tmp_path: Path) -> tuple[Path, Path, str]:
    mark = f"RTS{uuid.uuid4().hex}"
    ws, out = tmp_path / "ws", tmp_path / "spy.json"
    _write(ws / "spy.py", SPY.format(mark=mark, out=str(out)))
    write_jsonl(ws / "tasks.jsonl", [{"task_id": "t1", "prompt": "p"}])
    return ws, out, mark


@needs_namespaces
@pytest.mark.skipif(not MCP.exists(), reason="needs whileai-mcp installed")
def test_a_reward_reads_no_key_from_the_host_that_started_the_server(tmp_path):
    ws, out, mark = _spy_workspace(tmp_path)
    env = {**os.environ, "OPENAI_API_KEY": f"sk-{mark}", "MODAL_TOKEN_SECRET": f"as-{mark}"}
    done = subprocess.run([sys.executable, "-c", HOST, str(ws), str(MCP)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(out.read_text())
    assert seen["environ"] == [], seen  # before: the host's pid (its initial environment)
    assert mark not in done.stdout


@needs_namespaces
@pytest.mark.skipif(not MCP.exists(), reason="needs whileai-mcp installed")
def test_a_reward_never_finds_the_http_token_file(tmp_path):
    ws, out, mark = _spy_workspace(tmp_path)
    token = tmp_path / "token"
    token.write_text(f"{mark}{uuid.uuid4().hex}\n")
    token.chmod(0o600)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "WHILEAI_MCP_TOKEN"}
    server = subprocess.Popen([str(MCP), "--http", "--port", str(port), "--token-file",
                               str(token), "--root", str(ws), "--toolsets", "all"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _http_call(port, token.read_text().strip(), "cheat_probes", {
            "reward": ["python", "spy.py"], "tasks": "tasks.jsonl", "probes": ["empty"]})
    finally:
        server.terminate()
        server.wait(30)
    # before: the server's command line named the file, and the reward read the token from it
    assert json.loads(out.read_text())["token"] is False


def _http_call(port: int, token: str, tool: str, arguments: dict) -> str:
    import urllib.request

    def post(body: dict, session: str | None = None) -> tuple[str | None, str]:
        headers = {"Content-Type": "application/json", "Host": f"127.0.0.1:{port}",
                   "Accept": "application/json, text/event-stream",
                   "Authorization": f"Bearer {token}"}
        if session:
            headers.update({"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"})
        request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", method="POST",
                                         data=json.dumps(body).encode(), headers=headers)
        with urllib.request.urlopen(request, timeout=120) as reply:
            return reply.headers.get("mcp-session-id"), reply.read().decode()

    deadline = time.monotonic() + 60
    while True:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                break
        assert time.monotonic() < deadline, "the HTTP server did not start"
        time.sleep(0.1)
    session, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "red-team", "version": "1"}}})
    return post({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                 "params": {"name": tool, "arguments": arguments}}, session)[1]


# --- the report descriptor: the reward's word, never trusted as text ---------------------------

FORGED = """
import json, os, sys
def score(prompts, completions, **kw):
    spec = json.loads(open('/proc/self/cmdline', 'rb').read().split(b'\\0')[-2])
    line = {{"raised": "ValueError", "at": ["x.py", 1, "f"], "message": open({secret!r}).read()}}
    os.write(spec['report_fd'], (json.dumps(line) + "\\n").encode())
    os._exit(1)
"""


def test_a_forged_report_line_never_has_its_message_quoted(tmp_path):
    secret, value = tmp_path / "credential", f"cred-{uuid.uuid4().hex}"
    secret.write_text(value)
    ws = tmp_path / "ws"
    _write(ws / "forge.py", FORGED.format(secret=str(secret)))
    with pytest.raises(RewardError, match="raised ValueError") as err:
        reward_runner("forge.py:score", root=ws)(ONE)
    assert value not in str(err.value)  # before: quoted, as if the interpreter had said it
    assert "not quoted" in str(err.value)


def test_a_flood_of_the_report_descriptor_is_named_as_it_is(tmp_path):
    _write(tmp_path / "flood.py", "import json, os, sys\nsys.stdin.read()\n"
           "fd = json.loads(open('/proc/self/cmdline', 'rb').read().split(b'\\0')[-2])"
           "['report_fd']\nos.write(fd, b'{}\\n' * 100_000)\nprint(1.0)\n")
    with pytest.raises(RewardError) as err:
        reward_runner(["python", "flood.py"], root=tmp_path)(ONE)
    # before: "printed more than 64000000 bytes to report" (stderr's cap, a stream nobody knows)
    assert "wrote more than 65536 bytes to descriptor" in str(err.value), str(err.value)
    assert "whileai's own" in str(err.value)


# --- the local run's grader: the same origin check as a reward ---------------------------------
# (the case is bench/redteam_sandbox.py's grader group, imported from there: one copy)

def _bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "redteam_sandbox", Path(__file__).resolve().parents[1] / "bench" / "redteam_sandbox.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_data_folder_whose_grader_an_installed_package_ships_is_refused(tmp_path):
    from whileai_core.errors import ArgumentError
    from whileai_core.runs import launch_run
    from whileai_core.runs.targets import resolve_target
    from whileai_core.safepath import Root

    data = _bench().grader_workspace(tmp_path)
    with pytest.raises(ArgumentError) as refused:  # before: accepted, its grader run by the run
        resolve_target("sft", root=Root(tmp_path), data=data)
    text = str(refused.value)
    assert "`data`" in text and "grader.py" in text and "is not your own code" in text, text
    assert "installed package (site-packages/)" in text and "Fix: " in text, text
    # the plan (what the MCP tool and the CLI call) refuses it the same way, nothing recorded
    with pytest.raises(ArgumentError, match="is not your own code"):
        launch_run("sft", backend="local", data=data, root=Root(tmp_path),
                   state_dir=tmp_path / "state")
    assert not (tmp_path / "state").exists()


def test_the_projects_own_data_folder_beside_an_installed_one_still_resolves(tmp_path):
    from whileai_core.runs.targets import resolve_target
    from whileai_core.safepath import Root

    _bench().grader_workspace(tmp_path)
    own = tmp_path / "data" / "sft"
    for name in ("grader.py", "train.jsonl", "holdout.jsonl"):
        _write(own / name, (tmp_path / _bench().GRADER_DATA / name).read_text())
    target = resolve_target("sft", root=Root(tmp_path), data="data/sft")
    assert [n for n, _ in target.data_files] == ["grader.py", "holdout.jsonl", "train.jsonl"]
