"""Importers read fixtures made by the real systems (see each tests/fixtures/*/make_*.py).

prime-rl: episodes built with verifiers a60a606's own models, scored by the reverse-text
taskset's own reward, laid out as prime-rl 559b447's FileMonitor writes them. Inspect: a real
``inspect eval`` run (inspect_ai 0.3.285, mockllm). lm-eval: lm-eval 0.4.13's own CLI and writer
on a local task with its dummy model. Every expected value below is worked out by hand from the
tables in those scripts' docstrings, never read back from the importer.
"""

import builtins
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from whileai_core import load_rows, pass_at
from whileai_core.errors import ArgumentError, RowsError
from whileai_core.importers import AmbiguousImport, detect_format, import_rows

FIX = Path(__file__).resolve().parent / "fixtures"
VOLUME = FIX / "prime_rl" / "volume"
GRPO = VOLUME / "e2e-grpo" / "fc-grpo-new"
OPD = VOLUME / "e2e-opd" / "fc-opd-1"
LOGS = FIX / "inspect" / "logs"
LMEVAL = next((FIX / "lm_eval" / "output").iterdir())


def by(rows, *keys):
    return sorted(tuple(r[k] for k in keys) for r in rows)


# --- prime-rl ------------------------------------------------------------------------------

def test_prime_rl_run_folder_reads_only_the_all_files():
    got = import_rows(GRPO)
    # step 0: .25 .5 T(0) .5 ; step 20: 1 .75 1 E  -> 7 scored rows, 1 errored left out.
    # The effective files repeat 4 + 3 episodes; reading them too would give 14 rows.
    assert (got.format, got.n_rows, got.errored, got.n_files) == ("prime-rl", 7, 1, 2)
    assert by(got.rows, "step", "task_id", "reward", "truncated") == [
        (0, "0", 0.25, False), (0, "1", 0.5, False), (0, "2", 0.0, True), (0, "3", 0.5, False),
        (20, "0", 1.0, False), (20, "1", 0.75, False), (20, "2", 1.0, False)]
    steps = {s.step: s for s in got.by_step}
    assert (steps[0].rows, steps[0].errored, steps[0].policy_versions) == (4, 0, [0])
    assert (steps[20].rows, steps[20].errored, steps[20].policy_versions) == (4, 1, [19])
    # step 20 mean over its 3 scored prompts: (1 + .75 + 1) / 3
    assert steps[20].mean_reward.value == pytest.approx(2.75 / 3)
    assert {r["model"] for r in got.rows} == {"PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"}
    assert all(r["policy_version"] == (0 if r["step"] == 0 else 19) for r in got.rows)
    assert any("2 steps" in n for n in got.notes)


def test_prime_rl_errored_episodes_are_counted_or_kept_with_a_flag():
    kept = import_rows(GRPO, keep_errored=True, step="last")
    assert kept.n_rows == 4 and kept.errored == 1
    [err] = [r for r in kept.rows if r["errored"]]
    # the provider error: no reward was recorded, so verifiers' Trace.reward is 0
    assert (err["task_id"], err["reward"], err["error"]) == ("3", 0.0, "ProviderError")
    # an episode that failed before any trace: one errored row, the episode's error
    first = import_rows(OPD, step="first", keep_errored=True)
    [gone] = [r for r in first.rows if r["errored"]]
    assert (gone["task_id"], gone["trace_id"], gone["error"]) == ("1", None, "SandboxError")
    scored = import_rows(OPD, step=0)
    assert by(scored.rows, "task_id", "reward", "truncated") == [
        ("0", 0.25, False), ("2", 0.5, False), ("3", 0.0, True)]


def test_prime_rl_step_file_and_folder_forms():
    step_dir = GRPO / "rollouts" / "step_20"
    one_file = step_dir / "eval" / "all" / "traces.jsonl"
    for path in (step_dir, one_file, GRPO / "rollouts"):
        rows = import_rows(path, step=20).rows
        assert by(rows, "task_id", "reward") == [("0", 1.0), ("1", 0.75), ("2", 1.0)]
    with pytest.raises(RowsError, match="the steps here are \\[0, 20\\]"):
        import_rows(GRPO, step=5)
    with pytest.raises(RowsError, match="no train episodes here"):
        import_rows(GRPO, kind="train")


