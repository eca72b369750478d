"""What an outside check of the importers found (a second round), each pinned.

Fixtures: ``tests/fixtures/prime_rl/spans`` (verifiers a60a606's own models, see
``make_spans.py``: policy spans, weighted rewards, max_turns truncation), the lm-eval runs of
``tests/fixtures/lm_eval/make_samples.py`` (no model name in ``--model_args``) and
``make_named.py`` (``pretrained=acme/canned-named``), and the Inspect logs of
``tests/fixtures/inspect/make_logs.py``. Expected values are worked out by hand in those scripts'
docstrings; bad records are real records with one field broken here.
"""

import builtins
import json
import shutil

import pytest

from whileai_core import load_rows
from whileai_core.errors import ArgumentError, RowsError
from whileai_core.importers import AmbiguousImport, import_rows

from test_importers import FIX, GRPO, LMEVAL, LOGS, OPD, _corrupt, by

SPANS = FIX / "prime_rl" / "spans"
NAMED = FIX / "lm_eval" / "output_named" / "acme__canned-named"


# --- prime-rl ------------------------------------------------------------------------------

def test_prime_rl_policy_span_weighted_rewards_and_both_truncations():
    got = import_rows(SPANS)
    # correct x 1 + format x .5 + penalty x -.2: e0 1 1 1 -> 1.3; e1 0 1 0 -> .5 (max_turns);
    # e2 never scored -> 0.0; e3 1 0 0 -> 1.0 (finish_reason length)
    assert by(got.rows, "episode_id", "reward", "truncated", "policy_version",
              "policy_version_end") == [("e0", pytest.approx(1.3), False, 9, 10),
                                        ("e1", 0.5, True, 9, 10), ("e2", 0.0, False, 9, 9),
                                        ("e3", 1.0, True, 8, 9)]
    [step] = got.by_step
    # every version that generated a row, both ends of each span: 10 started no episode
    assert (step.step, step.rows, step.errored, step.policy_versions) == (10, 4, 0, [8, 9, 10])
    assert got.mean_reward.value == pytest.approx(((1.3 + 0.5) / 2 + (0.0 + 1.0) / 2) / 2)
    assert "v8, v9, v10" in got.render()


def _break(field_path, value):
    def edit(rec):
        node = rec
        for key in field_path[:-1]:
            node = node[key]
        node[field_path[-1]] = value
        return json.dumps(rec)
    return edit


@pytest.mark.parametrize("path, value, message", [
    (("run", "work", "policy", "start"), "0", r'line 2: `run\.work\.policy\.start` is "0" \(a string\)'),
    (("run", "work", "policy", "end"), 1.5, r"line 2: `run\.work\.policy\.end` is 1\.5"),
    (("run", "work", "policy"), [0, 0], r"line 2: `run\.work\.policy` is \[0, 0\]"),
    (("ok",), "true", r'line 2: `ok` is "true" \(a string\), not true or false'),
    (("traces", 0, "ok"), 1, r"line 2: `traces\[0\]\.ok` is 1, not true or false"),
    (("traces",), "none", r'line 2: `traces` is "none" \(a string\), not a list'),
])
def test_prime_rl_wrong_types_are_refused_by_line(tmp_path, path, value, message):
    bad = _corrupt(tmp_path, 2, _break(path, value))
    with pytest.raises(RowsError, match=message + ".*Fix: "):
        import_rows(bad, format="prime-rl")


def test_prime_rl_a_missing_ok_is_refused_not_taken_for_an_error(tmp_path):
    def drop_ok(rec):
        del rec["ok"]
        return json.dumps(rec)

    with pytest.raises(RowsError, match=r"line 3: `ok` is missing.*Fix: "):
        import_rows(_corrupt(tmp_path, 3, drop_ok), format="prime-rl")
    assert GRPO.is_dir()


AGENTS = FIX / "prime_rl" / "agents"


