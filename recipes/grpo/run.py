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

from recipes.grpo.train import (GRPOSettings, add_grpo_arguments, prompt_records, run_grpo,
                                settings_from_args)
from recipes.holdout import render_summary
from recipes.launch import add_output_arguments, check_out, guarded, write_results
from recipes.modal_auth import require_modal_token
from whileai_core.errors import ArgumentError

# The smoke path keeps the variant flags (loss, clip, mask, scaling, beta, balance, seed) and
# shrinks only the sizes, so a flag that breaks the trainer breaks here first.
SMOKE_SIZES = dict(steps=2, num_generations=4, prompts_per_step=2, max_completion_tokens=24,
                   holdout_samples=2, lora_r=4, lora_alpha=8, learning_rate=1e-3)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="recipes/grpo/run.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_grpo_arguments(parser)
    add_output_arguments(parser)
    return parser


def smoke(settings: GRPOSettings, records: list[dict], out: Path) -> dict:
    """Two real GRPO steps with LoRA on a tiny random model, the holdout before and after."""
    from recipes.tiny_model import TINY_MODEL_NAME, byte_tokenizer, tiny_model

    settings = dataclasses.replace(settings, model=TINY_MODEL_NAME, **SMOKE_SIZES)
    tokenizer = byte_tokenizer()
    model = tiny_model(tokenizer, seed=settings.seed)
    results, _ = run_grpo(model, tokenizer, settings, out / "trainer", records=records,
                          model_label=TINY_MODEL_NAME, cpu=True)
    results["smoke"] = True
    return results


def launch(settings: GRPOSettings, records: list[dict]) -> dict:
    import modal

    from recipes.grpo.modal_grpo import app, train_grpo

    with modal.enable_output(), app.run():
        return train_grpo.remote(settings.to_dict(), records)


def modal_call(run_name: str, config_path: str | None = None) -> dict:
    """What the run registry spawns (``launch_run``): the deployed ``whileai-grpo`` app's
    ``train_grpo`` with the default settings under ``run_name`` and the template prompts.
    Deploy first: ``modal deploy recipes/grpo/modal_grpo.py``."""
    if config_path is not None:
        raise ArgumentError(f"the grpo recipe takes no config file, got {config_path!r}. Fix: "
                            "launch the recipe by name")
    settings = dataclasses.replace(GRPOSettings(), run_name=run_name)
    return {"app": "whileai-grpo", "function": "train_grpo",
            "args": [settings.to_dict(), prompt_records(settings)], "kwargs": {}}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def go() -> int:
        settings = settings_from_args(args)
        check_out(args.out, overwrite=args.force)
        records = prompt_records(settings, args.prompts_file)
        if args.smoke:
            if args.out is None:
                raise ArgumentError("--smoke needs --out DIR (where results.json goes)")
            results = smoke(settings, records, args.out)
        else:
            require_modal_token()
            results = launch(settings, records)
        out = args.out or Path("results") / settings.run_name
        path = write_results(out, results, overwrite=args.force)
        print(render_summary(results["summary"]))
        for alarm in results["drift"]["alarms"]:
            print(f"drift: {alarm}")
        print(f"results: {path}")
        return 0

    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
