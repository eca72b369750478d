"""Run the SFT recipe: on Modal (default) or the offline CPU smoke path (``--smoke --out DIR``).

    python recipes/sft/run.py --smoke --out /tmp/sft-smoke              # refund demo, no key, no GPU
    python recipes/sft/run.py --smoke --out /tmp/s --data sft/          # your data folder, offline
    python recipes/sft/run.py --run-name sft-1 --data sft/              # one A10G on Modal
    python recipes/sft/run.py --run-name sft-demo                       # the refund demo on Modal

``--data DIR`` holds train.jsonl (export_sft), holdout.jsonl (the held-out tasks' traces) and
grader.py (``grade(ask, reply)``); without it the refund demo is built. Every flag and the data
folder are checked here, before a container starts; the chat template is checked against the
data where the model is (in the container, or on the tiny model in the smoke).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from recipes.launch import add_output_arguments, check_out, guarded, write_results
from recipes.sft.data import (GRADER_FILE, TRAIN_FILE, SFTData, build_refund_demo,
                              folder_holdout_name, read_data)
from recipes.sft.train import (SFTSettings, add_sft_arguments, render_summary, run_sft,
                               settings_from_args, with_data_settings)
from recipes.tiny_model import TINY_MODEL_NAME
from recipes.trl_recipes import launch_on_modal, require_weights_moved
from whileai_core.errors import ArgumentError, ConfigError
from whileai_core.voice import arg

# Sizes shrink, the method stays: one epoch over the first 4 examples at 2 a step, two steps.
SMOKE_SIZES = dict(epochs=1, examples_per_step=2, max_completion_tokens=24, holdout_samples=2,
                   lora_r=4, lora_alpha=8, learning_rate=1e-3)
SMOKE_EXAMPLES = 4


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="recipes/sft/run.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_sft_arguments(parser)
    add_output_arguments(parser)
    return parser


def load_data(settings: SFTSettings, folder: Path | None, demo_dir: Path) -> SFTData:
    """The data folder given, or the refund demo built into ``demo_dir``."""
    if folder is not None:
        return read_data(folder)
    return build_refund_demo(demo_dir, seed=settings.seed, share=settings.holdout_share)


def smoke(settings: SFTSettings, data: SFTData, out: Path, *, device: str = "cpu") -> dict:
    """Two SFT steps with LoRA on a tiny random model, the held-out asks before and after; fails
    unless the loss mask is right and the adapter moved. ``device="cuda"``: on a GPU, in bf16."""
    from recipes.tiny_model import TINY_MODEL_NAME, byte_tokenizer, on_device, tiny_model

    settings = dataclasses.replace(settings, model=TINY_MODEL_NAME, **SMOKE_SIZES)
    tokenizer = byte_tokenizer()
    model = on_device(tiny_model(tokenizer, seed=settings.seed), device)
    results, trainer = run_sft(model, tokenizer, settings, data, out / "trainer",
                               model_label=TINY_MODEL_NAME, cpu=device == "cpu",
                               max_examples=SMOKE_EXAMPLES)
    trainer.save_model(str(out / "adapter"))
    results["smoke"] = True
    masks = results["loss_mask"]
    if masks["n_wrong_mask"] or not masks["completion_tokens_trained"]:
        raise ConfigError(f"the SFT smoke's loss mask is wrong on {masks['n_wrong_mask']} "
                          f"example(s) ({masks['wrong_mask']}): prompt tokens must carry no loss "
                          "and every completion token must", fix="a bug in the recipe's data "
                          "wiring (completion_only_loss on prompt-completion examples)")
    require_weights_moved(results, "SFT")
    return results


def launch(settings: SFTSettings, data: SFTData) -> dict:
    return launch_on_modal("recipes.sft.modal_sft", "train_sft", settings, data.payload())


def modal_call(run_name: str, config_path: str | None = None, data: str | None = None) -> dict:
    """What the run registry spawns: the deployed ``whileai-sft`` app's ``train_sft`` on the data
    folder ``data`` read here (default: the refund demo)."""
    if config_path is not None:
        raise ArgumentError(f"the sft recipe takes no config file, got {config_path!r}",
                            fix="launch it by name, with data='<your data folder>'")
    settings = dataclasses.replace(SFTSettings(), run_name=run_name)
    with tempfile.TemporaryDirectory(prefix="whileai-sft-demo-") as tmp:
        loaded = load_data(settings, Path(data) if data else None, Path(tmp))
    settings = with_data_settings(settings, loaded)
    return {"app": "whileai-sft", "function": "train_sft",
            "args": [settings.to_dict(), loaded.payload()], "kwargs": {}}


def describe_data(data: str, smoke: bool = False) -> str:
    """What ``launch_run("sft", data=...)``'s plan says of the data folder, read now so a plan
    never says ready for a folder the run cannot read (``smoke``: the local CPU smoke)."""
    loaded = read_data(Path(data))
    settings = with_data_settings(SFTSettings(), loaded)
    chosen = "settings.json" if "model" in (loaded.settings or {}) else \
        'the recipe\'s default; settings.json {"model": ...} chooses another'
    model = settings.model
    if smoke:
        model, chosen = TINY_MODEL_NAME, (f"the CPU smoke's tiny random model, built here; "
                                          f"{arg('backend', 'modal')} trains {settings.model}, from "
                                          f"{chosen}")
    return (f"trains {model} ({chosen}) on {len(loaded.conversations)} conversations "
            f"({TRAIN_FILE}); judged on {len(loaded.holdout)} held-out asks with {GRADER_FILE}")


def data_holdout(data: str) -> str | None:
    """The content name of the held-out set a run on this folder scores."""
    return folder_holdout_name(Path(data))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def go() -> int:
        from recipes.modal_auth import require_modal_token

        settings = settings_from_args(args)
        check_out(args.out, overwrite=args.force)
        out = args.out or Path("results") / settings.run_name
        if args.smoke and args.out is None:
            raise ArgumentError("--smoke needs --out DIR (where results.json goes)")
        # flags set on the command line win over the data folder's settings.json
        parser = build_parser()
        given = {k for k, v in vars(args).items() if v != parser.get_default(k)}
        if args.smoke:
            data = load_data(settings, args.data, out / "data")
            results = smoke(with_data_settings(settings, data, given=given), data, out)
        else:
            require_modal_token()
            with tempfile.TemporaryDirectory(prefix="whileai-sft-demo-") as tmp:
                data = load_data(settings, args.data, Path(tmp))
            results = launch(with_data_settings(settings, data, given=given), data)
        path = write_results(out, results, overwrite=args.force)
        print(render_summary(results["summary"]))
        masks = results["loss_mask"]
        print(f"loss on completion tokens only: {masks['completion_tokens_trained']} trained, "
              f"{masks['prompt_tokens_masked']} prompt tokens masked, over "
              f"{masks['examples']} examples; {results['train_steps']} steps, loss "
              f"{', '.join(f'{x:.3f}' for x in results['loss_history'])}")
        print(f"results: {path}")
        return 0

    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
