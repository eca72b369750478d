"""The prime-rl recipe's committed configs as prime-rl 559b447 will run them: filesystem weight
broadcast, an explicit eval temperature and a distinct vLLM seed per arm.

Why these three: prime-rl resolves NCCL broadcast for a single-node full-weight config with
``[inference]`` (``packages/prime-rl-configs/src/prime_rl/configs/rl.py:449-460``), and its own
single-node CI configs force filesystem because NCCL init crashes the trainer
(``configs/ci/integration/reverse-text/start.toml``); an unset eval temperature samples at the
checkpoint's generation config; three engines at seed 0 make the three startup evals one sample,
not three re-runs. The first test reads the TOMLs themselves and passes them through our own
``validate_config`` (always runs); the second asks prime-rl's own loader what it resolves
(``bench/check_prime_rl_schema.py --show``; runs where ``WHILEAI_PRIME_RL_PYTHON`` and
``WHILEAI_PRIME_RL_CHECKOUT`` name a venv with prime-rl-configs 559b447 and its checkout, as
``tests/test_prime_rl_goldens.py`` does).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from whileai_core.prime_rl import validate_config

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "recipes" / "prime-rl" / "configs").glob("*.toml"))
SHOWN = ("weight_broadcast.type", "trainer.weight_broadcast.type",
         "orchestrator.weight_broadcast.type", "inference.weight_broadcast.type",
         "orchestrator.eval.sampling.temperature", "orchestrator.train.sampling.temperature",
         "inference.vllm.seed", "orchestrator.eval.sampling.top_p",
         "orchestrator.eval.sampling.top_k", "orchestrator.eval.sampling.min_p")
# What prime-rl 559b447's training sampler sends whatever the config says (configs/
# orchestrator.py: TrainSamplingConfig.to_sampling_args top_p 1.0; resolve_env_config top_k -1,
# min_p 0.0 for policy-sourced rollouts). The eval sampler sends only what its table sets, so the
# same values must be written there or vLLM takes the checkpoint's generation config.
TRAIN_SENDS = {"top_p": 1.0, "top_k": -1, "min_p": 0.0}


def test_every_committed_arm_config_sets_broadcast_eval_temperature_and_its_own_seed():
    assert [p.stem for p in CONFIGS] == ["grpo", "opd", "opsd"]
    seeds = {}
    for path in CONFIGS:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
        assert validate_config(path).ok, path.name
        assert config["deployment"]["type"] == "single_node"
        assert config["weight_broadcast"] == {"type": "filesystem"}, path.name
        # the training sampler's temperature is prime-rl's default 1.0 (none written for grpo,
        # opsd); the eval sampler must be the same number, written out
        train = config["orchestrator"]["train"]["sampling"].get("temperature", 1.0)
        assert config["orchestrator"]["eval"]["sampling"]["temperature"] == train == 1.0
        for key, sent in TRAIN_SENDS.items():
            assert config["orchestrator"]["eval"]["sampling"][key] == sent, (path.name, key)
        seeds[path.stem] = config["inference"]["vllm"]["seed"]
    assert len(set(seeds.values())) == 3, seeds


@pytest.mark.skipif(not (os.environ.get("WHILEAI_PRIME_RL_PYTHON")
                         and os.environ.get("WHILEAI_PRIME_RL_CHECKOUT")),
                    reason="set WHILEAI_PRIME_RL_PYTHON (a venv with prime-rl-configs 559b447) and "
                           "WHILEAI_PRIME_RL_CHECKOUT to ask prime-rl's own loader")
def test_prime_rls_loader_resolves_filesystem_broadcast_eval_temperature_and_seeds():
    script = ROOT / "bench" / "check_prime_rl_schema.py"
    run = subprocess.run([os.environ["WHILEAI_PRIME_RL_PYTHON"], str(script), "--show",
                          ",".join(SHOWN), os.environ["WHILEAI_PRIME_RL_CHECKOUT"],
                          *map(str, CONFIGS)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = {line.split(":")[0]: line for line in run.stdout.splitlines() if ".toml:" in line}
    seeds = set()
    for path in CONFIGS:
        values = dict(item.split("=", 1) for item in lines[path.name].split()[2:])
        for key in SHOWN[:4]:  # the shared choice and what it set in each component
            assert values[key] == "filesystem", (path.name, key, values)
        assert values["orchestrator.eval.sampling.temperature"] == "1.0", values
        assert values["orchestrator.train.sampling.temperature"] == "1.0", values
        for key, sent in TRAIN_SENDS.items():
            assert values[f"orchestrator.eval.sampling.{key}"] == str(sent), values
        seeds.add(values["inference.vllm.seed"])
    assert len(seeds) == len(CONFIGS) and "0" not in seeds


# --- the GRPO arm's final weights as a clean OPD teacher -----------------------------------------

RECIPE = ROOT / "recipes" / "prime-rl"
VOLUME = ROOT / "tests" / "fixtures" / "prime_rl" / "volume"
STUDENT = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"


def _load(name):
    import importlib.util
    import sys

    sys.path.insert(0, str(RECIPE))  # run.py imports its siblings by name, as when run
    spec = importlib.util.spec_from_file_location(f"_loader_{name}", RECIPE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(args, cwd):
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("MODAL_")}
    env["HOME"] = str(cwd)
    return subprocess.run([sys.executable, str(RECIPE / "run.py"), *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=300)


@pytest.fixture(scope="module")
def clean_opd(tmp_path_factory):
    """The path a user takes, command by command: the grpo arm's run as the container leaves
    it (keep_run copies its run folder, its last broadcast and the student's config and
    tokenizer from the hub cache to the volume; write_record puts its record beside it), then
    ``run.py --collect --runs-dir`` on that copy of the volume, then ``run.py --dry-run
    --teacher-from`` the collected folder. Returns (the clean opd config, the collect's stdout,
    the volume, the teacher's folder on it)."""
    import shutil

    tmp = tmp_path_factory.mktemp("clean-opd")
    os.environ.setdefault("HOME", str(tmp))
    app = _load("modal_prime_rl")
    local = tmp / "local" / "e2e-grpo"
    shutil.copytree(VOLUME / "e2e-grpo" / "fc-grpo-new", local / "fc-grpo-new")
    for step in (19, 20):  # prime-rl keeps the last two broadcasts, each whole with STABLE
        folder = local / "fc-grpo-new" / "broadcasts" / f"step_{step}"
        folder.mkdir(parents=True)
        for name in ("model-00001-of-00001.safetensors", "model.safetensors.index.json", "STABLE"):
            (folder / name).write_text(f"v{step} {name}")
    snapshot = tmp / "hub" / f"models--{STUDENT.replace('/', '--')}" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors"):
        (snapshot / name).write_text(name)
    volume = tmp / "volume"
    record = {"returncode": 0, "run_name": "e2e-grpo", "launch_id": "fc-grpo-new",
              "run_dir": "e2e-grpo/fc-grpo-new", "wall_clock_s": 884.0, "log_tail": "done",
              "kept": app.keep_run(local, volume / "e2e-grpo", "fc-grpo-new", model=STUDENT,
                                   hub_cache=tmp / "hub")}
    app.write_record(volume / "e2e-grpo", "fc-grpo-new", record)
    first = tmp / "first"
    first.mkdir()
    (first / "calls.json").write_text(json.dumps({"grpo": {
        "call_id": "fc-grpo-new", "run_name": "e2e-grpo", "run_dir": "e2e-grpo/fc-grpo-new",
        "config": str(RECIPE / "configs" / "grpo.toml")}}))
    collected = _run(["--collect", "--runs-dir", str(volume), "--out", str(first)], tmp)
    assert collected.returncode == 0, collected.stderr
    clean = _run(["--dry-run", "--teacher-from", str(first), "--out", str(tmp / "clean")], tmp)
    assert clean.returncode == 0, clean.stderr
    return (tmp / "clean" / "configs" / "opd.toml", collected.stdout + clean.stdout, volume,
            volume / "e2e-grpo" / "fc-grpo-new" / "broadcasts" / "step_20")


def test_the_grpo_arm_teaches_a_clean_opd_arm_from_its_kept_final_weights(clean_opd):
    config_path, printed, volume, teacher_folder = clean_opd
    # the collect names the final weights; the dry run says whose they are
    assert ("grpo final weights (v20): whileai-prime-rl-runs:/e2e-grpo/fc-grpo-new/broadcasts/"
            "step_20; full weights with " + STUDENT) in printed
    # the collect sets each billed part the record timed beside the forecast of its config
    # (rl's 884 s, fitted to this very run; the copy the fixture took, a fraction of a second)
    assert re.search(r"grpo time: rl 14\.7 min \(forecast 14\.7 min, 1\.00x\); checkpoint "
                     r"copy \d+ s \(forecast 17 s", printed), printed
    assert "opd teacher: the grpo arm's final weights whileai-prime-rl-runs:/e2e-grpo/" \
           "fc-grpo-new/broadcasts/step_20 (served from /runs/e2e-grpo/fc-grpo-new/" \
           "broadcasts/step_20" in printed
    config = tomllib.loads(config_path.read_text())
    assert config["orchestrator"]["algo"] == {"type": "opd", "teacher": {
        "name": "/runs/e2e-grpo/fc-grpo-new/broadcasts/step_20",
        "base_url": "http://localhost:8001/v1"}}
    assert validate_config(config_path).ok
    # only the teacher differs from the committed opd arm
    committed = tomllib.loads((RECIPE / "configs" / "opd.toml").read_text())
    committed["orchestrator"]["algo"]["teacher"] = config["orchestrator"]["algo"]["teacher"]
    assert committed == config
    # what the teacher's server will load is on the volume, servable on its own: v20's shards
    # (not v19's) and the student's config and tokenizer, not its weights
    assert sorted(p.name for p in teacher_folder.iterdir()) == [
        "STABLE", "config.json", "model-00001-of-00001.safetensors",
        "model.safetensors.index.json", "tokenizer.json", "tokenizer_config.json"]
    assert (teacher_folder / "model-00001-of-00001.safetensors").read_text().startswith("v20")
    app = _load("modal_prime_rl")
    assert app.missing_weights(str(teacher_folder)) is None
    # train() starts that teacher itself, beside the policy on GPU 0
    run = _load("run")
    starts, why = run.starts_teacher(config_path.read_text())
    assert starts, why
    assert app.local_teacher(config_path.read_text())[:2] == (
        "/runs/e2e-grpo/fc-grpo-new/broadcasts/step_20", 8001)
    # the run's record on the volume says where, with no Modal call
    record = json.loads((volume / "e2e-grpo" / "fc-grpo-new.record.json").read_text())
    assert record["kept"]["final_weights"] == "broadcasts/step_20"


def test_teacher_from_a_folder_without_collected_grpo_weights_is_one_clear_error(tmp_path):
    proc = _run(["--dry-run", "--teacher-from", str(tmp_path / "nothing"), "--out",
                 str(tmp_path / "clean")], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--teacher-from" in proc.stderr and "Fix:" in proc.stderr
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "results.json").write_text(json.dumps(
        {"runs": {}, "missing": {"grpo": "still running. Fix: --collect again later"}}))
    proc = _run(["--dry-run", "--teacher-from", str(tmp_path / "half"), "--out",
                 str(tmp_path / "clean")], tmp_path)
    assert proc.returncode == 2 and "names no final weights of a finished grpo arm (still " \
                                   "running" in proc.stderr
    proc = _run(["--dry-run", "--teacher-from", str(tmp_path / "half"), "--arms", "grpo",
                 "--out", str(tmp_path / "clean")], tmp_path)
    assert proc.returncode == 2 and "trains the opd arm alone" in proc.stderr
    proc = _run(["--collect", "--teacher-from", str(tmp_path / "half"), "--out",
                 str(tmp_path / "clean")], tmp_path)
    assert proc.returncode == 2 and "drop one" in proc.stderr


@pytest.mark.skipif(not (os.environ.get("WHILEAI_PRIME_RL_PYTHON")
                         and os.environ.get("WHILEAI_PRIME_RL_CHECKOUT")),
                    reason="set WHILEAI_PRIME_RL_PYTHON (a venv with prime-rl-configs 559b447) and "
                           "WHILEAI_PRIME_RL_CHECKOUT to ask prime-rl's own loader")
def test_prime_rls_loader_accepts_the_clean_opd_config_and_its_teacher(clean_opd):
    config_path = clean_opd[0]
    script = ROOT / "bench" / "check_prime_rl_schema.py"
    keys = ("orchestrator.algo.type", "orchestrator.algo.teacher.name",
            "orchestrator.algo.teacher.base_url", *SHOWN)
    run = subprocess.run([os.environ["WHILEAI_PRIME_RL_PYTHON"], str(script), "--show",
                          ",".join(keys), os.environ["WHILEAI_PRIME_RL_CHECKOUT"],
                          str(config_path)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    line = next(line for line in run.stdout.splitlines() if "opd.toml:" in line)
    values = dict(item.split("=", 1) for item in line.split()[2:])
    assert values["orchestrator.algo.type"] == "opd"
    assert values["orchestrator.algo.teacher.name"] == "/runs/e2e-grpo/fc-grpo-new/broadcasts/step_20"
    assert values["orchestrator.algo.teacher.base_url"] == "http://localhost:8001/v1"
    assert values["weight_broadcast.type"] == "filesystem"
    for key, sent in TRAIN_SENDS.items():
        assert values[f"orchestrator.eval.sampling.{key}"] == str(sent), values
