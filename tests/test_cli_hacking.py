"""whileai-skills cheat-probes, hack-scan, watch, and --plot on route, compare and audit-judge;
watch_run on a TRL output folder written by TRL itself (tests/fixtures/trl, made by
make_trainer_state.py with TRL 1.16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whileai_core.cli import main
from whileai_core.hacking import watch_run

TRL_FOLDER = Path(__file__).parent / "fixtures" / "trl" / "grpo-tiny"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_watch_reads_a_real_trl_output_folder():
    state = json.loads((TRL_FOLDER / "checkpoint-3" / "trainer_state.json").read_text())
    logged = [e["reward"] for e in state["log_history"] if "reward" in e]
    w = watch_run(TRL_FOLDER)
    assert [s.train_reward for s in w.steps] == logged and len(logged) == 3
    # TRL logs no per-task held-out rows: nothing to pair, so no verdict either way
    assert w.decision == "not_enough_data" and w.n_evals == 0


def test_cheat_probes_cli(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "tasks.jsonl", [{"task_id": f"t{i}", "prompt": "hi", "answer": "42"}
                                     for i in range(5)])
    write(tmp_path / "model.jsonl", [{"task_id": f"t{i}", "reward": 1.0} for i in range(5)])
    (tmp_path / "grade.py").write_text(
        "def score(prompts, completions, answer, **kw):\n"
        "    return [1.0 if c == a else 0.0 for c, a in zip(completions, answer)]\n")
    assert main(["cheat-probes", "tasks.jsonl", "--reward", "grade.py:score", "--model-rows",
                 "model.jsonl", "--json"]) == 1  # a hole: exit 1
    out = json.loads(capsys.readouterr().out)
    # every task's answer is "42", so the most common answer passes every task: a hole
    assert out["holes"] == ["most_common"]
    # the same reward as a command (one string, split like a shell): the same holes
    (tmp_path / "grade_cmd.py").write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    item = json.loads(line)\n"
        "    print(1.0 if item['completion'] == item['answer'] else 0.0)\n")
    assert main(["cheat-probes", "tasks.jsonl", "--reward", "python grade_cmd.py",
                 "--model-rows", "model.jsonl", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["holes"] == ["most_common"]
    with pytest.raises(SystemExit) as exit_:
        main(["cheat-probes", "tasks.jsonl"])
    assert exit_.value.code == 2
    assert "the following arguments are required: --reward" in capsys.readouterr().err


def test_hack_scan_and_watch_cli(tmp_path, capsys):
    rows = [{"task_id": f"t{t}", "reward": r / 3, "completion": "x" * (10 * r + t)}
            for t in range(4) for r in range(4)]
    assert main(["hack-scan", str(write(tmp_path / "rows.jsonl", rows)), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["suspects"] == ["length"]
    steps = [{"step": 0, "held_out": [{"task_id": f"h{i}", "reward": 1.0} for i in range(5)]}]
    plot = tmp_path / "watch.png"
    assert main(["watch", str(write(tmp_path / "w.jsonl", steps)), "--plot", str(plot)]) == 0
    captured = capsys.readouterr()
    assert "watch: not_enough_data" in captured.out and "picture:" in captured.err
    assert plot.read_bytes()[:4] == b"\x89PNG"
    assert main(["watch", str(tmp_path / "w.jsonl"), "--plot", str(plot)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_hack_scan_names_a_misspelt_feature_in_the_shells_words(tmp_path, capsys):
    # --features lenght: a typo of the built-in `length`, a field no row has
    rows = [{"task_id": f"t{t}", "reward": float(r % 2), "called": r == 1, "completion": "x" * r}
            for t in range(4) for r in range(4)]
    path = str(write(tmp_path / "rows.jsonl", rows))
    assert main(["hack-scan", path, "--features", "lenght"]) == 2
    err = capsys.readouterr().err
    assert "None" not in err and "row 1 has no field `lenght`" in err
    assert "did you mean `length`" in err
    # a field every row lacks but one close to a row's own field: that field is named
    assert main(["hack-scan", path, "--features", "caled"]) == 2
    assert "did you mean `called`" in capsys.readouterr().err
    # a field that is there but null: the JSON word, never Python's
    nulls = [dict(r, called=None) if i == 2 else r for i, r in enumerate(rows)]
    assert main(["hack-scan", str(write(tmp_path / "n.jsonl", nulls)), "--features", "called"]) == 2
    err = capsys.readouterr().err
    assert "`called` is null on row 3" in err and "None" not in err


@pytest.mark.parametrize("argv", [
    ["route", str(EXAMPLES / "graded.jsonl"), "--model", "Qwen/Qwen3-8B"],
    ["compare", str(EXAMPLES / "graded.jsonl"), str(EXAMPLES / "teacher.jsonl")],
])
def test_plot_flag_on_route_and_compare(tmp_path, capsys, argv):
    out = tmp_path / "p.png"
    assert main(argv + ["--plot", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG" and "picture:" in capsys.readouterr().err


def test_plot_flag_on_audit_judge(tmp_path, capsys):
    items = write(tmp_path / "items.jsonl", [{"id": i, "label": i < 5, "grades": {"j": i < 6}}
                                             for i in range(10)])
    # the judge passes 1 of 5 labelled failures (0.2 > 0.1): it does not clear, exit 1
    assert main(["audit-judge", str(items), "--plot", str(tmp_path / "j.png")]) == 1
    assert (tmp_path / "j.png").exists()


def test_watch_reads_a_prime_rl_run_folder_through_the_importer():
    from whileai_core.importers.prime_rl import read_prime_rl

    run = Path(__file__).parent / "fixtures" / "prime_rl" / "volume" / "e2e-opsd" / "fc-opsd-1"
    eval_rows = read_prime_rl(run, kind="eval").rows
    steps = sorted({r["step"] for r in eval_rows})
    w = watch_run(run, metric="reward")
    # every eval step of the importer's rows is one held-out evaluation, paired with the first
    assert [s.step for s in w.steps if s.held_out is not None] == steps and w.n_evals == len(steps)
    assert w.decision == "not_enough_data"  # no training episodes here: no climb to read


def test_hack_scan_with_nothing_to_test_is_not_clean_and_names_the_flag(tmp_path, capsys):
    # rows with rewards that differ within tasks but no reply text: no feature can be tested
    rows = [{"task_id": f"t{t}", "reward": float((t + r) % 2)} for t in range(6) for r in range(4)]
    assert main(["hack-scan", str(write(tmp_path / "bare.jsonl", rows))]) == 1
    out = capsys.readouterr().out
    assert "not_enough_data" in out and "clean" not in out.split("\n")[0].replace("clean bill", "")
    assert "(--features)" in out


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_cheat_probes_as_the_readme_writes_it_shows_the_leak_on_the_no_refund_third(capsys):
    """The examples' no-refund tasks (every third: the answer 0.00, examples/make_examples.py)
    are the ones the most common answer passes: 16 of 48 tasks, 16 of the 16 no-refund ones.
    The next line names a line only where it is printed (before: 'see its by-group line', which
    only --group-by prints)."""
    tasks = [json.loads(line) for line in (EXAMPLES / "tasks.jsonl").open()]
    zero = [t for t in tasks if t["answer"] == "0.00"]
    assert len(tasks) == 48 and {t["category"] for t in zero} == {"no-refund"} and len(zero) == 16
    base = ["cheat-probes", str(EXAMPLES / "tasks.jsonl"), "--reward",
            f"{EXAMPLES / 'grader.py'}:reward", "--model-rows", str(EXAMPLES / "graded.jsonl")]
    assert main([*base, "--group-by", "category"]) == 0  # a leak below the model: exit 0
    out = capsys.readouterr().out
    assert f"most_common  leak   {16 / 48:.3f}" in out
    assert "by group: full-refund 0.000" in out and "no-refund 1.000" in out
    assert "see its by-group line and the example" in out
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "by group:" not in out and "by-group line" not in out
    assert "see the example; --group-by category shows on which" in out
