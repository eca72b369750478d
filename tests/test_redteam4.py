"""The fourth red-team round, the reward's part (items 3, 4, 11 and the lows on rewards
and prime-rl configs): each case rebuilt as the red team ran it, a test that failed before its fix.

- an installed program inside the root ran with the caller's arguments (`lib/torch/.../run.py
  --no-python sh -c`, `__pypackages__/.../pip/__main__.py`, `setup.py egg_info`, `.venv/bin/jp.py`
  echoing an outside credential): a command reward now gets no argument, and a file an installer
  put there (or a build script) is refused;
- a reward (and a local run's grader) read the server's keys from /proc/<server pid>/environ:
  the server now re-execs itself without them and is non-dumpable, children run without
  privilege;
- a reward's stdout/stderr was buffered whole in the server (3 GB of stderr: 3.1 GB resident):
  now read as it streams, stderr counted, never kept, each stream capped;
- setsid'd grandchildren survived the timeout (40 of 40) and nothing limited processes: a
  supervisor (a subreaper) kills the whole tree, with a process limit;
- `[ckpt] output_dir` with `clean = true` passed every check (prime-rl 559b447 deletes it) and
  `GIT_SSH_COMMAND` was accepted in `env_vars`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import time
import tracemalloc
import uuid
from pathlib import Path

import anyio
import pytest

from test_server_support import call, error_text, write_jsonl
from whileai_core.errors import ArgumentError, ConfigError
from whileai_core.hacking.reward import RewardError, reward_runner

TASKS = [{"task_id": f"t{i}", "prompt": f"p{i}", "answer": "a"} for i in range(2)]
ONE = [{"prompt": "p", "completion": "c"}]
MCP = Path(sys.executable).with_name("whileai-mcp")


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


# --- item 3: a command reward gets no argument; installed programs are not rewards ----------

def test_a_command_reward_with_arguments_is_refused_and_runs_nothing(server, ws):
    # as the red team ran it: torch's launcher, installed with `pip install --target lib`
    _write(ws / "lib/torch/distributed/run.py", "import sys, subprocess\n"
           "subprocess.run(sys.argv[sys.argv.index('-c') - 1:])\n")
    _write(ws / "grade.py", "import sys\nopen('pwned', 'w')\n")
    write_jsonl(ws / "tasks.jsonl", TASKS)
    for reward in (["python", "lib/torch/distributed/run.py", "--no-python", "sh", "-c",
                    "id > pwned"], ["python", "grade.py", "0.5"], "python grade.py --x"):
        text = error_text(call(server, "cheat_probes", {"reward": reward, "tasks": "tasks.jsonl"}),
                          "cheat_probes")
        assert "a command reward gets none" in text, text
        assert not (ws / "pwned").exists()
    with pytest.raises(ArgumentError, match="gets none"):
        reward_runner(["python", "grade.py", "0.5"], root=ws)


OUTSIDE_CREDENTIAL = "r4-outside-credential-7f3a9"


def _installed_workspace(ws: Path, outside: Path) -> dict[str, str]:
    """The red team's installed programs, each a script that would leave a marker (and jp.py
    one that reads an outside credential); reward -> the reason its refusal must give."""
    marker = "open('pwned', 'w')\nimport sys\nfor line in sys.stdin: print(0.0)\n"
    _write(ws / "lib/torch/distributed/run.py", marker)
    _write(ws / "lib/torch-2.5.1.dist-info/RECORD", "torch/distributed/run.py,sha256=x,10\n")
    _write(ws / "__pypackages__/3.11/lib/pip/__main__.py", marker)
    _write(ws / "setup.py", marker)
    _write(ws / ".venv/pyvenv.cfg", "home = /usr/bin\n")
    _write(ws / ".venv/bin/jp.py", f"print(open({str(outside)!r}).read())\n")
    _write(ws / "env2/Scripts/activate", "")  # a venv whose pyvenv.cfg is gone
    _write(ws / "env2/Scripts/tool.py", marker)
    _write(ws / "pyproject.toml", "[build-system]\nrequires = []\nbuild-backend = 'backend'\n"
                                  "backend-path = ['_build']\n")
    _write(ws / "_build/backend.py", marker)
    _write(ws / "vendored-1.0.dist-info/RECORD", "vendored/main.py,,\n")  # `--target .`
    _write(ws / "vendored/main.py", marker)
    return {"lib/torch/distributed/run.py": "install target (lib holds torch-2.5.1.dist-info)",
            "__pypackages__/3.11/lib/pip/__main__.py": "installed package (__pypackages__/)",
            "setup.py": "setup.py (a build script)",
            ".venv/bin/jp.py": "virtual environment (.venv holds pyvenv.cfg)",
            "env2/Scripts/tool.py": "virtual environment's script",
            "_build/backend.py": "build backend",
            "vendored/main.py": "vendored-1.0.dist-info/RECORD lists it"}


@pytest.mark.parametrize("form", ["command", "function"])
def test_an_installed_program_or_a_build_script_is_never_a_reward(server, ws, tmp_path, form):
    outside = _write(tmp_path / "outside" / "credentials.json",
                     json.dumps({"token": OUTSIDE_CREDENTIAL}))
    write_jsonl(ws / "tasks.jsonl", TASKS)
    for script, reason in _installed_workspace(ws, outside).items():
        reward = ["python", script] if form == "command" else f"{script}:main"
        text = error_text(call(server, "cheat_probes", {"reward": reward, "tasks": "tasks.jsonl"}),
                          "cheat_probes")
        assert "is not your own code" in text and reason in text, (script, text)
        assert OUTSIDE_CREDENTIAL not in text
        assert not (ws / "pwned").exists(), script


def test_the_projects_own_files_beside_installed_ones_still_run(tmp_path):
    _installed_workspace(tmp_path, tmp_path / "nothing")
    # an editable install's src/NAME.egg-info (no installed-files.txt) is the project's own
    _write(tmp_path / "src/myproj.egg-info/PKG-INFO", "Name: myproj\n")
    for script in ("rewards/grade.py", "src/myproj/grade.py"):
        _write(tmp_path / script, "import sys\nfor line in sys.stdin: print(0.5)\n")
        assert list(reward_runner(["python", script], root=tmp_path)(ONE)) == [0.5]


def test_a_childs_error_never_quotes_what_it_read(tmp_path):
    # .venv/bin/jp.py read an outside JSON credential and its value came back in the error:
    # through stdout (not a number), stderr (a traceback), an exception's message or a value
    secret = _write(tmp_path / "outside.json", json.dumps({"token": OUTSIDE_CREDENTIAL}))
    read = f"__import__('json').load(open({str(secret)!r}))['token']"
    ws = tmp_path / "ws"
    cases = {
        "out.py": f"import sys\nsys.stdin.read()\nprint({read})\n",
        "err.py": f"import sys\nsys.stdin.read()\nsys.stderr.write({read})\nsys.exit(2)\n",
        "raise.py": f"def score(prompts, completions, **kw):\n    raise ValueError({read})\n",
        "key.py": f"def score(prompts, completions, **kw):\n    return {{}}[{read}]\n",
        "value.py": f"def score(prompts, completions, **kw):\n    return [{read}]\n",
        "array.py": f"import sys, json\nsys.stdin.read()\nprint(json.dumps([{read}]))\n",
    }
    for name, code in cases.items():
        _write(ws / name, code)
        reward = ["python", name] if name in ("out.py", "err.py", "array.py") else f"{name}:score"
        with pytest.raises(RewardError) as err:
            reward_runner(reward, root=ws)(ONE)
        assert OUTSIDE_CREDENTIAL not in str(err.value), (name, str(err.value))
        assert "not quoted" in str(err.value), (name, str(err.value))
    # the interpreter's own errors about code are named in full: they say what to fix
    _write(ws / "typo.py", "def score(prompts, completions, **kw):\n    return [missing_name]\n")
    with pytest.raises(RewardError, match="raised NameError at typo.py line 2, in score: name "
                                          "'missing_name' is not defined"):
        reward_runner("typo.py:score", root=ws)(ONE)


# --- item 4: no child reads the server's secrets ----------------------------------------------

SPY = """
import json, os, sys
mark = {mark!r}.encode()
found, parents = [], []
for pid in os.listdir('/proc'):
    if pid.isdigit():
        try:
            data = open(f'/proc/{{pid}}/environ', 'rb').read()
        except OSError:
            continue
        if mark in data:
            found.append(int(pid))
