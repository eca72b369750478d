"""The MCP form of every skill, run: a cold agent with only the server follows the steps.

For each skill, a fresh workspace gets the files its fixtures prepare (``prepare(workdir)``,
the same stand-ins check.py gives the python blocks), and every ``{"tool": ...}`` line of its
```mcp blocks is called in order through an in-process ``mcp.Client``: each must answer without
a tool error. For the skills whose agent steps are emulated here (``AGENT``: what the agent would do with
its own judge, sampler and eval harness, done with the fixtures' stand-ins and written where the
agent line says), every call runs, and the MCP answers agree with what the python blocks get.
For the others, a line that reads a file only the agent makes (an ``{"agent": ...}`` line before
it) is skipped, and so is anything that reads what a skipped call would have written; every other
call must run.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

import check
from server.app import build_server

ROOT = Path(__file__).resolve().parents[1]
SKILLS = sorted(p.parent for p in (ROOT / "skills").glob("*/SKILL.md"))
OUTPUTS = ("out", "holdout_out", "train_out", "out_dir")
# A run id in an MCP form is the example id of the tool descriptions; an agent uses the id
# launch_run answered, and so does this test (RUN_ID: the last one launched).
EXAMPLE_RUN_ID, RUN_ID = "run-0123456789ab", "_launched_run_id"
MISSING = re.compile(r"^Error executing tool \w+: (\S+) \(`\w+`\): no such file")


def _paths(arguments: dict) -> set[str]:
    found = set()
    for value in arguments.values():
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, list):
            found.update(v for v in value if isinstance(v, str))
    return found


def _write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# --- the agent's own steps, done with the fixtures' stand-ins (in the order of the agent lines) --

def _judge_grades(ws: Path, ns: dict) -> None:
    items = _read(ws / "labels.jsonl")
    rubric = "\n".join(ns["RUBRIC_CLAUSES"])
    for item in items:
        item["grades"] = {name: judge(item, rubric=rubric, temperature=0.0)
                          for name, judge in ns["judges"].items()}
    _write(ws / "graded_labels.jsonl", items)


def _ablation_grades(ws: Path, ns: dict) -> None:
    from whileai_core import audit_judge

    items = _read(ws / "labels.jsonl")
    judge = ns["judges"][audit_judge(_read(ws / "graded_labels.jsonl")).best]
    clauses = ns["RUBRIC_CLAUSES"]
    for item in items:
        item["grade"] = judge(item, rubric="\n".join(clauses), temperature=0.0)
        item["without"] = {c: judge(item, rubric="\n".join(x for x in clauses if x != c),
                                    temperature=0.0) for c in clauses}
    _write(ws / "ablation.jsonl", items)


def _pair_picks(ws: Path, ns: dict) -> None:
    judge = ns["pairwise"]
    _write(ws / "picks.jsonl", [{"id": p["id"], "forward": judge(p["a"], p["b"], temperature=0.0),
                                 "reversed": judge(p["b"], p["a"], temperature=0.0)}
                                for p in ns["pairs"]])


def _eval_runs(ws: Path, ns: dict) -> None:
    held = json.loads((ws / "holdout_tasks.json").read_text())
    for r in range(3):
        _write(ws / f"run{r}.jsonl", ns["evaluate"](ns["MODEL"], held, k=4, run=r))


def _attempts(ws: Path, ns: dict) -> None:
    from whileai_core import rejection_sample

    _write(ws / "attempts.jsonl", rejection_sample(_read(ws / "asks.jsonl"), ns["attempt"],
                                                   ns["grade"], attempts=16))


def _after_runs(ws: Path, ns: dict) -> None:
    held = json.loads((ws / "holdout_tasks.json").read_text())
    evaluate = ns["evaluate"]
    _write(ws / "after.jsonl", evaluate(ns["TRAINED"], held, k=4, run=0))
    _write(ws / "general_before.jsonl", evaluate(ns["MODEL"], ns["GENERAL_TASKS"], k=4,
                                                 suite="general"))
    _write(ws / "general_after.jsonl", evaluate(ns["TRAINED"], ns["GENERAL_TASKS"], k=4,
                                                suite="general"))


def _sft_data_folder(ws: Path, ns: dict) -> None:
    """sft-from-traces step 7: the agent's grader file and the model to train, in the folder."""
    import shutil

    shutil.copy(ws / "grader.py", ws / "sft" / "grader.py")
    (ws / "sft" / "settings.json").write_text(json.dumps({"model": ns["MODEL"]}))


