"""GPU check: the three TRL recipes' two-step paths on one GPU, in bf16 with gradient
checkpointing, read back as one table.

    bash scripts/gpu-check.sh                   # on the GPU machine: installs the wheels, runs this
    python recipes/gpu_check.py --out DIR       # the check itself, where everything is installed
    python recipes/gpu_check.py --out DIR --cpu # only what a CPU runs

Each recipe runs its own smoke path with ``device="cuda"`` (GRPO at ``--num-iterations 2``, so
the clip can bind); the GRPO run's ``watch.jsonl`` is read back with ``watch_records``. ``--out
DIR`` receives three flat files: the table (``gpu-check.md``, stdout too), every row with the
environment and each recipe's ``results.json`` (``gpu-check.json``) and the GRPO watch curve
(``gpu-check-watch.png``); the recipes' own outputs go under ``--work DIR``. Without a CUDA
device (or with ``--cpu``) the CUDA, bf16 and wall-clock rows are skipped and the recipes run
on the CPU in float32. Exit status 1 when a row failed. More: ``recipes/README.md``, "GPU check".
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TIME_LIMIT_S = 480.0  # the whole check, installing its wheels included: 8 minutes on the GPU
# all --out receives (the device tool returns at most 8 files, two folders down)
TABLE_FILE, JSON_FILE, PICTURE_FILE = "gpu-check.md", "gpu-check.json", "gpu-check-watch.png"
RECIPES = ("grpo", "dpo", "sft")
GRPO_ITERATIONS = 2  # the second step is off-policy, so the clip can bind (recipes/grpo/train.py)


@dataclass
class Row:
    """One line of the table; ``status`` is ``pass``, ``FAIL`` or ``skipped``."""

    name: str
    status: str
    device: str = ""
    step_seconds: list[float] = field(default_factory=list)
    peak_gib: float | None = None
    weights: str = ""
    clip: str = ""
    held_out: str = ""
    detail: str = ""
    seconds: float | None = None  # what the row took, where it ran something


# --- the rows ----------------------------------------------------------------------------------

def wheels_row(log: Path | None) -> Row:
    """What ``scripts/gpu-check.sh`` installed, from its log (first line: the verdict)."""
    if log is None:
        return Row("wheels", "skipped", detail="run without scripts/gpu-check.sh: nothing installed")
    if not log.is_file():
        return Row("wheels", "FAIL", detail=f"the install wrote no log at {log}")
    lines = log.read_text(encoding="utf-8").splitlines() or ["FAIL: the install log is empty"]
    status = next((s for s in ("FAIL", "skipped") if lines[0].startswith(s)), "pass")
    return Row("wheels", status, detail="; ".join(lines)[:400])


def cuda_rows(gpu: bool) -> list[Row]:
    from recipes.preflight import Context, Skip, check_bf16, check_cuda

    rows = []
    ctx = Context(workdir=Path("."), gpu=gpu)
    for name, check in (("cuda", check_cuda), ("bf16", check_bf16)):
        started = time.monotonic()
        try:
            detail = check(ctx)
            rows.append(Row(name, "pass", "cuda" if gpu else "cpu", detail=detail,
                            seconds=round(time.monotonic() - started, 3)))
        except Skip as why:
            rows.append(Row(name, "skipped", "cpu", detail=str(why)))
        except Exception as exc:  # a failed check is a row, not a traceback
            rows.append(Row(name, "FAIL", detail=f"{type(exc).__name__}: {exc}"[:300]))
    return rows


def run_recipe(name: str, out: Path, device: str) -> dict:
    """The recipe's own smoke path on ``device``; returns its results."""
    from recipes.grpo.prompts import write_prompts  # at the recipes' default seed

    if name == "grpo":
        from recipes.grpo.run import smoke
        from recipes.grpo.train import GRPOSettings

        return smoke(GRPOSettings(num_iterations=GRPO_ITERATIONS), write_prompts(), out,
                     device=device)
    if name == "dpo":
        from recipes.dpo.run import smoke
        from recipes.dpo.train import DPOSettings

        return smoke(DPOSettings(), write_prompts(), out, device=device)
    from recipes.sft.data import build_refund_demo
    from recipes.sft.run import smoke
    from recipes.sft.train import SFTSettings

    settings = SFTSettings()
    data = build_refund_demo(out / "data", seed=settings.seed, share=settings.holdout_share)
    return smoke(settings, data, out, device=device)


def held_out_text(summary: dict) -> str:
    """pass@1 before -> after, each with its interval and n, and the paired delta."""
    from recipes.holdout import delta_text, rate_text

    overall = summary["overall"]
    delta = overall["delta"]
    return (f"{rate_text(overall['pass_before'])} -> {rate_text(overall['pass_after'])}; delta "
            f"{delta_text(delta)} {delta['verdict']} (n={delta['n_paired']} paired)")


