"""Run the DPO recipe: on Modal (default) or the offline CPU smoke path (``--smoke --out DIR``).

    python recipes/dpo/run.py --smoke --out /tmp/dpo-smoke            # no key, no GPU
    python recipes/dpo/run.py --run-name dpo-1                        # one A10G, one round
    python recipes/dpo/run.py --run-name dpo-2 --from-run dpo-1       # round two from round one
    python recipes/dpo/run.py --run-name dpo-neg --negative-share 0.2 --balance 0.25
    python recipes/dpo/run.py --smoke --out /tmp/dpo-data --data dpo-data   # your pairs, offline
    python recipes/dpo/run.py --run-name dpo-mine --data dpo-data          # your pairs, one A10G

``--data DIR`` trains on pairs you built (``write_dpo_data``: pairs.jsonl, the frozen held-out
asks, grader.py); without it the recipe samples its own pairs from the refund prompt set. Every
flag, the prompt set and the data folder are checked here, before a container starts.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from recipes.dpo.data import read_dpo_data
from recipes.dpo.from_data import run_dpo_data, with_data_settings
from recipes.dpo.train import DPOSettings, add_dpo_arguments, run_dpo, settings_from_args
from recipes.launch import add_output_arguments, check_out, guarded, write_results
from recipes.sft.data import folder_holdout_name
from recipes.tiny_model import TINY_MODEL_NAME
from recipes.trl_recipes import (launch_on_modal, print_report, registry_call,
                                 require_weights_moved, run_and_write_results)
from whileai_core.errors import ArgumentError, ConfigError
from whileai_core.voice import arg

# Sizes shrink; every method flag is kept. Constructed negatives default on in the smoke: a
# random model's samples pair only as "some bytes" over "nothing" (chosen always longer), and
# the length rule needs the constructed pairs, whose rejected call is longer, to keep any.
SMOKE_SIZES = dict(epochs=1, samples_per_prompt=4, pairs_per_step=4, max_completion_tokens=16,
                   holdout_samples=2, lora_r=4, lora_alpha=8, learning_rate=1e-3)
SMOKE_NEGATIVE_SHARE = 0.5
# On a data folder: one epoch over its first 4 pairs at 2 a step, two optimizer steps.
SMOKE_DATA_PAIRS = 4
SMOKE_DATA_SIZES = dict(SMOKE_SIZES, pairs_per_step=2, max_completion_tokens=24)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="recipes/dpo/run.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_dpo_arguments(parser)
    add_output_arguments(parser)
    return parser


def smoke(settings: DPOSettings, records: list[dict], out: Path, *, device: str = "cpu") -> dict:
    """One DPO round with LoRA on a tiny random model; saves the adapter. ``device="cuda"``: on
    a GPU, bf16 weights, gradient checkpointing on."""
    adapter = Path(settings.from_run) if settings.from_run else None
    if adapter is not None and not (adapter / "adapter_config.json").is_file():  # before torch loads
        raise ConfigError(f"--from-run {adapter}: no adapter_config.json there", fix="with "
                          "--smoke, point at the adapter/ folder a previous smoke wrote")
    from peft import PeftModel

    from recipes.tiny_model import TINY_MODEL_NAME, byte_tokenizer, on_device, tiny_model

    sizes = dict(SMOKE_SIZES, negative_share=settings.negative_share or SMOKE_NEGATIVE_SHARE)
    settings = dataclasses.replace(settings, model=TINY_MODEL_NAME, **sizes)
    tokenizer = byte_tokenizer()
    model = on_device(tiny_model(tokenizer, seed=settings.seed), device)
    label = TINY_MODEL_NAME
    if adapter is not None:
        model = PeftModel.from_pretrained(model, str(adapter), is_trainable=True)
        label = f"{TINY_MODEL_NAME}+lora:{adapter}"
    results, trainer = run_dpo(model, tokenizer, settings, out / "trainer", records=records,
                               model_label=label, cpu=device == "cpu")
    trainer.save_model(str(out / "adapter"))
    results["smoke"] = True
    require_weights_moved(results, "DPO")
    return results


def smoke_data(settings: DPOSettings, data, out: Path) -> dict:
    """Two DPO steps with LoRA on a tiny random model over the data folder's first pairs, graded
    by its grader before and after; fails unless the adapter moved."""
    from recipes.tiny_model import TINY_MODEL_NAME, byte_tokenizer, tiny_model

    settings = dataclasses.replace(settings, model=TINY_MODEL_NAME, **SMOKE_DATA_SIZES)
    tokenizer = byte_tokenizer()
    model = tiny_model(tokenizer, seed=settings.seed)
    results, trainer = run_dpo_data(model, tokenizer, settings, data, out / "trainer",
                                    model_label=TINY_MODEL_NAME, cpu=True,
                                    max_pairs=SMOKE_DATA_PAIRS)
    trainer.save_model(str(out / "adapter"))
    results["smoke"] = True
    require_weights_moved(results, "DPO")
    return results


def launch(settings: DPOSettings, records: list[dict]) -> dict:
    return launch_on_modal("recipes.dpo.modal_dpo", "train_dpo", settings, records)


def modal_call(run_name: str, config_path: str | None = None, data: str | None = None) -> dict:
    """What the run registry spawns: the deployed ``whileai-dpo`` app's ``train_dpo`` on the
    template prompts, or with ``data`` its ``train_dpo_data`` on that folder's pairs."""
    settings = dataclasses.replace(DPOSettings(), run_name=run_name)
    if data is None:
        return registry_call("dpo", "whileai-dpo", "train_dpo", settings, config_path)
    if config_path is not None:
        raise ArgumentError(f"the dpo recipe takes no config file, got {config_path!r}",
                            fix="launch it by name, with data='<your data folder>'")
    loaded = read_dpo_data(Path(data))
    return {"app": "whileai-dpo", "function": "train_dpo_data",
            "args": [with_data_settings(settings, loaded).to_dict(), loaded.payload()],
            "kwargs": {}}


