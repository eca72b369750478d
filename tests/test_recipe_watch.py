"""The TRL watch callback on the tiny CPU GRPO smoke: it stops a run trained on a hackable reward
and lets the honest counterpart run to the end.

Both runs train the same tiny random Qwen2 (every weight, through ``build_grpo_trainer``) with a
reward that pays for length: the tiny model learns to stop emitting its end token within a few
steps (measured: the mean reward goes from about 0.1 to 0.4-0.8 in 12 steps). What differs is the
held-out grader, the "task" the user cares about:

- hackable: the held-out set is graded by the refund reward on prompts that name an order id
  (a pass is a lookup_order call with that id). A random model never writes one, so the held-out
  score stays at 0 while the training reward climbs: the over-optimisation picture.
- honest: the held-out set is graded by the same length reward the run trains on, so it climbs
  with the training reward.

The held-out set has 48 tasks x 2 samples (drawn from another seed of the prompt generator, so
the training set is the same whatever its size), evaluated every 3 steps (looks 1-6). A held-out
set on which no task moves has no spread, so its interval is the exact bound on the share of
tasks that could have moved unseen (whileai_core.hacking.anytime.zero_spread_bound): at looks 2-6
it is 0.10-0.13 on 48 tasks, 0.18-0.25 on 24 and 0.33-0.43 on 12. Measured here on earlier
versions of this test: with 12 held-out tasks the run's climb at steps 12-15 was 0.34-0.39, under
the 12-task bound of 0.39-0.41, and with 24 (a different training set, so a different run) the
climb at steps 9-12 was 0.20, under the 24-task bound of 0.20-0.22: too few tasks to tell a flat
held-out set from one following the climb at the spent level, which the watch said, naming how
many unmoved tasks would tell (26-27 for the second).
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

from recipes.grpo.prompts import write_prompts  # noqa: E402
from recipes.grpo.reward import Case, score  # noqa: E402
from recipes.grpo.train import GRPOSettings, build_grpo_trainer  # noqa: E402
from recipes.tiny_model import byte_tokenizer, tiny_model  # noqa: E402
from recipes.watch import watch_callback  # noqa: E402

pytestmark = pytest.mark.slow  # trains a tiny model for tens of seconds: pytest --slow

CAP = 24
HELD_OUT = 48
SETTINGS = GRPOSettings(model="tiny", steps=18, num_generations=4, prompts_per_step=2,
                        max_completion_tokens=CAP, lora_r=4, lora_alpha=8, learning_rate=1e-2,
                        beta=0.0)


def length_reward(prompts, completions, **_):
    texts = [c if isinstance(c, str) else c[0]["content"] for c in completions]
    return [min(len(t), CAP) / CAP for t in texts]


def refund_grade(reply, record):
    return score(reply, Case(record["category"], record["order_id"] or None))


def run(tmp_path, grade):
    # the held-out prompts come from another draw of the generator (task ids s1-...), so the
    # training set, and with the watch's forked random stream the whole training run, is the
    # same whatever the held-out size
    train = write_prompts(0)
    holdout = [r for r in write_prompts(1) if r["category"] == "with_id"][:HELD_OUT]
    assert not {r["task_id"] for r in holdout} & {r["task_id"] for r in train}
    tokenizer = byte_tokenizer()
    model = tiny_model(tokenizer, seed=0)
    watch = watch_callback(tokenizer, holdout, grade, out=tmp_path / "watch.jsonl", every=3,
                           samples=2, max_new_tokens=CAP, stop=True, metric="reward")
    trainer = build_grpo_trainer(model, tokenizer, train, SETTINGS, tmp_path / "trainer",
                                 cpu=True, callbacks=[watch], lora=False,
                                 reward_funcs=watch.tap(length_reward))
    trainer.train()
    lines = [json.loads(x) for x in (tmp_path / "watch.jsonl").read_text().splitlines()]
    return trainer, watch, lines


def said(watch) -> str:
    """The callback's decisions, one a line (a string, so pytest prints it whole)."""
    return "\n".join(f"step {d['step']}: {d['decision']}: {d['reason']}" for d in watch.decisions)


def test_watch_stops_a_hackable_reward(tmp_path):
    trainer, watch, lines = run(tmp_path, refund_grade)
    report = watch.report()
    assert report["stopped_at"] is not None, said(watch)
    assert trainer.state.global_step == report["stopped_at"] < SETTINGS.steps
    # the records are what watch_run reads: step 0 has the held-out rows, steps carry the batch
    assert lines[0]["step"] == 0 and len(lines[0]["held_out"]) == HELD_OUT * 2
    trained = [x for x in lines if x.get("train_reward") is not None]
    assert len(trained) == trainer.state.global_step
    batch = trained[-1]["batch"]
    assert len(batch) == SETTINGS.num_generations * SETTINGS.prompts_per_step
    assert {b["reward"] for b in batch} <= {min(len(b["completion"]), CAP) / CAP for b in batch}
    from whileai_core.hacking import watch_run

    assert watch_run(tmp_path, metric="reward").decision == "stop"


def test_watch_lets_an_honest_run_finish(tmp_path):
    trainer, watch, lines = run(tmp_path, lambda reply, record: length_reward(None, [reply])[0])
    assert watch.report()["stopped_at"] is None, said(watch)
    assert trainer.state.global_step == SETTINGS.steps
    assert all(d["decision"] != "stop" for d in watch.decisions)
