"""The before/after read of the refund recipes, the drift monitor, and the DPO batch split.

Rows are written by hand so each expected number is a count: e.g. three with-id prompts that
fail before and pass after give a paired delta of exactly +1.0.
"""

from types import SimpleNamespace

import pytest

from recipes.holdout import graded_rows, render_summary, summarize


def row(task, category, reward, called=False, well_formed=True, truncated=False):
    return {"task_id": task, "category": category, "reward": reward, "called": called,
            "well_formed": well_formed, "truncated": truncated, "model": "m"}


def test_summary_by_category_is_compare_on_each_category():
    before = ([row(f"w{i}", "with_id", 0.3) for i in range(3)]
              + [row(f"n{i}", "no_id", 1.0) for i in range(4)])
    after = ([row(f"w{i}", "with_id", 1.0, called=True) for i in range(3)]
             + [row("n0", "no_id", 0.2, called=True)] + [row(f"n{i}", "no_id", 1.0)
                                                         for i in range(1, 4)])
    summary = summarize(before, after)
    overall = summary["overall"]
    # overall pass@1: before 4/7, after 6/7; paired delta (+1 x 3, -1 x 1, 0 x 3) / 7 = 2/7
    assert overall["pass_before"]["pass_at_1"] == pytest.approx(4 / 7)
    assert overall["pass_after"]["pass_at_1"] == pytest.approx(6 / 7)
    assert overall["delta"]["delta"] == pytest.approx(2 / 7)
    with_id = summary["by_category"]["with_id"]
    assert with_id["delta"]["delta"] == pytest.approx(1.0)
    assert with_id["called_before"]["value"] == 0.0
    assert with_id["called_after"]["value"] == 1.0
    no_id = summary["by_category"]["no_id"]
    # one of four no-id prompts now invents a call: pass 1.0 -> 0.75, call rate 0 -> 0.25
    assert no_id["delta"]["delta"] == pytest.approx(-0.25)
    assert no_id["called_after"]["value"] == pytest.approx(0.25)
    assert "off_topic" not in summary["by_category"]  # no rows, no line
    text = render_summary(summary)
    assert "with_id:" in text and "no_id:" in text and "tool-call rate" in text
    # the by-category deltas, corrected for looking at two categories (compare_many): with_id's
    # 3 of 3 prompts up and no_id's 1 of 4 down are too few for a test (fewer than 6 prompts)
    corrected = {b["name"]: b for b in summary["corrected"]["behaviours"]}
    assert set(corrected) == {"with_id", "no_id"} and corrected["with_id"]["p_value"] is None
    assert "after correction for 2 categories: no test" in text


def test_summary_corrects_by_category_deltas():
    # 8 with-id prompts all fixed, 8 no-id prompts unchanged. Every with-id prompt moved by the
    # same +1, so there is no paired spread and compare reads the unpaired (MOVER) interval of
    # the arms, 0/8 and 8/8 with mid-p intervals: 0/8's upper bound at level 1 - p solves
    # (1 - U)^8 / 2 = p / 2, 8/8's lower is 1 - U, and MOVER's lower end 1 - sqrt(2) U clears 0
    # once U < 1/sqrt(2): p = (1 - 2^-1/2)^8. Holm over the two categories doubles it; no_id
    # (nothing changed) has p = 1 and nothing to keep
    before = [row(f"w{i}", "with_id", 0.3) for i in range(8)] + \
        [row(f"n{i}", "no_id", 1.0) for i in range(8)]
    after = [row(f"w{i}", "with_id", 1.0) for i in range(8)] + \
        [row(f"n{i}", "no_id", 1.0) for i in range(8)]
    summary = summarize(before, after)
    corrected = {b["name"]: b for b in summary["corrected"]["behaviours"]}
    p = (1 - 2 ** -0.5) ** 8
    assert corrected["with_id"]["ci_method"] == "mover_unpaired"
    assert corrected["with_id"]["p_value"] == pytest.approx(p, rel=1e-5)   # bisection tolerance
    assert corrected["with_id"]["p_holm"] == pytest.approx(2 * p, rel=1e-5)
    assert corrected["no_id"]["p_value"] == 1.0
    assert corrected["with_id"]["survives_holm"] and not corrected["no_id"]["survives_bh"]
    assert "survives Holm" in render_summary(summary)


def test_graded_rows_score_each_reply_with_its_case():
    records = [{"task_id": "t", "category": "with_id", "order_id": "K1"}]
    replies = [[('<tool_call>{"name": "lookup_order", "arguments": {"order_id": "K1"}}'
                 '</tool_call>', False), ("What is your order number?", True)]]
    rows = graded_rows(records, replies, "m")
    assert [(r["reward"], r["called"], r["truncated"]) for r in rows] == [
        (1.0, True, False), (0.3, False, True)]


def test_drift_monitor_flags_a_length_that_doubles():
    pytest.importorskip("transformers")
    from recipes.grpo.train import drift_monitor

    monitor = drift_monitor(length_ratio=2.0)
    for step, length in ((1, 40.0), (2, 79.0), (3, 81.0), (4, 19.0)):
        monitor.on_log(None, SimpleNamespace(global_step=step), None,
                       logs={"loss": 0.1, "reward": 0.5, "completions/mean_length": length})
    # a step that reused a batch (--num-iterations 2): a loss, no rewards or lengths
    monitor.on_log(None, SimpleNamespace(global_step=5), None,
                   logs={"loss": 1.0, "clip_ratio/region_mean": 0.05})
    # the end-of-training summary is not a step
    monitor.on_log(None, SimpleNamespace(global_step=5), None, logs={"train_loss": 1.0})
    report = monitor.report()
    assert [p["step"] for p in report["history"]] == [1, 2, 3, 4, 5]
    assert report["history"][4]["mean_length"] is None
    assert report["history"][4]["clip_ratio"] == 0.05
    # 79 <= 80 = 40 x 2 is inside; 81 > 80 and 19 < 20 = 40 / 2 are outside
    assert [a.split(":")[0] for a in report["alarms"]] == ["step 3", "step 4"]


@pytest.mark.parametrize("pairs,expected", [(8, (4, 2)), (6, (3, 2)), (5, (1, 5)), (2, (2, 1))])
def test_dpo_pairs_per_step_is_exact(pairs, expected, tmp_path):
    pytest.importorskip("trl")
    from recipes.dpo.train import DPOSettings, build_dpo_config

    config = build_dpo_config(DPOSettings(pairs_per_step=pairs), tmp_path, cpu=True)
    assert (config.per_device_train_batch_size, config.gradient_accumulation_steps) == expected
