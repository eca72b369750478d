"""The six questions: every route reached by a constructed row set; evidence checked by hand."""

from __future__ import annotations

import pytest
from scipy import stats as sps
from scipy.optimize import brentq

from whileai_core import (ArgumentError, band, on_policy, rollouts_per_task, route, split_share,
                          teacher_clears, truncated_passes)

MODEL = "Qwen/Qwen3-8B"


def rows_from(counts, model=MODEL, prefix="t", truncated=False):
    out = []
    for i, (n, c) in enumerate(counts):
        out += [{"task_id": f"{prefix}{i}", "reward": 1.0 if j < c else 0.0, "model": model,
                 "truncated": truncated and j == 0} for j in range(n)]
    return out


MIXED = [(4, 0), (4, 1), (4, 2), (4, 4), (4, 3), (4, 2)]


def test_truncated_passes_counts_only_cut_off_passes():
    rows = rows_from([(4, 2), (4, 0)], truncated=True)   # first rollout of each task truncated
    tp = truncated_passes(rows)
    assert (tp.count, tp.n_truncated, tp.n_rows) == (1, 2, 8) and tp.tasks == ["t0"]


def test_rollouts_band_and_split_share_by_hand():
    rows = rows_from([(4, 0), (2, 1), (4, 4), (3, 1)])
    assert rollouts_per_task(rows).k == 2
    b = band(rows)
    assert (b.band, b.n_always_fail, b.n_always_pass, b.n_split) == ("mixed", 1, 1, 2)
    assert b.pass_at_1.value == pytest.approx((0 + 0.5 + 1 + 1 / 3) / 4)
    ss = split_share(rows)
    assert ss.share == 0.5 and ss.n_split == 2
    # 0/1 per task, 4 tasks: the mid-p interval, solved here with scipy's binomial and brentq
    lo = brentq(lambda p: sps.binom.sf(2, 4, p) + sps.binom.pmf(2, 4, p) / 2 - 0.025, 1e-9, 1)
    hi = brentq(lambda p: sps.binom.cdf(2, 4, p) - sps.binom.pmf(2, 4, p) / 2 - 0.025, 0, 1 - 1e-9)
    assert ss.ci == pytest.approx((lo, hi), abs=1e-9) and ss.ci_method == "mid_p"
    # p in {0, .5, 1, 1/3}: 1 - p^4 - (1-p)^4 = 0, 0.875, 0, 1 - 1/81 - 16/81
    assert ss.expected_by_k[4] == pytest.approx((0.875 + 64 / 81) / 4)
    assert band(rows_from([(4, 0)] * 3)).band == "floor"
    assert band(rows_from([(2, 2)] * 3)).band == "saturated"


def test_on_policy_statuses():
    assert on_policy(rows_from(MIXED), MODEL).status == "on_policy"
    assert on_policy(rows_from(MIXED, model=f"{MODEL}@step-40"), MODEL).status == "older_copy"
    other = on_policy(rows_from(MIXED, model="gpt-5"), MODEL)
    assert other.status == "other_model" and not other
    unknown = on_policy(rows_from(MIXED, model=None), MODEL)
    assert unknown.status == "unknown" and unknown and "no `model` field" in unknown.note
    with pytest.raises(ArgumentError, match="`model`"):
        on_policy(rows_from(MIXED), "")


def test_teacher_verdicts():
    student = rows_from([(4, 1)] * 10 + [(4, 2)] * 10)                 # 0.375, tight interval
    strong = rows_from([(4, 4)] * 10 + [(4, 3)] * 10, model="big")      # 0.875
    weak = rows_from([(4, 2)] * 10 + [(4, 1)] * 10, model="big")        # equal to the student
    close = rows_from([(4, 1)] * 9 + [(4, 2)] * 9 + [(4, 4)] * 2, model="big")  # 0.4375: +0.0625
    yes = teacher_clears(strong, student)
    assert yes and yes.gap == pytest.approx(0.5) and yes.intervals_overlap is False
    no = teacher_clears(weak, student)
    assert not no and "below the effect 0.05" in no.reason
    overlap = teacher_clears(close, student)
    assert overlap.gap == pytest.approx(0.0625) and not overlap and overlap.intervals_overlap
    few = teacher_clears(rows_from([(4, 4)] * 2), rows_from([(4, 0)] * 2))
    assert not few and few.intervals_overlap is None