def test_prime_rl_effective_file_is_refused_with_the_all_file_named():
    eff = GRPO / "rollouts" / "step_20" / "eval" / "effective" / "traces.jsonl"
    with pytest.raises(RowsError, match="effective.*Fix: import .*all/traces.jsonl"):
        import_rows(eff)


def _corrupt(tmp_path, line_no, edit):
    src = GRPO / "rollouts" / "step_0" / "eval" / "all" / "traces.jsonl"
    lines = src.read_text().splitlines()
    record = json.loads(lines[line_no - 1])
    lines[line_no - 1] = edit(record)
    out = tmp_path / "traces.jsonl"
    out.write_text("\n".join(lines) + "\n")
    return out


def test_prime_rl_bad_records_are_refused_by_line(tmp_path):
    def bad_score(rec):
        rec["traces"][0]["rewards"]["lcs"]["score"] = "high"
        return json.dumps(rec)

    with pytest.raises(RowsError, match=r'traces.jsonl, line 3: .*rewards\.lcs\.score.*"high" \(a string\)'):
        import_rows(_corrupt(tmp_path, 3, bad_score), format="prime-rl")

    def no_id(rec):
        del rec["task"]["data"]["idx"], rec["task"]["key"]
        return json.dumps(rec)

    with pytest.raises(RowsError, match=r"line 4: .*task\.data\.idx.*Fix"):
        import_rows(_corrupt(tmp_path, 4, no_id), format="prime-rl")
    with pytest.raises(RowsError, match=r"line 2: invalid JSON"):
        import_rows(_corrupt(tmp_path, 2, lambda rec: json.dumps(rec)[:-9]), format="prime-rl")
    with pytest.raises(RowsError, match=r"line 1: not a verifiers episode record"):
        import_rows(_corrupt(tmp_path, 1, lambda rec: '{"task_id": "a", "reward": 1}'),
                    format="prime-rl")


def test_prime_rl_reads_through_load_rows_one_step_only():
    rows = load_rows(GRPO / "rollouts" / "step_0")
    # LCS .25 .5 0 .5: no exact reversal at step 0
    assert (rows.n_rows, rows.n_tasks, int(rows.passed.sum())) == (4, 4, 0)
    assert rows.truncated.tolist() == [False, False, True, False]
    with pytest.raises(AmbiguousImport, match="spanning steps \\[0, 20\\].*format='prime-rl', step=20"):
        load_rows(GRPO)


# --- Inspect -------------------------------------------------------------------------------

MATCH = [("q1", 1, 1.0, False), ("q1", 2, 0.0, False), ("q2", 1, 1.0, False),
         ("q2", 2, 0.0, True), ("q3", 1, 1.0, False), ("q3", 2, 1.0, False),
         ("q4", 2, 0.0, False)]


@pytest.mark.parametrize("name", ["canned_qa.eval", "canned_qa.json"])
def test_inspect_one_row_per_sample_and_epoch(name):
    got = import_rows(LOGS / name, metric="match")
    assert got.format == "inspect" and got.errored == 1  # q4 epoch 1 raised
    assert by(got.rows, "task_id", "epoch", "reward", "truncated") == MATCH
    assert {r["model"] for r in got.rows} == {"mockllm/model"}
    # per sample: q1 .5, q2 .5, q3 1, q4 0 -> mean over samples .5
    assert got.mean_reward.value == pytest.approx(0.5)
    closeness = import_rows(LOGS / name, metric="closeness")
    # C 1, P 0.5, I 0: q1 epoch 1 "The answer is 4" contains the target -> P
    assert by(closeness.rows, "task_id", "epoch", "reward")[0] == ("q1", 1, 0.5)
    assert sum(r["reward"] for r in closeness.rows) == pytest.approx(3.5)
    words = import_rows(LOGS / name, metric="words")
    assert sorted(r["reward"] for r in words.rows) == [1.0] * 6 + [4.0]


def test_inspect_errored_sample_kept_on_request():
    got = import_rows(LOGS / "canned_qa.json", metric="match", keep_errored=True)
    [err] = [r for r in got.rows if r["errored"]]
    assert (err["task_id"], err["epoch"]) == ("q4", 1) and "no canned reply" in err["error"]


