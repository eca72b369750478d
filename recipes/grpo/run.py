"""Run the GRPO recipe: on Modal (default) or the offline CPU smoke path (``--smoke --out DIR``).

    python recipes/grpo/run.py --smoke --out /tmp/grpo-smoke     # no key, no GPU, ~1 minute
    python recipes/grpo/run.py --steps 40 --run-name grpo-1      # one A10G on your Modal account
    python recipes/grpo/run.py --loss-type dr_grpo --no-scale-rewards --run-name drgrpo-1

Every flag is validated here, and the prompt set built, before a container starts.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from recipes.grpo.reward import NO_ID, OFF_TOPIC
from recipes.grpo.train import GRPOSettings, add_grpo_arguments, run_grpo, settings_from_args
from recipes.launch import add_output_arguments, guarded
from recipes.trl_recipes import (launch_on_modal, print_report, registry_call,
                                 require_weights_moved, run_and_write_results)
from whileai_core.errors import ConfigError

# The smoke keeps the variant flags and shrinks only the sizes, so a flag that breaks the trainer
# breaks here first. The learning rate is large so that two steps of a tiny model move the ratio
# past the clip when --num-iterations >= 2.
SMOKE_SIZES = dict(steps=2, num_generations=4, prompts_per_step=2, max_completion_tokens=24,
                   holdout_samples=2, lora_r=4, lora_alpha=8, learning_rate=0.2)
# A random policy scores 0 on every with-id prompt (it never names the id), so a group of them
# has zero advantage and no gradient; the smoke trains where its rewards differ in a group.
SMOKE_TRAIN_CATEGORIES = (NO_ID, OFF_TOPIC)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="recipes/grpo/run.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_grpo_arguments(parser)
    add_output_arguments(parser)
    return parser


def smoke(settings: GRPOSettings, records: list[dict], out: Path, *,
          device: str = "cpu") -> dict:
    """Two real GRPO steps with LoRA on a tiny random model, the holdout before and after.
    ``device="cuda"``: on a GPU, bf16 weights, gradient checkpointing on."""
    from recipes.tiny_model import TINY_MODEL_NAME, byte_tokenizer, on_device, tiny_model

    settings = dataclasses.replace(settings, model=TINY_MODEL_NAME, **SMOKE_SIZES)
    tokenizer = byte_tokenizer()
    model = on_device(tiny_model(tokenizer, seed=settings.seed), device)
    results, _ = run_grpo(model, tokenizer, settings, out / "trainer", records=records,
                          model_label=TINY_MODEL_NAME, cpu=device == "cpu",
                          train_categories=SMOKE_TRAIN_CATEGORIES)
    results["smoke"] = True
    require_weights_moved(results, "GRPO")
    clip = results["updates"]["clip"]
    if clip["can_bind"] and not clip["steps_clipped"]:
        raise ConfigError(
            f"the GRPO smoke ran --num-iterations {settings.num_iterations} but the clip never "
            f"bound (clip_ratio per step: {clip['clip_ratio']})", fix="a bug in the off-policy "
            "wiring; from the second update on a batch, some ratio must leave the clip range")
    return results


def launch(settings: GRPOSettings, records: list[dict]) -> dict:
    return launch_on_modal("recipes.grpo.modal_grpo", "train_grpo", settings, records)


def modal_call(run_name: str, config_path: str | None = None) -> dict:
    """What the run registry spawns: the deployed ``whileai-grpo`` app's ``train_grpo`` with the
    default settings under ``run_name`` and the template prompts."""
    settings = dataclasses.replace(GRPOSettings(), run_name=run_name)
    return registry_call("grpo", "whileai-grpo", "train_grpo", settings, config_path)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def go() -> int:
        settings = settings_from_args(args)
        results, path = run_and_write_results(args, settings, smoke=smoke, launch=launch)
        print_report(results, path, [f"drift: {alarm}" for alarm in results["drift"]["alarms"]])
        return 0

    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
