"""Re-try the fourth red-team round's reward cases as the red team ran them, and print totals.

    .venv/bin/python bench/redteam_rewards.py [--tries 5]

Each case runs in a scratch folder with fake secrets; it counts what the issue counted:

- code run unasked: a command with arguments or an installed program / build script given as
  the reward whose code ran anyway (it leaves a marker file);
- leaks: a reward under a real ``whileai-mcp`` (stdio, fake keys in its environment) that finds
  a key in any ``/proc/*/environ``; the fake value in any answer or error;
- memory: the peak RSS of a process running one reward that writes 3 GB to stderr, or to stdout
  (``VmHWM`` of a fresh process, beside one whose reward prints one number; before: 3.1 GB and
  4.2 GB);
- escapes: processes left alive after a reward that forks 40 ``setsid``'d sleepers and times out
  (before: 40 of 40 each try), or finishes; a fork bomb's processes left after it;
- configs: prime-rl configs that delete a folder with ``clean = true`` or set a variable that
  runs code, accepted by ``validate_config``.

The unit tests (tests/test_redteam4.py) hold each case once; this runs them repeatedly and at
the red team's sizes, which a test must not (seconds, not minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MCP = Path(sys.executable).with_name("whileai-mcp")
MARK = "open('pwned', 'w')\nimport sys\nfor line in sys.stdin: print(0.0)\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def code_run_unasked() -> tuple[int, int]:
    """(cases, cases whose code ran)."""
    from whileai_core.errors import WhileaiError
    from whileai_core.hacking.reward import reward_runner, reward_spec
    from whileai_core.safepath import Root

    ws = Path(tempfile.mkdtemp(prefix="r4-argv-"))
    files = {"lib/torch/distributed/run.py": MARK, "lib/torch-2.5.1.dist-info/RECORD": "",
             "__pypackages__/3.11/lib/pip/__main__.py": MARK, "setup.py": MARK,
             ".venv/pyvenv.cfg": "", ".venv/bin/jp.py": MARK,
             ".venv/lib/python3.11/site-packages/pip/__main__.py": MARK, "grade.py": MARK,
             "pyproject.toml": "[build-system]\nbackend-path = ['_build']\n",
             "_build/backend.py": MARK}
    for name, text in files.items():
        _write(ws / name, text)
    scripts = [n for n, t in files.items() if t == MARK and n != "grade.py"]
    rewards = [["python", "lib/torch/distributed/run.py", "--no-python", "sh", "-c", "id"],
               ["python", "__pypackages__/3.11/lib/pip/__main__.py", "config", "set", "x", "y"],
               ["python", "setup.py", "egg_info"], ["python", ".venv/bin/jp.py", "-f", "/x"],
               ["python", "grade.py", "0.5"], "python grade.py --flag",
               [".venv/bin/pip", "download", "six"], ["sh", "-c", "id"], ["python", "-c", "1"],
               ["python", "-m", "pip"]]
    rewards += [["python", s] for s in scripts] + [f"{s}:main" for s in scripts]
    ran = 0
    root = Root(ws)
    for reward in rewards:
        try:
            reward_runner(reward_spec(reward, root), root=ws)([{"prompt": "p", "completion": "c"}])
        except WhileaiError:
            pass
        if (ws / "pwned").exists():
            ran += 1
            (ws / "pwned").unlink()
    return len(rewards), ran


SPY = """
import os, sys
mark = {mark!r}.encode()
hits = 0
for pid in os.listdir('/proc'):
    if pid.isdigit():
        try:
            hits += mark in open(f'/proc/{{pid}}/environ', 'rb').read()
        except OSError:
            pass
for line in sys.stdin:
    print(float(hits))
"""


def leaks(tries: int) -> tuple[int, int, int]:
    """(tries, tries in which the reward found a key in /proc, tries whose answer showed one)."""
    import anyio
    from mcp import Client, StdioServerParameters

    found = shown = 0
    for _ in range(tries):
        mark = f"R4LEAK{uuid.uuid4().hex}"
        ws = Path(tempfile.mkdtemp(prefix="r4-leak-"))
        _write(ws / "spy.py", SPY.format(mark=mark))
        (ws / "tasks.jsonl").write_text('{"task_id": "t1", "prompt": "p"}\n')
        env = {**os.environ, "OPENAI_API_KEY": f"sk-{mark}", "MODAL_TOKEN_SECRET": f"as-{mark}",
               "WHILEAI_MCP_TOKEN": f"tok-{mark}"}

        async def go():
            params = StdioServerParameters(command=str(MCP), env=env, cwd=str(ws),
                                           args=["--root", str(ws), "--toolsets", "all"])
            async with Client(params) as client:
                return await client.call_tool("cheat_probes", {
                    "reward": ["python", "spy.py"], "tasks": "tasks.jsonl", "probes": ["empty"]})

        result = anyio.run(go)
        text = json.dumps(result.structured_content) + result.content[0].text
        shown += mark in text
        probe = ((result.structured_content or {}).get("probes") or [{}])[0]
        found += bool(probe.get("mean_reward"))  # the spy's reward: processes holding a key
    return tries, found, shown


PEAK = """
import json, sys
from pathlib import Path
from whileai_core.errors import WhileaiError
from whileai_core.hacking.reward import reward_runner
ws = Path(sys.argv[1])
try:
    reward_runner(["python", "loud.py"], root=ws)([{"prompt": "p", "completion": "c"}])
    how = "ran"
