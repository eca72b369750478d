"""``hack_scan`` on many rows, against a baseline timed in the same run.

    .venv/bin/python bench/bench_hacking.py [--rows 100000] [--repeats 3]

The file: ROWS graded rows (ROWS/4 tasks x 4 rollouts) with a reply of 20-200 words each (some
with markdown, tags and a \\boxed answer), rewards 0/1 at random, written at bench time.

Lines: ``hack_scan`` (load, the reply features, 500 within-task shuffles) against the floor of
reading the same file with ``json.loads`` per line and computing the five built-in text
features in a plain loop over the parsed rows (what a script of one's own would do before any
test). Medians of ``--repeats``; the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = "the answer is because we compute sum of each term then check result so final".split()


def make_file(path: Path, n_rows: int) -> None:
    rng = random.Random(0)
    with open(path, "w") as fh:
        for i in range(n_rows):
            words = rng.choices(WORDS, k=rng.randint(20, 200))
            if rng.random() < 0.3:
                words.insert(0, "**Answer:**\n- ")
            if rng.random() < 0.3:
                words.append("<think>ok</think>")
            if rng.random() < 0.5:
                words.append("\\boxed{%d}" % rng.randint(0, 9))
            fh.write(json.dumps({"task_id": f"t{i // 4}", "reward": float(rng.random() < 0.5),
                                 "completion": " ".join(words)}) + "\n")


def floor(path: Path):
    from whileai_core.hacking.features import (_BOXED, _MARKDOWN, _XML,
                                               repeated_ngram_share)

    rows = [json.loads(line) for line in open(path) if line.strip()]
    return [(len(t), len(_MARKDOWN.findall(t)), len(_XML.findall(t)), len(_BOXED.findall(t)),
             repeated_ngram_share(t)) for t in (r["completion"] for r in rows)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from whileai_core.hacking.scan import hack_scan

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load average "
          f"{os.getloadavg()[0]:.2f} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.jsonl"
        make_file(path, args.rows)
        hack_scan(path)  # imports outside the timings
        times: dict[str, list[float]] = {"floor": [], "ours": []}
        for _ in range(args.repeats):
            for name, fn in (("floor", lambda: floor(path)), ("ours", lambda: hack_scan(path))):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
        med = statistics.median
        print(f"\n## hack_scan on {args.rows:,} rows ({path.stat().st_size / 1e6:.0f} MB), "
              f"medians of {args.repeats}")
        print("| what | median s |\n|---|---|")
        print(f"| json.loads per line + the five text features in a plain loop (baseline) | "
              f"{med(times['floor']):.2f} |")
        print(f"| hack_scan (ours: load, features, 500 within-task shuffles) | "
              f"{med(times['ours']):.2f} ({med(times['ours']) / med(times['floor']):.2f}x) |")
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
