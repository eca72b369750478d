"""Experiments registered before their runs: the rule as data, the verdict collect_run gives by
it, every other reading flagged, five-line records, export, archive, and the registry's
migration. Runs are recipe-like scripts (the local backend) whose held-out rows are written here,
so each verdict is derived by hand: a Hoeffding bound (any 95% interval of a mean of n values in
a range of width w lies within w x sqrt(ln(40) / (2n)) of it) says where its interval must lie."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

import pytest

from test_runs_support import wait_until_finished
from whileai_core import (archive_experiment, collect_run, export_experiments, freeze_holdout,
                          launch_run, list_experiments, record_run, register_experiment)
from whileai_core.cli import main
from whileai_core.errors import ArgumentError, ConfigError
from whileai_core.experiments import parse_rule
from whileai_core.runs.registry import REGISTRY_FILE, SCHEMA_VERSION, Registry

RULE = {"ship_if": [{"kind": "delta_above", "bound": 0.05},
                    {"kind": "no_category_drop", "field": "category", "beyond": "noise_band"}]}

# "ship": 40 tasks (a: 28, b: 12), 4 rollouts each; before, task i passes i % 2 of 4; after,
# 3 + (i // 2) % 2 of 4: every per-task delta is in [+0.5, +1], so the mean delta is >= 0.5 and
# (Hoeffding, width 0.5, n = 40: 0.5 x 0.304 = 0.15) its interval lies above 0.35 > 0.05, and no
# category falls. "drop": the same a tasks; the 12 b tasks go from 3 + i % 2 to (i // 2) % 2 of 4
# (deltas in [-1, -0.5]): b's interval lies below -0.5 + 0.5 x 0.556 = -0.22 < 0 and its delta
# (<= -0.5) is past the band (t2 x sqrt(2) x 0.02 = 0.12): the rule fails on b.
RESULTS = """
cat = lambda i: "a" if i < 28 else "b"
def passes(i, drop, after):
    if drop and cat(i) == "b":
        return (i // 2) % 2 if after else 3 + i % 2
    return 3 + (i // 2) % 2 if after else i % 2
# the asks the rows carry: the frozen set's ("ask <i>"), unless asks.txt beside the recipes
# says other words ("other ask {}") or none at all (an empty file)
asks = pathlib.Path(__file__).resolve().parents[1] / "asks.txt"
ask = asks.read_text() if asks.exists() else "ask {}"
def rows(drop, after):
    return [{"task_id": f"t{i:02d}", "category": cat(i),
             **({"prompt": ask.format(i)} if ask else {}),
             "reward": float(j < passes(i, drop, after))} for i in range(40) for j in range(4)]
DROP = pathlib.Path(__file__).parent.name == "drop"
results = {"before_rows": rows(DROP, False), "after_rows": rows(DROP, True)}
name = pathlib.Path(__file__).resolve().parents[1] / "name.txt"
if name.exists():
    results["data"] = {"holdout_name": name.read_text().strip()}
pathlib.Path(args.out, "results.json").write_text(json.dumps(results))
"""

HEAD = """
import argparse, json, os, pathlib


def modal_call(run_name, config_path):
    return {"app": "x", "function": "train", "args": [], "kwargs": {}}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
"""


# "fit": a recipe that trains on a data folder (its modal_call takes `data`) and, like the SFT
# and DPO recipes, says which held-out set the folder holds (its data_holdout hook: the content
# name of the folder's holdout*.jsonl, None when that file is not one record per task); its run
# scores the "ship" rows and names that set in its results.
FIT = """
import argparse, json, pathlib
from whileai_core import eval_fingerprint
from whileai_core.errors import RowsError


def modal_call(run_name, config_path, data=None):
    return {"app": "x", "function": "train", "args": [], "kwargs": {}}


def describe_data(data):
    return "judged on " + ", ".join(p.name for p in pathlib.Path(data).glob("holdout*.jsonl"))


def data_holdout(data):
    (held,) = pathlib.Path(data).glob("holdout*.jsonl")
    try:
        return eval_fingerprint(held).name
    except RowsError:  # several records per task: a held-out file, but not a task set
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out", required=True)
    parser.add_argument("--data", required=True)
    args = parser.parse_args()
    rows = lambda after: [{"task_id": f"t{i:02d}", "category": "a" if i < 28 else "b",
                           "reward": float(j < (3 + (i // 2) % 2 if after else i % 2))}
                          for i in range(40) for j in range(4)]
    results = {"before_rows": rows(False), "after_rows": rows(True),
               "data": {"holdout_name": data_holdout(args.data)}}
    pathlib.Path(args.out, "results.json").write_text(json.dumps(results))


if __name__ == "__main__":
    main()
"""


@pytest.fixture
def lab(tmp_path):
    recipes = tmp_path / "recipes"
    for name in ("ship", "drop"):
        (recipes / name).mkdir(parents=True)
        (recipes / name / "run.py").write_text(
            textwrap.dedent(HEAD) + textwrap.indent(textwrap.dedent(RESULTS), "    ")
            + "\n\nif __name__ == '__main__':\n    main()\n")
    (recipes / "fit").mkdir()
    (recipes / "fit" / "run.py").write_text(FIT)
    tasks = [{"task_id": f"t{i:02d}", "category": "a" if i < 28 else "b",
              "prompt": f"ask {i}"} for i in range(40)]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    frozen = freeze_holdout(tmp_path / "tasks.jsonl", tmp_path / "evals")
    edited = [dict(t, prompt=t["prompt"] + "?") for t in tasks]
    (tmp_path / "edited.jsonl").write_text("".join(json.dumps(t) + "\n" for t in edited))
    return {"root": tmp_path, "recipes": recipes, "state": tmp_path / "state",
            "frozen": frozen}


def _register(lab, name="exp", **over):
    args = dict(question="Does it move?", hypothesis="it moves by 0.1",
                arms={"treat": "the change", "control": "no change"},
                holdout=lab["frozen"].path, rule=RULE, run_std=0.02, noise_runs=3,
                state_dir=lab["state"])
    args.update(over)
    return register_experiment(name, **args)


def _run(lab, recipe, **launch):
    run = launch_run(recipe, backend="local", confirm=True, state_dir=lab["state"],
                     recipes_dir=lab["recipes"], **launch).run
    assert wait_until_finished(run.id, lab["state"]).status == "succeeded"
    return run


def test_the_verdict_follows_the_registered_rule(lab):
    _register(lab)
    ship = _run(lab, "ship", experiment="exp", arm="treat")
    got = collect_run(ship.id, state_dir=lab["state"])
    d = got.decision
    assert d.decision == "ship" and d.basis == "as_registered" and d.deviations == []
    assert got.comparison.ci[0] > 0.35 and got.comparison.noise_band is not None
    assert d.holdout == lab["frozen"].name   # checked by the rows' task ids and asks
    drop = _run(lab, "drop", experiment="exp", arm="treat")
    d = collect_run(drop.id, state_dir=lab["state"]).decision
    assert d.decision == "do_not_ship" and d.basis == "as_registered"
    fails = [c for c in d.clauses if c.holds is False]
    assert [c.clause for c in fails][-1].startswith("no category drops")
    assert "b -" in fails[-1].evidence


def test_other_asks_under_the_same_task_ids_are_not_the_registered_reading(lab):
    """An arm scored on another held-out set under the same task ids read
    `as_registered` with no deviation. The asks are compared by content now."""
    _register(lab)
    (lab["recipes"] / "asks.txt").write_text("other ask {}")  # same ids, other prompts
    other = _run(lab, "ship", experiment="exp", arm="treat", name="other-asks")
    d = collect_run(other.id, state_dir=lab["state"]).decision
    assert d.basis == "deviates" and d.decision == "ship"
    assert d.deviations == [f"held-out set: the run's rows carry other `prompt` than "
                            f"{lab['frozen'].name} under the same 40 task ids: it was scored "
                            "on other asks"]
    # rows that carry no asks at all: read on ids (and category) only, not as registered
    (lab["recipes"] / "asks.txt").write_text("")
    bare = _run(lab, "ship", experiment="exp", arm="treat", name="bare")
    d = collect_run(bare.id, state_dir=lab["state"]).decision
    assert d.basis == "deviates" and len(d.deviations) == 1
    assert d.deviations[0].startswith("held-out set: checked by its task ids and `category` "
                                      "only: the run names no held-out set and its rows do not "
                                      "carry `prompt`")


def test_a_task_whose_rows_disagree_on_its_ask_is_another_set():
    from whileai_core.experiments.store import CONFLICT, fields_sha256

    tasks = [{"task_id": "a", "prompt": "x"}, {"task_id": "b", "prompt": "y"}]
    rows = [{"task_id": "a", "prompt": "x", "reward": 1}, {"task_id": "a", "prompt": "x",
            "reward": 0}, {"task_id": "b", "prompt": "y", "reward": 1}]
    # by hand: sha256 of "a\t\"x\"\nb\t\"y\"\n", the same from the set and from its rows
    import hashlib

    expected = hashlib.sha256(b'a\t"x"\nb\t"y"\n').hexdigest()
    assert fields_sha256(tasks) == {"prompt": expected} == fields_sha256(rows, ["prompt"])
    rows[1]["prompt"] = "z"
    assert fields_sha256(rows, ["prompt"]) == {"prompt": CONFLICT}


def test_collecting_against_another_held_out_set_says_so(lab):
    _register(lab)
    run = _run(lab, "ship", experiment="exp", arm="treat")
    other = collect_run(run.id, holdout=lab["root"] / "edited.jsonl", state_dir=lab["state"])
    d = other.decision
    assert d.basis == "deviates" and d.decision == "ship"
    assert d.deviations == [f"held-out set: read on {d.holdout}, registered "
                            f"{lab['frozen'].name}"] and d.holdout != lab["frozen"].name
    # the run's own results naming another set are flagged the same way
    (lab["recipes"] / "name.txt").write_text("holdout-000000000000")
    named = _run(lab, "ship", experiment="exp", arm="treat", name="named")
    d = collect_run(named.id, state_dir=lab["state"]).decision
    assert d.basis == "deviates" and "read on holdout-000000000000" in d.deviations[0]


def test_the_registered_name_given_at_collection_cannot_hide_the_runs_own_set(lab):
    # found from outside: a run whose results name another held-out set, collected with the
    # registered file as `holdout`, read "as_registered"; the run's own record must still count
    _register(lab)
    (lab["recipes"] / "name.txt").write_text("holdout-000000000000")
    named = _run(lab, "ship", experiment="exp", arm="treat", name="named")
    d = collect_run(named.id, holdout=lab["frozen"].path, state_dir=lab["state"]).decision
    assert d.basis == "deviates"
    assert d.deviations == ["held-out set: the run's results name holdout-000000000000, "
                            f"registered {lab['frozen'].name}"]
    # a run naming no set is checked by its rows' task ids even when the registered file is
    # given: the registration holds t00..t19, the run scored t00..t39 (40 tasks)
    (lab["recipes"] / "name.txt").unlink()
    half = lab["root"] / "half.jsonl"
    half.write_text("".join(line + "\n" for line in
                            (lab["root"] / "tasks.jsonl").read_text().splitlines()[:20]))
    small = freeze_holdout(half, lab["root"] / "evals")
    _register(lab, name="half", holdout=small.path)
    run = _run(lab, "ship", experiment="half", arm="treat", name="half")
    d = collect_run(run.id, holdout=small.path, state_dir=lab["state"]).decision
    assert d.basis == "deviates" and d.deviations == [
        f"held-out set: the run's held-out rows are 40 tasks that are not the 20 tasks of "
        f"{small.name}"]


def test_another_metric_or_rule_is_flagged_and_no_registration_says_so(lab):
    _register(lab)
    run = _run(lab, "ship", experiment="exp", arm="treat")
    reward = collect_run(run.id, metric="reward", state_dir=lab["state"]).decision
    assert reward.basis == "deviates" and reward.metric == "reward"
    assert reward.deviations == ["metric: read on 'reward', registered 'pass'"]
    loose = {"ship_if": [{"kind": "delta_above", "bound": 0.0}]}
    ruled = collect_run(run.id, rule=loose, state_dir=lab["state"]).decision
    assert ruled.basis == "deviates" and ruled.deviations[0].startswith("rule: read by")
    plain = _run(lab, "ship", name="outside")
    collected = collect_run(plain.id, state_dir=lab["state"])
    assert collected.decision is None and collected.by_category.n_behaviours == 2
    late = collect_run(plain.id, rule=loose, state_dir=lab["state"]).decision
    assert late.basis == "not_registered" and "no experiment was registered" in late.deviations[0]


def test_the_rule_is_data_checked_when_registered(lab):
    assert parse_rule(RULE).sentence() == ("ship if the paired delta's interval lies above "
                                           "+0.050 and no category drops beyond the noise band")
    with pytest.raises(ArgumentError, match="not a rule this grammar knows"):
        parse_rule({"ship_if": [{"kind": "vibes", "bound": 0.1}]})
    with pytest.raises(ArgumentError, match="not a rule this grammar knows"):
        parse_rule({"ship_if": [{"kind": "delta_above", "bound": 3}]})
    with pytest.raises(ArgumentError, match="as data"):
        parse_rule("ship if it looks good")
    with pytest.raises(ArgumentError, match="names the noise band"):
        _register(lab, run_std=None, noise_runs=None)
    first = _register(lab)
    assert _register(lab) == first                     # the same registration: found
    with pytest.raises(ArgumentError, match="never changed"):
        _register(lab, hypothesis="something else")


def test_launching_as_an_arm_checks_the_experiment(lab):
    with pytest.raises(ArgumentError, match="no experiment 'nope'"):
        launch_run("ship", backend="local", state_dir=lab["state"], recipes_dir=lab["recipes"],
                   experiment="nope")
    _register(lab)
    with pytest.raises(ArgumentError, match="one of the arms"):
        launch_run("ship", backend="local", state_dir=lab["state"], recipes_dir=lab["recipes"],
                   experiment="exp")           # two arms: the arm must be named
    _register(lab, name="solo", arms={"only": "the change"})
    plan = launch_run("ship", backend="local", state_dir=lab["state"],
                      recipes_dir=lab["recipes"], experiment="solo")
    assert "experiment='solo', arm='only'" in plan.next_step
    archive_experiment("solo", state_dir=lab["state"])
    with pytest.raises(ArgumentError, match="archived"):
        launch_run("ship", backend="local", state_dir=lab["state"], recipes_dir=lab["recipes"],
                   experiment="solo")


def _data(lab, name: str, held: Path) -> Path:
    """A data folder for "fit" whose one held-out file is a copy of ``held``."""
    folder = lab["root"] / name
    folder.mkdir()
    (folder / held.name).write_bytes(held.read_bytes())
    return folder


def test_an_arms_plan_refuses_a_data_folder_holding_another_held_out_set(lab, capsys):
    # found from outside: an arm launched on a data folder that froze another held-out set went
    # ahead, and only collect_run said NOT AS REGISTERED after the GPU run
    _register(lab)
    other = freeze_holdout(lab["root"] / "edited.jsonl", lab["root"] / "other")
    assert other.name != lab["frozen"].name
    wrong = _data(lab, "wrong", Path(other.path))
    where = dict(backend="local", data=str(wrong), state_dir=lab["state"],
                 recipes_dir=lab["recipes"])
    plain = launch_run("fit", **where)               # outside an experiment: nothing to check
    assert plain.plan.ready and not any("registered" in n for n in plain.plan.notes)
    plan = launch_run("fit", experiment="exp", arm="treat", **where)
    assert plan.plan.ready is False and plan.negative
    (note,) = [n for n in plan.plan.notes if "registered" in n]
    assert note.startswith("not ready to launch: the data folder ")
    assert lab["frozen"].name in note and "NOT AS REGISTERED" in note
    assert f"register_experiment('exp-v2', holdout='{other.name}')" in note
    with pytest.raises(ConfigError, match=f"nothing was launched or recorded: .*{other.name}"):
        launch_run("fit", experiment="exp", arm="treat", confirm=True, **where)
    assert Registry(lab["state"]).all() == [] and not (lab["state"] / "runs").exists()
    # at the shell: the plan's verdict is exit 1, the confirmed launch one line and exit 2
    shell = ["launch", "fit", "--backend", "local", "--data", str(wrong), "--experiment", "exp",
             "--arm", "treat", "--state-dir", str(lab["state"]), "--recipes-dir",
             str(lab["recipes"])]
    assert main(shell) == 1
    out = capsys.readouterr().out
    assert f"whileai-skills register-experiment exp-v2 --holdout {other.name}" in out
    assert main([*shell, "--confirm"]) == 2
    err = capsys.readouterr().err
    assert "nothing was launched or recorded" in err and "Traceback" not in err
    assert Registry(lab["state"]).all() == []


def test_an_arms_plan_on_the_registered_set_launches_and_collects_as_registered(lab):
    _register(lab)
    right = _data(lab, "right", Path(lab["frozen"].path))
    plan = launch_run("fit", backend="local", data=str(right), experiment="exp", arm="treat",
                      state_dir=lab["state"], recipes_dir=lab["recipes"])
    assert plan.plan.ready and not plan.negative
    assert f"held-out set {lab['frozen'].name}: the one experiment 'exp' registered" \
        in plan.plan.notes
    run = _run(lab, "fit", data=str(right), experiment="exp", arm="treat")
    d = collect_run(run.id, state_dir=lab["state"]).decision
    assert d.basis == "as_registered" and d.holdout == lab["frozen"].name and d.deviations == []


def test_an_arms_plan_says_when_the_folder_names_no_held_out_set(lab):
    _register(lab)
    folder = lab["root"] / "traces"
    folder.mkdir()
    traces = [{"task_id": f"t{i:02d}", "prompt": f"ask {i}", "attempt": a}
              for i in range(40) for a in range(2)]   # two records a task: no task set
    (folder / "holdout.jsonl").write_text("".join(json.dumps(t) + "\n" for t in traces))
    plan = launch_run("fit", backend="local", data=str(folder), experiment="exp", arm="treat",
                      state_dir=lab["state"], recipes_dir=lab["recipes"])
    assert plan.plan.ready
    (note,) = [n for n in plan.plan.notes if "names no held-out set" in n]
    assert lab["frozen"].name in note and not note.startswith("not ready")


@pytest.mark.train
def test_the_sft_and_dpo_recipes_tell_a_plan_the_set_their_runs_name(lab, tmp_path):
    """The real recipes: the held-out set a plan checks (their data_holdout hook) is the one
    their reader puts in the run's results (data.holdout_name), and an SFT arm's plan on the
    refund demo folder is ready only against the set that folder froze."""
    from recipes.dpo.data import read_dpo_data
    from recipes.dpo.run import data_holdout as dpo_holdout
    from recipes.sft.data import build_refund_demo, read_data
    from recipes.sft.run import data_holdout as sft_holdout
    from test_pairs import _folder, _train_and_held

    dpo = _folder(tmp_path, *_train_and_held())
    (frozen,) = dpo.glob("holdout-*.jsonl")
    assert dpo_holdout(str(dpo)) == read_dpo_data(dpo).holdout_name == frozen.stem
    sft = tmp_path / "sft"
    build_refund_demo(sft, seed=0, share=0.2)
    (frozen,) = sft.glob("holdout-*.jsonl")
    assert sft_holdout(str(sft)) == read_data(sft).holdout_name == frozen.stem
    recipes = Path(__file__).resolve().parents[1] / "recipes"
    _register(lab, name="demo", holdout=frozen, arms={"sft": "SFT on the demo"})
    _register(lab, name="elsewhere", arms={"sft": "SFT on the demo"})
    plans = {name: launch_run("sft", backend="local", data=str(sft), experiment=name,
                              state_dir=lab["state"], recipes_dir=recipes).plan
             for name in ("demo", "elsewhere")}
    assert plans["demo"].ready, plans["demo"].notes
    assert f"held-out set {frozen.stem}: the one experiment 'demo' registered" \
        in plans["demo"].notes
    assert not plans["elsewhere"].ready
    assert any(n.startswith("not ready to launch: the data folder") and frozen.stem in n
               and lab["frozen"].name in n for n in plans["elsewhere"].notes)


def test_records_export_and_archive_keep_everything(lab):
    _register(lab)
    run = _run(lab, "ship", experiment="exp", arm="treat")
    lines = dict(changed="a", moved="b", why="c", learned="d", reproduce="e")
    first = record_run(run.id, state_dir=lab["state"], **lines)
    second = record_run(run.id, state_dir=lab["state"], **dict(lines, learned="d, revised"))
    assert (first.revision, second.revision) == (1, 2)
    with pytest.raises(ArgumentError, match="line break"):
        record_run(run.id, state_dir=lab["state"], **dict(lines, why="one\ntwo"))
    out = lab["root"] / "EXPERIMENTS.md"
    exported = export_experiments(out, state_dir=lab["state"])
    text = out.read_text()
    assert exported.n_runs == 1 and exported.n_records == 1
    assert "- **What was learned:** d, revised" in text and "revision 2" in text
    archive_experiment("exp", state_dir=lab["state"])
    assert list_experiments(state_dir=lab["state"]).experiments == []
    kept = list_experiments(include_archived=True, state_dir=lab["state"]).experiments[0]
    assert kept.archived_at and kept.runs[0].record.learned == "d, revised"
    with sqlite3.connect(lab["state"] / REGISTRY_FILE) as db:  # both revisions are still there
        assert db.execute("SELECT COUNT(*) FROM run_records").fetchone()[0] == 2
    export_experiments(out, overwrite=True, state_dir=lab["state"])
    assert "## exp" in out.read_text() and "(archived " in out.read_text()


def test_a_version_2_registry_gains_experiments(tmp_path):
    db = sqlite3.connect(tmp_path / REGISTRY_FILE)
    db.executescript("""
        CREATE TABLE runs (id TEXT PRIMARY KEY, name TEXT NOT NULL, target TEXT NOT NULL,
            target_kind TEXT NOT NULL, recipe TEXT NOT NULL, sha256 TEXT NOT NULL,
            backend TEXT NOT NULL, gpu TEXT, status TEXT NOT NULL, handle TEXT, error TEXT,
            results TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, launched_at TEXT,
            finished_at TEXT, forecast TEXT, measured TEXT, UNIQUE (sha256, name, backend));
        INSERT INTO runs VALUES ('run-000000000002', 'old', 'grpo', 'recipe', 'grpo', 'abc',
            'local', NULL, 'succeeded', NULL, NULL, NULL, '2026-01-01T00:00:00+00:00',
            '2026-01-01T00:00:00+00:00', NULL, NULL, NULL, NULL);
        PRAGMA user_version = 2;
    """)
    db.close()
    old = Registry(tmp_path, create=False).get("run-000000000002")
    assert old.name == "old" and old.experiment is None and old.arm is None
    with sqlite3.connect(tmp_path / REGISTRY_FILE) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"experiments", "run_records"} <= tables
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    assert list_experiments(state_dir=tmp_path).experiments == []
