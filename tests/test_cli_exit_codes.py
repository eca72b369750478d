"""The exit codes of `whileai-skills`, the same for every command (the README's exit-code table):
0 done (a positive verdict, or none), 1 a negative or not-ready verdict, 2 bad input, 70 a bug,
130 interrupted. Each verdict below is built by hand so that its sign is known before the
command runs (a regression on every task, a file named for other content...)."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

from whileai_core.cli import EXIT_BUG, EXIT_INTERRUPTED, EXIT_NEGATIVE, EXIT_USER, main
from whileai_core.operations import VERDICT, operations
from whileai_core.result import Result

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _rows(path: Path, rewards: dict[str, list[float]], **extra) -> str:
    path.write_text("".join(json.dumps({"task_id": t, "reward": r, **extra}) + "\n"
                            for t, rs in rewards.items() for r in rs))
    return str(path)


def test_no_verdict_and_a_positive_verdict_exit_0(tmp_path, capsys):
    assert main(["pass-at", str(EXAMPLES / "graded.jsonl")]) == 0  # a rate: no verdict
    # every one of 40 tasks goes from failing to passing: the paired interval lies above 0
    before = _rows(tmp_path / "before.jsonl", {f"t{i}": [0.0, 0.0] for i in range(40)})
    after = _rows(tmp_path / "after.jsonl", {f"t{i}": [1.0, 1.0] for i in range(40)})
    assert main(["compare", before, after]) == 0
    assert "moved" in capsys.readouterr().out


def test_a_significant_regression_exits_1(tmp_path, capsys):
    before = _rows(tmp_path / "before.jsonl", {f"t{i}": [1.0, 1.0] for i in range(40)})
    after = _rows(tmp_path / "after.jsonl", {f"t{i}": [0.0, 0.0] for i in range(40)})
    assert main(["compare", before, after]) == EXIT_NEGATIVE
    assert "moved_the_wrong_way" in capsys.readouterr().out


def test_a_fingerprint_mismatch_exits_1_and_a_match_0(tmp_path, capsys):
    text = (EXAMPLES / "tasks.jsonl").read_text()
    wrong = tmp_path / "tasks-000000000000.jsonl"  # named for content it does not hold
    wrong.write_text(text)
    assert main(["fingerprint", str(wrong)]) == EXIT_NEGATIVE
    assert "MISMATCH" in capsys.readouterr().out
    assert main(["fingerprint", str(wrong), "--json"]) == EXIT_NEGATIVE
    digest = json.loads(capsys.readouterr().out)["sha256"][:12]
    right = tmp_path / f"tasks-{digest}.jsonl"
    right.write_text(text)
    assert main(["fingerprint", str(right)]) == 0


def test_a_hack_scan_that_could_test_nothing_is_not_0(tmp_path, capsys):
    # rows without reply text: no feature of a reply can be computed, nothing is cleared
    rows = _rows(tmp_path / "rows.jsonl", {f"t{i}": [0.0, 1.0, 0.0, 1.0] for i in range(20)})
    assert main(["hack-scan", rows]) == EXIT_NEGATIVE
    assert "not_enough_data" in capsys.readouterr().out


@pytest.mark.train
def test_a_refused_config_and_a_plan_not_ready_exit_1(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["config", "env", "--model", "Qwen/Qwen3-8B", "--method", "grpo",
                 "--out", "good.toml"]) == 0
    assert main(["validate", "good.toml"]) == 0
    text = Path("good.toml").read_text()
    assert "[trainer.optim]\n" in text
    Path("bad.toml").write_text(text.replace("[trainer.optim]\n",
                                             "[trainer.optim]\nmax_nrom = 1.0\n"))
    assert main(["validate", "bad.toml"]) == EXIT_NEGATIVE
    capsys.readouterr()
    # a plan is only a plan (nothing spent), but one prime-rl would reject is not ready
    assert main(["launch", "bad.toml", "--state-dir", "state"]) == EXIT_NEGATIVE
    assert "not ready to launch" in capsys.readouterr().out
    # ready but not confirmed: a plan, not a verdict against it (the recipe's CPU smoke)
    assert main(["launch", "sft", "--data", str(EXAMPLES / "sft-data"), "--backend", "local",
                 "--state-dir", "state"]) == 0
    assert capsys.readouterr().out.startswith("planned, nothing launched")


def test_the_negative_examples_of_the_journey_exit_1(capsys):
    assert main(["audit-judge", str(EXAMPLES / "judge_items.jsonl")]) == EXIT_NEGATIVE
    assert main(["order-reversal", str(EXAMPLES / "judge_pairs.jsonl")]) == EXIT_NEGATIVE
    assert main(["watch", str(EXAMPLES / "training_rows.jsonl")]) == EXIT_NEGATIVE


def test_bad_input_exits_2(tmp_path, capsys):
    assert main(["pass-at", str(tmp_path / "missing.jsonl")]) == EXIT_USER
    with pytest.raises(SystemExit) as exc:  # argparse's own refusal: the same code
        main(["pass-at", str(EXAMPLES / "graded.jsonl"), "--level", "high"])
    assert exc.value.code == EXIT_USER


@pytest.mark.parametrize("raised, code", [(RuntimeError("a plain bug"), EXIT_BUG),
                                          (KeyboardInterrupt(), EXIT_INTERRUPTED)])
def test_a_bug_exits_70_and_an_interrupt_130(raised, code, monkeypatch, capsys, tmp_path):
    import whileai_core.stats.report as report  # where rate calls pass_at

    def fails(*args, **kwargs):
        raise raised

    monkeypatch.setattr(report, "pass_at", fails)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.delenv("WHILEAI_DEBUG", raising=False)
    assert main(["pass-at", str(EXAMPLES / "graded.jsonl")]) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert ("bug in whileai" in err) if code == EXIT_BUG else err == "interrupted\n"


# --- no operation with a verdict can forget its exit code --------------------------------------

# A field of a result that carries its verdict: its sign is what a script gates on.
VERDICT_FIELDS = {"verdict", "ok", "clears", "ready", "decision", "file_matches", "best"}


def _verdict_fields(result: type, depth: int = 1) -> set[str]:
    """The verdict fields of ``result`` and of the results it holds (a launch's plan is ready
    or not), one level down."""
    found = VERDICT_FIELDS & set(result.model_fields)
    if depth:
        for name, info in result.model_fields.items():
            for inner in (info.annotation, *typing.get_args(info.annotation)):
                if isinstance(inner, type) and issubclass(inner, Result):
                    found |= {f"{name}.{f}" for f in _verdict_fields(inner, depth - 1)}
    return found


def test_every_operation_with_a_verdict_declares_its_exit_code():
    with_verdict = {op.name for op in operations().values()
                    if "cli" in op.surfaces and _verdict_fields(op.result_type())}
    declared = {op.name for op in operations().values() if op.exit_code is VERDICT}
    assert with_verdict, "no result carries a verdict field: the check would pass vacuously"
    assert with_verdict == declared, (
        f"verdict without exit_code=VERDICT: {sorted(with_verdict - declared)}; "
        f"exit_code=VERDICT without a verdict field: {sorted(declared - with_verdict)}")
    for op in operations().values():
        if op.exit_code is VERDICT:
            result = op.result_type()
            assert result.negative is not Result.negative, f"{result.__name__}: no `negative`"
            assert result.negative_means, f"{result.__name__}: no negative_means for the README"


def test_verdict_reads_the_results_own_field():
    from whileai_core.judge import OrderReversal

    common = dict(n_pairs=10, consistent=5, flips=5, tie_flips=0, flip_rate=0.5,
                  flip_ci=None, note="")
    assert VERDICT(OrderReversal(verdict="top_pick_only", **common)) == 1
    assert VERDICT(OrderReversal(verdict="ranking", **common)) == 0
    assert typing.get_args(OrderReversal.model_fields["verdict"].annotation) == \
        ("ranking", "top_pick_only")  # every value of the verdict is covered above


# --- the code-1 row of every command with a verdict, each beside its code 0 --------------------
# Every input is written here, its verdict worked out by hand before the command runs.

def _lines(path: Path, records: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def test_collect_exits_1_on_a_regression_and_0_on_a_gain(tmp_path, capsys):
    from test_runs_support import make_recipes, wait_until_finished

    recipes, state = make_recipes(tmp_path), tmp_path / "state"
    # the tiny recipe's rows swapped: every task loses exactly +2/4 (the support file's hand
    # count, the other way), so every resample of tasks has delta -0.5: a regression
    tiny = (recipes / "tiny" / "run.py").read_text()
    swapped = tiny.replace('"before_rows": before, "after_rows": after',
                           '"before_rows": after, "after_rows": before')
    assert swapped != tiny
    (recipes / "worse").mkdir()
    (recipes / "worse" / "run.py").write_text(swapped)
    flags = ["--backend", "local", "--recipes-dir", str(recipes), "--state-dir", str(state)]
    verdicts = {}
    for recipe in ("tiny", "worse"):
        assert main(["launch", recipe, "--confirm", "--json", *flags]) == 0
        run = json.loads(capsys.readouterr().out)["run"]["id"]
        assert wait_until_finished(run, state).status == "succeeded"
        verdicts[recipe] = main(["collect", run, "--json", "--state-dir", str(state)])
        assert json.loads(capsys.readouterr().out)["verdict"] == (
            "moved" if recipe == "tiny" else "moved_the_wrong_way")
    assert verdicts == {"tiny": 0, "worse": EXIT_NEGATIVE}


def test_doctor_exits_1_on_a_sick_run_and_0_on_a_healthy_one(tmp_path, capsys):
    def watch(name: str, flat_from: int) -> str:
        # 6 tasks x 4 rollouts a step; from step `flat_from` every rollout scores 0.5, so each
        # group has one reward: no advantage, nothing learned (zero_advantage)
        lines = [{"step": s, "train_reward": 0.5,
                  "batch": [{"task_id": f"t{t}", "reward": 0.5 if s >= flat_from else r / 3,
                             "completion": f"reply {t} {r}"}
                            for t in range(6) for r in range(4)]}
                 for s in range(1, 9)]
        return _lines(tmp_path / name, lines)

    assert main(["doctor", watch("flat.jsonl", 3), "--json"]) == EXIT_NEGATIVE
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "sick" and "zero_advantage" in out["found"]
    # the rewards spread 0, 1/3, 2/3, 1 inside every group at every step: every group teaches
    assert main(["doctor", watch("spread.jsonl", 99), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] != "sick"


def test_compare_many_exits_1_when_a_behaviour_drops(tmp_path, capsys):
    # 30 tasks per category, 2 rollouts each. Before: all pass. After: category `a` fails every
    # rollout (delta -1 on each of its 30 tasks: the interval is [-1, -1], p tiny, Holm survives)
    # and `b` still passes every one (delta 0)
    def run(name: str, a_reward: float, b_reward: float) -> str:
        return _lines(tmp_path / name, [
            {"task_id": f"{c}{i}", "reward": r, "category": c}
            for c, r in (("a", a_reward), ("b", b_reward)) for i in range(30) for _ in range(2)])

    before, worse = run("before.jsonl", 1.0, 1.0), run("worse.jsonl", 0.0, 1.0)
    assert main(["compare-many", before, worse, "--by", "category"]) == EXIT_NEGATIVE
    capsys.readouterr()
    # the other way round: `a` rises from 0 to 1 on every task, `b` holds: nothing drops
    assert main(["compare-many", worse, before, "--by", "category"]) == 0


def test_teacher_clears_exits_1_when_the_teacher_does_not_clear(tmp_path, capsys):
    # 40 tasks, 2 rollouts: the student passes none; a teacher passing all has gap +1 with the
    # interval [1, 1] (every task +1): it clears; a teacher equal to the student (gap 0) does not
    student = _rows(tmp_path / "student.jsonl", {f"t{i}": [0.0, 0.0] for i in range(40)})
    strong = _rows(tmp_path / "strong.jsonl", {f"t{i}": [1.0, 1.0] for i in range(40)})
    same = _rows(tmp_path / "same.jsonl", {f"t{i}": [0.0, 0.0] for i in range(40)})
    assert main(["teacher-clears", strong, student, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["clears"] is True
    assert main(["teacher-clears", same, student, "--json"]) == EXIT_NEGATIVE
    assert json.loads(capsys.readouterr().out)["clears"] is False


def test_prove_reward_exits_1_on_a_hole_and_0_on_an_exact_match(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tasks = _lines(tmp_path / "tasks.jsonl", [
        {"task_id": f"t{i:02d}", "prompt": f"Say {i}.", "answer": str(i)} for i in range(20)])
    # pays every reply 1.0: an empty reply passes, a hole by definition
    Path("lenient.py").write_text("def score(prompts, completions, **kw):\n"
                                  "    return [1.0 for _ in completions]\n")
    # pays only the exact answer: no probe reply (empty, filler, another task's) equals it
    Path("exact.py").write_text("def score(prompts, completions, answer, **kw):\n"
                                "    return [float(c == a) for c, a in zip(completions, answer)]\n")
    assert main(["prove-reward", "tasks.jsonl", "--reward", "lenient.py:score", "--max-tokens",
                 "16", "--json"]) == EXIT_NEGATIVE
    assert json.loads(capsys.readouterr().out)["verdict"] == "fix_first"
    assert main(["prove-reward", tasks, "--reward", "exact.py:score", "--max-tokens", "16",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "train"


def test_failure_capable_exits_1_when_the_run_cannot_fail(tmp_path, capsys):
    # every rollout of every task passes: no task ever fails, headroom 0 (cannot_fail)
    always = _rows(tmp_path / "always.jsonl", {f"t{i}": [1.0, 1.0] for i in range(40)})
    assert main(["failure-capable", always, "--json"]) == EXIT_NEGATIVE
    assert json.loads(capsys.readouterr().out)["verdict"] == "cannot_fail"
    # half the tasks always fail: pass@1 0.5, headroom 0.5, nothing cut off
    half = _rows(tmp_path / "half.jsonl", {f"t{i}": [float(i % 2)] * 2 for i in range(40)})
    assert main(["failure-capable", half, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "ready"


def test_by_category_exits_1_when_a_category_drops(tmp_path, capsys):
    def run(name: str, a_reward: float) -> str:
        return _lines(tmp_path / name, [
            {"task_id": f"{c}{i}", "reward": a_reward if c == "a" else 1.0, "category": c}
            for c in ("a", "b") for i in range(30) for _ in range(2)])

    before, after = run("before.jsonl", 1.0), run("after.jsonl", 0.0)
    # one run: a table, no verdict
    assert main(["by-category", before]) == 0
    # `a` goes from passing every rollout to none (delta -1 on each of 30 tasks), `b` holds
    assert main(["by-category", before, "--after", after]) == EXIT_NEGATIVE
    capsys.readouterr()
    assert main(["by-category", after, "--after", before]) == 0
