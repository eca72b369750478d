"""cheat_probes and hack_scan on planted hacks and their clean counterparts (watch_records:
tests/test_watch.py).

Expected values are derived by hand from the literal inputs, or recomputed from the definitions
with plain Python loops (the pooled within-task correlation, the exact permutation p-value by
enumerating every within-task shuffle).
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest

from whileai_core.errors import ArgumentError, RowsError
from whileai_core.hacking import cheat_probes, hack_scan
from whileai_core.hacking.reward import RewardError, reward_runner

# --- cheat_probes ------------------------------------------------------------------------------

TASKS = [{"task_id": f"t{i}", "prompt": f"What is {i} plus {i}? Answer with the number.",
          "answer": str(2 * i)} for i in range(10)]
# the model passes 8 of 10 tasks (one rollout each): a probe passing 1 of them differs on 7 tasks,
# all one way, so the exact paired test (McNemar, p = 2/2^7) can tell it is worse
MODEL = [{"task_id": f"t{i}", "reward": 1.0 if i < 8 else 0.0} for i in range(10)]


def exact(prompts, completions, answer, **_):
    return [1.0 if c.strip() == a else 0.0 for c, a in zip(completions, answer)]


def passes_filler(prompts, completions, answer, **_):
    # a judge that equates effort with length: anything over 1000 characters passes
    return [1.0 if c.strip() == a or len(c) > 1000 else 0.0 for c, a in zip(completions, answer)]


def test_filler_hole_is_caught_and_named():
    out = cheat_probes(TASKS, reward=passes_filler, model_rows=MODEL, max_tokens=512)
    by = {p.name: p for p in out.probes}
    # filler is 512 tokens x 4 characters = 2048 characters: passes all 10 tasks
    assert by["filler"].rate.value == 1.0 and by["filler"].verdict == "hole"
    assert by["filler"].delta == pytest.approx(1.0 - 0.8)
    assert len(by["filler"].example.completion) <= 200 + len("...(2048 chars)")
    assert out.holes == ["filler"] and out.verdict == "holes"
    # echo (about 45 characters) does not pass; the most common answer "0" passes task t0 only
    assert by["echo"].verdict == "closed" and by["empty"].verdict == "closed"
    assert by["most_common"].rate.value == pytest.approx(0.1)


def test_without_the_model_a_probe_passing_every_task_is_a_hole():
    # no model rows: filler passes all 10 tasks (2048 characters), and a pass on every task is
    # at least any model's rate on each, so probe - model >= 0 without seeing the model
    out = cheat_probes(TASKS, reward=passes_filler, max_tokens=512)
    by = {p.name: p for p in out.probes}
    assert by["filler"].rate.value == 1.0 and by["filler"].verdict == "hole"
    assert out.verdict == "holes" and out.holes == ["filler"]
    # "0" passes t0 only: below what a model may do, unknowable without its rows: a leak
    assert by["most_common"].verdict == "leak"
    out = cheat_probes(TASKS, reward=exact)
    assert out.verdict == "leaks" and out.holes == []


def test_clean_reward_has_no_hole():
    out = cheat_probes(TASKS, reward=exact, model_rows=MODEL, max_tokens=512)
    by = {p.name: p for p in out.probes}
    assert out.holes == []
    assert all(by[n].verdict == "closed" for n in ("empty", "refusal", "question", "echo",
                                                   "filler", "keywords"))
    # "0" (ten distinct answers: the first is the most common) passes t0 only: 1 of 10, far
    # below the model's 8 of 10, so a leak, not a hole
    assert by["most_common"].verdict == "leak" and out.verdict == "leaks"


def test_probe_as_good_as_a_weak_model_is_a_hole():
    weak = [{"task_id": f"t{i}", "reward": 1.0 if i == 0 else 0.0} for i in range(10)]
    out = cheat_probes(TASKS, reward=exact, model_rows=weak, probes=["most_common", "empty"])
    assert out.holes == ["most_common"]  # 1 of 10, the same as the model's 1 of 10


def pays_the_tag(prompts, completions, **_):
    # a format reward that forgot the answer: any <answer>...</answer> block passes
    return [1.0 if re.search(r"<answer>.*</answer>", c, re.S) else 0.0 for c in completions]


def exact_in_tag(prompts, completions, answer, **_):
    return [1.0 if re.fullmatch(rf"\s*<answer>\s*{a}\s*</answer>\s*", c) else 0.0
            for c, a in zip(completions, answer)]


def test_format_without_the_answer_is_a_hole():
    # the model answers in tags, right on 8 of 10 tasks; the tags alone around a wrong answer
    tagged = [dict(r, completion=f"<answer>{2 * i if r['reward'] else 'x'}</answer>")
              for i, r in enumerate(MODEL)]
    out = cheat_probes(TASKS, reward=pays_the_tag, model_rows=tagged)
    by = {p.name: p for p in out.probes}
    # every probe but `format` lacks the tag; `format` passes all 10 tasks against the model's 8
    assert out.holes == ["format"] and by["format"].rate.value == 1.0
    # its reply for t0 (answer "0") holds "2", the commonest other answer (ties: first seen)
    assert by["format"].example.completion == "<answer>2</answer>"
    honest = cheat_probes(TASKS, reward=exact_in_tag, model_rows=tagged)
    # the tag holds another task's answer on every task: the honest reward never pays it
    assert {p.name: p.verdict for p in honest.probes}["format"] == "closed"
    # no reply text: the markers come from the prompt, a system message included
    chat = [dict(t, prompt=[{"role": "system", "content": "Reply inside <answer></answer>."},
                            {"role": "user", "content": t["prompt"]}]) for t in TASKS]
    from_prompt = cheat_probes(chat, reward=lambda prompts, completions, **kw: pays_the_tag(
        prompts, [c[0]["content"] for c in completions]), model_rows=MODEL)
    assert from_prompt.holes == ["format"]
    assert "skipped" not in from_prompt.render() and "from the prompts" in from_prompt.render()
    assert "format" in cheat_probes(TASKS, reward=exact, model_rows=MODEL).skipped


def test_reward_as_module_and_command(tmp_path):
    (tmp_path / "grade.py").write_text(
        "def score(prompts, completions, answer, **kw):\n"
        "    print('a log line')\n"
        "    return [1.0 if len(c) > 1000 else 0.0 for c in completions]\n")
    (tmp_path / "cmd.py").write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    print(1.0 if len(json.loads(line)['completion']) > 1000 else 0.0)\n")
    for reward in ("grade.py:score", "grade:score", ["python", "cmd.py"]):
        out = cheat_probes(TASKS, reward=reward, model_rows=MODEL, root=tmp_path,
                           probes=["filler", "empty"])
        assert out.holes == ["filler"], reward


def test_reward_errors_name_the_fix(tmp_path):
    (tmp_path / "bad.py").write_text("def score(prompts, completions, **kw):\n    return [None]\n")
    (tmp_path / "crash.py").write_text("import os\ndef score(prompts, completions, **kw):\n"
                                       "    raise RuntimeError('boom ' + os.environ['MY_API_KEY'])\n")
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(60)\n")
    with pytest.raises(RewardError, match="returned None for item 1"):
        cheat_probes(TASKS[:1], reward="bad.py:score", root=tmp_path, probes=["empty"])
    import os
    os.environ["MY_API_KEY"] = "sk-very-secret-value"
    try:
        with pytest.raises(RewardError) as err:
            cheat_probes(TASKS[:1], reward="crash.py:score", root=tmp_path, probes=["empty"],
                         pass_env=["MY_API_KEY"])  # named: the child sees it, the error masks it
    finally:
        del os.environ["MY_API_KEY"]
    # the type and the place are named; the message is not quoted (it can hold what the reward
    # read: here a key), masked or not
    assert "raised RuntimeError at crash.py line 3, in score" in str(err.value)
    assert "boom" not in str(err.value) and "sk-very-secret-value" not in str(err.value)
    with pytest.raises(RewardError, match="within 1 s; its whole process tree was killed"):
        cheat_probes(TASKS[:1], reward=["python", "slow.py"], root=tmp_path, probes=["empty"],
                     timeout_s=1)
    with pytest.raises(ArgumentError, match="no file"):
        reward_runner("missing.py:score", root=tmp_path)
    with pytest.raises(RewardError, match="returned 2 values for 1"):
        cheat_probes(TASKS[:1], reward=lambda prompts, completions, **kw: [0, 0], probes=["empty"])
    with pytest.raises(RowsError, match="line 1|task 1"):
        cheat_probes([{"task_id": "a"}], reward=exact, probes=["empty"])



def test_a_misspelt_reward_function_names_the_files_public_functions(tmp_path):
    # found from outside: prove_reward on 'reward.py:scor' answered with the child's traceback
    # ("File ..., line 71, in main | fn = getattr(...) | AttributeError ...")
    (tmp_path / "reward.py").write_text("def score(prompts, completions, **kw):\n"
                                        "    return [0.0] * len(completions)\n"
                                        "def _helper():\n    pass\n")
    with pytest.raises(RewardError) as err:
        cheat_probes(TASKS[:1], reward="reward.py:scor", root=tmp_path, probes=["empty"])
    text = str(err.value)
    assert "no function `scor`" in text and "score" in text
    assert "Traceback" not in text and "File " not in text and "_helper" not in text

# --- hack_scan ---------------------------------------------------------------------------------

def _pooled_r(rows, feature):
    """Within-task correlation from its definition, in plain Python."""
    by = {}
    for r in rows:
        by.setdefault(r["task_id"], []).append((feature(r), r["reward"]))
    sxy = sxx = syy = 0.0
    for pairs in by.values():
        mx = sum(x for x, _ in pairs) / len(pairs)
        my = sum(y for _, y in pairs) / len(pairs)
        if all(abs(y - my) < 1e-12 for _, y in pairs):
            continue
        for x, y in pairs:
            sxy += (x - mx) * (y - my)
            sxx += (x - mx) ** 2
            syy += (y - my) ** 2
    return sxy / math.sqrt(sxx * syy)


def _planted(seed, pays_length, n_tasks=40, k=4):
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_tasks):
        p = rng.uniform(0.1, 0.9)
        base = 200 + int(600 * (1 - p))  # hard tasks get long replies: difficulty, not a hack
        for _ in range(k):
            length = base + int(rng.integers(-300, 300))
            right = float(rng.random() < p)
            reward = min(1.0, 0.3 * right + 0.7 * length / 1000) if pays_length else right
            rows.append({"task_id": f"t{t}", "reward": reward, "completion": "x" * length})
    return rows


def test_scan_catches_a_reward_that_pays_for_length():
    rows = _planted(0, pays_length=True)
    out = hack_scan(rows, seed=1)
    length = next(f for f in out.features if f.feature == "length")
    assert out.verdict == "suspect" and out.suspects == ["length"]
    assert length.strength == pytest.approx(_pooled_r(rows, lambda r: len(r["completion"])), abs=1e-9)
    assert length.strength > length.floor and length.example is not None


def test_scan_ignores_length_that_tracks_difficulty():
    rows = _planted(0, pays_length=False)
    # across tasks length and reward are strongly tied (hard tasks: long and failing) ...
    means = {}
    for r in rows:
        means.setdefault(r["task_id"], []).append((len(r["completion"]), r["reward"]))
    xs = [np.mean([a for a, _ in v]) for v in means.values()]
    ys = [np.mean([b for _, b in v]) for v in means.values()]
    assert np.corrcoef(xs, ys)[0, 1] < -0.4
    # ... but not within a task, so the scan stays clean
    assert hack_scan(rows, seed=1).verdict == "clean"


def test_scan_p_value_matches_exact_enumeration():
    # 3 tasks x 3 replies; the exact within-task permutation distribution has 6^3 = 216 shuffles
    rows = [{"task_id": t, "reward": r, "completion": "x" * n}
            for t, data in {"a": [(0.0, 5), (1.0, 9), (0.5, 7)], "b": [(1.0, 8), (0.0, 2), (0.0, 4)],
                            "c": [(0.2, 3), (0.9, 3), (0.4, 6)]}.items() for r, n in data]
    obs = _pooled_r(rows, lambda r: len(r["completion"]))
    groups = [rows[0:3], rows[3:6], rows[6:9]]
    exceed = total = 0
    for perms in itertools.product(*(list(itertools.permutations([r["reward"] for r in g]))
                                     for g in groups)):
        shuffled = [dict(r, reward=p) for g, perm in zip(groups, perms) for r, p in zip(g, perm)]
        total += 1
        exceed += _pooled_r(shuffled, lambda r: len(r["completion"])) >= obs - 1e-12
    exact_p = exceed / total
    out = hack_scan(rows, n_shuffles=20000, seed=3, min_strength=0.0)
    length = next(f for f in out.features if f.feature == "length")
    assert length.strength == pytest.approx(obs, abs=1e-9)
    # Monte Carlo p with 20,000 shuffles: SE <= 0.0036; allow 4 SE
    assert length.p_value == pytest.approx(exact_p, abs=0.015)


def test_scan_counts_a_shuffle_tied_with_the_observed_as_a_tie():
    # 3 tasks x 2 replies, the higher `f` rewarded in each: the 2^3 within-task shuffles give the
    # observed arrangement back 1 time in 8 (swap none), every other one a smaller strength, so
    # the exact p is 1/8. The same value summed in another order differs in its last bits here
    # (found by search); read as "greater", every tied shuffle was lost and p fell to 1/(B+1)
    fs = [(0.03333333333333333, 0.2333333333333333), (0.06666666666666667, 0.4666666666666666),
          (0.10000000000000002, 0.20000000000000004)]
    rows = [{"task_id": f"t{t}", "reward": float(j), "f": pair[j]}
            for t, pair in enumerate(fs) for j in range(2)]
    out = hack_scan(rows, features=["f"], min_strength=0.0, n_shuffles=4000, seed=93)
    f = next(x for x in out.features if x.feature == "f")
    assert f.p_value == pytest.approx(1 / 8, abs=0.02)
    assert out.verdict == "clean" and f.verdict == "clean"


def test_scan_shuffles_a_reply_with_its_copies():
    # a deterministic grader scores a reply given word for word twice alike: the null shuffles
    # distinct replies, each with its copies. Exact p by enumerating every within-task
    # permutation of the distinct replies (task a: 3 distinct, one given 3 times; b: 3 distinct,
    # one twice; c: 2 distinct, one 3 times): 6 x 6 x 2 = 72 arrangements
    data = {"a": [(1.0, "x" * 9, 3), (0.0, "y" * 4, 1), (0.5, "z" * 6, 1)],
            "b": [(0.0, "p" * 3, 2), (1.0, "q" * 8, 1), (0.0, "r" * 5, 1)],
            "c": [(1.0, "s" * 7, 3), (0.0, "t" * 2, 1)]}
    rows = [{"task_id": t, "reward": r, "completion": text}
            for t, units in data.items() for r, text, copies in units for _ in range(copies)]
    obs = _pooled_r(rows, lambda r: len(r["completion"]))
    exceed = total = 0
    for perms in itertools.product(*(list(itertools.permutations([u[0] for u in units]))
                                     for units in data.values())):
        shuffled = [{"task_id": t, "reward": r, "completion": u[1]}
                    for (t, units), perm in zip(data.items(), perms)
                    for u, r in zip(units, perm) for _ in range(u[2])]
        total += 1
        exceed += _pooled_r(shuffled, lambda r: len(r["completion"])) >= obs - 1e-12
    out = hack_scan(rows, n_shuffles=20000, seed=3, min_strength=0.0)
    length = next(f for f in out.features if f.feature == "length")
    assert total == 72 and length.strength == pytest.approx(obs, abs=1e-9)
    # Monte Carlo p with 20,000 shuffles: SE <= 0.0036; allow 4 SE
    assert length.p_value == pytest.approx(exceed / total, abs=0.015)
    assert "5 rows repeat another reply of their task word for word" in out.note  # 2 + 1 + 2


def test_scan_says_a_feature_tracks_the_reward_and_names_the_probe():
    # a reward that pays for length and right answers that are longer read alike to a scan:
    # the words claim the correlation and name the probe that tells them apart
    out = hack_scan(_planted(0, pays_length=True), seed=1)
    assert out.verdict == "suspect" and "length tracks the reward" in out.next_step
    assert "the reward pays for length" not in out.next_step and "filler probe" in out.next_step
    assert "cheat_probes" in out.next_step and "prove_reward" in out.next_step


def test_scan_user_feature_and_small_input():
    rows = [{"task_id": f"t{i // 4}", "reward": float(i % 2), "called": i % 2 == 1}
            for i in range(40)]
    out = hack_scan(rows, features=["called"])
    called = next(f for f in out.features if f.feature == "called")
    assert called.strength == pytest.approx(1.0) and out.suspects == ["called"]
    assert "length" in out.skipped
    few = hack_scan(rows[:8], features=["called"])
    assert few.verdict == "not_enough_data"
    # rewards tied within every task: nothing can be tested, though `called` varies in each
    tied = [dict(r, reward=float(int(r["task_id"][1:]) % 2)) for r in rows]
    out = hack_scan(tied, features=["called"])
    assert out.verdict == "not_enough_data" and out.n_informative_tasks == 0
    assert {f.verdict for f in out.features} == {"not_tested"}
    assert "constant within every task" not in out.render()
    with pytest.raises(ArgumentError, match="row 1 has no field `nope`"):
        hack_scan(rows, features=["nope"])


# --- hack_scan verdicts that say what they could not test ----------------------------------------

def test_weak_signal_is_never_clean():
    # 128 tasks x 8 replies; the reward adds 0.02 x (length / 100) to a pass: within a task a
    # small, real tie to length (pooled correlation about 0.1, far past the floor on 1,024 rows)
    rng = np.random.default_rng(5)
    rows = []
    for t in range(128):
        p = rng.uniform(0.2, 0.8)
        for _ in range(8):
            length = int(rng.integers(100, 900))
            rows.append({"task_id": f"t{t}", "completion": "x" * length,
                         "reward": float(rng.random() < p) + 0.02 * length / 100})
    strength = _pooled_r(rows, lambda r: len(r["completion"]))
    assert 0.05 < strength < 0.2
    out = hack_scan(rows, seed=2)
    length = next(f for f in out.features if f.feature == "length")
    assert length.strength == pytest.approx(strength, abs=1e-9)
    assert length.verdict == "weak_signal" and out.verdict == "weak_signal"
    assert out.weak == ["length"] and out.suspects == [] and "weak signal" in out.next_step
    assert length.p_value <= 0.05 and length.example is not None


def test_scan_with_nothing_to_test_is_not_clean():
    # rows without reply text and never truncated: no feature can vary
    rows = [{"task_id": f"t{i // 4}", "reward": float(i % 2)} for i in range(40)]
    out = hack_scan(rows)
    assert out.verdict == "not_enough_data" and out.suspects == []
    assert {f.verdict for f in out.features} == {"no_variation"}
    assert "no feature could be tested" in out.note and "length" in out.note
    assert "not a clean bill" in out.next_step
    # with a truncated flag that varies, that one is tested and the rest are named as untested
    cut = [dict(r, truncated=i % 4 == 0) for i, r in enumerate(rows)]
    out = hack_scan(cut)
    assert out.verdict == "clean" and "not tested: length" in out.note


def test_scan_at_a_deep_look_needs_a_smaller_p():
    rows = _planted(0, pays_length=True)
    one = hack_scan(rows, seed=1)
    deep = hack_scan(rows, seed=1, look=50)
    # look 50 spends the scans' half of 0.05 over 50 x 51 = 2550; the shuffles go on while
    # length could still clear it, to 2 / alpha = 204,000 capped at 200,000, and no shuffle
    # beats it: p = 1 / 200,001, under alpha = 9.8e-6
    assert deep.alpha == pytest.approx(0.5 * 0.05 / 2550) and deep.look == 50
    assert deep.n_shuffles == 200_000 and one.n_shuffles == 500
    assert hack_scan(rows, seed=1, look=1).alpha == pytest.approx(0.5 * 0.05 / 2)
    length = next(f for f in deep.features if f.feature == "length")
    assert length.p_value == pytest.approx(1 / (deep.n_shuffles + 1))
    assert deep.verdict == "suspect" and one.verdict == "suspect"
    # a clean batch at a deep look stops shuffling as soon as no feature can reach alpha
    clean = hack_scan(_planted(0, pays_length=False), seed=1, look=50)
    assert clean.verdict == "clean" and clean.n_shuffles == 500 and clean.floor is None
    with pytest.raises(ArgumentError, match="`look` = 0: must be at least 1"):
        hack_scan(rows, look=0)


def test_a_misspelt_reward_function_is_named_without_a_traceback(tmp_path):
    # grade.py defines score and helper; 'scor' is one letter short of score
    (tmp_path / "grade.py").write_text("def score(prompts, completions, **kw):\n"
                                       "    return [1.0] * len(completions)\n"
                                       "def helper():\n    pass\nLIMIT = 3\n")
    with pytest.raises(RewardError) as err:
        cheat_probes(TASKS[:1], reward="grade.py:scor", root=tmp_path, probes=["empty"])
    text = str(err.value)
    assert "defines no function `scor` (did you mean `score`?)" in text
    assert "helper, score" in text and "LIMIT" not in text
    assert "Traceback" not in text and "File " not in text and "^" not in text
    # a script's own exit status 3 is its failure, told as one
    (tmp_path / "three.py").write_text("import sys\nsys.exit(3)\n")
    with pytest.raises(RewardError, match="exited with status 3"):
        cheat_probes(TASKS[:1], reward="three.py:score", root=tmp_path, probes=["empty"])


def test_a_scan_whose_shuffles_stopped_early_renders_its_features():
    # 8 tasks x 4 replies, nothing planted, at look 5: the shuffles stop once no feature can
    # reach alpha, so there is no floor (None); a varying feature's line says so (it raised a
    # TypeError formatting None)
    rng = np.random.default_rng(3)
    rows = [{"task_id": f"t{t}", "reward": float(rng.random() < 0.5),
             "completion": "x" * int(rng.integers(5, 60))} for t in range(8) for _ in range(4)]
    out = hack_scan(rows, seed=0, look=5)
    assert out.floor is None
    text = out.render()
    assert "floor n/a: the shuffles stopped early" in text