except WhileaiError as err:
    how = "stopped" if "printed more than" in str(err) else str(err)[:200]
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec (the bench's own size would show)
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps([how, hwm]))
"""


def memory(stream: str, gigabytes: float) -> tuple[str, float]:
    """(how the reward ended, the peak RSS of the process that ran it, MB)."""
    ws = Path(tempfile.mkdtemp(prefix="r4-out-"))
    blocks = int(gigabytes * 1024)
    _write(ws / "loud.py", f"import sys\nsys.stdin.read()\nblock = b'1\\n' * (1 << 19)\n"
                           f"for _ in range({blocks}):\n    sys.{stream}.buffer.write(block)\n"
                           "print(1.0)\n")
    out = subprocess.run([sys.executable, "-c", PEAK, str(ws)], capture_output=True, text=True,
                         timeout=600)
    how, kb = json.loads(out.stdout)
    return how, int(kb) / 1024


SLEEPERS = """
import os, time
def score(prompts, completions, wait, **kw):
    for i in range(40):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                open(f'pid{i}', 'w').write(str(os.getpid()))
                time.sleep(300)
            os._exit(0)
    while len([f for f in os.listdir('.') if f.startswith('pid')]) < 40:
        time.sleep(0.01)
    time.sleep(wait[0])
    return [1.0] * len(prompts)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def escapes(tries: int, wait: float, timeout_s: float) -> tuple[int, int]:
    """(sleepers started, sleepers alive 1 s after the reward's call returned)."""
    from whileai_core.errors import WhileaiError
    from whileai_core.hacking.reward import reward_runner

    started = alive = 0
    for _ in range(tries):
        ws = Path(tempfile.mkdtemp(prefix="r4-tree-"))
        _write(ws / "s.py", SLEEPERS)
        try:
            reward_runner("s.py:score", root=ws, timeout_s=timeout_s)(
                [{"prompt": "p", "completion": "c", "wait": wait}])
        except WhileaiError:
            pass
        time.sleep(1)
        pids = [int(p.read_text()) for p in ws.glob("pid*")]
        started += len(pids)
        alive += sum(_alive(p) for p in pids)
        for p in pids:  # the bench cleans up after a failure of the product
            if _alive(p):
                os.kill(p, 9)
    return started, alive


BOMB = """
import os, time
def score(prompts, completions, **kw):
    made = 0
    for _ in range(2000):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(120)
            os._exit(0)
        made += 1
    return [float(made)]
"""


def fork_bomb() -> tuple[str, int]:
    """(how it ended, processes whose working directory is the bomb's folder 1 s after)."""
    from whileai_core.errors import WhileaiError
    from whileai_core.hacking.reward import reward_runner

    ws = Path(tempfile.mkdtemp(prefix="r4-bomb-"))
    _write(ws / "b.py", BOMB)
    os.environ["WHILEAI_CHILD_PROCESSES"] = "64"
    try:
        how = f"made {reward_runner('b.py:score', root=ws, timeout_s=60)([{}])[0]:.0f}"
    except WhileaiError as err:
        how = "stopped: " + str(err).split(";")[0][:100]
    finally:
        del os.environ["WHILEAI_CHILD_PROCESSES"]
    time.sleep(1)
    left = 0
    for name in os.listdir("/proc"):
        try:
            left += name.isdigit() and os.readlink(f"/proc/{name}/cwd") == str(ws) \
                and _alive(int(name))
        except OSError:
            pass
    return how, left


def configs() -> tuple[int, int]:
    from whileai_core.prime_rl import validate_config

    bad = [{"clean": True, "ckpt": {"output_dir": "/home/user"}},
           {"clean": True, "ckpt": {"output_dir": "../.."}}, {"clean": True, "output_dir": "/"},
           {"clean": True, "run": {"name": "."}}, {"clean": True, "run": {"dir": ".."}}]
    bad += [{"env_vars": {name: "x"}} for name in (
        "GIT_SSH_COMMAND", "GIT_SSH", "GIT_CONFIG_GLOBAL", "GIT_EXEC_PATH", "SSH_ASKPASS",
        "PIP_INDEX_URL", "PIP_CONFIG_FILE", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
        "LD_PRELOAD", "LD_LIBRARY_PATH", "BASH_ENV", "ENV", "PERL5OPT", "NODE_OPTIONS",
        "NCCL_NET_PLUGIN", "TRITON_LIBCUDA_PATH", "HF_ENDPOINT", "HF_TOKEN", "WANDB_API_KEY")]
    accepted = sum(not [e for e in validate_config(c).errors if "refused by whileai" in e]
                   for c in bad)
    return len(bad), accepted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tries", type=int, default=5)
    args = parser.parse_args(argv)
    cases, ran = code_run_unasked()
    print(f"arguments and installed programs: {cases} cases, code ran in {ran}")
    if MCP.exists() and Path("/proc/self/environ").exists():
        tries, found, shown = leaks(args.tries)
        print(f"/proc secrets through a real whileai-mcp: {tries} tries, a key found in {found}, "
              f"a key in the answer in {shown}")
    _, base = memory("stdout", 0.0)  # the baseline: the same process, a reward printing 1.0
    for stream in ("stderr", "stdout"):
        how, mb = memory(stream, 3.0)
        print(f"3 GB to {stream}: {how}; peak RSS of the process that ran it {mb:.0f} MB "
              f"(a reward printing one number: {base:.0f} MB)")
    started, alive = escapes(args.tries, wait=300, timeout_s=2)
    print(f"setsid'd sleepers at a 2 s timeout: {started} started over {args.tries} tries, "
          f"{alive} alive after")
    started, alive = escapes(args.tries, wait=0, timeout_s=60)
    print(f"setsid'd sleepers left by a reward that finished: {started} started, {alive} alive")
    how, left = fork_bomb()
    print(f"fork bomb (2,000 forks, limit 64, uid {os.getuid()}): {how}; {left} left after")
    total, accepted = configs()
    print(f"prime-rl configs that delete or run code: {total}, accepted {accepted}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
