"""Shared pieces of the run-registry tests: recipe-like scripts in a temp folder, a poller.

The recipes here follow the recipes' contract (``run.py --smoke --out DIR`` writes
``DIR/results.json``) so the local backend is tested without the real recipes' CPU training.
Every started recipe appends its ``--out`` folder to ``launches.log`` beside the recipes
(``O_APPEND``: one whole line per write), so a test can count how many times each run really ran.
"""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path

from whileai_core.runs import run_status

PYTHON = sys.executable

# Before: task t<i> passes i % 2 of 4 rollouts; after: 2 + i % 2 of 4. Every task moves by exactly
# +2/4, so (by hand) mean_before = (5 * 0 + 5 * 0.25) / 10 = 0.125, mean_after = (5 * 0.5 +
# 5 * 0.75) / 10 = 0.625, delta = +0.5 on every task, and every bootstrap resample of tasks has
# mean delta 0.5: the interval is [0.5, 0.5] and excludes 0.
_ROWS = """
before = [{"task_id": f"t{i}", "reward": float(j < i % 2)} for i in range(10) for j in range(4)]
after = [{"task_id": f"t{i}", "reward": float(j < 2 + i % 2)} for i in range(10) for j in range(4)]
"""

_HEAD = """
import argparse, json, os, pathlib, sys, time


def modal_call(run_name, config_path):
    # the recipes' hook: which deployed Modal function to spawn, with what
    config = pathlib.Path(config_path).read_text() if config_path else None
    return {"app": "whileai-test-" + pathlib.Path(__file__).parent.name, "function": "train",
            "args": [run_name], "kwargs": {"config_toml": config}}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    assert args.smoke, "the local backend must pass --smoke"
    log = pathlib.Path(__file__).resolve().parents[1] / "launches.log"
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, (args.out + "\\n").encode())
    os.close(fd)
    print("started", args.out, flush=True)
"""

_TAIL = """

if __name__ == "__main__":
    main()
"""

BODIES = {
    # held-out rows before and after: collect_run attaches the paired verdict
    "tiny": _ROWS + """
pathlib.Path(args.out, "results.json").write_text(json.dumps(
    {"steps": 2, "loss": 0.25, "before_rows": before, "after_rows": after}))
""",
    # results without rows
    "plain": """
pathlib.Path(args.out, "results.json").write_text(json.dumps({"steps": 1}))
""",
    # stands in for recipes/prime-rl, which runs prime-rl TOML configs on Modal
    "prime-rl": """
pathlib.Path(args.out, "results.json").write_text(json.dumps({"steps": 1}))
""",
    # runs until stopped
    "slow": """
pathlib.Path(args.out, "running").write_text("yes")
time.sleep(300)
""",
    "broken": """
print("loss went to nan at step 3", flush=True)
sys.exit(3)
""",
    "silent": """
print("finished without results", flush=True)
""",
}


def make_recipes(root: Path) -> Path:
    """A recipes folder with one run.py per entry of BODIES; returns it."""
    recipes = root / "recipes"
    for name, body in BODIES.items():
        folder = recipes / name
        folder.mkdir(parents=True, exist_ok=True)
        body = textwrap.indent(textwrap.dedent(body), "    ")
        (folder / "run.py").write_text(textwrap.dedent(_HEAD) + body + _TAIL)
    return recipes


def launches(recipes: Path) -> list[str]:
    log = recipes / "launches.log"
    return log.read_text().splitlines() if log.exists() else []


def wait_until_finished(run_id: str, state: Path, *, limit_s: float = 120.0):
    """Poll run_status until the run leaves launching/running (a hang guard, not a speed test)."""
    deadline = time.monotonic() + limit_s
    while True:
        record = run_status(run_id, state_dir=state)
        if record.status not in ("launching", "running"):
            return record
        if time.monotonic() > deadline:
            raise AssertionError(f"{run_id} still {record.status} after {limit_s} s: {record}")
        time.sleep(0.05)


def wait_for(path: Path, *, limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.02)


def rows_of(records: list) -> str:
    return json.dumps([r.to_dict() for r in records], indent=1)


def stub_modal_spawn(monkeypatch) -> list[str]:
    """Modal's token check passed and its spawn replaced by a stand-in that records the run and
    starts nothing; returns the ids it was asked to start."""
    from whileai_core.runs.modal_backend import ModalBackend

    started: list[str] = []

    def launch(self, record, target, run_dir, lock_fd, starting=None):
        if starting is not None:
            starting()
        started.append(record.id)
        return {"call_id": "fc-01ABCDEFGHJKMNPQRSTVWXYZ00"}

    monkeypatch.setattr(ModalBackend, "check_ready", lambda self, target=None: None)
    monkeypatch.setattr(ModalBackend, "launch", launch)
    return started