def recipe_row(name: str, work: Path, device: str) -> tuple[Row, dict | None]:
    """The recipe's smoke in ``work/<name>``; its row and its results."""
    import torch

    gpu = device == "cuda"
    if gpu:
        torch.cuda.reset_peak_memory_stats()
    started = time.monotonic()
    try:
        results = run_recipe(name, work / name, device)
    except Exception as exc:  # a failed recipe is a row of the table
        first = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        return Row(name, "FAIL", device, detail=first,
                   seconds=round(time.monotonic() - started, 3)), None
    seconds = time.monotonic() - started
    updates = results["updates"]
    run = updates.get("runtime", {})
    where = (f"{run.get('device')} {run.get('weights_dtype')}, bf16 autocast "
             f"{'on' if run.get('bf16') else 'off'}, gradient checkpointing "
             f"{'on' if run.get('gradient_checkpointing') else 'off'}")
    if not gpu:
        where += " (GPU row skipped: no CUDA device)"
    clip = ""
    if "clip" in updates:
        ratios = updates["clip"]["clip_ratio"]
        clip = ", ".join(f"{r:.3f}" for r in ratios) + f" ({updates['clip']['steps_clipped']} " \
            f"of {len(ratios)} steps clipped)"
    row = Row(name, "pass", where, step_seconds=updates.get("step_seconds", []),
              peak_gib=round(torch.cuda.max_memory_allocated() / 2**30, 3) if gpu else None,
              weights=f"{updates['changed_tensors']} of {updates['trainable_tensors']} changed, "
                      f"L2 {updates['change_l2']:.3g}",
              clip=clip, held_out=held_out_text(results["summary"]),
              detail=f"{results['train_steps']} steps in {seconds:.1f} s with both held-out "
                     "samplings", seconds=round(seconds, 3))
    if gpu and not (run.get("bf16") and run.get("gradient_checkpointing")
                    and run.get("weights_dtype") == "bfloat16"):
        row.status, row.detail = "FAIL", f"not bf16 with gradient checkpointing: {where}"
    return row, results


def watch_row(work: Path, grpo: dict | None):
    """The GRPO run's watch.jsonl, as watch_run reads it: the row, and the Watch (None when
    there is none to draw)."""
    if grpo is None:
        return Row("watch", "skipped", detail="needs the GRPO row"), None
    from whileai_core.hacking.watch import WATCH_FILE, watch_records

    path = work / "grpo" / "trainer" / WATCH_FILE
    if not path.is_file():
        return Row("watch", "FAIL", detail=f"the GRPO run wrote no {path}"), None
    watch = watch_records(path, source=str(path))
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    steps = [r["step"] for r in records]
    evals = [r["step"] for r in records if r.get("held_out") is not None]
    if len(evals) < 2 or steps[-1] != grpo["train_steps"]:
        return Row("watch", "FAIL", detail=f"records at steps {steps}, held-out at {evals}: want "
                                           f"the start and step {grpo['train_steps']}"), watch
    return Row("watch", "pass", detail=f"{len(records)} records (steps {steps}; held-out at "
                                       f"{evals}); decision {watch.decision}: {watch.reason}"
                                       [:400]), watch


def picture(watch, out: Path) -> str:
    """The watch curve into ``out/PICTURE_FILE``; what was written, or why nothing was."""
    if watch is None:
        return "no picture: the GRPO run left no watch records"
    try:
        from whileai_core.pictures import watch_picture

        watch_picture(watch, out=out / PICTURE_FILE, overwrite=True)
    except Exception as exc:  # noqa: BLE001 - a picture never fails the check
        return f"no picture: {type(exc).__name__}: {exc}"[:300]
    return PICTURE_FILE


# --- the table -----------------------------------------------------------------------------------

def render(rows: list[Row], *, gpu: bool, seconds: float) -> str:
    def steps(row: Row) -> str:
        return ", ".join(f"{s:.3f}" for s in row.step_seconds)

    lines = ["| check | status | device | s per step | peak GPU GiB | weights changed | "
             "clip ratio per step | held-out pass@1 before -> after | detail |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        peak = (f"{row.peak_gib:.3f}" if row.peak_gib is not None else
                "skipped" if row.step_seconds else "")
        cells = [row.name, row.status, row.device, steps(row), peak, row.weights, row.clip,
                 row.held_out, row.detail]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    failed = [r.name for r in rows if r.status == "FAIL"]
    if not gpu:
        skipped = [r.name for r in rows if r.status == "skipped"]
        lines.append(f"\nCPU only: skipped {', '.join(skipped)}; the recipes ran on the CPU in "
                     "float32. This is not a GPU check: run scripts/gpu-check.sh on the GPU "
                     "machine.")
    lines.append(f"\nverdict: {'FAIL (' + ', '.join(failed) + ')' if failed else 'pass'} "
                 f"in {seconds:.0f} s")
    return "\n".join(lines)