def test_teacher_gap_is_paired_and_its_fields_are_honest():
    student = rows_from([(4, 1)] * 10 + [(4, 2)] * 10)                  # 0.375
    strong = rows_from([(4, 4)] * 10 + [(4, 3)] * 10, model="big")       # 0.875
    yes = teacher_clears(strong, student)
    # paired on 20 tasks, every one up (0.75 or 0.25): the exact sign-flip p is 2/2^20; with
    # 2^20 > 65,536 patterns it is estimated from 10,000 seeded ones, so p >= 1/10,001
    assert yes.paired and yes.n_paired == 20 and 1 / 10_001 <= yes.p_value < 0.001
    assert yes.gap_ci[0] > 0 and yes.gap_ci_method == "t_sign_flip_mc"
    # a student above the teacher, disjoint intervals: they do not overlap (before 0.2 the
    # flag only looked at one side and said they did)
    above = teacher_clears(student, strong)
    assert above.intervals_overlap is False and not above and above.gap == pytest.approx(-0.5)
    # different task ids: no pairing, the unpaired difference of the two intervals (MOVER)
    apart = teacher_clears(rows_from([(4, 4)] * 10 + [(4, 3)] * 10, prefix="u"), student)
    assert not apart.paired and apart.n_paired == 0 and apart.gap_ci_method == "mover_unpaired"
    (lt, ut), (ls, us) = apart.teacher.ci, apart.student.ci
    assert apart.gap_ci == pytest.approx((0.5 - ((0.875 - lt) ** 2 + (us - 0.375) ** 2) ** 0.5,
                                          0.5 + ((ut - 0.875) ** 2 + (0.375 - ls) ** 2) ** 0.5))
    for effect in (-0.1, 0, 1.5):
        with pytest.raises(ArgumentError, match="`effect`.* must be"):
            teacher_clears(strong, student, effect=effect)


@pytest.mark.parametrize("rows, kwargs, code, question", [
    (rows_from(MIXED, truncated=True), {}, "fix_reward", 1),
    (rows_from([(1, 1), (1, 0), (1, 1)]), {}, "single_rollout", 2),
    (rows_from([(4, 0)] * 8), {}, "floor", 3),
    (rows_from([(4, 4)] * 8), {}, "saturated", 3),
    (rows_from(MIXED * 4), {"teacher_rows": rows_from([(4, 4)] * 24, model="Qwen/Qwen3-32B")},
     "opd", 4),
    (rows_from(MIXED, model="gpt-5"), {}, "off_policy", 5),
    (rows_from(MIXED, model=f"{MODEL}@step-3"), {}, "off_policy", 5),
    (rows_from(MIXED), {}, "grpo", 6),
])
def test_every_route_is_reached(rows, kwargs, code, question):
    result = route(rows, model=MODEL, **kwargs)
    assert result.route == code
    assert result.decided_by.startswith(f"{question}.")
    assert [a.question for a in result.answers] == list(range(1, question + 1))
    assert [a.decides for a in result.answers] == [False] * (question - 1) + [True]
    assert result.next_step.say


def test_route_next_steps_carry_the_config_call():
    grpo = route(rows_from(MIXED), model=MODEL, taskset="reverse-text")
    assert grpo.next_step.tool == "prime_rl_config"
    assert grpo.next_step.arguments == {"taskset": "reverse-text", "method": "grpo", "model": MODEL}
    opd = route(rows_from(MIXED * 4), model=MODEL,
                teacher_rows=rows_from([(4, 4)] * 24, model="Qwen/Qwen3-32B"),
                teacher_url="http://gpu:8001/v1")
    assert opd.next_step.arguments["method"] == {"name": "opd",
                                                 "teacher": "Qwen/Qwen3-32B@http://gpu:8001/v1"}
    small_floor = route(rows_from([(4, 0)] * 8), model="Qwen/Qwen3-0.6B")
    assert small_floor.next_step.tool is None and "sft-from-traces" in small_floor.next_step.say
    big_floor = route(rows_from([(4, 0)] * 8), model=MODEL)
    assert big_floor.next_step.arguments["method"]["name"] == "opsd"
    # a teacher that does not clear is asked about and then the route moves on
    weak = route(rows_from(MIXED), model=MODEL, teacher_rows=rows_from(MIXED, model="x"))
    assert weak.route == "grpo" and weak.answers[3].decides is False


def test_route_text_prints_every_answer_with_evidence():
    text = str(route(rows_from(MIXED), model=MODEL))
    assert "decided by: 6." in text and "pass@1 0.500 [" in text and "(n=6 tasks)" in text


@pytest.mark.parametrize("rows, kwargs", [
    (rows_from([(1, 1), (1, 0), (1, 1)]), {}),
    (rows_from([(4, 0)] * 8), {}),
    (rows_from(MIXED * 4), {"teacher_rows": rows_from([(4, 4)] * 24, model="Qwen/Qwen3-32B")}),
    (rows_from(MIXED, model=f"{MODEL}@step-3"), {}),
    (rows_from(MIXED), {}),
])
def test_next_step_config_calls_are_accepted_by_the_writer(rows, kwargs):
    from whileai_core.prime_rl import prime_rl_config
    step = route(rows, model=MODEL, taskset="reverse-text", **kwargs).next_step
    assert step.tool == "prime_rl_config"
    result = prime_rl_config(**step.arguments)      # out=None: builds the config, writes nothing
    assert result.text and result.command