def _wait_for_run(ws: Path, ns: dict) -> None:
    """sft-from-traces step 8: poll the run launch_run answered until it has finished."""
    import time

    from whileai_core import run_status

    deadline = time.monotonic() + 600
    while run_status(ns[RUN_ID]).status in ("launching", "running"):
        assert time.monotonic() < deadline, f"run {ns[RUN_ID]} did not finish in 600 s"
        time.sleep(1)


def _constructed(ws: Path, ns: dict) -> None:
    """dpo-pairs step 3: the failure no_id is about, written by the agent for each no-id
    training task and graded with its grader."""
    rows = [r for r in _read(ws / "train.jsonl") if r["category"] == "no_id"]
    tasks = {r["task_id"]: r for r in rows}
    _write(ws / "constructed.jsonl", [
        {"task_id": tid, "rejected": ns["invent_call"](t),
         "reward": ns["grade"](t, ns["invent_call"](t))} for tid, t in tasks.items()])


def _nothing(ws: Path, ns: dict) -> None:
    """An agent step that writes no file (reading a count, choosing from an answer)."""


AGENT = {
    "audit-your-judge": [_nothing, _judge_grades, _ablation_grades, _pair_picks],
    "sft-from-traces": [_eval_runs, _attempts, _sft_data_folder, _wait_for_run, _after_runs],
    "pick-a-method": [_nothing, _nothing],
    "dpo-pairs": [_constructed, _wait_for_run],
    "grpo-verifier": [_wait_for_run],
    "manage-experiments": [_wait_for_run],
}


def run_forms(skill: Path, workdir: Path) -> tuple[list[str], list[str], list[str]]:
    """(calls that ran, calls skipped because the agent makes their input, failures)."""
    sys.path.insert(0, str(ROOT))
    fixtures = check._load_fixtures(skill)
    ns = fixtures.prepare(workdir)
    agent_steps = list(AGENT.get(skill.name, ()))
    steps = check.steps((skill / "SKILL.md").read_text(encoding="utf-8"))
    server = build_server(workdir, skills_dir=ROOT / "skills")
    ran, skipped, failed = [], [], []

    async def go():
        unavailable: set[str] = set()
        agent_before = False
        async with Client(server) as client:
            for step in steps:
                for line in step.mcp:
                    data = line.data
                    where = f"{skill.name}/SKILL.md:{line.line}"
                    if "agent" in data:
                        agent_before = True
                        if skill.name in AGENT:
                            assert agent_steps, f"{where}: an agent line this test does not know"
                            agent_steps.pop(0)(workdir, ns)
                        continue
                    arguments = {k: ns.get(RUN_ID, v) if v == EXAMPLE_RUN_ID else v
                                 for k, v in data.get("arguments", {}).items()}
                    if _paths(arguments) & unavailable:
                        skipped.append(where)
                        unavailable.update(str(arguments[k]) for k in OUTPUTS if k in arguments)
                        continue
                    result = await client.call_tool(data["tool"], arguments)
                    text = result.content[0].text if result.content else ""
                    missing = MISSING.match(text) if result.is_error else None
                    if missing and agent_before:
                        skipped.append(where)       # a file the agent makes
                        unavailable.update(str(arguments[k]) for k in OUTPUTS if k in arguments)
                    elif result.is_error:
                        failed.append(f"{where}: {text}")
                    else:
                        ran.append(where)
                        run = (result.structured_content or {}).get("run") or {}
                        if data["tool"] == "launch_run" and run.get("id"):
                            ns[RUN_ID] = run["id"]

    anyio.run(go)
    assert not agent_steps, f"{skill.name}: agent steps left over: {agent_steps}"
    return ran, skipped, failed


@pytest.mark.slow
@pytest.mark.parametrize("skill", SKILLS, ids=[p.name for p in SKILLS])
def test_the_mcp_form_of_every_step_runs(skill, tmp_path, monkeypatch):
    monkeypatch.setenv("WHILEAI_STATE_DIR", str(tmp_path / "state"))
    workdir = tmp_path / "ws"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    ran, skipped, failed = run_forms(skill, workdir)
    assert not failed, "\n".join(failed)
    if skill.name in AGENT:
        assert ran and not skipped, skipped
    else:
        assert len(ran) >= max(1, len(skipped)), (ran, skipped)
