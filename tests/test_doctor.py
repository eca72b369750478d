"""diagnose_run on run folders written by the trainers' own code: prime-rl episodes made with
verifiers a60a606 (tests/fixtures/prime_rl/make_doctor.py: failures planted at known steps, and
an honest twin) and TRL output folders from the GRPO recipe's CPU smoke
(tests/fixtures/trl/make_doctor_runs.py).

Expected steps come from the fixture scripts' plans (their docstrings), and the per-step numbers
are recounted here from the episode files with plain loops.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats

from whileai_core.cli import main
from whileai_core.errors import ArgumentError
from whileai_core.hacking import diagnose_run

FIXTURES = Path(__file__).parent / "fixtures"
PRIME = FIXTURES / "prime_rl" / "doctor"
TRL = FIXTURES / "trl" / "doctor"


def by_name(diagnosis):
    return {f.signature: f for f in diagnosis.findings}


def test_planted_prime_rl_run_names_each_failure_at_its_steps():
    d = diagnose_run(PRIME / "planted")
    f = by_name(d)
    assert d.verdict == "sick" and d.n_steps == 12
    assert f["zero_advantage"].steps == [3, 4]
    assert f["verifier_noise"].steps == [5, 6]
    assert f["truncation_lock_in"].steps == [8, 9, 10, 11, 12]
    assert f["staleness"].steps == [10]
    assert f["entropy_runaway"].steps == [9, 10, 11, 12]
    assert {f[n].status for n in ("diversity_collapse", "kl_runaway",
                                  "reward_pays_feature")} == {"clear"}
    # steps 3-4: 16 groups, every one with a single reward. The plan over steps: a sixth of
    # 0.05 split over the 12 + 11 + 9 + 5 = 37 runs of 1, 2, 4, 8 consecutive steps; one step's
    # 8 of 8 cannot clear 0.5 at that level (Wilson's lower bound 8 / (8 + z^2)), the pooled
    # 16 of 16 can: 16 / (16 + z^2)
    z = stats.norm.isf(0.05 / 6 / 37)
    assert 8 / (8 + z ** 2) < 0.5 < 16 / (16 + z ** 2)
    zero = f["zero_advantage"]
    assert zero.rate == 1.0 and zero.n == 16 and zero.ci[0] == pytest.approx(16 / (16 + z ** 2),
                                                                             rel=1e-6)
    assert "DOCTOR_ZERO_SPREAD_SHARE" in zero.threshold and "DAPO" in zero.action
    steps = {s.step: s for s in d.steps}
    assert steps[10].max_staleness == 9 and steps[5].noisy_sets == 8 == steps[5].duplicate_sets
    assert "staleness read against prime-rl's default max_off_policy_steps 8" in d.notes[0]


def test_honest_prime_rl_twin_names_nothing():
    d = diagnose_run(PRIME / "honest")
    assert d.verdict == "healthy" and d.found == []
    f = by_name(d)
    # prompt 0's rollout 1 repeats rollout 0 every step: 12 sets (13 with a chance repeat),
    # each scored alike by the deterministic LCS
    assert f["verifier_noise"].status == "clear" and "each scored alike" in f["verifier_noise"].evidence


def _recount(run: Path, step: int) -> tuple[int, int, int]:
    """(groups, groups with one reward, rollouts cut) of one step, from the episode lines."""
    groups: dict[str, list[float]] = {}
    cut = 0
    for line in (run / "rollouts" / f"step_{step}" / "train" / "all" / "traces.jsonl").open():
        ep = json.loads(line)
        for tr in ep["traces"]:
            reward = sum(v["score"] * v.get("weight", 1.0) for v in tr["rewards"].values() if v)
            groups.setdefault(ep["group"]["id"], []).append(reward)
            cut += tr.get("stop_condition") == "max_output_tokens"
    return len(groups), sum(max(g) - min(g) < 1e-12 for g in groups.values()), cut


def test_step_numbers_match_a_recount_of_the_files():
    d = diagnose_run(PRIME / "planted")
    for s in d.steps:
        groups, zero, cut = _recount(PRIME / "planted", s.step)
        assert s.n_groups == groups and s.zero_spread == pytest.approx(zero / groups)
        assert s.truncated == pytest.approx(cut / s.n_rollouts)


def test_staleness_bound_from_the_argument():
    d = diagnose_run(PRIME / "planted", max_off_policy_steps=9)
    assert by_name(d)["staleness"].status == "clear"
    with pytest.raises(ArgumentError, match="`max_off_policy_steps` = -1: must be at least 0"):
        diagnose_run(PRIME / "planted", max_off_policy_steps=-1)


def test_watch_file_and_missing_inputs(tmp_path):
    rows = lambda step, same: [  # noqa: E731
        {"task_id": f"t{t}", "reward": 0.5 if same else r / 3, "completion": f"reply {t} {r}"}
        for t in range(6) for r in range(4)]
    lines = [{"step": s, "train_reward": 0.5, "batch": rows(s, s >= 3)} for s in range(1, 6)]
    path = tmp_path / "watch.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    d = diagnose_run(path)
    f = by_name(d)
    # one step's 6 groups cannot clear 0.5 at the plan's level (6 / (6 + z^2), a sixth of 0.05
    # over the 5 + 4 + 2 runs of 1, 2, 4 steps); steps 3-4 pooled (12 groups) can
    z = stats.norm.isf(0.05 / 6 / 11)
    assert 6 / (6 + z ** 2) < 0.5 < 12 / (12 + z ** 2)
    assert f["zero_advantage"].steps == [3, 4, 5] and f["zero_advantage"].n == 12
    assert f["truncation_lock_in"].status == "not_checked"
    assert f["staleness"].status == "not_checked" and "entropy_runaway" not in d.found
    (tmp_path / "empty").mkdir()
    with pytest.raises(ArgumentError, match="holds no prime-rl rollouts/"):
        diagnose_run(tmp_path / "empty")


def test_doctor_cli(capsys):
    assert main(["doctor", str(PRIME / "planted"), "--json"]) == 1  # planted: sick
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "sick" and "zero_advantage" in out["found"]
    assert main(["doctor", str(PRIME / "honest")]) == 0
    assert "doctor: healthy" in capsys.readouterr().out


def test_diagnose_run_tool(server, ws):
    import shutil

    from test_server_support import call, error_text, ok

    shutil.copytree(PRIME / "planted", ws / "runs" / "planted")
    out = ok(call(server, "diagnose_run", {"source": "runs/planted"}))
    assert out["verdict"] == "sick" and out["n_steps"] == 12
    found = {f["signature"]: f["steps"] for f in out["findings"] if f["status"] == "found"}
    assert found["zero_advantage"] == [3, 4] and found["verifier_noise"] == [5, 6]
    assert "contains '..'" in error_text(call(server, "diagnose_run", {"source": "../x"}),
                                         "diagnose_run")


def test_trl_smoke_planted_run():
    # the GRPO recipe's CPU smoke with the planted reward (make_doctor_runs.py): noise at steps
    # 1-2, zero reward at 5-6, and a reward paying length throughout
    f = by_name(diagnose_run(TRL / "planted"))
    assert f["zero_advantage"].steps == [5, 6]
    assert f["verifier_noise"].steps == [1, 2]
    assert f["reward_pays_feature"].status == "found" and "length" in f["reward_pays_feature"].evidence
    assert f["staleness"].status == "not_checked"
    # What truncation lock-in could not reach here: in 12 steps the tiny model's share of
    # replies cut at the 24-token cap rose from 0 to 0.38 (TRL's completions/clipped_ratio,
    # the committed trainer_state.json) while the reward rose 0.21 -> 0.57: the start of a
    # lock-in, not one. The rule fires when a step's share has its 95% interval above 0.5,
    # which on 8 groups needs about 85% of replies cut; step 12 (12 of its 32 replies cut)
    # gives 0.375 with an interval reaching 0.69, so the doctor says clear and the scan
    # names the cause (the reward pays for length and truncation within tasks). More steps
    # would have cost the fixture tens of CPU minutes on the shared machine.
    lock = f["truncation_lock_in"]
    assert lock.status == "clear" and "0.375" in lock.evidence


def test_trl_smoke_honest_run():
    # the same smoke with a reward no reply feature pays for (bytes mod 7): nothing named
    d = diagnose_run(TRL / "honest")
    assert d.verdict == "healthy" and d.found == [], d.render()
    f = by_name(d)
    assert {n for n, x in f.items() if x.status == "clear"} == {
        "zero_advantage", "truncation_lock_in", "reward_pays_feature", "verifier_noise",
        "diversity_collapse", "entropy_runaway"}
    # TRL trains on-policy and this run logged no kl: not checked, never "clear"
    assert f["staleness"].status == f["kl_runaway"].status == "not_checked"
    # the reward is deterministic in the text: every repeated reply scored alike
    assert "each scored alike" in f["verifier_noise"].evidence


def test_a_mean_of_group_shares_is_tested_by_a_bet_on_the_groups():
    # the capital by hand: three groups cut 0.9 against the line 0.5. Group 1: no group before
    # it, the mean is the pseudo-group's 0.5, stake 0. Group 2: mean (0.5 + 0.9) / 2 = 0.7,
    # variance (1/4 + 0) / 2 = 0.125, stake 0.2 / (0.125 + 0.04). Group 3: mean 2.3 / 3,
    # variance (1/4 + 1.62 - 1.8^2 / 2) / 3 = 1/12, stake gap / (1/12 + gap^2), under the cap
    # 0.9 / 0.5 = 1.8
    import math

    import numpy as np

    from whileai_core.hacking.doctor_signatures import _bets, _log_capital

    three = np.array([[0.9, 0.9, 0.9]])
    gap = 2.3 / 3 - 0.5
    third = gap / (1 / 12 + gap ** 2)
    assert third < 1.8
    want = math.log(1 + 0.2 / 0.165 * 0.4) + math.log(1 + third * 0.4)
    assert _log_capital(three, np.ones((1, 3), bool), 0.5)[0] == pytest.approx(want, rel=1e-12)
    assert _bets(three[0], np.array([0]), np.array([3]), 0.5, math.exp(-want) * 1.001, True)
    assert not _bets(three[0], np.array([0]), np.array([3]), 0.5, math.exp(-want) * 0.999, True)
    # below a line: the same bet on 1 - x against 1 - line
    assert _bets(1 - three[0], np.array([0]), np.array([3]), 0.5, math.exp(-want) * 1.001, False)
    # 70% of replies cut over 5 steps of 8 groups: found (t over the groups found it too, but
    # t also found honest runs, next test)
    shares = np.random.default_rng(2).binomial(8, 0.7, 40) / 8
    assert _bets(shares, np.array([0]), np.array([40]), 0.5, 0.05 / 6 / 124, True)[0]


def test_an_honest_run_whose_tasks_are_always_or_never_cut_is_not_called_locked_in():
    # 30 steps of 4 groups x 16 rollouts; a group's task is long (every rollout cut) with
    # probability 0.45, else none is: the share is 0.45, under the line 0.5. Student's t over
    # the groups called a step of 4 long tasks (probability 0.45^4 = 0.041) locked in, its
    # spread being 0: 1 - 0.959^30 = 71% of runs. The bet is valid for any shares: at most
    # the sixth of 0.05 the plan gives the rate
    import numpy as np

    from whileai_core.hacking.doctor import RunArrays
    from whileai_core.hacking.doctor_signatures import _signatures
    from whileai_core.hacking.doctor_steps import _step_numbers

    rng = np.random.default_rng(7)
    shape = (30, 4, 16)
    step = np.broadcast_to(np.arange(30)[:, None, None], shape).ravel()
    group = np.broadcast_to(np.arange(4)[None, :, None], shape).ravel()
    runs, called = 200, 0
    for _ in range(runs):
        cut = np.broadcast_to(rng.random((30, 4, 1)) < 0.45, shape).astype(float).ravel()
        reward = (rng.random(cut.size) < 0.5).astype(float)
        run = RunArrays(range(1, 31), step, group, reward, cut, np.arange(cut.size),
                        np.full(cut.size, np.nan))
        found = _signatures(_step_numbers(run, {}, 0.95), None, 8, 0.95, 0)
        called += any(f.signature == "truncation_lock_in" and f.status == "found"
                      for f in found)
    assert called <= 6  # expected at most 200 x 0.05 / 6 = 1.7


# --- what doctor reads is what watch reads --------------------------------

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_doctor_reads_the_steps_watch_reads_from_graded_rows():
    """examples/training_rows.jsonl: graded rows with `step` (held-out rows marked
    "split": "eval"). watch reads 31 steps from it; the doctor read 0 before (it took the rows
    for watch records without a batch)."""
    from whileai_core.hacking import watch_run

    per_step: dict[int, list[float]] = {}
    for line in (EXAMPLES / "training_rows.jsonl").open():
        row = json.loads(line)
        if row.get("split") != "eval":
            per_step.setdefault(row["step"], []).append(row["reward"])
    d = diagnose_run(EXAMPLES / "training_rows.jsonl")
    assert d.n_steps == len(per_step) == 31 == watch_run(EXAMPLES / "training_rows.jsonl").n_steps
    assert d.source == f"rows {EXAMPLES / 'training_rows.jsonl'}"
    means = {s.step: s.mean_reward for s in d.steps}
    for step in (0, 15, 30):
        assert means[step] == pytest.approx(sum(per_step[step]) / len(per_step[step]))
    # 16 tasks, one rollout each: no group has two rewards to compare
    assert by_name(d)["zero_advantage"].status == "not_checked"


def _finished_sft_run(state: Path) -> Path:
    """A finished local SFT run's folder as launch writes it (runs/<id>/: data/, log.txt, out/
    with the adapter and results.json, whose `recipe` is the one recipes/sft/train.py writes)."""
    run = state / "runs" / "run-0123456789ab"
    (run / "out" / "adapter").mkdir(parents=True)
    (run / "out" / "trainer").mkdir()
    (run / "out" / "adapter" / "adapter_config.json").write_text("{}")
    (run / "out" / "results.json").write_text(json.dumps(
        {"recipe": "sft", "loss_history": [2.1, 1.9], "before_rows": [], "after_rows": []}))
    (run / "log.txt").write_text("")
    return run


def test_a_finished_sft_run_is_named_with_what_to_run_instead(tmp_path, capsys):
    """Before: "holds no prime-rl rollouts/, no watch.jsonl and no trainer_state.json. Fix: point
    at the trainer's output folder", a folder that does not exist for an SFT run."""
    run = _finished_sft_run(tmp_path / "state")
    for folder in (run, run / "out"):
        with pytest.raises(ArgumentError) as err:
            diagnose_run(folder)
        text = str(err.value)
        assert "is an SFT run" in text and "no rewards per step" in text
        assert "results.json" in text and "RL runs" in text
        assert "point at the trainer's output folder" not in text
    assert main(["doctor", str(run)]) == 2
    said = capsys.readouterr().err
    # the fix is the command that reads an SFT run, with the run's id and its state folder
    assert f"whileai-skills collect run-0123456789ab --state-dir {tmp_path / 'state'}" in said


def test_a_registered_sft_run_is_named_by_its_recipe(tmp_path, capsys):
    from whileai_core.runs.registry import Registry

    registry = Registry(tmp_path)
    registry.claim(dict(id="run-0123456789ab", name="sft", target="sft", target_kind="recipe",
                        recipe="sft", sha256="0" * 64, backend="local", gpu=None))
    run = _finished_sft_run(tmp_path)
    (run / "out" / "results.json").unlink()  # the registry's record says which recipe
    assert main(["doctor", "run-0123456789ab", "--state-dir", str(tmp_path)]) == 2
    said = capsys.readouterr().err
    assert "run run-0123456789ab is an SFT run" in said and "no results yet" in said
    assert f"collect run-0123456789ab --state-dir {tmp_path}" in said