def describe_data(data: str, smoke: bool = False) -> str:
    """What ``launch_run("dpo", data=...)``'s plan says of the folder, read now, so a plan never
    says ready for a folder the run cannot read (``smoke``: the local CPU smoke)."""
    loaded = read_dpo_data(Path(data))
    settings = with_data_settings(DPOSettings(), loaded)
    counts = loaded.counts()
    by_source = ", ".join(f"{n} {s.replace('_', '-')}" for s, n in counts["by_source"].items())
    model = settings.model
    if smoke:
        model = (f"{TINY_MODEL_NAME} (the CPU smoke's tiny random model, built here; "
                 f"{arg('backend', 'modal')} trains {settings.model})")
    return (f"trains {model} (beta {settings.beta}, {settings.epochs} epochs) on "
            f"{counts['pairs']} pairs ({by_source}); judged on {len(loaded.holdout)} held-out "
            f"asks{' (' + loaded.holdout_name + ')' if loaded.holdout_name else ''} with grader.py")


def data_holdout(data: str) -> str | None:
    """The content name of the held-out set a run on this folder scores."""
    return folder_holdout_name(Path(data))


def run_on_data(args: argparse.Namespace, settings: DPOSettings) -> int:
    from recipes.modal_auth import require_modal_token
    from recipes.sft.train import render_summary

    check_out(args.out, overwrite=args.force)
    if args.smoke and args.out is None:
        raise ArgumentError("--smoke needs --out DIR (where results.json goes)")
    parser = build_parser()
    given = {k for k, v in vars(args).items() if v != parser.get_default(k)}
    data = read_dpo_data(args.data)
    settings = with_data_settings(settings, data, given=given)
    if args.smoke:
        results = smoke_data(settings, data, args.out)
    else:
        require_modal_token()
        results = launch_on_modal("recipes.dpo.modal_dpo", "train_dpo_data", settings,
                                  data.payload())
    path = write_results(args.out or Path("results") / settings.run_name, results,
                         overwrite=args.force)
    print(render_summary(results["summary"]))
    print(f"pairs: {results['data']['by_source']}; {results['train_steps']} steps, loss "
          f"{', '.join(f'{x:.3f}' for x in results['loss_history'])}")
    print(f"results: {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def go() -> int:
        settings = settings_from_args(args)
        if args.data is not None:
            return run_on_data(args, settings)
        results, path = run_and_write_results(args, settings, smoke=smoke, launch=launch)
        print_report(results, path, [f"pairs: {results['pairs']}"])
        return 0

    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
