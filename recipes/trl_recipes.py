"""What the TRL recipes (``grpo/``, ``dpo/``, ``sft/``) share: flags, settings, a round, run.py.

What differs (the trainer, the method's flags, what is printed besides the summary) stays in each
recipe. Heavy imports (peft, modal) are inside the functions that need them.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import fields
from pathlib import Path

from recipes.flags import existing_file, float_in, int_in, run_name
from recipes.grpo.prompts import (balance, category_counts, load_prompts, split_holdout,
                                   write_prompts)
from recipes.holdout import render_summary, sample_holdout
from recipes.launch import check_out, write_results
from recipes.modal_auth import require_modal_token
from whileai_core.errors import ArgumentError, ConfigError

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


# --- flags and settings ----------------------------------------------------------------------

def add_run_arguments(parser: argparse.ArgumentParser, defaults, *, seed_help: str) -> None:
    """The first flags of every TRL recipe: ``--model``, ``--run-name``, ``--steps`` or
    ``--epochs`` (whichever the settings have), ``--seed``."""
    add = parser.add_argument
    add("--model", default=defaults.model,
        help="policy checkpoint on the hub (default %(default)s)")
    add("--run-name", type=run_name, default=defaults.run_name,
        help="folder on the runs volume (default %(default)s)")
    if hasattr(defaults, "epochs"):
        add("--epochs", type=int_in(1, 100), default=defaults.epochs,
            help="passes over the data; the steps are epochs x ceil(examples / batch) "
                 "(default %(default)s)")
    else:
        add("--steps", type=int_in(1, 100_000), default=defaults.steps,
            help="optimizer steps (default %(default)s)")
    add("--seed", type=int_in(0, 2**31 - 1), default=defaults.seed, help=seed_help)


def steps_for_epochs(n_examples: int, batch: int, epochs: int) -> int:
    """Optimizer steps the Trainer takes for ``epochs`` passes over ``n_examples`` at ``batch``
    a step (the last step of a pass may be short)."""
    return epochs * -(-n_examples // batch)


def add_lora_arguments(parser: argparse.ArgumentParser, defaults) -> None:
    add = parser.add_argument
    add("--lora-r", type=int_in(1, 512), default=defaults.lora_r,
        help="LoRA rank (default %(default)s)")
    add("--lora-alpha", type=int_in(1, 1024), default=defaults.lora_alpha,
        help="LoRA alpha (default %(default)s)")


def add_lora_and_holdout_arguments(parser: argparse.ArgumentParser, defaults) -> None:
    """The LoRA size, the holdout, ``--balance`` and ``--prompts-file`` of the refund recipes."""
    add_lora_arguments(parser, defaults)
    add = parser.add_argument
    add("--holdout-share", type=float_in(0.0, 0.5, low_open=True), default=defaults.holdout_share,
        help="share of situations held out per category (default %(default)s)")
    add("--holdout-samples", type=int_in(1, 64), default=defaults.holdout_samples,
        help="samples per holdout prompt, before and after (default %(default)s)")
    add("--balance", type=float_in(0.0, 0.5, low_open=True), default=None, metavar="SHARE",
        help="repeat prompts of any category under SHARE of the train split (train only)")
    add("--prompts-file", type=existing_file, default=None,
        help="a frozen prompt set (JSONL) instead of the template writer at --seed")


def settings_from_flags(settings_class, args: argparse.Namespace):
    """``settings_class`` built from the parsed flags that are its fields (the rest ignored)."""
    names = {f.name for f in fields(settings_class)}
    return settings_class(**{k: v for k, v in vars(args).items() if k in names})


def settings_from_dict(settings_class, data: dict, *, recipe: str):
    """``settings_class(**data)``; a key that is not a field raises ``ArgumentError`` naming it."""
    known = {f.name for f in fields(settings_class)}
    extra = set(data) - known
    if extra:
        raise ArgumentError(f"unknown {recipe} settings {sorted(extra)}; known: {sorted(known)}")
    return settings_class(**data)


def prompt_records(settings, prompts_file: str | Path | None = None) -> list[dict]:
    """The prompt set: the file when given (validated line by line), else the template writer."""
    return load_prompts(prompts_file) if prompts_file else write_prompts(settings.seed)


# --- one training round: holdout before, train, holdout after --------------------------------

def train_and_holdout(records: Sequence[dict], settings) -> tuple[list, list]:
    """The train split (balanced when ``settings.balance``) and the holdout, seeded by ``seed``."""
    train, holdout = split_holdout(records, settings.holdout_share, seed=settings.seed)
    if settings.balance:
        train = balance(train, settings.balance)
    return train, holdout


def prompt_counts(records: Sequence[dict], train: Sequence[dict], holdout: Sequence[dict]) -> dict:
    """``results.json``'s ``prompts``: the total, and the train and holdout splits by category."""
    return {"total": len(records), "train": category_counts(train),
            "holdout": category_counts(holdout)}