pid = os.getppid()
while pid > 1:  # every ancestor: its environment as /proc shows it, or why it cannot be read
    try:
        parents.append([pid, mark in open(f'/proc/{{pid}}/environ', 'rb').read()])
    except OSError as exc:
        parents.append([pid, type(exc).__name__])
    with open(f'/proc/{{pid}}/stat', 'rb') as fh:
        pid = int(fh.read().rsplit(b')', 1)[1].split()[1])
status = dict(line.split(':', 1) for line in open('/proc/self/status'))
open({out!r}, 'w').write(json.dumps({{"found": found, "parents": parents,
    "caps": int(status['CapEff'], 16), "no_new_privs": int(status['NoNewPrivs']),
    "pid_namespace": os.readlink('/proc/self/ns/pid'),
    "visible": len([p for p in os.listdir('/proc') if p.isdigit()])}}))
"""


def _decoy(mark: str) -> subprocess.Popen:
    """A process of the same user started with the marker in its environment: the spy must find
    it, so a spy that finds nothing else proves the walk could read what it looked at. It drops
    its privileges as a reward does (as root a process without capabilities may not read one
    that has them), so it is as readable as any other process of an unprivileged user."""
    code = ("import sys, time; from whileai_core import confine; confine.drop_privileges(); "
            "print('ready', flush=True); time.sleep(60)")
    decoy = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             env={"PATH": os.environ.get("PATH", ""), "DECOY_TOKEN": mark})
    assert decoy.stdout.readline().strip() == "ready"
    return decoy


def _check_spy(seen: dict, decoy: subprocess.Popen) -> None:
    if seen["pid_namespace"] != os.readlink("/proc/self/ns/pid"):
        # a PID namespace of its own (confine.contain, where the kernel allows it): its /proc
        # shows its own few processes, the decoy and the server not at all
        assert seen["found"] == [] and seen["visible"] <= 8, seen
    else:
        # the decoy only: the walk could read the user's processes, and neither the server, nor
        # any ancestor, nor any other process showed the server's secrets (before: the
        # server's environ)
        assert seen["found"] == [decoy.pid], seen
    assert all(flag is not True for _, flag in seen["parents"]), seen
    # no privilege either (as root: no capability, so a non-dumpable process stays closed)
    assert seen["caps"] == 0 and seen["no_new_privs"] == 1, seen


@pytest.mark.skipif(not MCP.exists() or not Path("/proc/self/environ").exists(),
                    reason="needs whileai-mcp installed and Linux /proc")
def test_a_reward_reads_no_secret_of_the_server_through_proc(tmp_path):
    from mcp import Client, StdioServerParameters

    mark = f"R4LEAK{uuid.uuid4().hex}"
    ws = tmp_path / "ws"
    out = tmp_path / "spy.json"
    _write(ws / "spy.py", SPY.format(mark=mark, out=str(out)) + "for line in sys.stdin: print(0)\n")
    write_jsonl(ws / "tasks.jsonl", TASKS)
    env = {**os.environ, "OPENAI_API_KEY": f"sk-{mark}", "MODAL_TOKEN_SECRET": f"as-{mark}",
           "HF_TOKEN": f"hf_{mark}", "PYTHONUNBUFFERED": "1"}
    decoy = _decoy(mark)
    try:
        async def go():
            params = StdioServerParameters(command=str(MCP), env=env, cwd=str(ws),
                                           args=["--root", str(ws), "--toolsets", "all"])
            async with Client(params) as client:
                return await client.call_tool("cheat_probes", {
                    "reward": ["python", "spy.py"], "tasks": "tasks.jsonl", "probes": ["empty"]})

        result = anyio.run(go)
    finally:
        decoy.kill()
        decoy.wait()
    assert not result.is_error, result.content[0].text
    _check_spy(json.loads(out.read_text()), decoy)


DRIVER = """
import json, sys, time
from whileai_core.seal import seal_server
seal_server()  # what whileai-mcp does first
import os
from whileai_core.runs import launch_run, run_status
proc_env = open('/proc/self/environ', 'rb').read()
assert os.environ['OPENAI_API_KEY'].endswith(sys.argv[3]), 'the secret stays in os.environ'
launched = launch_run('spy', backend='local', confirm=True, state_dir=sys.argv[1],
                      recipes_dir=sys.argv[2])
