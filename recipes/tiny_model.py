"""A tiny randomly initialised causal LM and a byte-level tokenizer, built in-process.

The offline path of every TRL recipe trains this instead of the real checkpoint, with no hub
download. Byte-level: every string round-trips, so the reward sees exactly what was sampled. The
chat template is the ChatML shape Qwen uses.
"""

from __future__ import annotations

TINY_SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
TINY_CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TINY_MODEL_NAME = "tiny-random-qwen2"


def byte_tokenizer():
    """A ``PreTrainedTokenizerFast`` over the 256 byte symbols plus ChatML's three specials."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {symbol: i for i, symbol in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    for special in TINY_SPECIAL_TOKENS:
        vocab[special] = len(vocab)
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>",
        additional_special_tokens=list(TINY_SPECIAL_TOKENS[1:]))
    tokenizer.chat_template = TINY_CHAT_TEMPLATE
    tokenizer.padding_side = "left"
    return tokenizer


# A logit offset on the end token: with 258 other tokens near logit 0, e^5 / (e^5 + 258) = 0.37
# of replies end at each position, so some replies in a group are empty and others are not and
# the refund reward differs within a group (GRPO's advantage is zero when a group agrees).
TINY_END_BIAS = 5.0


def tiny_model(tokenizer, *, seed: int = 0, hidden: int = 32, layers: int = 2,
               end_bias: float | None = TINY_END_BIAS):
    """A small Qwen2 randomly initialised from ``seed`` (float32, CPU). The output layer is
    untied and biased by ``end_bias`` on the end token, so reply lengths (and rewards) vary within
    a group; ``end_bias=None`` keeps Qwen2's own bias-free output layer (what vLLM loads)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
        num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=1,
        max_position_embeddings=2048, tie_word_embeddings=False,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None)
    # name_or_path stays empty: peft treats a non-empty one as a hub repo and looks it up on save
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    if end_bias is None:
        return model
    head = torch.nn.Linear(hidden, len(tokenizer), bias=True)
    with torch.no_grad():
        head.weight.copy_(model.lm_head.weight)
        head.bias.zero_()
        head.bias[tokenizer.eos_token_id] = end_bias
    model.lm_head = head
    return model


def on_device(model, device: str = "cpu"):
    """The tiny model as built on the CPU; on a GPU, in bf16 as ``load_policy`` loads the policy."""
    if device == "cpu":
        return model
    import torch

    return model.to(device, dtype=torch.bfloat16)
