"""Run the DPO recipe: on Modal (default) or the offline CPU smoke path (``--smoke --out DIR``).

    python recipes/dpo/run.py --smoke --out /tmp/dpo-smoke            # no key, no GPU
    python recipes/dpo/run.py --run-name dpo-1                        # one A10G, one round
    python recipes/dpo/run.py --run-name dpo-2 --from-run dpo-1       # round two from round one
    python recipes/dpo/run.py --run-name dpo-neg --negative-share 0.2 --balance 0.25

Every flag is validated here, and the prompt set built, before a container starts.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from recipes.dpo.train import DPOSettings, add_dpo_arguments, run_dpo, settings_from_args
from recipes.launch import add_output_arguments, guarded
from recipes.trl_recipes import (launch_on_modal, print_report, registry_call,
                                 require_weights_moved, run_and_write_results)
from whileai_core.errors import ConfigError

# Sizes shrink; every method flag (beta, margins, shares, balance, seed, --from-run) is kept.
# One epoch over the smoke's pairs (8 at seed 0: 4 sampled, 4 constructed) at 4 a step: 2 steps.
# Constructed negatives default on in the smoke: a random model's off-topic samples pair only
# as "some bytes" over "nothing" (chosen always longer), and the length rule needs the
# constructed pairs, whose rejected call is the longer reply, to keep any of them.
SMOKE_SIZES = dict(epochs=1, samples_per_prompt=4, pairs_per_step=4, max_completion_tokens=16,
                   holdout_samples=2, lora_r=4, lora_alpha=8, learning_rate=1e-3)
SMOKE_NEGATIVE_SHARE = 0.5


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="recipes/dpo/run.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_dpo_arguments(parser)
    add_output_arguments(parser)
    return parser


def smoke(settings: DPOSettings, records: list[dict], out: Path, *, device: str = "cpu") -> dict:
    """One DPO round (one epoch, two steps at seed 0) with LoRA on a tiny random model; saves the
    adapter. ``device="cuda"``: on a GPU, bf16 weights, gradient checkpointing on."""
    from peft import PeftModel

    from recipes.tiny_model import TINY_MODEL_NAME, byte_tokenizer, on_device, tiny_model

    sizes = dict(SMOKE_SIZES, negative_share=settings.negative_share or SMOKE_NEGATIVE_SHARE)
    settings = dataclasses.replace(settings, model=TINY_MODEL_NAME, **sizes)
    tokenizer = byte_tokenizer()
    model = on_device(tiny_model(tokenizer, seed=settings.seed), device)
    label = TINY_MODEL_NAME
    if settings.from_run:
        adapter = Path(settings.from_run)
        if not (adapter / "adapter_config.json").is_file():
            raise ConfigError(f"--from-run {adapter}: no adapter_config.json there. Fix: with "
                              "--smoke, point at the adapter/ folder a previous smoke wrote")
        model = PeftModel.from_pretrained(model, str(adapter), is_trainable=True)
        label = f"{TINY_MODEL_NAME}+lora:{adapter}"
    results, trainer = run_dpo(model, tokenizer, settings, out / "trainer", records=records,
                               model_label=label, cpu=device == "cpu")
    trainer.save_model(str(out / "adapter"))
    results["smoke"] = True
    require_weights_moved(results, "DPO")
    return results


def launch(settings: DPOSettings, records: list[dict]) -> dict:
    return launch_on_modal("recipes.dpo.modal_dpo", "train_dpo", settings, records)


def modal_call(run_name: str, config_path: str | None = None) -> dict:
    """What the run registry spawns (``launch_run``): the deployed ``whileai-dpo`` app's
    ``train_dpo`` with the default settings under ``run_name`` and the template prompts.
    Deploy first: ``modal deploy recipes/dpo/modal_dpo.py``."""
    settings = dataclasses.replace(DPOSettings(), run_name=run_name)
    return registry_call("dpo", "whileai-dpo", "train_dpo", settings, config_path)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def go() -> int:
        settings = settings_from_args(args)
        results, path = run_and_write_results(args, settings, smoke=smoke, launch=launch)
        print_report(results, path, [f"pairs: {results['pairs']}"])
        return 0

    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
