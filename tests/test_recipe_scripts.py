"""Recipe scripts from the outside: --help, flag validation, and no Modal token.

Each script runs in a subprocess with HOME pointing at an empty folder and no MODAL_* variables,
the state of a machine that never ran `modal token set`.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ["recipes/grpo/run.py", "recipes/dpo/run.py", "recipes/sft/run.py",
           "recipes/grpo/modal_grpo.py", "recipes/dpo/modal_dpo.py", "recipes/sft/modal_sft.py"]


def run(args, home, timeout=120):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODAL_")}
    env["HOME"] = str(home)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=home, timeout=timeout)


@pytest.mark.parametrize("script", SCRIPTS)
def test_help(script, tmp_path):
    proc = run([str(ROOT / script), "--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "--smoke" in proc.stdout and "--out" in proc.stdout


def test_prime_rl_modal_script_help(tmp_path):
    proc = run([str(ROOT / "recipes/prime-rl/modal_prime_rl.py"), "--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "--config" in proc.stdout and "--teacher" in proc.stdout


@pytest.mark.parametrize("script,args", [
    ("recipes/grpo/run.py", ["--run-name", "g1"]),
    ("recipes/dpo/run.py", ["--run-name", "d1", "--from-run", "g1"]),
    ("recipes/grpo/modal_grpo.py", ["--run-name", "g1"]),
    ("recipes/dpo/modal_dpo.py", ["--run-name", "d1"]),
    ("recipes/sft/run.py", ["--run-name", "s1"]),
    ("recipes/sft/modal_sft.py", ["--run-name", "s1"]),
    ("recipes/prime-rl/modal_prime_rl.py", ["--config", "recipes/prime-rl/configs/opd.toml",
                                            "--run-name", "opd-1"]),
])
def test_no_modal_token_is_one_line_and_exit_2(script, args, tmp_path):
    args = [str(ROOT / a) if a.endswith(".toml") else a for a in args]
    proc = run([str(ROOT / script), *args], tmp_path)
    assert proc.returncode == 2
    assert "MODAL_TOKEN_ID" in proc.stderr and "MODAL_TOKEN_SECRET" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_a_token_in_modal_toml_counts(tmp_path, monkeypatch):
    from recipes.modal_auth import has_modal_token

    for key in ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET", "MODAL_CONFIG_PATH", "MODAL_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert not has_modal_token()
    (tmp_path / ".modal.toml").write_text('[me]\ntoken_id = "ak-1"\ntoken_secret = "as-1"\n'
                                          'active = true\n')
    assert has_modal_token()
    monkeypatch.setenv("MODAL_PROFILE", "other")
    assert not has_modal_token()


@pytest.mark.parametrize("args,message", [
    (["--loss-type", "ppo"], "invalid choice: 'ppo'"),
    (["--beta", "-0.1"], "--beta: must be a number in [0, 1], got -0.1"),
    (["--beta", "nan"], "--beta: must be a number in [0, 1]"),
    (["--epsilon-high", "0.1"], "--epsilon-high: must be a number in [0.2, 10]"),
    (["--steps", "0"], "--steps: must be an integer in [1, 100000], got 0"),
    (["--num-generations", "1"], "--num-generations: must be an integer in [2, 64], got 1"),
    (["--learning-rate", "0"], "--learning-rate: must be a number in (0, 0.01]"),
    (["--balance", "0.6"], "--balance: must be a number in (0, 0.5], got 0.6"),
    (["--run-name", "../x"], "--run-name: must be 1-64 characters"),
    (["--prompts-file", "missing.jsonl"], "--prompts-file: no such file"),
])
def test_grpo_flags_are_refused_before_anything_starts(args, message, tmp_path):
    # No token here either: a bad flag must be reported first, by argparse, exit 2.
    proc = run([str(ROOT / "recipes/grpo/run.py"), *args], tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_grpo_bad_prompts_file_is_named_with_its_line(tmp_path):
    bad = tmp_path / "p.jsonl"
    bad.write_text('{"text": "refund", "category": "refunds"}\n')
    proc = run([str(ROOT / "recipes/grpo/run.py"), "--prompts-file", str(bad)], tmp_path)
    assert proc.returncode == 2
    assert f"--prompts-file {bad}, line 1: `category` is \"refunds\" (a string)" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_grpo_smoke_writes_results_with_rows(tmp_path):
    import json

    out = tmp_path / "out"
    proc = run([str(ROOT / "recipes/grpo/run.py"), "--smoke", "--out", str(out)], tmp_path,
               timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads((out / "results.json").read_text())
    holdout = results["prompts"]["holdout"]
    # 120 template prompts, 20% per category: 19 + 3 + 2 held out, 2 samples each in smoke
    assert holdout == {"with_id": 19, "no_id": 3, "off_topic": 2}
    assert len(results["before_rows"]) == len(results["after_rows"]) == 2 * 24
    assert set(results["summary"]["by_category"]) == {"with_id", "no_id", "off_topic"}
    assert results["train_steps"] == 2
    assert results["updates"]["changed_tensors"] == results["updates"]["trainable_tensors"] > 0
    assert all(g > 0 for g in results["updates"]["grad_norm"])
    row = results["after_rows"][0]
    assert {"task_id", "reward", "truncated", "model", "category"} <= set(row)
    # a second run into the same folder refuses to replace results.json without --force
    again = run([str(ROOT / "recipes/grpo/run.py"), "--smoke", "--out", str(out)], tmp_path,
                timeout=600)
    assert again.returncode == 2 and "already exists" in again.stderr


@pytest.mark.parametrize("args,message", [
    (["--beta", "0"], "--beta: must be a number in (0, 10], got 0"),
    (["--samples-per-prompt", "1"], "--samples-per-prompt: must be an integer in [2, 64], got 1"),
    (["--negative-share", "0.9"], "--negative-share: must be a number in [0, 0.5], got 0.9"),
    (["--max-chosen-longer", "1.5"], "--max-chosen-longer: must be a number in (0, 1]"),
    (["--min-margin", "x"], "--min-margin: must be a number, got 'x'"),
])
def test_dpo_flags_are_refused_before_anything_starts(args, message, tmp_path):
    proc = run([str(ROOT / "recipes/dpo/run.py"), *args], tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_dpo_smoke_from_a_missing_adapter_is_named(tmp_path):
    proc = run([str(ROOT / "recipes/dpo/run.py"), "--smoke", "--out", str(tmp_path / "o"),
                "--from-run", str(tmp_path / "nothing")], tmp_path)
    assert proc.returncode == 2
    assert "--from-run" in proc.stderr and "adapter_config.json" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_dpo_smoke_writes_results_pairs_and_adapter(tmp_path):
    import json

    out = tmp_path / "out"
    proc = run([str(ROOT / "recipes/dpo/run.py"), "--smoke", "--out", str(out)], tmp_path,
               timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads((out / "results.json").read_text())
    pairs = results["pairs"]
    assert pairs["n_pairs"] >= 1 and pairs["chosen_longer_share"] < 0.8
    assert pairs["constructed"] <= 0.5 * pairs["n_pairs"]
    # one epoch at 4 pairs a step (the smoke's sizes): ceil(pairs / 4) steps, never a fixed count
    assert results["train_steps"] == results["planned_steps"] == -(-pairs["n_pairs"] // 4)
    assert results["updates"]["changed_tensors"] > 0
    assert len(results["before_rows"]) == len(results["after_rows"]) == 2 * 24
    assert (out / "adapter" / "adapter_config.json").is_file()


@pytest.mark.parametrize("module,readme", [("recipes.grpo.run", "recipes/grpo/README.md"),
                                           ("recipes.dpo.run", "recipes/dpo/README.md"),
                                           ("recipes.sft.run", "recipes/sft/README.md")])
def test_readme_knobs_table_lists_every_flag_with_its_default(module, readme):
    import importlib
    import re

    parser = importlib.import_module(module).build_parser()
    text = (ROOT / readme).read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| `(--[a-z-]+)` \| ([^|]+) \|", text, flags=re.M))
    flags = {opt: action for action in parser._actions for opt in action.option_strings
             if opt.startswith("--") and opt != "--help"}
    assert set(flags) == set(table), set(flags) ^ set(table)
    for flag, action in flags.items():
        default = action.default
        if isinstance(default, bool) or default is None:
            continue
        shown = table[flag].strip().strip("`")
        assert shown == str(default), f"{readme}: {flag} says {shown}, parser default {default}"


def test_modal_call_hooks_name_the_deployed_function_and_valid_arguments(tmp_path):
    """The run registry spawns what `modal_call` says; the arguments must be what the
    function accepts (settings the dataclass validates, JSON-serialisable prompts)."""
    import importlib
    import importlib.util
    import json

    from recipes.dpo.train import DPOSettings
    from recipes.grpo.train import GRPOSettings
    from whileai_core.errors import ArgumentError

    for module, settings_cls, app, fn in (
            ("recipes.grpo.run", GRPOSettings, "whileai-grpo", "train_grpo"),
            ("recipes.dpo.run", DPOSettings, "whileai-dpo", "train_dpo")):
        call = importlib.import_module(module).modal_call("r-1", None)
        assert (call["app"], call["function"], call["kwargs"]) == (app, fn, {})
        settings, prompts = call["args"]
        assert settings_cls.from_dict(settings).run_name == "r-1"
        assert len(prompts) == 120 and json.loads(json.dumps(prompts)) == prompts
        with pytest.raises(ArgumentError, match="takes no config file"):
            importlib.import_module(module).modal_call("r-1", "x.toml")
    spec = importlib.util.spec_from_file_location("_prime_rl_run", ROOT / "recipes/prime-rl/run.py")
    prime = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prime)
    config = ROOT / "recipes/prime-rl/configs/opd.toml"
    call = prime.modal_call("opd-1", str(config))
    assert (call["app"], call["function"]) == ("whileai-prime-rl", "train")
    assert call["args"] == [config.read_text(encoding="utf-8"), "opd-1"]
    with pytest.raises(ArgumentError, match="runs a config"):
        prime.modal_call("opd-1", None)


def test_sft_modal_call_sends_settings_and_the_data_folders_contents(tmp_path):
    """The sft hook: default settings under the run name, and the data folder read here (the
    refund demo without one) as a payload the Modal function rebuilds and the settings parse."""
    import json

    from recipes.sft.data import SFTData
    from recipes.sft.run import modal_call
    from recipes.sft.train import SFTSettings
    from whileai_core.errors import ArgumentError

    call = modal_call("s-1", None)
    assert (call["app"], call["function"], call["kwargs"]) == ("whileai-sft", "train_sft", {})
    settings, payload = call["args"]
    assert SFTSettings.from_dict(settings).run_name == "s-1"
    demo = SFTData.from_payload(json.loads(json.dumps(payload)))
    assert (len(demo.conversations), len(demo.holdout)) == (96, 24)  # 120 prompts, 20% held out
    assert "def grade(ask, reply)" in demo.grader_source

    folder = tmp_path / "mine"
    folder.mkdir()
    conv = {"messages": [{"role": "user", "content": "say ok"},
                         {"role": "assistant", "content": "ok"}]}
    (folder / "train.jsonl").write_text(json.dumps(conv) + "\n" + json.dumps(conv) + "\n")
    (folder / "holdout.jsonl").write_text(json.dumps(
        {"task_id": "h1", "messages": [{"role": "user", "content": "reply with ok"}]}) + "\n")
    (folder / "grader.py").write_text("def grade(ask, reply):\n    return 1.0\n")
    mine = SFTData.from_payload(modal_call("s-2", None, data=str(folder))["args"][1])
    assert [c["source"] for c in mine.conversations] == [f"{folder / 'train.jsonl'}, line 1",
                                                        f"{folder / 'train.jsonl'}, line 2"]
    assert [h["task_id"] for h in mine.holdout] == ["h1"]
    with pytest.raises(ArgumentError, match="takes no config file"):
        modal_call("s-1", "x.toml")


@pytest.mark.parametrize("args,message", [
    (["--epochs", "0"], "--epochs: must be an integer in [1, 100], got 0"),
    (["--examples-per-step", "0"], "--examples-per-step: must be an integer in [1, 512], got 0"),
    (["--learning-rate", "1"], "--learning-rate: must be a number in (0, 0.01], got 1"),
    (["--holdout-share", "0.7"], "--holdout-share: must be a number in (0, 0.5], got 0.7"),
])
def test_sft_flags_are_refused_before_anything_starts(args, message, tmp_path):
    proc = run([str(ROOT / "recipes/sft/run.py"), *args], tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_sft_smoke_with_a_missing_data_file_is_named(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "train.jsonl").write_text("")
    proc = run([str(ROOT / "recipes/sft/run.py"), "--smoke", "--out", str(tmp_path / "o"),
                "--data", str(tmp_path / "d")], tmp_path)
    assert proc.returncode == 2
    assert "no holdout.jsonl, grader.py there" in proc.stderr
    assert "Traceback" not in proc.stderr
