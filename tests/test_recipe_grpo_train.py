"""Two real optimizer steps of TRL GRPOTrainer + LoRA through the recipe's own construction.

The model is a 2-layer Qwen2 with hidden size 32, randomly initialised, and the tokenizer is
byte-level, both built in-process (no hub download). The rewards the trainer logged are checked
against the refund reward re-applied to the logged completions with each prompt's own case, which
proves the dataset's `category`/`order_id` columns reach the reward.

The clip: with one update per generation batch TRL 1.16 computes the ratio against the policy's
own detached log-probabilities, so it is exactly 1 and `clip_ratio/region_mean` is exactly 0
(by construction, not by luck); with `num_iterations=2` the second step reuses the batch after an
update, and at a large learning rate some token's ratio leaves [0.8, 1.28].
"""

import dataclasses
import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from recipes.grpo.prompts import write_prompts  # noqa: E402
from recipes.grpo.reward import Case, completion_text, score  # noqa: E402
from recipes.grpo.train import GRPOSettings, build_grpo_trainer, drift_monitor  # noqa: E402
from recipes.tiny_model import byte_tokenizer, tiny_model  # noqa: E402

SETTINGS = GRPOSettings(model="tiny", steps=2, num_generations=4, prompts_per_step=2,
                        max_completion_tokens=24, lora_r=4, lora_alpha=8, learning_rate=0.2,
                        beta=0.04)


def lora_weights(model):
    return {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" in n}


@pytest.mark.parametrize("variant", [
    {},
    {"loss_type": "dr_grpo", "scale_rewards": False},
    {"loss_type": "dapo", "epsilon_high": 0.28, "mask_truncated": True, "num_iterations": 2},
])
@pytest.mark.slow
def test_two_grpo_steps_update_the_adapter_only(tmp_path, variant):
    settings = dataclasses.replace(SETTINGS, **variant)
    tokenizer = byte_tokenizer()
    model = tiny_model(tokenizer, seed=0)
    base_before = {n: p.detach().clone() for n, p in model.named_parameters()}
    # no-id and off-topic prompts: a random policy's replies score 0.0 / 0.2 / 0.4 / 1.0 there,
    # so groups have spread and the advantage is not zero
    records = [r for r in write_prompts(0) if r["category"] != "with_id"]
    monitor = drift_monitor()
    trainer = build_grpo_trainer(model, tokenizer, records, settings, tmp_path, cpu=True,
                                 callbacks=[monitor])
    args = trainer.args
    assert (args.loss_type, args.beta, args.num_generations) == (
        settings.loss_type, 0.04, 4)
    assert args.scale_rewards == ("group" if settings.scale_rewards else "none")
    assert args.mask_truncated_completions is settings.mask_truncated
    assert args.num_iterations == settings.num_iterations
    lora_start = lora_weights(trainer.model)
    assert lora_start, "the trainer did not wrap the model with LoRA"

    trainer.train()

    assert trainer.state.global_step == 2
    moved = [n for n, p in lora_weights(trainer.model).items()
             if not torch.equal(p, lora_start[n])]
    assert moved, "no LoRA weight changed in two steps"
    for name, param in trainer.model.named_parameters():
        if "lora_" in name:
            continue
        key = name.replace("base_model.model.", "").replace(".base_layer", "")
        assert torch.equal(param.detach(), base_before[key]), f"base weight {key} moved"
    assert [p["step"] for p in monitor.history] == [1, 2]
    assert all(math.isfinite(p["kl"]) for p in monitor.history)
    assert all(p["grad_norm"] > 0 for p in monitor.history)
    clipped = [p["clip_ratio"] for p in monitor.history]
    if settings.num_iterations == 1:
        assert clipped == [0.0, 0.0]          # ratio exactly 1: nothing can be clipped
    else:
        assert clipped[0] == 0.0 and clipped[1] > 0  # step 2 reuses step 1's batch off-policy

    # TRL keeps the last generation batch in `_logs` (private): re-score it independently.
    by_text = {r["text"]: r for r in records}
    logs = trainer._logs
    if settings.num_iterations > 1:  # the last step reused the first step's batch
        assert len(logs["prompt"]) == settings.num_generations * settings.prompts_per_step
    recomputed = []
    for prompt, completion in zip(logs["prompt"], logs["completion"]):
        record = by_text[prompt[-1]["content"]]
        recomputed.append(score(completion_text(completion),
                                Case(record["category"], record["order_id"] or None)))
    assert list(logs["rewards"]["refund_reward"]) == pytest.approx(recomputed)
    assert len(recomputed) == settings.num_generations * settings.prompts_per_step


def test_epsilon_high_without_an_off_policy_update_is_refused():
    from whileai_core.errors import ArgumentError

    with pytest.raises(ArgumentError, match="never binds with --num-iterations 1.*Fix: add "
                                            "--num-iterations 2"):
        dataclasses.replace(SETTINGS, epsilon_high=0.28).check()
    assert dataclasses.replace(SETTINGS, epsilon_high=0.28, num_iterations=2).check()