def test_prime_rl_agents_are_chosen_by_name_and_never_mixed_in_one_pass_rate(tmp_path):
    # make_agents.py: a0 solver 1.0 / judge .5; a1 solver .25 but the judge's call failed, so
    # the episode is not ok; a2 failed before any trace
    every = import_rows(AGENTS)
    assert by(every.rows, "agent", "reward") == [("judge", 0.5), ("solver", 1.0)]
    assert every.errored == 3
    assert any("2 agents per episode (judge, solver)" in n and "agent=NAME" in n
               for n in every.notes)
    solver = import_rows(AGENTS, agent="solver")
    assert by(solver.rows, "task_id", "agent", "reward") == [("0", "solver", 1.0)]
    assert (solver.errored, solver.by_step[0].rows) == (2, 3)
    judge = import_rows(AGENTS, agent="judge", keep_errored=True)
    assert by(judge.rows, "task_id", "agent", "errored") == [("0", "judge", False),
                                                             ("1", "judge", True),
                                                             ("2", None, True)]
    assert not any("agents per episode" in n for n in judge.notes)
    with pytest.raises(RowsError, match=r"has no agent 'critic'; its agents are "
                                        r"\['judge', 'solver'\].*Fix: "):
        import_rows(AGENTS, agent="critic")
    with pytest.raises(AmbiguousImport, match=r"2 agents per episode \(judge, solver\).*"
                                              r"agent='judge'"):
        load_rows(AGENTS)
    with pytest.raises(ArgumentError, match="`step`, `kind` and `agent` apply to prime-rl"):
        import_rows(LOGS / "canned_qa.eval", metric="match", agent="solver")


def test_prime_rl_an_episode_without_a_trace_is_no_extra_agent():
    # the opd arm's step 0 has one episode that failed before any trace (make_episodes.py, X)
    got = import_rows(OPD, step=0, keep_errored=True)
    assert [r["agent"] for r in got.rows].count(None) == 1
    assert not any("agents per episode" in n for n in got.notes)


def test_cli_and_mcp_take_the_agent(tmp_path, server, ws):
    from test_importers import cli
    from test_server_support import call, ok

    out = tmp_path / "solver.jsonl"
    proc = cli("import", str(AGENTS), "--format", "prime-rl", "--agent", "solver", "--out",
               str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(x)["reward"] for x in out.read_text().splitlines()] == [1.0]
    shutil.copytree(AGENTS, ws / "duo")
    got = ok(call(server, "import_rows", {"path": "duo", "out": "judge.jsonl", "agent": "judge"}))
    assert (got["n_rows"], got["errored"]) == (1, 2)
    assert [json.loads(x)["agent"] for x in (ws / "judge.jsonl").read_text().splitlines()] == \
        ["judge"]


# --- lm-eval -------------------------------------------------------------------------------

def test_lm_eval_model_is_the_lm_type_when_model_args_name_none():
    # make_samples.py runs `lm_eval --model dummy` with no --model_args: lm-eval's model_name is
    # a random 8-character id (its folder's name), not a model
    got = import_rows(LMEVAL, metric="exact_match,first")
    assert {r["model"] for r in got.rows} == {"dummy"}
    named = import_rows(NAMED, metric="exact_match,first")
    assert {r["model"] for r in named.rows} == {"acme/canned-named"}
    # the dummy model says "lol" whatever its name: answers lol, hi, lol, no
    assert by(named.rows, "task_id", "reward") == [("0", 1.0), ("1", 0.0), ("2", 1.0),
                                                   ("3", 0.0)]


@pytest.mark.parametrize("field, value, message", [
    ("doc_id", [1], r"line 2: `doc_id` is \[1\], not an id"),
    ("doc_id", True, r"line 2: `doc_id` is true, not an id"),
    ("metrics", "exact_match", r"line 2: .*`metrics` is 'exact_match', not a list"),
])
def test_lm_eval_wrong_types_are_refused_by_line(tmp_path, field, value, message):
    src = next(LMEVAL.glob("samples_*.jsonl"))
    lines = src.read_text().splitlines()
    rec = json.loads(lines[1])
    rec[field] = value
    lines[1] = json.dumps(rec)
    bad = tmp_path / src.name
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(RowsError, match=message + ".*Fix: "):
        import_rows(bad, format="lm-eval", metric="exact_match,first")


# --- Inspect -------------------------------------------------------------------------------

