"""GPU preflight: what the CPU tests cannot check, in under five minutes, with no network.

    python recipes/preflight.py                 # on the GPU machine, before the first paid run
    python recipes/preflight.py --out DIR       # also writes DIR/preflight.json
    python recipes/preflight.py --cpu           # only what a CPU can run (what the tests run)

The checks, in order (``recipes/README.md``, "GPU preflight"): versions, cuda, bf16, a tiny model
on disk, 2 GRPO + LoRA steps, vLLM colocate (where installed), the adapter on disk, memory,
offline (no Python TCP connect left the machine), the wall clock. A check whose prerequisite
failed, or that needs a GPU there is none of, is skipped and says why. Exit status 0 when
nothing failed (skips allowed), 1 when something did.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recipes import versions  # noqa: E402

TIME_LIMIT_S = 300.0  # convention: the preflight answers in under five minutes
VLLM_MEMORY_SHARE = 0.3  # TRL 1.16 GRPOConfig.vllm_gpu_memory_utilization default
PROMPTS = ("Name a fruit:", "Say hello:", "Count to three:", "Spell a word:")
VOWELS = set("aeiouAEIOU")


@dataclass
class Check:
    """One row of the table: ``status`` is ``pass``, ``FAIL`` or ``skipped``."""

    name: str
    status: str
    seconds: float
    detail: str


@dataclass
class Context:
    """What the checks hand each other (the model folder, the trainer, the network guard)."""

    workdir: Path
    gpu: bool
    state: dict = field(default_factory=dict)
    blocked: list = field(default_factory=list)


class Skip(Exception):
    """A check that cannot run here; the message says why."""


def check_versions(ctx: Context) -> str:
    return versions.check()


def check_cuda(ctx: Context) -> str:
    import torch

    if not ctx.gpu:
        if torch.cuda.is_available():
            raise Skip("--cpu: a CUDA device is visible and left unused")
        built = f"CUDA {torch.version.cuda}" if torch.version.cuda else "CPU only"
        raise Skip(f"no CUDA device visible to torch (torch {torch.__version__}, built {built})")
    if not torch.cuda.is_available():
        raise AssertionError(f"torch {torch.__version__} sees no CUDA device (built for CUDA "
                             f"{torch.version.cuda}). Fix: check the driver (nvidia-smi) and "
                             "CUDA_VISIBLE_DEVICES")
    major, minor = torch.cuda.get_device_capability(0)
    return (f"{torch.cuda.device_count()} x {torch.cuda.get_device_name(0)} (sm_{major}{minor}), "
            f"torch {torch.__version__} CUDA {torch.version.cuda}")


def check_bf16(ctx: Context) -> str:
    import torch

    if not ctx.gpu:
        raise Skip("needs a CUDA device")
    if not torch.cuda.is_bf16_supported():
        raise AssertionError("the device does not support bfloat16. Fix: an Ampere or newer GPU "
                             "(A10G, A100, H100), or train in float16")
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(512, 512, device="cuda", generator=gen)
    b = torch.randn(512, 512, device="cuda", generator=gen)
    exact = a @ b
    low = (a.bfloat16() @ b.bfloat16()).float()
    rel = float((low - exact).norm() / exact.norm())
    # bf16 keeps 8 bits of mantissa: a 512-long dot product lands near 2^-8 relative error
    if rel > 2e-2:
        raise AssertionError(f"bf16 matmul is off by {rel:.3g} relative to float32 (over 2e-2)")
    return f"bf16 supported; 512x512 matmul relative error {rel:.2e} against float32"


def check_tiny_model(ctx: Context) -> str:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from recipes.tiny_model import byte_tokenizer, tiny_model

    folder = ctx.workdir / "tiny-model"
    tokenizer = byte_tokenizer()
    # hidden 128 over 2 heads: head size 64, which every vLLM attention backend takes; Qwen2's
    # own bias-free output layer, so vLLM's Qwen2 loads every saved weight
    model = tiny_model(tokenizer, seed=0, hidden=128, end_bias=None)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    loaded = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True)
    AutoTokenizer.from_pretrained(folder, local_files_only=True)
    saved = dict(model.state_dict())
    for name, tensor in loaded.state_dict().items():
        if name in saved and not (saved[name] == tensor).all():
            raise AssertionError(f"{name} differs after save and load")
    ctx.state["model_dir"] = folder
    params = sum(p.numel() for p in loaded.parameters())
    return f"{params:,} parameters saved to {folder} and loaded back equal"


def _vowel_share(completions, **kwargs) -> list[float]:
    """A reward that differs within a group of random replies: the share of vowels."""
    return [sum(c in VOWELS for c in text) / max(len(text), 1) for text in completions]


def check_grpo(ctx: Context) -> str:
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer, PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    folder = ctx.state.get("model_dir")
    if folder is None:
        raise Skip("needs the tiny model on disk")
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    dtype = torch.bfloat16 if ctx.gpu else torch.float32
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, local_files_only=True)
    ctx.state["vllm"] = ctx.gpu and versions.installed("vllm") is not None
    vllm = dict(use_vllm=True, vllm_mode="colocate", vllm_gpu_memory_utilization=VLLM_MEMORY_SHARE,
                vllm_max_model_length=256) if ctx.state["vllm"] else {}
    config = GRPOConfig(
        output_dir=str(ctx.workdir / "grpo"), max_steps=2, learning_rate=0.05, seed=0,
        num_generations=4, per_device_train_batch_size=4, gradient_accumulation_steps=1,
        max_completion_length=16, temperature=1.0, beta=0.0, logging_steps=1, report_to="none",
        save_strategy="no", bf16=ctx.gpu, use_cpu=not ctx.gpu, disable_tqdm=True, **vllm)
    trainer = GRPOTrainer(
        model=model, reward_funcs=_vowel_share, args=config, processing_class=tokenizer,
        train_dataset=Dataset.from_list([{"prompt": p} for p in PROMPTS]),
        peft_config=LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, task_type="CAUSAL_LM",
                               target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]))
    trainer.remove_callback(PrinterCallback)  # the table is the output, not TRL's log lines
    start = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}
    trainer.train()
    changed = sum(not torch.equal(p.detach(), start[n])
                  for n, p in trainer.model.named_parameters() if n in start)
    if trainer.state.global_step != 2 or not changed:
        raise AssertionError(f"{trainer.state.global_step} steps, {changed} of {len(start)} LoRA "
                             "tensors changed (want 2 steps and a change)")
    ctx.state["trainer"] = trainer
    ctx.state["lora"] = {n: p.detach().cpu().float().clone()
                         for n, p in trainer.model.named_parameters() if n in start}
    where = "bf16 on the GPU" if ctx.gpu else "float32 on the CPU"
    how = "vLLM colocate" if ctx.state["vllm"] else "transformers generate"
    return f"2 steps, {changed} of {len(start)} LoRA tensors changed ({where}; sampled by {how})"


def check_vllm(ctx: Context) -> str:
    if not ctx.gpu:
        raise Skip("vLLM generates on a GPU only")
    if versions.installed("vllm") is None:
        raise Skip("vLLM is not installed; no recipe needs it (the TRL recipes sample with "
                   "transformers' generate, as the GRPO row did)")
    trainer = ctx.state.get("trainer")
    if trainer is None:
        raise Skip("needs the GRPO steps")
    generation = getattr(trainer, "vllm_generation", None)
    engine = getattr(generation, "llm", None)
    if not trainer.args.use_vllm or engine is None:
        raise AssertionError("the trainer did not build an in-process vLLM engine")
    completions = len(trainer._logs["completion"])
    return (f"{type(engine).__name__} in the trainer's process (colocate, "
            f"gpu_memory_utilization {VLLM_MEMORY_SHARE}) generated the last step's "
            f"{completions} completions with the adapter merged in")


def check_adapter(ctx: Context) -> str:
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    trainer = ctx.state.get("trainer")
    if trainer is None:
        raise Skip("needs the GRPO steps")
    folder = ctx.workdir / "adapter"
    trainer.save_model(str(folder))
    base = AutoModelForCausalLM.from_pretrained(ctx.state["model_dir"], local_files_only=True)
    loaded = PeftModel.from_pretrained(base, str(folder))
    trained = ctx.state["lora"]
    mismatched = [n for n, p in loaded.named_parameters()
                  if n in trained and not (p.detach().float() - trained[n]).abs().max() < 1e-2]
    found = sum(n in trained for n, _ in loaded.named_parameters())
    if mismatched or found != len(trained):
        raise AssertionError(f"{found} of {len(trained)} LoRA tensors found after loading, "
                             f"{len(mismatched)} differ (e.g. {mismatched[:1]})")
    return f"{found} LoRA tensors saved to {folder} and loaded back onto the saved model, equal"


def check_memory(ctx: Context) -> str:
    import resource

    import torch

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux -> GiB
    if not ctx.gpu:
        raise Skip(f"no device memory to read (process peak RSS {rss:.2f} GiB)")
    peak = torch.cuda.max_memory_allocated() / 2**30
    free, total = (x / 2**30 for x in torch.cuda.mem_get_info())
    reserved = f" (vLLM reserves {VLLM_MEMORY_SHARE:.0%})" if ctx.state.get("vllm") else ""
    return (f"torch peak allocated {peak:.2f} GiB; device used {total - free:.1f} of "
            f"{total:.1f} GiB{reserved}; process peak RSS {rss:.2f} GiB")


def check_offline(ctx: Context) -> str:
    if ctx.blocked:
        raise AssertionError(f"{len(ctx.blocked)} outbound TCP connect(s) attempted and refused: "
                             f"{sorted(set(map(str, ctx.blocked)))[:3]}")
    return ("no Python TCP connect left the machine (HF_HUB_OFFLINE=1; non-loopback "
            "socket.connect of stream sockets refused; UDP and native code not watched)")


CHECKS: list[tuple[str, Callable[[Context], str]]] = [
    ("versions", check_versions), ("cuda", check_cuda), ("bf16", check_bf16),
    ("tiny model on disk", check_tiny_model), ("GRPO + LoRA, 2 steps", check_grpo),
    ("vLLM colocate", check_vllm), ("adapter on disk", check_adapter),
    ("memory", check_memory), ("offline", check_offline),
]


# --- running them ------------------------------------------------------------------------------

class _NoNetwork:
    """Refuse (and count) every Python TCP connect to a host that is not this machine:
    ``socket.connect`` and ``connect_ex`` of an IPv4/IPv6 stream socket. A UDP ``connect`` sends
    nothing, so it is let through; native code's own sockets are not seen at all."""

    LOCAL = ("127.0.0.1", "::1", "localhost")

    def __init__(self, blocked: list) -> None:
        self.blocked = blocked
        self.original = (socket.socket.connect, socket.socket.connect_ex)

    def __enter__(self):
        blocked, local = self.blocked, self.LOCAL

        def guarded(original):
            def connect(sock, address, *args, **kwargs):
                host = address[0] if isinstance(address, tuple) else address
                if (sock.family in (socket.AF_INET, socket.AF_INET6)
                        and sock.type == socket.SOCK_STREAM and host not in local):
                    blocked.append(address)
                    raise OSError(f"preflight is offline: refused a TCP connect to {address!r}")
                return original(sock, address, *args, **kwargs)
            return connect

        socket.socket.connect = guarded(self.original[0])
        socket.socket.connect_ex = guarded(self.original[1])
        return self

    def __exit__(self, *exc) -> None:
        socket.socket.connect, socket.socket.connect_ex = self.original


