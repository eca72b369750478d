"""The prime-rl recipe offline: configs identical to the goldens, the collector's arithmetic,
and the launcher's teacher detection. Expected numbers are worked by hand beside each assert."""

import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from scipy.stats import t as student_t

from whileai_core.errors import RowsError

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "recipes" / "prime-rl"
GOLDEN = ROOT / "tests" / "golden" / "prime_rl"


def load(name):
    spec = importlib.util.spec_from_file_location(f"_prime_rl_{name}", RECIPE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


collect = load("collect")


def run(args, cwd):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODAL_")}
    env["HOME"] = str(cwd)
    return subprocess.run([sys.executable, str(RECIPE / "run.py"), *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=120)


def test_dry_run_writes_the_golden_configs_and_leaves_them_alone(tmp_path):
    proc = run(["--dry-run", "--configs", str(tmp_path / "c")], tmp_path)
    assert proc.returncode == 0, proc.stderr
    for arm in ("grpo", "opsd", "opd"):
        written = (tmp_path / "c" / f"{arm}.toml").read_bytes()
        assert written == (GOLDEN / f"reverse_text_{arm}.toml").read_bytes(), arm
    again = run(["--dry-run", "--configs", str(tmp_path / "c")], tmp_path)
    assert again.returncode == 0 and again.stdout.count("unchanged") == 3
    (tmp_path / "c" / "opd.toml").write_text("# edited\n")
    refused = run(["--dry-run", "--configs", str(tmp_path / "c")], tmp_path)
    assert refused.returncode == 2 and "differs" in refused.stderr and "--force" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_committed_configs_are_the_goldens():
    for arm in ("grpo", "opsd", "opd"):
        assert (RECIPE / "configs" / f"{arm}.toml").read_bytes() == (
            GOLDEN / f"reverse_text_{arm}.toml").read_bytes(), arm


def test_smoke_writes_configs_and_reports(tmp_path):
    proc = run(["--smoke", "--out", str(tmp_path / "o")], tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert set(results["configs"]) == {"grpo", "opsd", "opd"}
    assert results["configs"]["opd"]["method"] == "opd"
    assert (tmp_path / "o" / "configs" / "opsd.toml").read_bytes() == (
        GOLDEN / "reverse_text_opsd.toml").read_bytes()


@pytest.mark.parametrize("args", [[], ["--validate"], ["--collect"]])
def test_no_modal_token(args, tmp_path):
    proc = run([*args, "--configs", str(tmp_path / "c")], tmp_path)
    assert proc.returncode == 2
    assert "MODAL_TOKEN_ID" in proc.stderr and "MODAL_TOKEN_SECRET" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_help_and_bad_flags(tmp_path):
    assert run(["--help"], tmp_path).returncode == 0
    bad = run(["--arms", "ppo"], tmp_path)
    assert bad.returncode == 2 and "invalid choice: 'ppo'" in bad.stderr
    both = run(["--dry-run", "--collect"], tmp_path)
    assert both.returncode == 2 and "not allowed with" in both.stderr


def test_teacher_is_read_from_the_opd_config(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    for key in ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET"):
        monkeypatch.delenv(key, raising=False)
    app = load("modal_prime_rl")
    opd = (GOLDEN / "reverse_text_opd.toml").read_text()
    # the golden's [orchestrator.algo.teacher] and [inference.vllm] gpu_memory_utilization
    assert app.local_teacher(opd) == ("PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL", 8001, 0.4)
    assert app.local_teacher((GOLDEN / "reverse_text_grpo.toml").read_text()) is None
    remote = opd.replace("http://localhost:8001/v1", "http://teacher.internal:8000/v1")
    assert app.local_teacher(remote) is None


def rows(step, rewards, truncated=None):
    truncated = truncated or [False] * len(rewards)
    return [json.dumps({"example_id": i, "reward": r, "is_truncated": t, "step": step})
            for i, (r, t) in enumerate(zip(rewards, truncated))]


def test_eval_rows_are_parsed_or_refused_by_line():
    parsed = collect.eval_rows(rows(0, [0.5, 1.0], [True, False]))
    assert parsed[0] == {"task_id": "0", "reward": 0.5, "truncated": True, "step": 0,
                         "model": None, "errored": False}
    # prime-rl's eval rollouts name the step `eval_step`; an errored rollout is flagged
    errored = collect.eval_rows(['{"example_id": 3, "reward": 0.0, "eval_step": 20, '
                                 '"error": {"type": "Cancelled"}}'])
    assert (errored[0]["step"], errored[0]["errored"]) == (20, True)
    with pytest.raises(RowsError, match="line 2.*`reward` is None"):
        collect.eval_rows(['{"example_id": 1, "reward": 1, "step": 0}',
                           '{"example_id": 2, "step": 0}'])
    with pytest.raises(RowsError, match="`step` is None"):
        collect.eval_rows(['{"example_id": 1, "reward": 1}'])
    assert collect.eval_rows(['{"prompt": "abc", "reward": 0}'], default_step=20)[0]["step"] == 20
    assert collect.step_from_path("/runs/x/outputs/eval/step_20/rollouts.jsonl") == 20


def test_lcs_is_compared_as_an_exact_mean_reward():
    lines = rows(0, [0.374, 0.5, 0.1]) + rows(20, [0.5, 0.5, 0.2])
    arm = collect.arm_report(collect.eval_rows(lines))
    # no rounding: means (0.374+0.5+0.1)/3 and 0.4; per-prompt deltas .126, 0, .1 -> mean .0753
    assert arm["lcs_before"]["value"] == pytest.approx(0.974 / 3)
    assert arm["lcs_delta"]["delta"] == pytest.approx(0.226 / 3)
    assert arm["lcs_delta"]["metric"] == "reward"


def test_report_pairs_first_and_last_and_uses_the_step1_noise_floor():
    first = [0.10, 0.20, 0.30, 0.40]
    last_grpo = [0.50, 0.60, 0.70, 0.80]
    arms = {
        "grpo": {"rows": collect.eval_rows(rows(0, first) + rows(20, last_grpo)),
                 "wall_clock_s": 884.0},
        "opsd": {"rows": collect.eval_rows(rows(0, [0.2, 0.2, 0.3, 0.5]) + rows(20, first))},
        "opd": {"rows": collect.eval_rows(rows(0, [0.1, 0.3, 0.3, 0.3], [True] * 4)
                                          + rows(20, [0.6, 0.6, 0.7, 0.9]))},
    }
    rep = collect.report(arms)
    # step-1 means: grpo 0.25, opsd 0.30, opd 0.25 -> run_std = sample std of the three
    assert rep["step1_lcs"] == pytest.approx({"grpo": 0.25, "opsd": 0.30, "opd": 0.25})
    run_std = statistics.stdev([0.25, 0.30, 0.25])  # 0.028868
    assert rep["noise_floor"]["run_std"] == pytest.approx(run_std)
    grpo = rep["arms"]["grpo"]
    # every prompt gains exactly 0.40, but 4 prompts are too few for any paired test (the
    # smallest exact two-sided p is 2/2^4 = 0.125): delta 0.40, no interval, no verdict
    assert grpo["lcs_delta"]["delta"] == pytest.approx(0.40)
    assert grpo["lcs_delta"]["ci"] is None
    assert grpo["lcs_delta"]["verdict"] == "insufficient_data"
    # the band rests on the 3 step-1 scores: t with 2 df x sqrt(2) x run_std (scipy's t)
    assert grpo["lcs_delta"]["noise_runs"] == 3
    assert grpo["lcs_delta"]["noise_band"] == pytest.approx(
        student_t.ppf(0.975, 2) * math.sqrt(2) * run_std)
    assert (grpo["lcs_before"]["value"], grpo["lcs_after"]["value"]) == pytest.approx(
        (0.25, 0.65))
    assert grpo["wall_clock_s"] == 884.0
    # no exact reversal anywhere: pass@1 0 -> 0
    assert grpo["exact_delta"]["delta"] == 0.0
    opd = rep["arms"]["opd"]
    assert (opd["truncated_before"]["value"], opd["truncated_after"]["value"]) == (1.0, 0.0)
    # head to head at step 20: opd - grpo per prompt = +0.1, 0, 0, +0.1 -> mean +0.05
    assert rep["head_to_head"]["opd_vs_grpo"]["delta"] == pytest.approx(0.05)
    # opsd - grpo = -0.4 on every prompt
    assert rep["head_to_head"]["opsd_vs_grpo"]["delta"] == pytest.approx(-0.40)
    table = collect.render(rep)
    assert "noise floor" in table and "opd_vs_grpo" in table


def test_report_needs_two_eval_steps():
    with pytest.raises(RowsError, match="needs the first and the last"):
        collect.arm_report(collect.eval_rows(rows(0, [0.1, 0.2, 0.3])))


def test_errored_rollouts_are_counted_not_scored():
    lines = rows(0, [0.1, 0.2, 0.3]) + rows(20, [0.5, 0.6, 0.7])
    lines.append(json.dumps({"example_id": 2, "reward": 0.0, "step": 20, "error": {"type": "X"}}))
    arm = collect.arm_report(collect.eval_rows(lines))
    # prompt 2 keeps its 0.7 at step 20; the errored 0.0 is left out: after = (0.5+0.6+0.7)/3
    assert arm["errored_last"] == 1 and arm["errored_first"] == 0
    assert arm["lcs_after"]["value"] == pytest.approx(0.6)
