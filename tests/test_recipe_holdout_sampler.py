"""The held-out sampler is the trained sampler: the knobs TRL 1.16's GRPOTrainer passes to
``generate`` (``trl/trainer/grpo_trainer.py:1155-1173``), whatever the checkpoint's own
``generation_config`` says.

The model is a tiny random Qwen2 built here, its output layer scaled so that logits are far
enough apart for a repetition penalty to change what is sampled, and its generation config set
the way a Qwen2.5 Instruct checkpoint's is (repetition_penalty above 1, top_k, top_p): 1.3 here.
The reference samples come from ``model.generate`` called directly with the trainer's knobs
written out by hand from TRL's GRPOConfig defaults, on the same weights with a default generation
config, at the same torch seed.
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from recipes import holdout  # noqa: E402
from recipes.holdout import sample_replies  # noqa: E402
from recipes.tiny_model import byte_tokenizer, tiny_model  # noqa: E402

PROMPTS = [[{"role": "user", "content": text}] for text in
           ("Where is my order K1?", "Refund my order please", "What is the weather?")]
MAX_NEW = 24
SEED = 5


@pytest.fixture(scope="module")
def tokenizer():
    return byte_tokenizer()


@pytest.fixture(scope="module")
def plain(tokenizer):
    """A tiny model with peaked logits and transformers' default generation config."""
    model = tiny_model(tokenizer, seed=3)
    with torch.no_grad():
        model.lm_head.weight.mul_(60.0)
    return model.eval()


@pytest.fixture(scope="module")
def qwen_like(plain):
    """The same weights, with a checkpoint's generation config: repetition_penalty 1.3."""
    model = copy.deepcopy(plain)
    model.generation_config.repetition_penalty = 1.3
    model.generation_config.top_k = 20
    model.generation_config.top_p = 0.8
    model.generation_config.temperature = 0.7
    return model


def _by_hand(model, tokenizer, *, repetition_penalty: float) -> list[str]:
    """generate() with GRPOTrainer's knobs as keyword arguments (TRL 1.16 GRPOConfig defaults:
    temperature 1.0, top_p 1.0, top_k 0, repetition_penalty 1.0; the end token the tokenizer's)."""
    texts = [tokenizer.apply_chat_template(m, add_generation_prompt=True, tokenize=False)
             for m in PROMPTS]
    tokenizer.padding_side = "left"
    batch = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    torch.manual_seed(SEED)
    with torch.no_grad():
        out = model.generate(**batch, do_sample=True, temperature=1.0, top_p=1.0, top_k=0,
                             repetition_penalty=repetition_penalty, max_new_tokens=MAX_NEW,
                             eos_token_id=[tokenizer.eos_token_id],
                             pad_token_id=tokenizer.pad_token_id)
    return [tokenizer.decode(row, skip_special_tokens=True)
            for row in out[:, batch["input_ids"].shape[1]:].tolist()]


def test_a_checkpoints_repetition_penalty_1_3_does_not_reach_the_held_out_samples(
        tokenizer, plain, qwen_like):
    reference = _by_hand(plain, tokenizer, repetition_penalty=1.0)
    # the penalty matters on this model: sampled with 1.3, the replies differ
    assert _by_hand(plain, tokenizer, repetition_penalty=1.3) != reference
    held_out = sample_replies(qwen_like, tokenizer, PROMPTS, samples=1, max_new_tokens=MAX_NEW,
                              seed=SEED)
    assert [group[0][0] for group in held_out] == reference
    # and the checkpoint's config itself is left as it was
    assert qwen_like.generation_config.repetition_penalty == 1.3


def test_the_held_out_knobs_are_the_ones_grpo_trainer_passes(tokenizer, qwen_like, tmp_path):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    args = GRPOConfig(output_dir=str(tmp_path), max_completion_length=MAX_NEW, temperature=1.0,
                      num_generations=2, per_device_train_batch_size=2, use_cpu=True,
                      report_to="none")
    trainer = GRPOTrainer(model=qwen_like, reward_funcs=lambda completions, **_: [0.0] * len(
        completions), args=args, processing_class=tokenizer,
        train_dataset=Dataset.from_list([{"prompt": PROMPTS[0]}]))
    trained = trainer.generation_kwargs
    ours = holdout.trainer_sampling(qwen_like, tokenizer, max_new_tokens=MAX_NEW).to_dict()
    for knob in ("max_new_tokens", "do_sample", "temperature", "top_p", "top_k", "min_p",
                 "repetition_penalty", "pad_token_id", "bos_token_id", "eos_token_id",
                 "cache_implementation"):
        assert knob in trained, knob  # TRL still passes it: the list above is TRL's own
        assert ours[knob] == trained[knob], (knob, ours[knob], trained[knob])
    assert ours["repetition_penalty"] == 1.0