for _ in range(1200):
    record = run_status(launched.run.id, state_dir=sys.argv[1])
    if record.status not in ('launching', 'running'):
        break
    time.sleep(0.05)
print(json.dumps({"status": record.status, "error": record.error, "pid": os.getpid(),
                  "own_environ_has_it": sys.argv[3].encode() in proc_env}))
"""

RECIPE = """
import argparse, json, os, pathlib, subprocess, sys, time
parser = argparse.ArgumentParser()
parser.add_argument('--smoke', action='store_true')
parser.add_argument('--out', required=True)
args = parser.parse_args()
# a grader's leftover: a setsid'd sleeper that outlives the recipe unless the tree is killed
sleeper = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'],
                           start_new_session=True)
pathlib.Path(SLEEPER_FILE).write_text(str(sleeper.pid))
pathlib.Path(args.out, 'results.json').write_text(json.dumps({"steps": 1}))
"""


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
def test_a_local_runs_grader_reads_no_secret_and_leaves_no_process(tmp_path):
    mark = f"R4LEAK{uuid.uuid4().hex}"
    out, sleeper = tmp_path / "spy.json", tmp_path / "sleeper.pid"
    _write(tmp_path / "recipes/spy/run.py", RECIPE.replace("SLEEPER_FILE", repr(str(sleeper)))
           + SPY.format(mark=mark, out=str(out)))
    driver = _write(tmp_path / "driver.py", DRIVER)
    env = {**os.environ, "OPENAI_API_KEY": f"sk-{mark}", "MODAL_TOKEN_ID": f"ak-{mark}"}
    decoy = _decoy(mark)
    try:
        done = subprocess.run([sys.executable, str(driver), str(tmp_path / "state"),
                               str(tmp_path / "recipes"), mark], env=env, capture_output=True,
                              text=True, timeout=120)
    finally:
        decoy.kill()
        decoy.wait()
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] == "succeeded", report
    assert report["own_environ_has_it"] is False  # re-exec'd: the initial environment lacks it
    _check_spy(json.loads(out.read_text()), decoy)
    assert sleeper.read_text().strip().isdigit()  # it started (its pid as it saw it)
    deadline = time.monotonic() + 10
    while _in(tmp_path):  # before: the recipe's setsid'd sleeper outlived the run
        assert time.monotonic() < deadline, f"{_in(tmp_path)} outlived the run"
        time.sleep(0.05)


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return None


# --- item 11: output bounded while it streams ---------------------------------------------------

@pytest.mark.parametrize("stream, megabytes, said", [
    ("stderr", 40, None),            # under the 64 MB cap: counted, never kept, the reward runs
    ("stderr", 300, "to stderr"),    # past it: stopped at 64 MB
    ("stdout", 300, "to stdout"),    # stdout is kept up to 16 MB, then stopped
])
def test_a_rewards_output_is_bounded_while_it_streams(tmp_path, stream, megabytes, said):
    fill = "b'#' * (1 << 20)" if stream == "stderr" else "b'1\\n' * (1 << 19)"
    _write(tmp_path / "loud.py", f"import sys\nsys.stdin.read()\nblock = {fill}\n"
                                 f"for _ in range({megabytes}):\n"
                                 f"    sys.{stream}.buffer.write(block)\n"
                                 "print(1.0)\n")
    runner = reward_runner(["python", "loud.py"], root=tmp_path)
    tracemalloc.start()
    try:
        if said is None:
            assert list(runner(ONE)) == [1.0]
        else:
            with pytest.raises(RewardError, match=f"printed more than .* bytes {said}"):
                runner(ONE)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # before: the whole output in memory (300 MB here, 3 GB for the red team); now stderr costs
    # a read buffer and stdout at most its 16 MB cap
    assert peak < (20 << 20 if stream == "stdout" else 2 << 20), peak


# --- lows: the whole tree dies, with a process limit -----------------------------------------

SLEEPERS = """
import os, time
def score(prompts, completions, wait, **kw):
    for i in range(40):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                open(f'pid{i}', 'w').write(str(os.getpid()))
                time.sleep(120)
            os._exit(0)
    while len([f for f in os.listdir('.') if f.startswith('pid')]) < 40:
        time.sleep(0.01)
    time.sleep(wait[0])
    return [1.0] * len(prompts)