def test_inspect_scorer_must_be_named_when_several():
    with pytest.raises(RowsError, match="3 scorers \\(closeness, match, words\\).*scorer="):
        import_rows(LOGS / "canned_qa.eval")
    with pytest.raises(RowsError, match="no scorer 'accuracy'"):
        import_rows(LOGS / "canned_qa.eval", metric="accuracy")
    with pytest.raises(AmbiguousImport, match="import_rows\\(.*format='inspect'"):
        load_rows(LOGS / "canned_qa.eval")


def test_inspect_single_scorer_log_loads_directly():
    rows = load_rows(LOGS / "canned_single.eval")
    # match per sample: q1 C I, q2 C I, q3 C C -> pass@1 (.5 + .5 + 1) / 3
    assert (rows.n_rows, rows.n_tasks) == (6, 3)
    assert pass_at(rows).pass_at_1 == pytest.approx(2 / 3)


@pytest.fixture
def no_inspect(monkeypatch):
    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name.startswith("inspect_ai"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)


def test_inspect_json_without_inspect_installed(no_inspect):
    got = import_rows(LOGS / "canned_qa.json", metric="match")
    assert by(got.rows, "task_id", "epoch", "reward", "truncated") == MATCH
    assert "read with documented JSON" in got.notes
    with pytest.raises(RowsError, match="inspect_ai is not installed.*inspect log convert"):
        import_rows(LOGS / "canned_qa.eval", metric="match")


@pytest.mark.parametrize("reader", ["inspect", "json"])
def test_inspect_bad_score_is_refused_by_sample(tmp_path, request, reader):
    if reader == "json":
        request.getfixturevalue("no_inspect")
    data = json.loads((LOGS / "canned_qa.json").read_text())
    data["samples"][1]["scores"]["match"]["value"] = {"a": 1}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(RowsError, match='sample \'q2\' epoch 1: score `match` is \\{"a": 1\\}'):
        import_rows(path, metric="match")


# --- lm-eval -------------------------------------------------------------------------------

def test_lm_eval_one_row_per_doc_metric_and_filter_by_name():
    got = import_rows(LMEVAL, metric="exact_match,first")
    # dummy LM says "lol"; answers lol, hi, lol, no
    assert by(got.rows, "task_id", "reward") == [("0", 1.0), ("1", 0.0), ("2", 1.0), ("3", 0.0)]
    assert {r["repeats"] for r in got.rows} == {2} and {r["filter"] for r in got.rows} == {"first"}
    # `lm_eval --model dummy` with no --model_args: lm-eval's model_name is a random id, the
    # LM type `dummy` is the model
    assert {r["model"] for r in got.rows} == {"dummy"}
    chars = import_rows(next(LMEVAL.glob("samples_*.jsonl")), metric="chars,vote")
    assert [r["reward"] for r in chars.rows] == [3.0] * 4
    with pytest.raises(RowsError, match="2 filters \\(first, vote\\).*exact_match,first"):
        import_rows(LMEVAL, metric="exact_match")
    with pytest.raises(RowsError, match="2 metrics \\(chars, exact_match\\)"):
        import_rows(LMEVAL)


def test_lm_eval_list_metric_gives_one_row_per_repeat(tmp_path):
    src = next(LMEVAL.glob("samples_*.jsonl"))
    lines = [json.loads(x) for x in src.read_text().splitlines()]
    for rec in lines:  # a metric with one value per repeat, as a custom process_results may give
        rec["exact_match"] = [1.0, 0.0]
    out = tmp_path / src.name
    out.write_text("".join(json.dumps(r) + "\n" for r in lines))
    rows = import_rows(out, metric="exact_match,first").rows
    assert by(rows, "task_id", "repeat", "reward")[:2] == [("0", 0, 1.0), ("0", 1, 0.0)]
    assert len(rows) == 8


def test_lm_eval_bad_records_are_refused_by_line(tmp_path):
    src = next(LMEVAL.glob("samples_*.jsonl"))
    lines = src.read_text().splitlines()
    rec = json.loads(lines[1])
    rec["exact_match"] = "yes"
    lines[1] = json.dumps(rec)
    bad = tmp_path / src.name
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(RowsError, match=r'line 2: `exact_match` is "yes" \(a string\), not a finite number'):
        import_rows(bad, metric="exact_match,first")
    rec = json.loads(lines[2])
    del rec["doc_id"]
    lines[1] = src.read_text().splitlines()[1]
    lines[2] = json.dumps(rec)
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(RowsError, match=r"line 3: not an lm-eval logged sample \(missing doc_id\)"):
        import_rows(bad, format="lm-eval", metric="exact_match,first")


