"""The whileai-skills command line: human text, --json, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from whileai_core.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = str(ROOT / "examples" / "graded.jsonl")


def test_route_on_the_bundled_example(capsys):
    assert main(["route", EXAMPLE, "--model", "Qwen/Qwen3-8B"]) == 0
    out = capsys.readouterr().out
    assert "route: grpo" in out and "(n=48 tasks)" in out


def test_json_output_is_the_result_data(capsys):
    assert main(["pass-at", EXAMPLE, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = [json.loads(line) for line in open(EXAMPLE)]
    by_task: dict[str, list[float]] = {}
    for r in rows:
        by_task.setdefault(r["task_id"], []).append(r["reward"] >= 1.0)
    expected = sum(sum(v) / len(v) for v in by_task.values()) / len(by_task)
    rate = data["rate"]
    assert rate["value"] == pytest.approx(expected) and rate["n_tasks"] == 48
    assert rate["ci95"][0] < expected < rate["ci95"][1]
    assert data["summary"].startswith("pass@1  0.521")


def test_compare_holdout_and_noise(capsys, tmp_path):
    assert main(["compare", EXAMPLE, str(ROOT / "examples" / "teacher.jsonl")]) == 0
    assert "verdict:" in capsys.readouterr().out
    assert main(["holdout-size", "-k", "8", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_tasks"] == 236   # stats.md sec. 7 table
    copy = tmp_path / "rerun.jsonl"   # a second run that scored exactly the same
    copy.write_bytes(Path(EXAMPLE).read_bytes())
    assert main(["noise-floor", EXAMPLE, str(copy)]) == 0
    assert "run_std 0.0000" in capsys.readouterr().out
    assert main(["noise-floor", EXAMPLE, EXAMPLE]) == 2   # one file twice is no re-run
    assert "runs 1 and 2 are the same file" in capsys.readouterr().err


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "a", "reward": 1}\n{"task_id": "a"}\n')
    assert main(["pass-at", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{bad}, line 2" in err and "Fix:" in err


def test_console_script_runs_as_a_process():
    proc = subprocess.run([sys.executable, "-m", "whileai_core.cli", "holdout-size"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "367 tasks at k=4" in proc.stdout