"""


@pytest.mark.parametrize("wait, timeout_s", [(60, 2), (0, 30)], ids=["timeout", "finished"])
def test_setsid_grandchildren_die_with_the_reward(tmp_path, wait, timeout_s):
    _write(tmp_path / "sleepers.py", SLEEPERS)
    runner = reward_runner("sleepers.py:score", root=tmp_path, timeout_s=timeout_s)
    if wait:
        with pytest.raises(RewardError, match="whole process tree was killed"):
            runner([{"prompt": "p", "completion": "c", "wait": wait}])
    else:
        assert list(runner([{"prompt": "p", "completion": "c", "wait": wait}])) == [1.0]
    assert len(list(tmp_path.glob("pid*"))) == 40  # each sleeper started (its pid as it saw it)
    deadline = time.monotonic() + 10
    while _in(tmp_path):  # before: 40 of 40 alive
        assert time.monotonic() < deadline, f"{len(_in(tmp_path))} sleepers survived"
        time.sleep(0.05)


BOMB = """
import os, time
def score(prompts, completions, **kw):
    made = 0
    for _ in range(400):  # bounded: at most 400 sleepers whatever happens
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        made += 1
    return [float(made)]
"""


def test_a_fork_bomb_stops_at_the_process_limit_and_dies_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("WHILEAI_CHILD_PROCESSES", "32")
    _write(tmp_path / "bomb.py", BOMB)
    runner = reward_runner("bomb.py:score", root=tmp_path, timeout_s=60)
    try:
        made = list(runner(ONE))[0]
    except RewardError as err:  # the supervisor's count (uid 0: the kernel applies no limit)
        assert "started more than the 32 processes" in str(err), str(err)
    else:  # any other user: fork fails at the limit (the user's tasks at the start + 32; a
        # few more when other processes of the user end meanwhile)
        assert os.getuid() != 0 and made <= 32 + 16, made
    deadline = time.monotonic() + 10
    while _in(tmp_path):
        assert time.monotonic() < deadline, f"{len(_in(tmp_path))} bomb processes survived"
        time.sleep(0.05)


def _in(folder: Path) -> list[int]:
    """Live processes whose working directory is ``folder`` (every process the reward forks)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.readlink(f"/proc/{name}/cwd") == str(folder) and _state(int(name)) != "Z":
                    found.append(int(name))
            except OSError:
                pass
    return found


