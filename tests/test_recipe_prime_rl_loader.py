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

import os
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
