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

from recipes import preflight  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("preflight")
    proc = subprocess.run([sys.executable, str(ROOT / "recipes/preflight.py"), "--cpu",
                           "--out", str(out)], capture_output=True, text=True, timeout=600,
                          cwd=out)
    return proc, json.loads((out / "preflight.json").read_text()), out


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
    assert preflight._pinned(have, op, want) is ok


def test_a_pin_miss_fails_the_versions_row_naming_the_package(monkeypatch, tmp_path):
    versions = {"torch": "2.13.0", "transformers": "5.18.1", "trl": "1.16.0", "peft": "0.21.2",
                "vllm": None}
    monkeypatch.setattr(preflight, "_version", versions.get)
    ctx = preflight.Context(workdir=tmp_path, gpu=True)
    with pytest.raises(AssertionError, match="transformers 5.18.1 is not <5.18; vllm is not "
                                             "installed"):
        preflight.check_versions(ctx)


def test_an_outbound_connection_is_refused_and_fails_the_offline_row(tmp_path):
    ctx = preflight.Context(workdir=tmp_path, gpu=False)
    with preflight._NoNetwork(ctx.blocked):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with pytest.raises(OSError, match="preflight is offline"):
            sock.connect(("192.0.2.1", 443))  # TEST-NET-1: never routed, never reached
        sock.close()
    assert ctx.blocked == [("192.0.2.1", 443)]
    with pytest.raises(AssertionError, match="1 outbound connection"):
        preflight.check_offline(ctx)