def run_preflight(workdir: str | Path, *, gpu: bool | None = None) -> list[Check]:
    """Every check in order; ``gpu`` None asks torch. Never raises for a failed check."""
    for key, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"),
                       ("HF_DATASETS_OFFLINE", "1"), ("VLLM_NO_USAGE_STATS", "1"),
                       ("DO_NOT_TRACK", "1"), ("TOKENIZERS_PARALLELISM", "false"),
                       ("HF_HUB_DISABLE_PROGRESS_BARS", "1")):
        os.environ.setdefault(key, value)
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    if gpu is None:
        import torch

        gpu = torch.cuda.is_available()
    ctx = Context(workdir=Path(workdir), gpu=gpu)
    ctx.workdir.mkdir(parents=True, exist_ok=True)
    checks: list[Check] = []
    started = time.monotonic()
    with _NoNetwork(ctx.blocked):
        for name, run in CHECKS:
            t0 = time.monotonic()
            try:
                status, detail = "pass", run(ctx)
            except Skip as why:
                status, detail = "skipped", str(why)
            except Exception as exc:  # a failed check is a row of the table, not a traceback
                status, detail = "FAIL", f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
            checks.append(Check(name, status, round(time.monotonic() - t0, 2), detail))
    total = time.monotonic() - started
    checks.append(Check("wall clock", "pass" if total < TIME_LIMIT_S else "FAIL", round(total, 2),
                        f"{total:.0f} s of the {TIME_LIMIT_S:.0f} s budget"))
    return checks


