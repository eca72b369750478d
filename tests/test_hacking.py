"""cheat_probes, hack_scan and watch_records on planted hacks and their clean counterparts.

Expected values are derived by hand from the literal inputs, or recomputed from the definitions
with plain Python loops (the pooled within-task correlation, the exact permutation p-value by
enumerating every within-task shuffle, the training reward's climb and its successive-difference
noise).
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest

from whileai_core.errors import ArgumentError, RowsError
from whileai_core.hacking import cheat_probes, hack_scan, watch_records
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
    out = cheat_probes(passes_filler, TASKS, model_rows=MODEL, max_tokens=512)
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
    out = cheat_probes(passes_filler, TASKS, max_tokens=512)
    by = {p.name: p for p in out.probes}
    assert by["filler"].rate.value == 1.0 and by["filler"].verdict == "hole"
    assert out.verdict == "holes" and out.holes == ["filler"]
    # "0" passes t0 only: below what a model may do, unknowable without its rows: a leak
    assert by["most_common"].verdict == "leak"
    out = cheat_probes(exact, TASKS)
    assert out.verdict == "leaks" and out.holes == []


def test_clean_reward_has_no_hole():
    out = cheat_probes(exact, TASKS, model_rows=MODEL, max_tokens=512)
    by = {p.name: p for p in out.probes}
    assert out.holes == []
    assert all(by[n].verdict == "closed" for n in ("empty", "refusal", "question", "echo",
                                                   "filler", "keywords"))
    # "0" (ten distinct answers: the first is the most common) passes t0 only: 1 of 10, far
    # below the model's 8 of 10, so a leak, not a hole
    assert by["most_common"].verdict == "leak" and out.verdict == "leaks"


def test_probe_as_good_as_a_weak_model_is_a_hole():
    weak = [{"task_id": f"t{i}", "reward": 1.0 if i == 0 else 0.0} for i in range(10)]
    out = cheat_probes(exact, TASKS, model_rows=weak, probes=["most_common", "empty"])
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
    out = cheat_probes(pays_the_tag, TASKS, model_rows=tagged)
    by = {p.name: p for p in out.probes}
    # every probe but `format` lacks the tag; `format` passes all 10 tasks against the model's 8
    assert out.holes == ["format"] and by["format"].rate.value == 1.0
    # its reply for t0 (answer "0") holds "2", the commonest other answer (ties: first seen)
    assert by["format"].example.completion == "<answer>2</answer>"
    honest = cheat_probes(exact_in_tag, TASKS, model_rows=tagged)
    # the tag holds another task's answer on every task: the honest reward never pays it
    assert {p.name: p.verdict for p in honest.probes}["format"] == "closed"
    # no reply text: the markers come from the prompt, a system message included
    chat = [dict(t, prompt=[{"role": "system", "content": "Reply inside <answer></answer>."},
                            {"role": "user", "content": t["prompt"]}]) for t in TASKS]
    from_prompt = cheat_probes(lambda prompts, completions, **kw: pays_the_tag(
        prompts, [c[0]["content"] for c in completions]), chat, model_rows=MODEL)
    assert from_prompt.holes == ["format"]
    assert "skipped" not in from_prompt.render() and "from the prompts" in from_prompt.render()
    assert "format" in cheat_probes(exact, TASKS, model_rows=MODEL).skipped


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
        out = cheat_probes(reward, TASKS, model_rows=MODEL, root=tmp_path, probes=["filler", "empty"])
        assert out.holes == ["filler"], reward


def test_reward_errors_name_the_fix(tmp_path):
    (tmp_path / "bad.py").write_text("def score(prompts, completions, **kw):\n    return [None]\n")
    (tmp_path / "crash.py").write_text("import os\ndef score(prompts, completions, **kw):\n"
                                       "    raise RuntimeError('boom ' + os.environ['MY_API_KEY'])\n")
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(60)\n")
    with pytest.raises(RewardError, match="returned None for item 1"):
        cheat_probes("bad.py:score", TASKS[:1], root=tmp_path, probes=["empty"])
    import os
    os.environ["MY_API_KEY"] = "sk-very-secret-value"
    try:
        with pytest.raises(RewardError) as err:
            cheat_probes("crash.py:score", TASKS[:1], root=tmp_path, probes=["empty"],
                         pass_env=["MY_API_KEY"])  # named: the child sees it, the error masks it
    finally:
        del os.environ["MY_API_KEY"]
    # the type and the place are named; the message is not quoted (it can hold what the reward
    # read: here a key), masked or not
    assert "raised RuntimeError at crash.py line 3, in score" in str(err.value)
    assert "boom" not in str(err.value) and "sk-very-secret-value" not in str(err.value)
    with pytest.raises(RewardError, match="within 1 s; its whole process tree was killed"):
        cheat_probes(["python", "slow.py"], TASKS[:1], root=tmp_path, probes=["empty"], timeout_s=1)
    with pytest.raises(ArgumentError, match="no file"):
        reward_runner("missing.py:score", root=tmp_path)
    with pytest.raises(RewardError, match="returned 2 values for 1"):
        cheat_probes(lambda prompts, completions, **kw: [0, 0], TASKS[:1], probes=["empty"])
    with pytest.raises(RowsError, match="line 1|task 1"):
        cheat_probes(exact, [{"task_id": "a"}], probes=["empty"])



def test_a_misspelt_reward_function_names_the_files_public_functions(tmp_path):
    # found from outside: prove_reward on 'reward.py:scor' answered with the child's traceback
    # ("File ..., line 71, in main | fn = getattr(...) | AttributeError ...")
    (tmp_path / "reward.py").write_text("def score(prompts, completions, **kw):\n"
                                        "    return [0.0] * len(completions)\n"
                                        "def _helper():\n    pass\n")
    with pytest.raises(RewardError) as err:
        cheat_probes("reward.py:scor", TASKS[:1], root=tmp_path, probes=["empty"])
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


# --- watch_records -----------------------------------------------------------------------------

def held(rate_by_task, rollouts=4):
    """Held-out rows, 4 rollouts per task, passes given per task."""
    return [{"task_id": t, "reward": 1.0 if j < c else 0.0}
            for t, c in rate_by_task.items() for j in range(rollouts)]


BASE = {f"h{i}": (i % 3) for i in range(30)}  # passes 0, 1, 2 of 4: pass rate 0.25
UP = {t: min(4, c + 2) for t, c in BASE.items()}
DOWN = {t: max(0, c - 1) for t, c in BASE.items()}


def run(train, evals, rollouts=4):
    recs = [{"step": s, "train_reward": r} for s, r in enumerate(train, 1)]
    recs += [{"step": s, "held_out": held(e, rollouts)} for s, e in evals.items()]
    return recs


def test_climbing_reward_with_flat_held_out_stops():
    train = [0.1 + 0.05 * s for s in range(12)]
    w = watch_records(run(train, {0: BASE, 6: BASE, 12: BASE}))
    assert w.decision == "stop" and "flat" in w.reason
    # climb by hand at step 12: window 5, last five 0.45..0.65 mean 0.55, first five mean 0.2
    assert w.train_climb == pytest.approx(0.35)
    # successive differences are all 0.05: sigma^2 = 11 * 0.0025 / (2 * 11). Step 12 is look 2
    # (step 6 was look 1): alpha_2 = 0.05 / (2 * 3), one-sided alpha_2 / 2; the t quantile with
    # 2 * 11^2 / (3 * 12 - 4) = 7.5625 degrees of freedom (von Neumann's MSSD variance)
    from scipy.stats import t as student

    sigma = math.sqrt(0.0025 / 2)
    q = student.ppf(1 - 0.05 / 6 / 2, 2 * 11 ** 2 / (3 * 12 - 4))
    assert w.train_noise_band == pytest.approx(q * sigma * math.sqrt(2 / 5), rel=1e-6)
    assert w.held_out_delta == 0.0 and w.n_paired == 30


def test_held_out_moving_down_stops_and_up_continues():
    train = [0.3] * 12
    assert watch_records(run(train, {0: BASE, 6: DOWN, 12: DOWN})).decision == "stop"
    up = watch_records(run([0.1 + 0.05 * s for s in range(12)], {0: BASE, 6: UP, 12: UP}))
    assert up.decision == "continue" and up.held_out_delta == pytest.approx(0.5)


def test_one_look_is_not_enough_and_no_eval_is_not_enough_data():
    train = [0.1 + 0.05 * s for s in range(12)]
    once = watch_records(run(train, {0: BASE, 12: BASE}))
    assert once.decision == "continue" and "holds at the latest evaluation only" in once.reason
    assert watch_records(run(train, {0: BASE}), confirm=1).decision == "not_enough_data"
    assert watch_records(run(train, {0: BASE, 12: BASE}), confirm=1).decision == "stop"
    flat = watch_records(run([0.3] * 12, {0: BASE, 6: BASE, 12: BASE}))
    assert flat.decision == "continue" and "inside its noise band" in flat.reason


def test_first_stop_step_is_where_a_callback_stops():
    # flat at steps 6 and 12 (the stop rule holds twice: step 12), then the held-out set
    # recovers at 18 (UP: every task +2 of 4): the end says continue, the callback stopped at 12
    train = [0.1 + 0.05 * s for s in range(18)]
    w = watch_records(run(train, {0: BASE, 6: BASE, 12: BASE, 18: UP}))
    assert [s.condition for s in w.steps if s.held_out is not None] == [
        None, "flat_while_climbing", "flat_while_climbing", None]
    assert w.decision == "continue" and w.first_stop_step == 12
    assert "the rule said stop at step 12" in w.render()
    # one look at a time (confirm=1): step 6 already
    assert watch_records(run(train, {0: BASE, 6: BASE, 12: BASE, 18: UP}),
                         confirm=1).first_stop_step == 6
    clean = watch_records(run(train, {0: BASE, 6: UP, 12: UP}))
    assert clean.first_stop_step is None


def test_zero_spread_bound_and_too_few_tasks():
    # 6 held-out tasks, never solved; the training reward climbs 0.05 a step (climb +0.35 at
    # step 12, by hand as above). The paired delta is 0 on every task: no spread, so no t
    # interval. The interval is then the exact bound on the share of tasks that could have moved
    # unseen (0 of 6 moved: Clopper-Pearson's upper limit at one-sided alpha_2 = 0.05 / 6 is
    # scipy's beta(1, 6) quantile) times the largest move, 1: it reaches past the climb, so no
    # stop, and the reason says how many unmoved tasks would tell
    from scipy.stats import beta

    never = {f"h{i}": 0 for i in range(6)}
    train = [0.1 + 0.05 * s for s in range(12)]
    w = watch_records(run(train, {0: never, 6: never, 12: never}))
    bound = beta.ppf(1 - 0.05 / 6, 1, 6)
    assert w.held_out_ci == pytest.approx((-bound, bound)) and w.held_out_delta == 0.0
    assert w.held_out_ci_method == "zero_spread_bound" and w.n_paired == 6
    assert w.decision == "continue" and w.first_stop_step is None
    # the fewest unmoved tasks whose bound lies under 0.35 at look 2: by the same quantile
    need = next(n for n in range(1, 100) if beta.ppf(1 - 0.05 / 6, 1, n) < 0.35)
    assert f"({need} unmoved tasks would bound it under the climb)" in w.reason
    assert "no spread, so no t interval" in " ".join(w.notes)
    # 24 tasks that never move, the same climb: zero held-out movement against a climbing
    # reward is evidence; look 1 (step 6, climb 0.15) and look 2 (step 12, climb 0.35) both
    # bound the held-out change under the climb: stop at step 12
    never24 = {f"h{i}": 0 for i in range(24)}
    w = watch_records(run(train, {0: never24, 6: never24, 12: never24}))
    assert [s.delta_ci[1] for s in w.steps if s.look] == pytest.approx(
        [beta.ppf(1 - 0.05 / 2, 1, 24), beta.ppf(1 - 0.05 / 6, 1, 24)])
    assert w.decision == "stop" and w.first_stop_step == 12 and "flat" in w.reason
    # every task up by exactly one pass of 4 (0.25): the bound runs from 0.25 towards -1 and 1
    up = {t: 1 for t in never24}
    w = watch_records(run(train, {0: never24, 6: up, 12: up}))
    s = beta.ppf(1 - 0.05 / 6, 1, 24)
    assert w.held_out_ci == pytest.approx((0.25 - s * 1.25, 0.25 + s * 0.75))
    # rewards outside [0, 1] with no spread: no range, so no bound and no interval
    graded = [dict(r, step=r["step"], held_out=[dict(x, reward=x["reward"] * 5)
                                                 for x in r["held_out"]]) if "held_out" in r
              else r for r in run(train, {0: never24, 6: up, 12: up})]
    w = watch_records(graded, metric="reward")
    assert w.held_out_ci is None and w.decision == "not_enough_data"
    assert "the rewards leave [0, 1]" in w.reason
    # with 12 tasks that vary (half pass 2 of 4, half 1 of 4 at both evaluations, one task
    # moving by a quarter) the t interval exists at look 2 and lies below the climb: 11 tasks of
    # 12 did not move while the training reward climbed 0.35, twice in a row: stop
    some = {f"h{i}": 1 + i % 2 for i in range(12)}
    moved = dict(some, h0=2)
    w = watch_records(run(train, {0: some, 6: moved, 12: moved}))
    d = [0.25] + [0.0] * 11
    from scipy.stats import t as student

    half = student.ppf(1 - 0.05 / 6 / 2, 11) * np.std(d, ddof=1) / math.sqrt(12)
    assert w.held_out_ci == pytest.approx((0.25 / 12 - half, 0.25 / 12 + half))
    assert w.decision == "stop" and w.held_out_ci[1] < w.train_climb and "flat" in w.reason



def test_a_rounding_only_spread_is_no_spread_at_a_look():
    # every held-out task gains one pass of 3 (1 -> 2 and 2 -> 3 passes): each task's change is
    # 1/3, but in floats 1 - 2/3 is not 2/3 - 1/3, a spread of 6e-17. It is the exact shared
    # change, so its interval is the zero-spread bound (by hand as above: 0 of 24 tasks departed
    # from +1/3, Clopper-Pearson at alpha_1 = 0.05 / 2), not Student's t of width ~1e-16
    from scipy.stats import beta

    before = {f"h{i}": 1 + i % 2 for i in range(24)}
    after = {t: c + 1 for t, c in before.items()}
    d = np.array([after[t] / 3 - before[t] / 3 for t in before])
    assert np.ptp(d) > 0   # the rounding is there
    w = watch_records(run([0.3] * 12, {0: before, 6: after}, rollouts=3))
    s = beta.ppf(1 - 0.05 / 2, 1, 24)
    assert w.held_out_ci_method == "zero_spread_bound"
    assert w.held_out_ci == pytest.approx((1 / 3 - s * (1 + 1 / 3), 1 / 3 + s * (1 - 1 / 3)))
    # the same graded rewards scored again, written in another order: no task moved, but each
    # task's mean reward sums its rewards in another order and moves in its last bits. It must
    # read as the unmoved evaluation: the bound (0 of 24 tasks moved, looks 1 and 2), which
    # holds the climb (+0.06 at step 6, +0.14 at step 12, both past their bands), so no stop;
    # Student's t on the rounding gave an interval of width ~1e-16 below the climb and a stop
    rng = np.random.default_rng(3)
    graded = [{"task_id": f"h{i}", "reward": round(float(rng.uniform()), 3)}
              for i in range(24) for _ in range(4)]
    means = [[sum(r["reward"] for r in rows if r["task_id"] == f"h{i}") / 4 for i in range(24)]
             for rows in (graded, graded[::-1])]
    assert np.ptp(np.subtract(*means)) > 0   # the rounding is there
    train = [0.1 + 0.02 * s for s in range(12)]
    recs = [{"step": s, "train_reward": r} for s, r in enumerate(train, 1)]
    recs += [{"step": 0, "held_out": graded}, {"step": 6, "held_out": graded[::-1]},
             {"step": 12, "held_out": graded[::-1]}]
    w = watch_records(recs, metric="reward")
    assert [x.delta_ci for x in w.steps if x.look] == [
        pytest.approx((-b, b)) for b in (beta.ppf(1 - 0.05 / 2, 1, 24),
                                         beta.ppf(1 - 0.05 / 6, 1, 24))]
    assert w.held_out_ci_method == "zero_spread_bound"
    assert w.decision == "continue" and w.first_stop_step is None
    # the vectorised rule reads the same: flat when the values' scale is given
    from whileai_core.hacking.anytime import paired_look_interval

    assert paired_look_interval(np.subtract(*means), 0.95, 1, scale=1.0)[3]

def test_watch_record_errors():
    with pytest.raises(RowsError, match="`step` is -1"):
        watch_records([{"step": -1}])
    with pytest.raises(RowsError, match="`train_reward` is 'x'"):
        watch_records([{"step": 1, "train_reward": "x"}])
    with pytest.raises(ArgumentError, match="`confirm` must be an integer"):
        watch_records([{"step": 1}], confirm=0)


def test_watch_from_rows_with_steps(tmp_path):
    from whileai_core.hacking import watch_run

    rows = []
    for step in range(0, 13):
        rows += [{"task_id": f"b{step}", "reward": 0.1 + 0.05 * step, "step": step}] if step else []
        if step in (0, 6, 12):
            rows += [dict(r, step=step, split="eval") for r in held(BASE)]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(__import__("json").dumps(r) + "\n" for r in rows))
    w = watch_run(path)
    assert w.decision == "stop" and w.n_evals == 3 and w.train_climb == pytest.approx(0.35)


# --- anytime-valid looks -----------------------------------------------------------------------

def test_spending_plan_sums_to_alpha_and_rule_codes():
    from whileai_core.hacking.anytime import (DOWN, FLAT, first_stop, look_alpha,
                                              look_conditions)

    # sum_{t=1}^{N} 1/(t(t+1)) telescopes to 1 - 1/(N+1)
    looks = np.arange(1, 1001)
    assert look_alpha(0.05, looks).sum() == pytest.approx(0.05 * (1 - 1 / 1001), rel=1e-12)
    assert look_alpha(0.05, 1) == 0.025 and look_alpha(0.05, 4) == pytest.approx(0.05 / 20)
    with pytest.raises(ArgumentError, match="`look` must be an integer >= 1"):
        look_alpha(0.05, 0)
    codes = look_conditions([-0.3, -0.1, -0.1, 0.05, -0.1], [-0.01, 0.1, 0.1, 0.2, 0.5],
                            [0.0, 0.3, 0.05, 0.3, 0.3], [0.1, 0.1, 0.1, 0.1, 0.1])
    # below 0 | flat under a climb past its band | climb inside its band | above 0 | reaches it
    assert codes.tolist() == [DOWN, FLAT, 0, 0, 0]
    assert first_stop(np.array([[0, 1, 0, 2, 1], [1, 1, 0, 0, 0], [0, 0, 0, 0, 1]]),
                      2).tolist() == [4, 1, -1]


def _simulated_looks(rng, runs, looks, held_shift):
    """Held-out per-task values (runs, looks + 1, 40) of 40 tasks x 4 rollouts, and a flat
    training reward per step (5 steps a look)."""
    diff = rng.normal(-0.85, 1.0, (runs, 1, 40))
    p = 1 / (1 + np.exp(-(diff + np.asarray(held_shift)[None, :, None])))
    values = rng.binomial(4, p) / 4
    train = 0.3 + rng.normal(0, 0.05, (runs, looks * 5))
    return values, train


def test_watch_records_is_the_vectorised_rule():
    # what bench/watch_anytime.py measures (the vectorised rule on arrays) is what watch_records
    # decides on records: the same first stop on every simulated run
    from whileai_core.hacking.anytime import (climb_band, first_stop, look_conditions,
                                              paired_look_interval)

    rng = np.random.default_rng(7)
    looks = 6
    values, train = _simulated_looks(rng, 12, looks, -0.35 * np.arange(looks + 1))
    d = values[:, 1:] - values[:, :1]
    _, lo, hi, _ = paired_look_interval(d, 0.95, np.arange(1, looks + 1)[None, :])
    climbs, bands = np.full((12, looks), np.nan), np.full((12, looks), np.nan)
    for j in range(looks):
        r = train[:, :(j + 1) * 5]
        w = max(2, min(5, r.shape[1] // 2))
        climbs[:, j] = r[:, -w:].mean(1) - r[:, :w].mean(1)
        sigma = np.sqrt((np.diff(r, axis=1) ** 2).sum(1) / (2 * (r.shape[1] - 1)))
        bands[:, j] = climb_band(sigma, w, r.shape[1], 0.95, j + 1)
    expected = first_stop(look_conditions(lo, hi, climbs, bands), 2)
    for run_i in range(12):
        recs = [{"step": s, "train_reward": float(train[run_i, s - 1])}
                for s in range(1, looks * 5 + 1)]
        for j in range(looks + 1):
            recs.append({"step": j * 5, "held_out": [
                {"task_id": f"h{i}", "reward": 1.0 if r < values[run_i, j, i] * 4 else 0.0}
                for i in range(40) for r in range(4)]})
        w = watch_records(recs, scan=False)
        got = -1 if w.first_stop_step is None else w.first_stop_step // 5 - 1
        assert got == expected[run_i], run_i
    assert (expected >= 0).sum() >= 6  # the held-out set falls 0.35 logit a look: most stop


def test_looks_spend_the_error():
    # the same flat-with-climb evidence stops at look 1 (level 0.975) but its interval is wider
    # at look 3 than at look 1: the interval of a look depends on its number only
    train = [0.1 + 0.05 * s for s in range(12)]
    w = watch_records(run(train, {0: BASE, 3: DOWN, 6: DOWN, 9: DOWN, 12: DOWN}), scan=False)
    looks = [s for s in w.steps if s.look is not None]
    assert [s.look for s in looks] == [1, 2, 3, 4]
    assert [s.look_level for s in looks] == pytest.approx([1 - 0.05 / 2, 1 - 0.05 / 6,
                                                           1 - 0.05 / 12, 1 - 0.05 / 20])
    widths = [s.delta_ci[1] - s.delta_ci[0] for s in looks]
    assert widths == sorted(widths) and all(s.n_paired == 30 for s in looks)
    # DOWN: every task loses one pass of 4 but the three at 0: d = -0.25 on 20 tasks, 0 on 10
    d = [-0.25 if i % 3 else 0.0 for i in range(30)]
    from scipy.stats import t as student

    half = student.ppf(1 - 0.05 / 2 / 2, 29) * np.std(d, ddof=1) / math.sqrt(30)
    assert looks[0].delta_ci == pytest.approx((np.mean(d) - half, np.mean(d) + half))
    assert w.decision == "stop" and w.first_stop_step == 6


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
    with pytest.raises(ArgumentError, match="`look` must be an integer >= 1"):
        hack_scan(rows, look=0)


def test_a_misspelt_reward_function_is_named_without_a_traceback(tmp_path):
    # grade.py defines score and helper; 'scor' is one letter short of score
    (tmp_path / "grade.py").write_text("def score(prompts, completions, **kw):\n"
                                       "    return [1.0] * len(completions)\n"
                                       "def helper():\n    pass\nLIMIT = 3\n")
    with pytest.raises(RewardError) as err:
        cheat_probes("grade.py:scor", TASKS[:1], root=tmp_path, probes=["empty"])
    text = str(err.value)
    assert "defines no function `scor` (did you mean `score`?)" in text
    assert "helper, score" in text and "LIMIT" not in text
    assert "Traceback" not in text and "File " not in text and "^" not in text
    # a script's own exit status 3 is its failure, told as one
    (tmp_path / "three.py").write_text("import sys\nsys.exit(3)\n")
    with pytest.raises(RewardError, match="exited with status 3"):
        cheat_probes("three.py:score", TASKS[:1], root=tmp_path, probes=["empty"])
