"""prove_reward names a planted format bonus and a truncation hole before any training;
grpo_plan's variants, rare categories and arms; split_by_task(stratify=). The rewards here are
small programs whose every score is worked out by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whileai_core import grpo_plan, split_by_task
from whileai_core.errors import ArgumentError, RowsError
from whileai_core.hacking import prove_reward

# Tasks: reply "<answer>X</answer>" with the task's answer X. 20 tasks, answers "a0".."a19".
PLANTED = '''import re

def score(prompts, completions, answer, **kw):
    """1.0 for <answer>right</answer> found anywhere; 0.7 for any well-formed <answer> tag."""
    out = []
    for c, a in zip(completions, answer):
        m = re.search(r"<answer>(.*?)</answer>", c, re.S)
        out.append(1.0 if m and m.group(1).strip() == a else 0.7 if m else 0.0)
    return out
'''
FIXED = '''import re

def score(prompts, completions, answer, **kw):
    """1.0 when the whole reply is <answer>right</answer>; nothing for anything else."""
    return [1.0 if re.fullmatch(r"\\s*<answer>(.*?)</answer>\\s*", c, re.S) and
            re.fullmatch(r"\\s*<answer>(.*?)</answer>\\s*", c, re.S).group(1).strip() == a
            else 0.0 for c, a in zip(completions, answer)]
'''


@pytest.fixture
def bench(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tasks = [{"task_id": f"t{i:02d}", "prompt": f"Reply with <answer>a{i}</answer>.",
              "answer": f"a{i}", "category": "even" if i % 2 == 0 else "odd"}
             for i in range(20)]
    Path("tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    # the model: right on 2 of 4 rollouts of every task, a plain wrong reply otherwise
    rows = [{"task_id": t["task_id"], "completion": f"<answer>{t['answer']}</answer>" if j < 2
             else "I do not know", "reward_planted": 1.0 if j < 2 else 0.0} for t in tasks
            for j in range(4)]
    Path("model.jsonl").write_text("".join(
        json.dumps({**{k: v for k, v in r.items() if k != "reward_planted"},
                    "reward": r["reward_planted"]}) + "\n" for r in rows))
    Path("planted.py").write_text(PLANTED)
    Path("fixed.py").write_text(FIXED)
    return tmp_path


def test_a_planted_format_bonus_is_named_before_any_training(bench):
    proof = prove_reward("tasks.jsonl", reward="planted.py:score", model_rows="model.jsonl",
                         max_tokens=64, group_by="category")
    assert proof.verdict == "fix_first" and "format_bonus" in proof.holes
    bonus = {c.name: c for c in proof.checks}["format_bonus"]
    # another task's answer inside <answer>: 0.7; the same text bare: 0.0 -> +0.7 on all 20
    assert bonus.mean_bonus == pytest.approx(0.7) and bonus.rate.value == pytest.approx(1.0)
    # the model earns 0.5 a task (2 of 4 at 1.0): 0.7 - 0.5 = +0.2, at or above the model
    assert bonus.vs_model == pytest.approx(0.2)
    assert set(bonus.by_group) == {"even", "odd"} and "format" in bonus.fix
    # the right answer found anywhere: the right reply followed by filler to the cap passes
    cut = {c.name: c for c in proof.checks}["truncation"]
    assert cut.verdict == "hole" and cut.rate.value == pytest.approx(1.0) and cut.n_tasks == 20
    assert "fix_first" in str(proof) and "format_bonus" in str(proof)


def test_the_fixed_reward_has_neither_hole(bench):
    proof = prove_reward("tasks.jsonl", reward="fixed.py:score", model_rows="model.jsonl",
                         max_tokens=64)
    checks = {c.name: c for c in proof.checks}
    assert checks["format_bonus"].verdict == "closed" and checks["format_bonus"].mean_bonus == 0.0
    assert checks["truncation"].verdict == "closed" and checks["truncation"].rate.value == 0.0
    assert "format_bonus" not in proof.holes and "truncation" not in proof.holes


def test_a_bonus_below_the_model_is_a_leak_and_no_format_is_skipped(bench):
    Path("small.py").write_text(PLANTED.replace("0.7 if m", "0.1 if m"))
    small = {c.name: c for c in prove_reward("tasks.jsonl", reward="small.py:score",
                                             model_rows="model.jsonl", max_tokens=64).checks}
    assert small["format_bonus"].verdict == "leak"   # 0.1 - 0.5 = -0.4: below the model
    assert small["format_bonus"].vs_model == pytest.approx(-0.4)
    tasks = [{"task_id": f"p{i}", "prompt": "Say a number.", "answer": str(i)} for i in range(5)]
    plain = {c.name: c for c in prove_reward(
        tasks, reward=lambda prompts, completions, answer, **kw: [float(c == a) for c, a in
                                                                  zip(completions, answer)],
        max_tokens=16).checks}
    assert plain["format_bonus"].verdict == "skipped"       # no marker anywhere
    assert plain["truncation"].verdict == "closed"          # exact match: filler fails


def test_grpo_plan_variants_rare_categories_and_arms():
    # 10 tasks: 8 "common" (4 split: pass 1 of 2; 4 always pass), 2 "rare" (split)
    rows = [{"task_id": f"c{i}", "category": "common", "reward": float(j == 0 or i >= 4)}
            for i in range(8) for j in range(2)]
    rows += [{"task_id": f"r{i}", "category": "rare", "reward": float(j == 0)}
             for i in range(2) for j in range(2)]
    plan = grpo_plan(rows, model="Qwen/Qwen3-8B")
    shares = {c.category: (c.share, c.n_split, c.rare) for c in plan.categories}
    assert shares == {"common": (0.8, 4, False), "rare": (0.2, 2, True)}
    assert plan.balance == 0.25 and plan.flags == ["--balance", "0.25"]
    assert [a.name for a in plan.arms] == ["method", "random_selection", "random_reward"]
    assert plan.arms[0].n_tasks == plan.arms[1].n_tasks == 6
    assert len(set(plan.arms[1].tasks)) == 6
    llama = grpo_plan(rows, model="meta-llama/Llama-3.1-8B", balance=None)
    assert [a.name for a in llama.arms] == ["method", "random_selection"]
    assert llama.balance is None and llama.flags == []
    dr = grpo_plan(rows, model="m", loss="dr_grpo").loss
    assert dr.config["scale_rewards"] == "none" and dr.flags == ["--loss-type", "dr_grpo",
                                                                 "--no-scale-rewards"]
    dapo = grpo_plan(rows, model="m", loss="dapo").loss
    assert dapo.config == {"loss_type": "dapo", "epsilon": 0.2, "epsilon_high": 0.28,
                           "mask_truncated_completions": True, "num_iterations": 2}
    with pytest.raises(ArgumentError, match="never binds"):
        grpo_plan(rows, model="m", loss="dapo", num_iterations=1)
    with pytest.raises(ArgumentError, match="`loss` must be one of"):
        grpo_plan(rows, model="m", loss="ppo")


def test_a_stratified_split_holds_out_every_category():
    records = [{"task_id": f"w{i}", "category": "with_id"} for i in range(36)]
    records += [{"task_id": f"n{i}", "category": "no_id"} for i in range(6)]
    records += [{"task_id": "solo", "category": "one"}]
    split = split_by_task(records, share=0.2, seed=0, stratify="category")
    held = {c: sum(t.startswith(c[0]) for t in split.holdout_tasks) for c in ("with_id", "no_id")}
    # round(0.2 x 36) = 7, round(0.2 x 6) = 1; a category of one task stays in training
    assert held == {"with_id": 7, "no_id": 1} and "solo" in split.train_tasks
    assert split.strata == {"no_id": [1, 5], "one": [0, 1], "with_id": [7, 29]}
    assert "the test cannot see them" in split.note
    # without stratify: the same split as before the option existed (one ranking of all tasks)
    import hashlib

    plain = split_by_task(records, share=0.2, seed=0)
    ids = [r["task_id"] for r in records]
    ranked = sorted(ids, key=lambda t: hashlib.sha256(f"0\x00{t}".encode()).hexdigest())
    assert set(plain.holdout_tasks) == set(ranked[:round(0.2 * 43)]) and plain.strata is None
    with pytest.raises(RowsError, match="`category` 'no_id' here but 'with_id'"):
        split_by_task(records + [{"task_id": "w0", "category": "no_id"}], stratify="category")
