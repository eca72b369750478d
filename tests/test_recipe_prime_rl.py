"""The prime-rl recipe offline: configs identical to the goldens, the collector's arithmetic,
and the launcher's teacher detection. Expected numbers are worked by hand beside each assert."""

import importlib.util
import json
import math
import os
import re
import shutil
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


def rows(step, rewards, truncated=None, policy=None):
    """Graded rows as the importer gives them (the collector's own arithmetic is tested here;
    the real prime-rl layout is read in the fixture tests below)."""
    truncated = truncated or [False] * len(rewards)
    return [{"task_id": str(i), "reward": r, "truncated": t, "step": step, "errored": False,
             "policy_version": step if policy is None else policy}
            for i, (r, t) in enumerate(zip(rewards, truncated))]


def test_lcs_is_compared_as_an_exact_mean_reward():
    lines = rows(0, [0.374, 0.5, 0.1]) + rows(20, [0.5, 0.5, 0.2])
    arm = collect.arm_report(lines)
    # no rounding: means (0.374+0.5+0.1)/3 and 0.4; per-prompt deltas .126, 0, .1 -> mean .0753
    assert arm["lcs_before"]["value"] == pytest.approx(0.974 / 3)
    assert arm["lcs_delta"]["delta"] == pytest.approx(0.226 / 3)
    assert arm["lcs_delta"]["metric"] == "reward"


def seeded(seed):
    """An arm's eval sampler as the recipe's configs write it: its own engine seed, 1.0."""
    return {"seed": seed, "eval_temperature": 1.0}