def build_lora_config(settings, target_modules: Sequence[str] = LORA_TARGETS):
    from peft import LoraConfig

    return LoraConfig(r=settings.lora_r, lora_alpha=settings.lora_alpha, lora_dropout=0.0,
                      target_modules=list(target_modules), task_type="CAUSAL_LM")


def _holdout_sampling(settings) -> dict:
    return dict(samples=settings.holdout_samples, seed=settings.seed,
                max_new_tokens=settings.max_completion_tokens)


def sample_before(model, tokenizer, holdout: Sequence[dict], settings, *,
                  model_label: str) -> list[dict]:
    """The holdout's graded rows from ``model`` before training, labelled ``model_label``."""
    return sample_holdout(model, tokenizer, holdout, label=model_label,
                          **_holdout_sampling(settings))


def train_and_sample_after(trainer, tokenizer, holdout: Sequence[dict], settings, *,
                           model_label: str) -> tuple[list[dict], float, dict]:
    """``trainer.train()``, then the holdout's graded rows from the trained policy; returns
    (rows, training wall-clock seconds, :func:`weight_updates`)."""
    wall, updates = train_measured(trainer)
    after = sample_holdout(trainer.model, tokenizer, holdout,
                           label=f"{model_label}+lora:{settings.run_name}",
                           **_holdout_sampling(settings))
    return after, wall, updates


# --- did training move anything, how fast, on what? ---------------------------------------------

def step_clock():
    """A ``TrainerCallback`` that times each optimizer step, waiting for the GPU's queued work at
    both ends so a step's time is its own, not the next one's."""
    from transformers import TrainerCallback

    def now() -> float:
        import torch

        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()
        return time.monotonic()

    class StepClock(TrainerCallback):
        def __init__(self) -> None:
            self.seconds: list[float] = []
            self._start: float | None = None

        def on_step_begin(self, args, state, control, **kwargs):
            self._start = now()

        def on_step_end(self, args, state, control, **kwargs):
            if self._start is not None:
                self.seconds.append(round(now() - self._start, 4))
                self._start = None

    return StepClock()


def train_measured(trainer) -> tuple[float, dict]:
    """``trainer.train()``; returns (wall-clock seconds, :func:`weight_updates` with each
    optimizer step's seconds)."""
    start = trainable_snapshot(trainer.model)
    clock = step_clock()
    trainer.add_callback(clock)
    started = time.monotonic()
    trainer.train()
    wall = time.monotonic() - started
    return wall, weight_updates(trainer, start, step_seconds=clock.seconds)


def runtime(trainer) -> dict:
    """What the trainer really ran on: device, weights dtype, bf16, gradient checkpointing."""
    model = trainer.model
    params = list(model.parameters())
    frozen = next((p for p in params if not p.requires_grad), params[0])
    return {"device": str(frozen.device), "weights_dtype": str(frozen.dtype).removeprefix("torch."),
            "bf16": bool(trainer.args.bf16),
            "gradient_checkpointing": bool(getattr(model, "is_gradient_checkpointing", False))}