@pytest.fixture(params=["inspect", "json"])
def reader(request, monkeypatch):
    if request.param == "json":
        real = builtins.__import__

        def fake(name, *args, **kwargs):
            if name.startswith("inspect_ai"):
                raise ImportError(name)
            return real(name, *args, **kwargs)

        monkeypatch.setattr(builtins, "__import__", fake)
    return request.param


@pytest.mark.parametrize("edit, field, shown", [
    (lambda s: s.pop("id"), "id", None),
    (lambda s: s.update(epoch="two"), "epoch", "two"),
    (lambda s: s.update(scores="C"), "scores", "C"),
])
def test_inspect_bad_samples_are_refused_in_one_line(tmp_path, reader, edit, field, shown):
    data = json.loads((LOGS / "canned_qa.json").read_text())
    edit(data["samples"][2])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(RowsError) as err:
        import_rows(path, metric="match")
    text = str(err.value)
    assert "\n" not in text and "pydantic.dev" not in text and "Fix: " in text
    # inspect's reader names the field by its place in the log; the JSON reader by the sample
    assert (f"samples.2.{field}" if reader == "inspect" else "samples[2]: ") in text
    assert f"`{field}`" in text or f"`samples.2.{field}`" in text
    if shown:
        assert shown in text


def test_lm_eval_two_runs_of_one_task_in_one_folder_are_refused(tmp_path):
    """lm-eval writes each run of a model into the same folder under a new date; a second run
    of the task (here the named run's file under a later date) is another run, not repeats."""
    folder = tmp_path / "acme__canned-named"
    shutil.copytree(NAMED, folder)
    [first] = folder.glob("samples_canned_gen_*.jsonl")
    second = folder / "samples_canned_gen_2099-01-01T00-00-00.000000.jsonl"
    shutil.copyfile(first, second)
    with pytest.raises(RowsError, match=r"holds 2 runs of task 'canned_gen' .*Fix: import one "
                                        r"run's file, e.g. the newest: .*2099-01-01"):
        import_rows(folder, metric="exact_match,first")
    # one file is one run: 4 docs, exact_match 1, 0, 1, 0
    assert [r["reward"] for r in import_rows(second, metric="exact_match,first").rows] == \
        [1.0, 0.0, 1.0, 0.0]


# --- bounded answers -----------------------------------------------------------------------

def _long_run(n_steps):
    """The summary of a run evaluated at n_steps steps (graded rows, this project's own shape:
    one prompt a step, reward 1)."""
    from whileai_core.importers.result import StepCount, summarize

    rows = [{"task_id": "0", "reward": 1.0, "step": 5 * s, "errored": False}
            for s in range(n_steps)]
    steps = [StepCount(step=5 * s, rows=1, errored=0, policy_versions=[5 * s])
             for s in range(n_steps)]
    return summarize("prime-rl", "run", ["f"], rows, errored=0, kept_errored=False,
                     by_step=steps)


def test_a_long_run_s_steps_are_listed_bounded_with_both_ends():
    got = _long_run(30)
    # 30 steps 0, 5, ..., 145: the first 10 (0..45) and the last 10 (100..145) are listed
    assert [s.step for s in got.by_step] == [5 * s for s in range(10)] + \
        [5 * s for s in range(20, 30)]
    assert "by_step: 20 of 30 steps listed (the first 10 and the last 10)" in " ".join(got.notes)
    assert len(got.render().splitlines()) < 40
    assert len(_long_run(20).by_step) == 20 and not any("by_step" in n for n in
                                                          _long_run(20).notes)


def test_load_rows_names_how_many_steps_a_long_run_spans(monkeypatch, tmp_path):
    from whileai_core.importers import on_the_fly
    from whileai_core.importers.foreign import ForeignRows, StepRows

    long_run = _long_run(30)
    read = ForeignRows("prime-rl", "run", ["f"], long_run.rows, errored=0, kept_errored=False,
                       steps=[StepRows(step=5 * s, rows=1, errored=0, policy_versions=[5 * s])
                              for s in range(30)])
    monkeypatch.setattr(on_the_fly, "read_foreign", lambda *a, **k: read)
    with pytest.raises(AmbiguousImport, match=r"spanning 30 steps \(0 to 145\).*step=145"):
        on_the_fly.rows_for_load(tmp_path, "prime-rl")