def budget_row(gpu: bool, seconds: float, started_at: float | None, wheels_log: Path | None
               ) -> Row:
    """The wall clock against the 8 minutes: from ``started_at`` (the shell script's start, so
    installing counts) when given, else from the check's own start."""
    installed = None
    if wheels_log is not None and wheels_log.is_file():
        for line in wheels_log.read_text(encoding="utf-8").splitlines():
            if line.startswith("seconds: "):
                installed = float(line.split()[1])
    total = time.time() - started_at if started_at is not None else seconds
    parts = (f"{total:.0f} s in all: installing {installed:.0f} s, the check {seconds:.0f} s"
             if installed is not None else f"{total:.0f} s in all, the check {seconds:.0f} s")
    if started_at is None:
        parts += " (installing not counted: run through scripts/gpu-check.sh)"
    if not gpu:  # the budget is the GPU machine's; a CPU's time depends on what else runs there
        return Row("wall clock", "skipped", seconds=round(total, 1),
                   detail=f"{parts}, on the CPU; the {TIME_LIMIT_S:.0f} s budget is the GPU's")
    return Row("wall clock", "pass" if total < TIME_LIMIT_S else "FAIL", seconds=round(total, 1),
               detail=f"{parts}, of the {TIME_LIMIT_S:.0f} s budget")


def run_check(work: Path, *, gpu: bool | None = None, wheels_log: Path | None = None,
              recipes: tuple[str, ...] = RECIPES, started_at: float | None = None):
    """Every row in order, the recipes' results and the GRPO run's Watch; ``gpu`` None asks
    torch. The recipes write under ``work``. Never raises for a failed row."""
    import os

    for key, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"),
                       ("HF_DATASETS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false"),
                       ("HF_HUB_DISABLE_PROGRESS_BARS", "1"), ("DO_NOT_TRACK", "1")):
        os.environ.setdefault(key, value)
    started = time.monotonic()
    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    gpu = torch.cuda.is_available() if gpu is None else gpu
    device = "cuda" if gpu else "cpu"
    work.mkdir(parents=True, exist_ok=True)
    rows = [wheels_row(wheels_log), *cuda_rows(gpu)]
    results: dict[str, dict | None] = {}
    for name in recipes:
        row, results[name] = recipe_row(name, work, device)
        rows.append(row)
    watch = None
    if "grpo" in recipes:
        row, watch = watch_row(work, results.get("grpo"))
        rows.append(row)
    else:
        rows.append(Row("watch", "skipped", detail="the GRPO row was not asked for"))
    seconds = time.monotonic() - started
    rows.append(budget_row(gpu, seconds, started_at, wheels_log))
    return rows, gpu, seconds, results, watch


def environment() -> dict:
    import platform
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": platform.python_version()}
    for package in ("torch", "transformers", "trl", "peft", "accelerate", "datasets", "pyarrow",
                    "pandas", "scipy", "numpy", "pydantic"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = None
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="recipes/gpu_check.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True,
                        help=f"folder for {TABLE_FILE}, {JSON_FILE} and {PICTURE_FILE}, nothing "
                             "else")
    parser.add_argument("--work", type=Path, default=None,
                        help="folder for the recipes' own outputs (default: a temporary folder, "
                             "removed at the end)")
    parser.add_argument("--cpu", action="store_true", help="run on the CPU even with a GPU")
    parser.add_argument("--wheels-log", type=Path, default=None,
                        help="scripts/gpu-check.sh's install log, shown as the first row")
    parser.add_argument("--started-at", type=float, default=None,
                        help="when scripts/gpu-check.sh started (seconds since the epoch): the "
                             "8-minute budget counts from there, installing included")
    parser.add_argument("--recipes", default=",".join(RECIPES),
                        help="which recipes, comma-separated (default %(default)s)")
    args = parser.parse_args(argv)
    chosen = tuple(r for r in args.recipes.split(",") if r)
    unknown = sorted(set(chosen) - set(RECIPES))
    if unknown:
        parser.error(f"--recipes: unknown {unknown}; choose from {', '.join(RECIPES)}")
    work = args.work or Path(tempfile.mkdtemp(prefix="whileai-gpu-check-"))
    try:
        rows, gpu, seconds, results, watch = run_check(
            work, gpu=False if args.cpu else None, wheels_log=args.wheels_log, recipes=chosen,
            started_at=args.started_at)
        args.out.mkdir(parents=True, exist_ok=True)
        drawn = picture(watch, args.out)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    env = environment()
    table = (f"GPU check, {time.strftime('%Y-%m-%d')}: python {env['python']}, torch "
             f"{env['torch']}, transformers {env['transformers']}, trl {env['trl']}, peft "
             f"{env['peft']}, datasets {env['datasets']}\n\n" + render(rows, gpu=gpu,
                                                                    seconds=seconds))
    print(table)
    (args.out / TABLE_FILE).write_text(table + "\n", encoding="utf-8")
    (args.out / JSON_FILE).write_text(json.dumps(
        {"gpu": gpu, "environment": env, "seconds": round(seconds, 1),
         "rows": [asdict(r) for r in rows], "picture": drawn,
         "recipes": {name: result for name, result in results.items()}}, indent=1,
        default=str), encoding="utf-8")
    return 1 if any(r.status == "FAIL" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