def render(checks: list[Check], *, gpu: bool) -> str:
    width = max(len(c.name) for c in checks)
    lines = [f"{'check':<{width}} | status  | seconds | detail",
             f"{'-' * width}-|---------|---------|-------"]
    lines += [f"{c.name:<{width}} | {c.status:<7} | {c.seconds:>7.1f} | {c.detail}" for c in checks]
    skipped = [c.name for c in checks if c.status == "skipped"]
    failed = [c.name for c in checks if c.status == "FAIL"]
    if not gpu:
        lines.append(f"CPU only: skipped {len(skipped)} GPU check(s) ({', '.join(skipped)}); this "
                     "is not a GPU preflight. Run it on the GPU machine.")
    lines.append(f"verdict: {'FAIL (' + ', '.join(failed) + ')' if failed else 'pass'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="recipes/preflight.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for preflight.json and the saved model and adapter "
                             "(default: a temporary folder, removed after)")
    parser.add_argument("--cpu", action="store_true",
                        help="run only what a CPU can, even when a GPU is visible")
    args = parser.parse_args(argv)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="whileai-preflight-") as tmp:
        workdir = args.out or Path(tmp)
        checks = run_preflight(workdir, gpu=False if args.cpu else None)
        gpu = any(c.name == "cuda" and c.status == "pass" for c in checks)
        print(render(checks, gpu=gpu))
        if args.out is not None:
            report = {"gpu": gpu, "checks": [asdict(c) for c in checks]}
            (args.out / "preflight.json").write_text(json.dumps(report, indent=2))
    return 1 if any(c.status == "FAIL" for c in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
