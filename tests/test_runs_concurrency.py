"""Several processes launching and polling runs at once: no lost row, no duplicate, no double run.

Six processes wait at a start line (a file appearing), then each launches four shared runs (the
same recipe under the names shared-0..3, which every process launches) and one run of its own,
and polls every run it knows until all have finished. Each recipe start appends its output
folder to launches.log, so a run that really started twice would show up there twice.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections import Counter

from whileai_core.runs import Registry, list_runs
from test_runs_support import PYTHON, launches, make_recipes

WORKERS = 6
SHARED = [f"shared-{i}" for i in range(4)]

_WORKER = """
import json, sys, time
from pathlib import Path
from whileai_core.runs import launch_run, run_status

state, recipes, me, start = sys.argv[1:5]
while not Path(start).exists():
    time.sleep(0.001)
names = [f"shared-{i}" for i in range(4)] + [f"own-{me}"]
ids, actions = {}, {}
for name in names:
    launched = launch_run("tiny", backend="local", name=name, confirm=True, state_dir=state,
                          recipes_dir=recipes)
    ids[name], actions[name] = launched.run.id, launched.action
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    statuses = {n: run_status(i, state_dir=state).status for n, i in ids.items()}
    if all(s not in ("launching", "running") for s in statuses.values()):
        break
    time.sleep(0.05)  # a poller's pace: a loop without one starved SQLite's lock on 2 busy cores
print(json.dumps({"ids": ids, "actions": actions, "statuses": statuses}))
"""


def test_concurrent_launches_and_updates_lose_and_duplicate_nothing(tmp_path):
    recipes = make_recipes(tmp_path)
    state, start = tmp_path / "state", tmp_path / "start"
    workers = [subprocess.Popen([PYTHON, "-c", textwrap.dedent(_WORKER), str(state), str(recipes),
                                 str(n), str(start)], stdout=subprocess.PIPE, text=True)
               for n in range(WORKERS)]
    start.write_text("go")
    reports = []
    for worker in workers:
        out, _ = worker.communicate(timeout=300)
        assert worker.returncode == 0
        reports.append(json.loads(out))

    expected_names = set(SHARED) | {f"own-{n}" for n in range(WORKERS)}
    runs = Registry(state).all()
    # no lost rows, no duplicated rows
    assert sorted(r.name for r in runs) == sorted(expected_names)
    assert len({r.id for r in runs}) == len(expected_names)
    # every process got the same id for the same name
    for name in SHARED:
        assert len({report["ids"][name] for report in reports}) == 1
    # each shared run was launched by exactly one process; the others got it back as existing
    for name in SHARED:
        actions = Counter(report["actions"][name] for report in reports)
        assert actions == {"launched": 1, "existing": WORKERS - 1}, (name, actions)
    # each run's recipe started exactly once, and every run finished and was recorded
    started = Counter(launches(recipes))
    assert len(started) == len(expected_names) and set(started.values()) == {1}
    assert {r.status for r in list_runs(state_dir=state).runs} == {"succeeded"}
    for report in reports:
        assert set(report["statuses"].values()) == {"succeeded"}