# --- lows: prime-rl configs that delete or run what they should not --------------------------

@pytest.mark.parametrize("override, said", [
    ({"clean": True, "ckpt": {"output_dir": "/home/user/checkpoints"}}, "deletes `ckpt.output_dir`"),
    ({"clean": True, "ckpt": {"output_dir": "../../elsewhere"}}, "deletes `ckpt.output_dir`"),
    ({"clean": True, "run": {"name": "."}}, "run.name must be one plain folder name"),
    ({"clean": True, "run": {"dir": "a/../.."}}, "run.dir must be one plain folder name"),
    ({"env_vars": {"GIT_SSH_COMMAND": "sh -c 'id > /tmp/pwned'"}}, "env_vars.GIT_SSH_COMMAND"),
    ({"trainer": {"env_vars": {"PIP_INDEX_URL": "http://evil"}}}, "PIP_INDEX_URL"),
    ({"orchestrator": {"env_vars": {"GIT_CONFIG_GLOBAL": "/tmp/x"}}}, "GIT_CONFIG_GLOBAL"),
    ({"env_vars": {"NCCL_NET_PLUGIN": "/tmp/evil.so"}}, "points at code to load"),
    ({"env_vars": {"HF_TOKEN": "hf_x"}}, "looks like a secret"),
    ({"inference": {"deployment": {"prefill_env_vars": {"BASH_ENV": "/tmp/x"}}}}, "BASH_ENV"),
])
def test_a_config_that_deletes_or_runs_more_is_refused_and_never_written(tmp_path, override,
                                                                         said):
    from whileai_core.prime_rl import prime_rl_config, validate_config

    check = validate_config(override)
    assert not check.ok and any(said in e and "refused by whileai" in e for e in check.errors), \
        check.errors
    with pytest.raises(ConfigError, match="refused by whileai"):
        prime_rl_config("reverse-text", "grpo", model="Qwen/Qwen3-0.6B", out=tmp_path / "c.toml",
                        overrides=override)
    assert not (tmp_path / "c.toml").exists()


