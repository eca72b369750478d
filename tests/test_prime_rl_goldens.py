"""Golden prime-rl TOMLs: one per method, correction, LoRA and deployment variant.

Each golden file was reviewed by hand against prime-rl@559b447's schema
(packages/prime-rl-configs/src/prime_rl/configs/) and checked by
prime-rl's own loader at 559b447 (``bench/check_prime_rl_schema.py``; see the README section).
Regenerate after an intended change with ``WHILEAI_UPDATE_GOLDENS=1 pytest
tests/test_prime_rl_goldens.py`` and review the diff; a missing golden fails.
"""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from whileai_core.methods import OPD, OPSD, Async, Endpoint
from whileai_core.prime_rl import prime_rl_config, reverse_text_arms, validate_config

GOLDEN = Path(__file__).parent / "golden" / "prime_rl"
UPDATE = os.environ.get("WHILEAI_UPDATE_GOLDENS") == "1"

SFT = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"
TEACHER = Endpoint("http://localhost:8001/v1", "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL")
ARMS = reverse_text_arms()

CASES: dict[str, dict] = {
    # the prime-rl recipe's three arms (full weights, 2 GPUs)
    "reverse_text_grpo": ARMS["grpo"],
    "reverse_text_opsd": ARMS["opsd"],
    "reverse_text_opd": ARMS["opd"],
    # methods, LoRA on (the default)
    "grpo_lora": dict(taskset="reverse-text", method="grpo", model=SFT, steps=20, max_tokens=128),
    "max_rl": dict(taskset="reverse-text", method="max_rl", model=SFT, steps=20, max_tokens=128),
    "rae_group1": dict(taskset="kuhn-poker", method="rae", model="Qwen/Qwen3-0.6B", steps=20,
                       batch=32, max_tokens=512, seq_len=4096),
    "opd_lora_remote_teacher": dict(taskset="reverse-text", model="Qwen/Qwen3-8B", steps=50,
                                    method=OPD(Endpoint("http://teacher.internal:8000/v1",
                                                        "Qwen/Qwen3-32B"), top_k=32)),
    "opsd_8b_hint": dict(taskset="reverse-text", model="Qwen/Qwen3-8B", steps=50, batch=64,
                         method=OPSD("hint", anchor="live"), max_tokens=1024),
    "async_grpo_ipo": dict(taskset="reverse-text", model=SFT, steps=20, max_tokens=128,
                           method=Async("grpo", correction="ipo", off_policy_steps=4)),
    "async_grpo_icepop": dict(taskset="reverse-text", model=SFT, steps=20, max_tokens=128,
                              method=Async("grpo", correction="icepop")),
    "async_opd_ipo": dict(taskset="reverse-text", model=SFT, steps=20, max_tokens=128, lora=False,
                          method=Async(OPD(TEACHER), correction="ipo")),
    # deployments
    "grpo_8gpus_full": dict(taskset="reverse-text", method="grpo", model="Qwen/Qwen3-8B",
                            gpus=8, inference_gpus=2, lora=False, steps=100, max_tokens=2048),
    "grpo_2nodes": dict(taskset="reverse-text", method="grpo", model="Qwen/Qwen3-8B", gpus=8,
                        nodes=2, lora=False, steps=100, max_tokens=2048, run_name="rt-2nodes"),
    "grpo_2nodes_lora": dict(taskset="reverse-text", method="grpo", model="Qwen/Qwen3-8B",
                             gpus=8, nodes=2, steps=100, max_tokens=2048),
    "grpo_self_served_policy": dict(taskset="reverse-text", method="grpo", model=SFT, steps=20,
                                    max_tokens=128, serve_policy=False),
}


def _render(name: str) -> str:
    return prime_rl_config(**CASES[name]).text


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name: str) -> None:
    path = GOLDEN / f"{name}.toml"
    text = _render(name)
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), (f"missing golden {path}; create it with WHILEAI_UPDATE_GOLDENS=1 pytest "
                           f"{Path(__file__).name}")
    assert text == path.read_text(encoding="utf-8"), (
        f"{name} differs from its golden; if intended, rerun with WHILEAI_UPDATE_GOLDENS=1 and "
        "review the diff")


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.toml")), ids=lambda p: p.stem)
def test_every_committed_golden_parses_and_passes_our_check(path: Path) -> None:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert "trainer" in data and "orchestrator" in data
    check = validate_config(path)
    assert check.ok, check.errors


def test_every_golden_file_has_a_case() -> None:
    assert {p.stem for p in GOLDEN.glob("*.toml")} == set(CASES)


@pytest.mark.skipif(not (os.environ.get("WHILEAI_PRIME_RL_PYTHON")
                         and os.environ.get("WHILEAI_PRIME_RL_CHECKOUT")),
                    reason="set WHILEAI_PRIME_RL_PYTHON (a venv with prime-rl-configs 559b447) and "
                           "WHILEAI_PRIME_RL_CHECKOUT to check the goldens with prime-rl itself")
def test_goldens_are_accepted_by_prime_rl_itself():
    script = Path(__file__).parent.parent / "bench" / "check_prime_rl_schema.py"
    files = [str(p) for p in sorted(GOLDEN.glob("*.toml"))]
    run = subprocess.run([os.environ["WHILEAI_PRIME_RL_PYTHON"], str(script), "--agree",
                          os.environ["WHILEAI_PRIME_RL_CHECKOUT"], *files],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{len(files)}/{len(files)} accepted" in run.stdout