def trainable_snapshot(model) -> dict:
    """A copy of every trainable tensor (the LoRA weights), to measure what training changed."""
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def weight_updates(trainer, start: dict, *, step_seconds: Sequence[float] = ()) -> dict:
    """What the optimizer did: the trainable tensors that changed, the L2 norm of the change, the
    gradient norm TRL logged each step (before clipping), each step's seconds, :func:`runtime`."""
    import torch

    now = dict(trainer.model.named_parameters())
    squared = 0.0
    changed = 0
    for name, before in start.items():
        diff = (now[name].detach().float() - before.float())
        total = float(torch.sum(diff * diff))
        squared += total
        changed += total > 0
    grad = [float(h["grad_norm"]) for h in trainer.state.log_history if "grad_norm" in h]
    return {"trainable_tensors": len(start), "changed_tensors": int(changed),
            "change_l2": squared ** 0.5, "grad_norm": grad, "step_seconds": list(step_seconds),
            "runtime": runtime(trainer)}


def require_weights_moved(results: dict, recipe: str) -> None:
    """The smoke's promise: the trainer really trained (nonzero gradient, changed weights)."""
    updates = results["updates"]
    if not updates["changed_tensors"] or not any(g > 0 for g in updates["grad_norm"]):
        raise ConfigError(
            f"the {recipe} smoke trained {results.get('train_steps')} steps but no weight changed "
            f"(gradient norms {updates['grad_norm']}): the loss had no gradient",
            fix="a bug in the "
            "recipe's data or trainer wiring; the smoke must move the adapter")


# --- run.py: the smoke path or one Modal function ---------------------------------------------

def launch_on_modal(app_module: str, function: str, settings, records: list[dict]) -> dict:
    """Run ``function`` of the Modal app in ``app_module`` once, streaming its output. Detached
    (modal ``App.run(detach=True)``): a client that stops leaves the run going, and the function
    saves its adapter and ``results.json`` on the runs volume itself."""
    import importlib

    import modal

    module = importlib.import_module(app_module)
    with modal.enable_output(), module.app.run(detach=True):
        return getattr(module, function).remote(settings.to_dict(), records)


def registry_call(recipe: str, app: str, function: str, settings,
                  config_path: str | None) -> dict:
    """What the run registry spawns for a TRL recipe: the deployed ``app``'s ``function`` with
    ``settings`` and the template prompts at their seed."""
    if config_path is not None:
        raise ArgumentError(f"the {recipe} recipe takes no config file, got {config_path!r}",
                            fix="launch the recipe by name")
    return {"app": app, "function": function,
            "args": [settings.to_dict(), prompt_records(settings)], "kwargs": {}}


def run_and_write_results(args: argparse.Namespace, settings, *,
                          smoke: Callable[[object, list[dict], Path], dict],
                          launch: Callable[[object, list[dict]], dict]) -> tuple[dict, Path]:
    """``run.py`` once the settings are valid: ``smoke(settings, records, out)`` with ``--smoke``,
    else ``launch(settings, records)`` on Modal; writes results.json. Returns (results, path)."""
    check_out(args.out, overwrite=args.force)
    records = prompt_records(settings, args.prompts_file)
    if args.smoke:
        if args.out is None:
            raise ArgumentError("--smoke needs --out DIR (where results.json goes)")
        results = smoke(settings, records, args.out)
    else:
        require_modal_token()
        results = launch(settings, records)
    path = write_results(args.out or Path("results") / settings.run_name, results,
                         overwrite=args.force)
    return results, path


def print_report(results: dict, path: Path, notes: Sequence[str] = ()) -> None:
    """The summary, then the recipe's own ``notes`` (one line each), then where results.json is."""
    print(render_summary(results["summary"]))
    for note in notes:
        print(note)
    print(f"results: {path}")