def test_the_pinned_references_own_env_vars_and_a_safe_clean_pass():
    from whileai_core.prime_rl import validate_config

    # every env_vars name prime-rl 559b447's configs, examples and docs set, with the values
    # they give (see hazards.ENV_ALLOWED)
    ok = {"TRITON_CACHE_DIR": "/tmp/.triton-cache", "VLLM_CACHE_ROOT": "/tmp/.vllm-cache",
          "FLASHINFER_WORKSPACE_BASE": "/tmp/.flashinfer-cache", "VLLM_DEEP_GEMM_WARMUP": "skip",
          "UCX_RCACHE_MAX_UNRELEASED": "1024", "VLLM_ENABLE_MOE_DP_CHUNK": "0",
          "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "VLLM_USE_DEEP_GEMM": "1",
          "TOKENIZERS_PARALLELISM": "false", "PRIME_LOG_LEVEL": "debug", "NCCL_DEBUG": "INFO",
          "HF_HUB_OFFLINE": "1"}
    check = validate_config({"clean": True, "output_dir": "outputs", "run": {"name": "grpo-1"},
                             "ckpt": {"output_dir": "outputs/ckpt"}, "env_vars": ok,
                             "inference": {"env_vars": ok}})
    assert not [e for e in check.errors if "refused by whileai" in e], check.errors


# --- the audit after round four: prime-rl settings that run code, leak a key or write outside --
# (the cases are bench/redteam_sandbox.py's configs group, imported from there: one copy)

_BENCH = importlib.util.spec_from_file_location(
    "redteam_sandbox", Path(__file__).resolve().parents[1] / "bench" / "redteam_sandbox.py")
redteam_sandbox = importlib.util.module_from_spec(_BENCH)
_BENCH.loader.exec_module(redteam_sandbox)
CONFIG_CASES = [(name, override) for name, (_, override) in redteam_sandbox.CONFIGS.items()]
CONFIG_CASES += [(f"env_vars.{name}", {"env_vars": {name: value}})
                 for name, (_, value) in redteam_sandbox.ENV_NAMES.items()]


def _leaves(tree: dict, prefix: str = "") -> set[str]:
    out = set()
    for key, value in tree.items():
        path = f"{prefix}{key}"
        out |= _leaves(value, path + ".") if isinstance(value, dict) and value and \
            not key.endswith(("env_vars", "headers_from_env")) else {path}
    return out


@pytest.mark.parametrize("name, override", CONFIG_CASES, ids=[n for n, _ in CONFIG_CASES])
def test_a_setting_that_runs_code_leaks_a_key_or_writes_outside_is_refused(name, override):
    from whileai_core.prime_rl import validate_config

    refused = [e for e in validate_config(override).errors if "refused by whileai" in e]
    assert refused, f"{name}: accepted"
    # each refusal names the TOML table.key, says what is wrong and gives the fix
    keys = {f"`{leaf}`" for leaf in _leaves(override)}
    keys |= {f"`env_vars.{n}`" for n in override.get("env_vars", {})}
    assert any(k in e for e in refused for k in keys), (keys, refused)
    assert all(". Fix: " in e for e in refused), refused


