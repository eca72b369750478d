"""The GPU preflight's CPU-possible parts, run for real, and what it says about the rest.

No GPU here: the CUDA, bf16, vLLM and device-memory rows must say "skipped" and why, and the
table must say that this was not a GPU preflight. The tiny model is saved and loaded, two real
GRPO steps with LoRA run on it from disk, and the trained adapter round-trips through disk.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")
torch = pytest.importorskip("torch")

from recipes import preflight, versions  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("preflight")
    proc = subprocess.run([sys.executable, str(ROOT / "recipes/preflight.py"), "--cpu",
                           "--out", str(out)], capture_output=True, text=True, timeout=600,
                          cwd=out)
    return proc, json.loads((out / "preflight.json").read_text()), out


@pytest.mark.slow
def test_cpu_run_passes_what_a_cpu_can_and_skips_the_rest_by_name(cpu_run):
    proc, report, out = cpu_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = {c["name"]: c for c in report["checks"]}
    assert list(rows) == [name for name, _ in preflight.CHECKS] + ["wall clock"]
    assert report["gpu"] is False
    for name in ("cuda", "bf16", "vLLM colocate", "memory"):
        assert rows[name]["status"] == "skipped", rows[name]
    assert rows["cuda"]["detail"].startswith("no CUDA device visible to torch")
    assert rows["vLLM colocate"]["detail"] == "vLLM generates on a GPU only"
    for name in ("versions", "tiny model on disk", "GRPO + LoRA, 2 steps", "adapter on disk",
                 "offline", "wall clock"):
        assert rows[name]["status"] == "pass", rows[name]
    assert "2 steps" in rows["GRPO + LoRA, 2 steps"]["detail"]
    # the table is the output: one header, one row per check, the CPU-only line, the verdict
    lines = proc.stdout.strip().splitlines()
    assert lines[0].startswith("check") and lines[-1] == "verdict: pass"
    assert lines[-2].startswith("CPU only: skipped 4 GPU check(s) (cuda, bf16, vLLM colocate, "
                                "memory)")
    assert len(lines) == 2 + len(rows) + 2


@pytest.mark.slow
def test_the_model_and_adapter_on_disk_load_without_the_preflight(cpu_run):
    """What it saved is a plain transformers folder and a plain PEFT adapter."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    _, _, out = cpu_run
    base = AutoModelForCausalLM.from_pretrained(out / "tiny-model", local_files_only=True)
    assert base.config.model_type == "qwen2" and base.config.num_hidden_layers == 2
    assert base.lm_head.bias is None  # Qwen2's own output layer: what vLLM loads
    model = PeftModel.from_pretrained(base, str(out / "adapter"))
    lora_b = [p for n, p in model.named_parameters() if "lora_B" in n]
    # PEFT starts lora_B at zero; two steps at learning rate 0.05 moved it
    assert lora_b and any(p.abs().max() > 0 for p in lora_b)


@pytest.mark.parametrize("have, op, want, ok", [
    ("1.16.0", "==", "1.16", True), ("1.16.3.dev0", "==", "1.16", True),
    ("1.17.0", "==", "1.16", False), ("5.17.2", "<", "5.18", True), ("5.18.0", "<", "5.18", False),
    ("0.31.1", "<=", "0.31", True), ("0.32.0", "<=", "0.31", False), ("0.10.2", "<=", "0.31", True),
])
def test_version_pins_compare_major_minor(have, op, want, ok):
    assert versions.pinned(have, op, want) is ok


# the borrowed GPU machine: torch 2.11, transformers 5.17, peft, accelerate; TRL and datasets
# brought along; no vLLM
GPU_MACHINE = {"torch": "2.11.0", "transformers": "5.17.0", "trl": "1.16.0", "peft": "0.21.2",
               "accelerate": "1.15.0", "datasets": "4.7.0", "vllm": None}
