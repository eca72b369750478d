"""The prompt writer: determinism, distinctness, the stratified split and --balance.

Expected counts come from the arithmetic written next to each assertion.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from recipes.grpo.prompts import (balance, category_counts, dumps_prompts, load_prompts,
                                  split_holdout, write_prompts)
from whileai_core.errors import ArgumentError, ConfigError

ROOT = Path(__file__).resolve().parents[1]


def test_same_seed_same_bytes_in_a_fresh_interpreter(tmp_path):
    here = dumps_prompts(write_prompts(0))
    out = tmp_path / "p.jsonl"
    subprocess.run([sys.executable, str(ROOT / "recipes/grpo/prompts.py"), "--seed", "0",
                    "--out", str(out)], check=True, capture_output=True, cwd=tmp_path,
                   env={"PYTHONHASHSEED": "123", "PATH": ""})
    assert out.read_text(encoding="utf-8") == here


def test_other_seed_other_set_and_prompts_are_distinct():
    a, b = write_prompts(0), write_prompts(1)
    assert [r["text"] for r in a] != [r["text"] for r in b]
    texts = [r["text"] for r in a]
    assert len(texts) == len(set(texts)) == 120
    assert category_counts(a) == {"with_id": 96, "no_id": 16, "off_topic": 8}
    # every with_id prompt names its own id in the text, the others name none
    for r in a:
        assert (r["order_id"] in r["text"]) if r["category"] == "with_id" else r["order_id"] == ""


def test_split_is_stratified_disjoint_and_deterministic():
    records = write_prompts(0)
    train, hold = split_holdout(records, 0.2, seed=0)
    # round(0.2 * 96) = 19, round(0.2 * 16) = 3, round(0.2 * 8) = 2
    assert category_counts(hold) == {"with_id": 19, "no_id": 3, "off_topic": 2}
    assert category_counts(train) == {"with_id": 77, "no_id": 13, "off_topic": 6}
    assert not {r["scenario_id"] for r in train} & {r["scenario_id"] for r in hold}
    assert split_holdout(records, 0.2, seed=0) == (train, hold)
    assert split_holdout(records, 0.2, seed=1)[1] != hold


def test_split_keeps_a_situation_on_one_side_and_every_category_measured():
    rows = [{"task_id": f"t{i}", "scenario_id": f"s{i // 3}", "category": "with_id"}
            for i in range(12)]  # 4 situations x 3 prompts
    rows += [{"task_id": "n1", "scenario_id": "n1", "category": "no_id"},
             {"task_id": "n2", "scenario_id": "n2", "category": "no_id"}]
    train, hold = split_holdout(rows, 0.1, seed=0)
    # with_id: round(0.1 * 4) = 0 -> raised to 1 situation (3 prompts); no_id: 2 situations -> 1
    assert category_counts(hold) == {"with_id": 3, "no_id": 1, "off_topic": 0}
    held = {r["scenario_id"] for r in hold}
    assert all(r["scenario_id"] not in held for r in train)


def test_balance_reaches_the_share_in_train_only():
    train = ([{"task_id": f"w{i}", "category": "with_id"} for i in range(70)]
             + [{"task_id": f"n{i}", "category": "no_id"} for i in range(10)]
             + [{"task_id": f"o{i}", "category": "off_topic"} for i in range(20)])
    out = balance(train, 0.25)
    counts = category_counts(out)
    # no_id: 10 < 0.25 * 100. Alone it needs 0.25 * 90 / 0.75 = 30; off_topic (20) needs
    # 0.25 * 80 / 0.75 = 26.67 -> 27; then no_id needs 0.25 * 97 / 0.75 = 32.33 -> 33,
    # off_topic 0.25 * 103 / 0.75 = 34.33 -> 35, no_id 0.25 * 105 / 0.75 = 35, off 0.25*105/.75 = 35.
    assert counts == {"with_id": 70, "no_id": 35, "off_topic": 35}
    assert out[:100] == train  # originals first, unchanged
    # the cap: each prompt at most 6 times in all
    capped = balance(train[:70] + train[70:72], 0.4)
    assert category_counts(capped)["no_id"] == 12


def test_balance_and_split_refuse_bad_shares():
    with pytest.raises(ArgumentError, match="--balance must be in"):
        balance([], 0.7)
    with pytest.raises(ArgumentError, match="holdout share"):
        split_holdout([], 1.0)


def test_prompts_file_round_trip_and_line_numbered_errors(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"text": "Refund K55555 please", "category": "with_id",
                                "order_id": "K55555", "scenario_id": "sit-1"}) + "\n"
                    + json.dumps({"text": "hours?", "category": "off_topic"}) + "\n")
    rows = load_prompts(path)
    assert [r["scenario_id"] for r in rows] == ["sit-1", "p-00002"]
    assert rows[0]["prompt"][1] == {"role": "user", "content": "Refund K55555 please"}
    path.write_text(json.dumps({"text": "Refund please", "category": "with_id"}) + "\n")
    with pytest.raises(ConfigError, match="line 1.*order_id"):
        load_prompts(path)
