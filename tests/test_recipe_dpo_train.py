"""Two real optimizer steps of TRL DPOTrainer + LoRA through the recipe's own pair and trainer code.

Pairs come from the tiny random model's own samples (`sample_pairs`: the refund reward, length
matching, constructed negatives), so the whole DPO path runs as it does on a GPU. The reference
is the adapter-off model: the trainer has no separate reference copy, and in round two (a
loaded adapter) TRL keeps a frozen `ref` copy of that adapter.
"""

import dataclasses
import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from recipes.dpo.train import DPOSettings, build_dpo_trainer, sample_pairs  # noqa: E402
from recipes.grpo.prompts import write_prompts  # noqa: E402
from recipes.tiny_model import byte_tokenizer, tiny_model  # noqa: E402
from whileai_core.errors import ConfigError  # noqa: E402

SETTINGS = DPOSettings(model="tiny", epochs=1, samples_per_prompt=4, pairs_per_step=2,
                       max_completion_tokens=12, lora_r=4, lora_alpha=8, learning_rate=1e-2,
                       negative_share=0.5)
RECORDS = [r for r in write_prompts(0) if r["category"] != "with_id"]


def lora(model, adapter="default"):
    return {n: p.detach().clone() for n, p in model.named_parameters()
            if "lora_" in n and f".{adapter}." in n}


@pytest.mark.slow
def test_two_dpo_steps_on_sampled_pairs(tmp_path):
    tokenizer = byte_tokenizer()
    model = tiny_model(tokenizer, seed=0)
    base = {n: p.detach().clone() for n, p in model.named_parameters()}
    pair_set = sample_pairs(model, tokenizer, RECORDS, SETTINGS)
    assert pair_set.pairs, pair_set.stats()
    assert pair_set.chosen_longer_share < 0.8
    assert all(p.chosen_reward >= p.rejected_reward + SETTINGS.min_margin for p in pair_set.pairs)
    trainer = build_dpo_trainer(model, tokenizer, RECORDS, pair_set, SETTINGS, tmp_path, cpu=True)
    assert trainer.ref_model is None  # reference = the same weights with the adapter off
    start = lora(trainer.model)
    trainer.train()
    # one pass over the pairs at 2 a step (per device 2, no accumulation): ceil(n / 2) steps
    assert trainer.state.global_step == math.ceil(len(pair_set.pairs) / 2)
    assert trainer.args.max_steps == -1 and trainer.args.num_train_epochs == 1
    assert any(not torch.equal(p, start[n]) for n, p in lora(trainer.model).items())
    for name, param in trainer.model.named_parameters():
        if "lora_" not in name:
            key = name.replace("base_model.model.", "").replace(".base_layer", "")
            assert torch.equal(param.detach(), base[key]), key
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    # DPO's loss at step 1 with the policy equal to its reference is -log sigmoid(0) = ln 2
    assert losses[0] == pytest.approx(0.6931, abs=2e-3)
    trainer.save_model(str(tmp_path / "adapter"))

    # round two: the saved adapter is loaded and trained; its frozen copy is the reference
    from peft import PeftModel

    model2 = PeftModel.from_pretrained(tiny_model(tokenizer, seed=0), str(tmp_path / "adapter"),
                                       is_trainable=True)
    round_one = lora(model2)
    trainer2 = build_dpo_trainer(model2, tokenizer, RECORDS, pair_set,
                                 dataclasses.replace(SETTINGS, from_run=str(tmp_path)),
                                 tmp_path / "r2", cpu=True)
    assert "ref" in trainer2.model.peft_config
    trainer2.train()
    assert any(not torch.equal(p, round_one[n]) for n, p in lora(trainer2.model).items())
    assert all(torch.equal(p, round_one[n.replace(".ref.", ".default.")])
               for n, p in lora(trainer2.model, "ref").items())


def test_no_pairs_is_a_clear_error(tmp_path):
    from recipes.dpo.pairs import PairSet

    empty = PairSet(pairs=[], prompts=24, with_contrast=0, swapped_for_length=0,
                    dropped_for_length=0, constructed=0)
    with pytest.raises(ConfigError, match="no preference pairs: none of 24 train prompts"):
        build_dpo_trainer(None, None, RECORDS, empty, SETTINGS, tmp_path, cpu=True)


@pytest.mark.parametrize("n_pairs, pairs_per_step, epochs, steps", [
    (96, 8, 2, 24), (97, 8, 2, 26), (5, 8, 3, 3), (8, 4, 1, 2),
])
def test_steps_follow_from_pairs_and_epochs(tmp_path, n_pairs, pairs_per_step, epochs, steps):
    """Transformers' Trainer runs ceil(ceil(n / per_device) / accumulation) steps a pass; with
    pairs_per_step = per_device x accumulation that is ceil(n / pairs_per_step) (hand counts in
    the table: 96 pairs at 8 a step, two passes, is 24 steps)."""
    from recipes.dpo.train import build_dpo_config
    from recipes.trl_recipes import steps_for_epochs

    settings = dataclasses.replace(SETTINGS, pairs_per_step=pairs_per_step, epochs=epochs)
    config = build_dpo_config(settings, tmp_path, cpu=True)
    per_step = config.per_device_train_batch_size * config.gradient_accumulation_steps
    assert per_step == pairs_per_step
    batches = math.ceil(n_pairs / config.per_device_train_batch_size)
    assert epochs * math.ceil(batches / config.gradient_accumulation_steps) == steps
    assert steps_for_epochs(n_pairs, pairs_per_step, epochs) == steps
