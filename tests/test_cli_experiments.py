"""The new commands from a shell: prove-reward, dpo-pairs, dpo-data, grpo-plan,
register-experiment, record-run, experiments, export-experiments, archive-experiment, and
split --stratify. Each is one call into the core (tested there); here: the flags reach it, bad
input is one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whileai_core.cli import main


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_prove_reward_names_a_format_bonus(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "tasks.jsonl", [{"task_id": f"t{i}", "prompt": "say <b>x</b>",
                                      "answer": f"a{i}"} for i in range(6)])
    (tmp_path / "bonus.py").write_text(
        "def score(prompts, completions, answer, **kw):\n"
        "    return [1.0 if c == '<b>' + a + '</b>' else 0.5 if c.startswith('<b>') else 0.0\n"
        "            for c, a in zip(completions, answer)]\n")
    assert main(["prove-reward", "tasks.jsonl", "--reward", "bonus.py:score", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # markers from the prompts; another task's answer in <b>: 0.5, bare: 0.0
    bonus = {c["name"]: c for c in out["checks"]}["format_bonus"]
    assert bonus["mean_bonus"] == 0.5 and bonus["verdict"] == "leak"   # no model rows: a leak


def test_pairs_data_and_stratified_split(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = []
    for i in range(10):
        cat = "a" if i < 6 else "b"
        for j, (r, reply) in enumerate([(1, "good"), (0 if cat == "a" else 1, "bad")]):
            rows.append({"task_id": f"t{i}", "category": cat, "reward": float(r),
                         "messages": [{"role": "user", "content": f"ask {i}"},
                                      {"role": "assistant", "content": reply}]})
    write(tmp_path / "rollouts.jsonl", rows)
    assert main(["split", "rollouts.jsonl", "--stratify", "category", "--holdout-out",
                 "held.jsonl", "--train-out", "train.jsonl", "--json"]) == 0
    split = json.loads(capsys.readouterr().out)
    assert split["strata"] == {"a": [1, 5], "b": [1, 3]}   # round(0.2 x 6), round(0.2 x 4)
    assert main(["dpo-pairs", "train.jsonl", "--out", "pairs.jsonl", "--json"]) == 0
    pairs = json.loads(capsys.readouterr().out)
    assert pairs["n_pairs"] == 5 and pairs["no_contrast"] == ["b"]     # 5 a tasks in training
    (tmp_path / "grader.py").write_text("def grade(ask, reply):\n    return 1.0\n")
    assert main(["dpo-data", "pairs.jsonl", "--out-dir", "data", "--holdout", "held.jsonl",
                 "--grader", "grader.py", "--settings", "beta=0.2"]) == 0
    assert "5 pairs (5 on-policy, 0 constructed)" in capsys.readouterr().out
    assert (tmp_path / "data" / "pairs.jsonl").read_text().count("\n") == 5
    assert json.loads((tmp_path / "data" / "settings.json").read_text()) == {"beta": 0.2}
    assert main(["grpo-plan", "rollouts.jsonl", "--model", "Qwen/Qwen3-8B", "--loss",
                 "dr_grpo", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert "--no-scale-rewards" in plan["flags"]


def test_experiments_from_a_shell(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    state = ["--state-dir", str(tmp_path / "state")]
    rule = '{"ship_if": [{"kind": "delta_above", "bound": 0.05}]}'
    assert main(["register-experiment", "e1", "--question", "q?", "--hypothesis", "h",
                 "--arms", "treat=the change", "--holdout", "holdout-0123456789ab",
                 "--rule", rule, *state]) == 0
    assert "ship if the paired delta's interval lies above +0.050" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:      # argparse: usage and the bad word, exit 2
        main(["register-experiment", "e2", "--question", "q?", "--hypothesis", "h",
              "--arms", "treat", "--holdout", "holdout-0123456789ab", "--rule", rule, *state])
    assert exc.value.code == 2 and "'treat' is not NAME=VALUE" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["register-experiment", "e3", "--question", "q?", "--hypothesis", "h",
              "--arms", "t=c", "--holdout", "holdout-0123456789ab", "--rule", "{ship", *state])
    assert exc.value.code == 2 and "JSON: not valid JSON" in capsys.readouterr().err
    assert main(["experiments", "--json", *state]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [e["name"] for e in listed["experiments"]] == ["e1"]
    assert main(["export-experiments", "out.md", *state]) == 0
    assert "## e1" in (tmp_path / "out.md").read_text()
    assert main(["archive-experiment", "e1", *state]) == 0
    assert main(["record-run", "run-0123456789ab", "--changed", "a", "--moved", "b", "--why",
                 "c", "--learned", "d", "--reproduce", "e", *state]) == 2
    assert "no run 'run-0123456789ab'" in capsys.readouterr().err