# each package's own stated requirements, as its METADATA lists them (TRL 1.16.0's; vLLM's torch
# pin is an exact one, as every vLLM release's is)
REQUIRES = {"trl": ["accelerate>=1.10.1", "datasets>=4.7.0", "transformers>=4.56.2",
                    'vllm<=0.31.0,>=0.22.0; extra == "vllm"', 'peft>=0.13.0; extra == "peft"'],
            "vllm": ["torch==2.10.0", "transformers>=4.56.0"]}


def test_a_pin_miss_fails_the_versions_row_naming_the_package_and_a_valid_fix(monkeypatch,
                                                                              tmp_path):
    from packaging.requirements import Requirement

    monkeypatch.setattr(versions, "installed", {**GPU_MACHINE, "transformers": "5.18.1"}.get)
    monkeypatch.setattr(versions, "_requires", lambda p: REQUIRES.get(p, []))
    ctx = preflight.Context(workdir=tmp_path, gpu=True)
    with pytest.raises(AssertionError, match="transformers 5.18.1 is not <5.18") as caught:
        preflight.check_versions(ctx)
    fix = str(caught.value).split("Fix: pip install ", 1)[1]
    for word in fix.split():  # every requirement in the hint is one pip accepts
        Requirement(word.strip("'"))
    assert "vllm" not in fix  # vLLM is not the problem, and not needed


def test_no_vllm_on_a_gpu_machine_passes_the_versions_and_skips_the_vllm_row(monkeypatch,
                                                                             tmp_path):
    monkeypatch.setattr(versions, "installed", GPU_MACHINE.get)
    monkeypatch.setattr(versions, "_requires", lambda p: REQUIRES.get(p, []))
    ctx = preflight.Context(workdir=tmp_path, gpu=True)
    assert "vllm not installed (no recipe needs it)" in preflight.check_versions(ctx)
    with pytest.raises(preflight.Skip, match="vLLM is not installed; no recipe needs it"):
        preflight.check_vllm(ctx)


def test_versions_that_do_not_fit_together_fail_by_name(monkeypatch, tmp_path):
    # vLLM 0.31 present, built for torch 2.10, beside torch 2.11; and datasets under TRL's floor
    monkeypatch.setattr(versions, "installed",
                        {**GPU_MACHINE, "vllm": "0.31.0", "datasets": "3.6.0"}.get)
    monkeypatch.setattr(versions, "_requires", lambda p: REQUIRES.get(p, []))
    with pytest.raises(AssertionError) as caught:
        preflight.check_versions(preflight.Context(workdir=tmp_path, gpu=True))
    assert "vllm 0.31.0 needs torch==2.10.0, found 2.11.0" in str(caught.value)
    assert "trl 1.16.0 needs datasets>=4.7.0, found 3.6.0" in str(caught.value)
    # TRL's vllm extra applies once vLLM is there: 0.32 is outside it
    monkeypatch.setattr(versions, "installed", {**GPU_MACHINE, "vllm": "0.32.0",
                                                "torch": "2.10.0"}.get)
    with pytest.raises(AssertionError, match=r"trl 1.16.0 needs vllm<=0.31.0,>=0.22.0, found "
                                             r"0.32.0"):
        preflight.check_versions(preflight.Context(workdir=tmp_path, gpu=True))


def test_an_outbound_tcp_connect_is_refused_and_fails_the_offline_row(tmp_path):
    ctx = preflight.Context(workdir=tmp_path, gpu=False)
    with preflight._NoNetwork(ctx.blocked):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with pytest.raises(OSError, match="preflight is offline"):
            sock.connect(("192.0.2.1", 443))  # TEST-NET-1: never routed, never reached
        with pytest.raises(OSError, match="preflight is offline"):
            sock.connect_ex(("192.0.2.1", 80))
        sock.close()
        # a UDP connect sends no packet (it only sets the default peer): not counted
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.connect(("192.0.2.1", 53))
        udp.close()
    assert ctx.blocked == [("192.0.2.1", 443), ("192.0.2.1", 80)]
    with pytest.raises(AssertionError, match="2 outbound TCP connect"):
        preflight.check_offline(ctx)
    assert "no Python TCP connect" in preflight.check_offline(
        preflight.Context(workdir=tmp_path, gpu=False))