def test_report_pairs_first_and_last_and_uses_the_step1_noise_floor():
    first = [0.10, 0.20, 0.30, 0.40]
    last_grpo = [0.50, 0.60, 0.70, 0.80]
    arms = {
        "grpo": {"rows": rows(0, first) + rows(20, last_grpo), "wall_clock_s": 884.0,
                 "sampler": seeded(1)},
        "opsd": {"rows": rows(0, [0.2, 0.2, 0.3, 0.5]) + rows(20, first), "sampler": seeded(2)},
        "opd": {"rows": rows(0, [0.1, 0.3, 0.3, 0.3], [True] * 4)
                + rows(20, [0.6, 0.6, 0.7, 0.9]), "sampler": seeded(3)},
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
    # the published teacher trained on the split the held-out slice comes from: the table says so
    assert list(rep["caveats"]) == ["opd"]
    assert "\nopd*   |" in table and "grpo*" not in table
    footnote = table.splitlines()[-1]
    assert footnote.startswith("* opd: teacher PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL")
    assert "train[872:]" in footnote


def test_report_needs_two_eval_steps():
    with pytest.raises(RowsError, match="needs the first and the last"):
        collect.arm_report(rows(0, [0.1, 0.2, 0.3]))


def test_errored_rollouts_are_counted_not_scored():
    lines = rows(0, [0.1, 0.2, 0.3]) + rows(20, [0.5, 0.6, 0.7])
    lines.append({"task_id": "2", "reward": 0.0, "truncated": False, "step": 20, "errored": True,
                  "policy_version": 19})
    arm = collect.arm_report(lines)
    # prompt 2 keeps its 0.7 at step 20; the errored 0.0 is left out: after = (0.5+0.6+0.7)/3
    assert arm["errored_last"] == 1 and arm["errored_first"] == 0
    assert arm["lcs_after"]["value"] == pytest.approx(0.6)


def test_policy_spans_and_every_share_are_printed_with_their_range_and_interval():
    """An episode generated while the weights moved from v18 to v19 (``run.work.policy`` start
    18, end 19): the table names both, never only the version it started on."""
    last = rows(20, [0.5, 0.6, 0.7, 0.4], truncated=[True, False, False, False], policy=18)
    for row in last:
        row["policy_version_end"] = 19
    arm = collect.arm_report(rows(0, [0.1, 0.2, 0.3, 0.4], policy=0) + last)
    assert (arm["policy_first"], arm["policy_last"]) == ([0], [18, 19])
    table = collect.render({"arms": {"grpo": {**arm, "wall_clock_s": None}},
                            "head_to_head": {}})
    assert "(n=4 tasks, step 20, v18-v19)" in table and "(n=4 tasks, step 0, v0)" in table
    # truncated share after: 1 of 4 prompts -> 0.25, with its interval
    ci = arm["truncated_after"]["ci"]
    assert f"0.25 [{ci[0]:.2f}, {ci[1]:.2f}]" in table


# --- the collector on run folders laid out exactly as prime-rl writes them ------------------
# tests/fixtures/prime_rl/make_episodes.py (verifiers a60a606's Episode/Trace, the reverse-text
# taskset's own reward); its docstring has the per-prompt table the numbers below come from.

VOLUME = ROOT / "tests" / "fixtures" / "prime_rl" / "volume"
LAUNCHES = {"grpo": ("e2e-grpo", "fc-grpo-new"), "opsd": ("e2e-opsd", "fc-opsd-1"),
            "opd": ("e2e-opd", "fc-opd-1")}


def write_calls(out, launches=LAUNCHES):
    """calls.json as a launch writes it; its configs (relative to the working folder, out's
    parent in these tests) are the recipe's committed ones, which the noise floor reads."""
    out.mkdir(parents=True, exist_ok=True)
    calls = {arm: {"call_id": cid, "run_name": name, "config": f"configs/{arm}.toml",
                   "run_dir": f"{name}/{cid}"} for arm, (name, cid) in launches.items()}
    (out / "calls.json").write_text(json.dumps(calls))
    (out.parent / "configs").mkdir(exist_ok=True)
    for arm in launches:
        shutil.copyfile(RECIPE / "configs" / f"{arm}.toml", out.parent / "configs" / f"{arm}.toml")


def test_collector_reads_prime_rl_run_folders_and_prints_the_table(tmp_path):
    write_calls(tmp_path / "out")
    proc = run(["--collect", "--runs-dir", str(VOLUME), "--out", str(tmp_path / "out")], tmp_path)
    assert proc.returncode == 0, proc.stderr
    table = proc.stdout
    # every number with its interval and n (tasks scored), the step and the policy version
    cell = r"{} \[-?\d\.\d{{3}}, \d\.\d{{3}}\] \(n={} tasks, step {}, {}\)"
    # grpo: step 0 .25 .5 0(T) .5 -> .3125 (v0); step 20 1 .75 1 (E left out) -> .917 (v19)
    assert re.search(r"grpo   \| " + cell.format("0.312", 4, 0, "v0"), table)
    assert re.search(cell.format("0.917", 3, 20, "v19"), table)
    assert re.search(r"opsd   \| " + cell.format("0.375", 4, 0, "v0"), table)
    assert re.search(cell.format("0.500", 4, 20, "v18"), table)
    # opd: the episode with no trace (prompt 1) is counted, not scored: (.25 + .5 + 0) / 3
    assert re.search(r"opd\*   \| " + cell.format("0.250", 3, 0, "v0"), table)
    assert re.search(cell.format("0.938", 4, 20, "v19"), table)
    # the delta with its pairs: grpo pairs prompts 0-2 (3), opsd all four
    assert "(n=3 paired)" in table and "(n=4 paired)" in table
    assert "it measures the policy before the final weights" in table
    # no run records in this copy of the volume: each arm says so rather than guessing
    assert "grpo final weights: not named by its run record" in table
    rep = json.loads((tmp_path / "out" / "results.json").read_text())["report"]
    grpo, opsd, opd = (rep["arms"][a] for a in ("grpo", "opsd", "opd"))
    # paired prompts only: grpo 0-2 gain .75, .25, 1.0; opd 0, 2, 3 gain .75, .25, 1.0
    assert grpo["lcs_delta"]["delta"] == pytest.approx(2.0 / 3)
    assert grpo["lcs_delta"]["n_paired"] == 3 and grpo["lcs_delta"]["n_only_before"] == 1
    assert opsd["lcs_delta"]["delta"] == pytest.approx(0.5 / 4)
    assert opd["lcs_delta"]["delta"] == pytest.approx(2.0 / 3)
    assert (grpo["errored_first"], grpo["errored_last"]) == (0, 1)
    assert (opd["errored_first"], opd["errored_last"]) == (1, 0)
    assert (grpo["truncated_before"]["value"], opd["truncated_before"]["value"]) == \
        pytest.approx((0.25, 1 / 3))
    assert (grpo["policy_first"], grpo["policy_last"], opsd["policy_last"]) == ([0], [19], [18])
    assert rep["noise_floor"]["run_std"] == pytest.approx(statistics.stdev([0.3125, 0.375, 0.25]))
    # last eval, prompts both scored (0, 1, 2): opsd - grpo = -.5, 0, -.75; opd - grpo = 0, .25, -.25
    assert rep["head_to_head"]["opsd_vs_grpo"]["delta"] == pytest.approx(-1.25 / 3)
    assert rep["head_to_head"]["opd_vs_grpo"]["delta"] == pytest.approx(0.0)


@pytest.mark.slow
def test_an_earlier_launch_in_the_same_volume_changes_nothing(tmp_path):
    """e2e-grpo/ also holds fc-grpo-old (an earlier launch, all zeros): the collector reads only
    the run folder its calls.json names, so the numbers equal those of a volume without it."""
    alone = tmp_path / "alone"
    for name, cid in LAUNCHES.values():
        shutil.copytree(VOLUME / name / cid, alone / name / cid)
    reports = []
    for i, volume in enumerate((VOLUME, alone, VOLUME)):
        out = tmp_path / f"out{i}"
        write_calls(out)
        proc = run(["--collect", "--runs-dir", str(volume), "--out", str(out)], tmp_path)
        assert proc.returncode == 0, proc.stderr
        reports.append(json.loads((out / "results.json").read_text())["report"])
    assert reports[0] == reports[1] == reports[2]
    old = tmp_path / "old"
    write_calls(old, {"grpo": ("e2e-grpo", "fc-grpo-old")})
    proc = run(["--collect", "--runs-dir", str(VOLUME), "--out", str(old)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((old / "results.json").read_text())["report"]["arms"]["grpo"][
        "lcs_after"]["value"] == 0.0


def test_collect_refuses_calls_without_a_run_folder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "calls.json").write_text(json.dumps({"grpo": {"call_id": "fc-1", "run_name": "x"}}))
    proc = run(["--collect", "--runs-dir", str(VOLUME), "--out", str(out)], tmp_path)
    assert proc.returncode == 2 and "no run_dir" in proc.stderr and "Traceback" not in proc.stderr
    write_calls(out, {"grpo": ("e2e-grpo", "fc-missing")})
    proc = run(["--collect", "--runs-dir", str(VOLUME), "--out", str(out)], tmp_path)
    assert proc.returncode == 2 and "no run folder" in proc.stderr


def test_collect_names_the_arm_and_step_whose_every_episode_errored(tmp_path):
    """A last eval where every episode errored (e.g. the inference server was gone): the real
    errored episode of fc-grpo-new's step 20 (prompt 3, the provider error) alone in that file."""
    volume = tmp_path / "volume"
    run_dir = volume / "e2e-grpo" / "fc-grpo-new"
    shutil.copytree(VOLUME / "e2e-grpo" / "fc-grpo-new", run_dir)
    last = run_dir / "rollouts" / "step_20" / "eval" / "all" / "traces.jsonl"
    errored = [line for line in last.read_text().splitlines() if '"ok":false' in line]
    assert len(errored) == 1
    last.write_text(errored[0] + "\n")
    write_calls(tmp_path / "out", {"grpo": ("e2e-grpo", "fc-grpo-new")})
    proc = run(["--collect", "--runs-dir", str(volume), "--out", str(tmp_path / "out")], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    # the arm is named, and no arm is left to report
    assert "no arm to report: grpo: its eval rows: every eval episode at step 20 errored (1 of " \
           "1)" in proc.stderr
    assert "Fix: read that run's logs" in proc.stderr
    assert not (tmp_path / "out" / "results.json").exists()


def test_each_launch_gets_its_own_run_folder_and_prime_rl_s_own_python(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    app = load("modal_prime_rl")
    cmd = app.rl_command("/runs/e2e-grpo/fc-1.config.toml", "e2e-grpo", "fc-1")
    # prime-rl 559b447: run dir = output_dir / run.name; --clean empties only that folder
    assert cmd[:3] == ["uv", "run", "--no-sync"]
    assert cmd[cmd.index("--output-dir") + 1] == "/runs/e2e-grpo"
    assert cmd[cmd.index("--run.name") + 1] == "fc-1" and "--clean" in cmd
    assert app.eval_files(VOLUME / "e2e-grpo" / "fc-grpo-new") == [
        "rollouts/step_0/eval/all/traces.jsonl", "rollouts/step_20/eval/all/traces.jsonl"]
    assert app.deployed_gpus((GOLDEN / "reverse_text_grpo.toml").read_text()) == 2


def test_the_gpu_check_counts_what_rl_asks_for(monkeypatch, tmp_path):
    """prime-rl 559b447's rl (entrypoints/rl.py) requests num_infer_gpus (with [inference]) +
    num_train_gpus physical GPUs; gpus_per_node (default 8) only bounds them."""
    monkeypatch.setenv("HOME", str(tmp_path))
    app = load("modal_prime_rl")
    golden = (GOLDEN / "reverse_text_grpo.toml").read_text()
    wide = golden.replace("gpus_per_node = 2", "gpus_per_node = 8")
    assert wide != golden and app.deployed_gpus(wide) == 2  # 1 + 1 on an 8-GPU bound
    assert app.deployed_gpus("[deployment]\nnum_train_gpus = 2\n\n[inference]\n") == 3
    # no [inference]: rl serves no policy here, only the trainer's GPUs
    assert app.deployed_gpus("[deployment]\nnum_train_gpus = 1\nnum_infer_gpus = 1\n") == 1
    assert app.deployed_gpus('[deployment]\ntype = "multi_node"\ngpus_per_node = 4\n'
                             "num_train_nodes = 1\n") == 4
    import resource
    soft, hard = app.raise_nofile()
    assert soft >= min(32000, hard if hard != resource.RLIM_INFINITY else 32000)
    assert "readlink" not in app.PROBE and "torch.cuda.device_count()" in app.PROBE
    assert app.VENV_PYTHON == "/app/.venv/bin/python"


def test_icepop_configs_are_refused_before_launch(monkeypatch, tmp_path):
    from whileai_core.errors import ConfigError

    icepop = GOLDEN / "async_grpo_icepop.toml"
    run_py = load("run")
    with pytest.raises(ConfigError, match="whileai_core.methods.icepop.icepop_loss.*Fix"):
        run_py.modal_call("icepop-1", str(icepop))
    assert run_py.modal_call("ipo-1", str(GOLDEN / "async_grpo_ipo.toml"))["function"] == "train"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODAL_")}
    env["HOME"] = str(tmp_path)
    proc = subprocess.run([sys.executable, str(RECIPE / "modal_prime_rl.py"), "--config",
                           str(icepop), "--run-name", "icepop-1"], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=120)
    # refused for the loss before the token is even asked for
    assert proc.returncode == 2 and "does not contain whileai_core" in proc.stderr
    assert "MODAL_TOKEN_ID" not in proc.stderr and "Traceback" not in proc.stderr
