"""What the pictures carry beside the PNG: every number a criterion reads is drawn and returned.

Values derived by hand from the literal inputs below.
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("matplotlib")

from whileai_core.pictures import judge_picture, watch_picture  # noqa: E402


def test_judge_picture_draws_the_false_pass_ceiling():
    # 40 items, 20 labelled fail; the judge is right on every item but passes 3 label-fail ones:
    # agreement 37/40, kappa (0.925 - 0.5) / 0.5 = 0.85 (judge passes 23/40, labels 20/40),
    # false pass 3/20 = 0.15 over the 0.1 ceiling: it fails on false pass alone
    items = [{"id": i, "label": i < 20, "grades": {"j": i < 23}} for i in range(40)]
    pic = judge_picture(items)
    bar = pic.judges[0]
    assert bar.agreement == pytest.approx(37 / 40) and bar.kappa == pytest.approx(0.85)
    assert bar.n_label_fail == 20 and bar.false_pass == pytest.approx(0.15)
    assert bar.false_pass_ci[0] < 0.15 < bar.false_pass_ci[1]
    assert bar.verdict == "fails" and any("false pass" in r for r in bar.reasons)
    assert "false pass 0.150" in pic.render() and pic.png()[:4] == b"\x89PNG"


def test_watch_picture_carries_the_climb_and_its_noise_band():
    # training reward 0.1 t at steps 1..8, held-out at steps 0, 4 and 8 (5 tasks, unchanged)
    held = [{"task_id": f"h{i}", "reward": float(i < 2)} for i in range(5)]
    records = [{"step": 0, "held_out": held}] + [
        {"step": t, "train_reward": 0.1 * t, **({"held_out": held} if t in (4, 8) else {})}
        for t in range(1, 9)]
    pic = watch_picture(records)
    # at step 8, window min(5, 8 // 2) = 4: climb = mean(0.5..0.8) - mean(0.1..0.4) = 0.4;
    # successive differences all 0.1: sigma^2 = 7 x 0.01 / (2 x 7). The band is the open
    # plan's (docs/reward-hacking.md): the climb's half of 0.05, of which a j / (j + 10) is spent
    # by its j-th look that can stop; with a stop needing 2 looks in a row its first is look 2,
    # so j = 1: one-sided 0.025 / 11, Student's t with 2 (T - 1)^2 / (3 T - 4) = 98 / 20 df for
    # T = 8 rewards (von Neumann's MSSD), times sigma sqrt(2 / 4)
    from scipy.stats import t as student

    q = student.isf(0.05 * 0.5 / 11, 98 / 20)
    assert pic.eval_steps == [0, 4, 8]
    assert pic.train_climb[0] is None and pic.train_climb[2] == pytest.approx(0.4)
    assert pic.train_noise_band[2] == pytest.approx(q * math.sqrt(0.005) * math.sqrt(0.5),
                                                    rel=1e-5)