# --- detection and the CLI -----------------------------------------------------------------

def test_detection_from_content_and_an_explicit_format_wins(tmp_path):
    assert detect_format(GRPO) == "prime-rl"
    assert detect_format(GRPO / "rollouts" / "step_0" / "eval" / "all" / "traces.jsonl") == "prime-rl"
    assert detect_format(LOGS / "canned_qa.eval") == "inspect"
    assert detect_format(LOGS / "canned_qa.json") == "inspect"
    assert detect_format(LMEVAL) == "lm-eval"
    # a renamed file is still recognised by its content
    renamed = tmp_path / "whatever.txt"
    shutil.copyfile(LOGS / "canned_qa.eval", renamed)
    assert detect_format(renamed) == "inspect"
    # the named format wins: the Inspect JSON log read as lm-eval samples is refused, named as
    # the one JSON document it is
    with pytest.raises(RowsError, match="is one JSON document .*its `samples` holds a list"):
        import_rows(LOGS / "canned_qa.json", format="lm-eval")
    with pytest.raises(ArgumentError, match="`metric` applies to Inspect and lm-eval"):
        import_rows(GRPO, metric="match")
    with pytest.raises(ArgumentError, match="`format` is 'parquet'"):
        import_rows(GRPO, format="parquet")
    with pytest.raises(RowsError, match="already graded rows"):
        import_rows(Path(__file__).parents[1] / "examples" / "graded.jsonl")


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "whileai_core.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_cli_import_writes_rows_that_the_statistics_read(tmp_path):
    out = tmp_path / "rows.jsonl"
    proc = cli("import", str(OPD), "--step", "last", "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "sampled by policy v19" in proc.stdout and f"wrote 4 rows to {out}" in proc.stdout
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    # opd at step 20: 1 1 .75 1; a pass is an exact reversal (1.0): 3 of 4 prompts
    assert sorted(r["reward"] for r in rows) == [0.75, 1.0, 1.0, 1.0]
    again = cli("import", str(OPD), "--out", str(out), cwd=tmp_path)
    assert again.returncode == 2 and "--force" in again.stderr and "Traceback" not in again.stderr
    proc = cli("pass-at", str(out), cwd=tmp_path)
    # an LCS reward is continuous: its mean (hand: (1 + 1 + .75 + 1) / 4) is the headline,
    # pass@1 (exact reversals) beside it
    assert proc.returncode == 0 and proc.stdout.startswith("mean reward  0.938")
    assert "\npass@1  0.750" in proc.stdout
    bad = cli("import", str(LOGS / "canned_qa.json"), "--format", "inspect", cwd=tmp_path)
    assert bad.returncode == 2 and "--scorer" in bad.stderr and "Traceback" not in bad.stderr
    shown = cli("import", str(LMEVAL), "--format", "lm-eval", "--scorer",
                "exact_match,first", "--json", cwd=tmp_path)
    summary = json.loads(shown.stdout)
    assert (summary["n_rows"], summary["metric"], len(summary["preview"])) == (4, "exact_match,first", 3)


def test_prime_rl_nested_files_may_not_link_out_of_the_folder(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(GRPO, run)
    target = run / "rollouts" / "step_0" / "eval" / "all" / "traces.jsonl"
    outside = tmp_path / "elsewhere.jsonl"
    shutil.move(target, outside)
    target.symlink_to(outside)
    with pytest.raises(RowsError, match="outside the run folder through a symlink"):
        import_rows(run)


def test_cli_import_takes_a_step_number(capsys):
    # `--step` is a step number, 'first' or 'last'; a number typed at the shell was once refused
    # ("expected first, last"). The fixture has steps 0 and 20: 20 is the last, 4 prompts.
    from whileai_core.cli import main

    assert main(["import", str(OPD), "--step", "20", "--json"]) == 0
    by_number = json.loads(capsys.readouterr().out)
    assert main(["import", str(OPD), "--step", "last", "--json"]) == 0
    assert by_number == json.loads(capsys.readouterr().out) and by_number["n_tasks"] == 4
    assert main(["import", str(OPD), "--step", "7"]) == 2
    err = capsys.readouterr().err
    assert "--step" in err and "[0, 20]" in err
