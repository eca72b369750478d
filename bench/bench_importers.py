"""The importers on large inputs, each against a baseline timed in the same run.

    .venv/bin/python bench/bench_importers.py [--inspect-mb 1000] [--steps 100] [--episodes 256]

Inputs are made at bench time in a temporary folder (nothing is committed), scaled up from what
the fixture scripts' writers wrote (tests/fixtures/):

- an Inspect ``.json`` log of about ``--inspect-mb`` MB: the samples of
  ``tests/fixtures/inspect/logs/canned_qa.json`` (written by ``inspect eval``, make_logs.py)
  copied under new sample ids and written by inspect's own writer
  (``inspect_ai.log.write_eval_log``);
- a prime-rl run of ``--steps`` steps, ``--episodes`` eval episodes each, laid out as prime-rl
  writes it (``rollouts/step_<S>/eval/all/traces.jsonl``): the episode records of the fixture
  run ``tests/fixtures/prime_rl/volume/e2e-grpo/fc-grpo-new`` (written by verifiers' own
  ``Episode.to_record`` and prime-rl's orjson line writer, make_episodes.py), given new task
  indices, steps and policy versions.

Lines:

1. ``import_rows`` of the Inspect log against ``inspect_ai.log.read_eval_log`` of the same log
   alone (inspect's reader is what the importer reads the log with).
2. ``import_rows`` of the prime-rl run against ``json.loads`` of every line of its trace files
   (the floor: every episode has to be parsed).

Timings on a shared 2-core machine are noisy: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FIXTURES = ROOT / "tests" / "fixtures"


def make_inspect_log(path: Path, target_mb: float) -> int:
    """An Inspect .json log of about ``target_mb`` MB, written by inspect; returns its samples."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(FIXTURES / "inspect" / "logs" / "canned_qa.json"))
    base = log.samples or []
    per_sample = (FIXTURES / "inspect" / "logs" / "canned_qa.json").stat().st_size / len(base)
    copies = max(1, int(target_mb * 1e6 / per_sample / len(base)))
    samples = []
    for c in range(copies):
        for s in base:
            samples.append(s.model_copy(update={"id": f"{s.id}-{c}", "uuid": f"{s.uuid}-{c}"}))
    write_eval_log(log.model_copy(update={"samples": samples}), str(path), format="json")
    return len(samples)


def make_prime_rl_run(run: Path, steps: int, episodes: int) -> int:
    """A prime-rl run folder of ``steps`` steps x ``episodes`` eval episodes; returns the lines."""
    source = FIXTURES / "prime_rl" / "volume" / "e2e-grpo" / "fc-grpo-new" / "rollouts"
    records = [json.loads(line) for step in ("step_0", "step_20")
               for line in (source / step / "eval" / "all" / "traces.jsonl").read_text()
               .splitlines() if line.strip()]
    written = 0
    for step in range(steps):
        lines = []
        for e in range(episodes):
            rec = json.loads(json.dumps(records[e % len(records)]))
            rec["task"]["data"]["idx"] = e // 4
            rec["run"]["work"]["step"] = step
            rec["run"]["work"]["policy"] = {"start": max(0, step - 1), "end": max(0, step - 1)}
            lines.append(json.dumps(rec, separators=(",", ":")) + "\n")
        out = run / "rollouts" / f"step_{step}" / "eval" / "all" / "traces.jsonl"
        out.parent.mkdir(parents=True)
        out.write_text("".join(lines))
        written += len(lines)
    return written


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inspect-mb", type=float, default=1000)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--episodes", type=int, default=256)
    args = parser.parse_args()
    from whileai_core.importers import import_rows

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load average "
          f"{os.getloadavg()[0]:.2f} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "big.json"
        t_make, n = timed(lambda: make_inspect_log(log, args.inspect_mb))
        size = log.stat().st_size / 1e6
        print(f"\n## Inspect .json log, {size:.0f} MB, {n:,} samples (written in {t_make:.0f} s)")
        from inspect_ai.log import read_eval_log

        t_read, _ = timed(lambda: read_eval_log(str(log), format="json"))
        t_ours, imported = timed(lambda: import_rows(log, metric="match"))
        print("| what | s |\n|---|---|")
        print(f"| inspect_ai.log.read_eval_log alone (baseline) | {t_read:.1f} |")
        print(f"| import_rows (ours, {len(imported.rows):,} rows) | {t_ours:.1f} "
              f"({t_ours / t_read:.2f}x the baseline) |")
        log.unlink()

        run = Path(tmp) / "run"
        n = make_prime_rl_run(run, args.steps, args.episodes)
        files = sorted(run.glob("rollouts/step_*/eval/all/traces.jsonl"))
        size = sum(f.stat().st_size for f in files) / 1e6

        def floor():
            return [json.loads(line) for f in files for line in open(f) if line.strip()]

        t_floor, _ = timed(floor)
        t_ours, imported = timed(lambda: import_rows(run))
        print(f"\n## prime-rl run, {args.steps} steps x {args.episodes} eval episodes "
              f"({n:,} lines, {size:.0f} MB)")
        print("| what | s |\n|---|---|")
        print(f"| json.loads of every line (baseline) | {t_floor:.2f} |")
        print(f"| import_rows (ours, {len(imported.rows):,} rows) | {t_ours:.2f} "
              f"({t_ours / t_floor:.2f}x the baseline) |")
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