@pytest.mark.parametrize("override", [
    {"orchestrator": {"algo": {"teacher": {"base_url": "http://localhost:8001/v1",
                                           "api_key_var": "OTHER_KEY"}}}},
    {"orchestrator": {"algo": {"teacher": {"base_url": "http://127.0.0.1:8001/v1",
                                           "headers_from_env": {"X-K": "HF_TOKEN"}}}}},
    {"orchestrator": {"model": {"client": {"api_key_var": "VLLM_API_KEY"}}}},  # default URL
    {"trainer": {"loss": {"type": "custom",
                          "import_path": "whileai_core.methods.icepop.icepop_loss"}}},
    {"orchestrator": {"monitors": {"file": {"path": "logs/metrics.jsonl"}}},
     "trainer": {"trace_path": "outputs/trace", "model": {"conversion_dir": "outputs/hf"}}},
    {"env_vars": {"TRITON_CACHE_DIR": ".cache/triton", "NCCL_DEBUG_SUBSYS": "INIT"}},
], ids=["loopback key", "loopback headers", "default client", "icepop", "relative paths",
        "relative cache"])
def test_the_same_settings_inside_the_run_or_on_loopback_pass(override):
    from whileai_core.prime_rl import validate_config

    check = validate_config(override)
    assert not [e for e in check.errors if "refused by whileai" in e], check.errors


def test_a_key_to_an_admin_url_elsewhere_and_a_prime_rl_reexport_are_refused():
    from whileai_core.prime_rl import validate_config

    for override, said in (
            ({"orchestrator": {"algo": {"teacher": {
                "base_url": "http://localhost:8001/v1", "api_key_var": "HF_TOKEN",
                "admin_base_url": ["http://collector.example/admin"]}}}}, "admin_base_url[0]"),
            # a prefix rule on prime_rl. would admit this: subprocess.Popen, re-exported
            ({"trainer": {"loss": {"type": "custom",
                                   "import_path": "prime_rl.entrypoints.rl.Popen"}}},
             "`trainer.loss.import_path`"),
            ({"orchestrator": {"train": {"source": [{"env": {"taskset": {
                "system_prompt": "/home/user/.ssh/id_rsa"}}}]}}},
             "`orchestrator.train.source[0].env.taskset.system_prompt`"),
            ({"output_dir": "/etc"}, "`output_dir`"),
            ({"run": {"name": "../../victim"}}, "`run.name`"),
            ({"env_vars": {"TRITON_CACHE_DIR": "/home/user/planted"}}, "a folder outside the run")):
        refused = [e for e in validate_config(override).errors if "refused by whileai" in e]
        assert any(said in e for e in refused), (override, refused)



@pytest.mark.parametrize("key, value", [
    ("worker_extension_cls", "attacker.module.Ext"), ("worker_cls", "os.system"),
    ("logits_processors", ["attacker.lp:Proc"]), ("scheduler_cls", "attacker.Sched"),
    ("distributed_executor_backend", "attacker.Backend")])
def test_a_vllm_engine_key_that_names_code_is_refused(key, value):
    # [inference.vllm] passes keys prime-rl does not know to vLLM's engine, and these import
    # the class or function they name inside the inference server
    from whileai_core.prime_rl import validate_config

    refused = [e for e in validate_config({"inference": {"vllm": {key: value}}}).errors
               if "refused by whileai" in e]
    assert any(f"`inference.vllm.{key}`" in e and ". Fix: " in e for e in refused), refused
    builtin = {"distributed_executor_backend": "mp", "worker_cls": "auto"}.get(key)
    if builtin:   # vLLM's own values pass
        kept = validate_config({"inference": {"vllm": {key: builtin}}}).errors
        assert not [e for e in kept if "refused by whileai" in e], kept
