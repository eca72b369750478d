"""The SFT file read back for training: examples with the loss on the replies, and the chat
template checked against them (the recipes/sft recipe's data side).

:func:`~whileai_core.traces.export_sft` writes one ``{"messages": [...]}`` a line. Training on
that file as it is (TRL's conversational language-modelling format) puts the loss on every token,
the system prompt and the user's ask included. The recipe trains instead on
:func:`sft_examples`: one prompt-completion example per assistant turn, the prompt being every
message before it, so TRL's ``completion_only_loss`` masks the prompt and the loss falls on the
reply alone [1].

Completion-only loss is only as right as the chat template: TRL takes the completion to start
where the tokenized prompt (rendered alone, with the generation prompt) stops matching the
tokenized prompt + completion. A template that renders the prompt differently in the two cases
trains the model on a context it never sees at inference, and TRL 1.16 only warns, once [1]:
:func:`check_chat_template` refuses it, naming the model and the line of the file.

[1] TRL 1.16 ``SFTTrainer``: ``completion_only_loss`` (default on for prompt-completion data),
    ``common_prefix_length`` and its warning in ``sft_trainer.py``/``data_utils.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import ConfigError, RowsError
from .result import Result
from .rows import read_records
from .traces.read import _check_messages


def load_sft(source: Any) -> list[dict]:
    """An SFT file (:func:`~whileai_core.traces.export_sft`'s JSONL) or a list of
    ``{"messages": [...]}``, checked (valid messages ending with an assistant turn); each comes
    back with ``source`` ("file, line N")."""
    recs = read_records(source, noun="conversation")
    if not recs.items:
        raise RowsError("no conversations", source=recs.name,
                        fix="export at least one with export_sft")
    out = []
    for i, rec in enumerate(recs.items):
        where = recs.where(i)
        _check_messages(rec.get("messages"), where)
        if rec["messages"][-1]["role"] != "assistant":
            raise RowsError("the conversation does not end with an assistant turn", **where,
                            field="messages", fix="SFT teaches the last reply: export_sft writes "
                                                  "only conversations that end with one")
        label = where["source"] + (f", line {where['line']}" if "line" in where else "")
        out.append({"messages": [{"role": m["role"], "content": m["content"]}
                                 for m in rec["messages"]], "source": label})
    return out


def sft_examples(conversations: Sequence[dict]) -> list[dict]:
    """Prompt-completion examples ``{"prompt", "completion", "source"}``: one per assistant turn,
    the prompt every message before it, so every reply is trained on once and no prompt token is.
    """
    examples = []
    for conv in conversations:
        messages = conv["messages"]
        for j, m in enumerate(messages):
            if m["role"] == "assistant" and j > 0:
                examples.append({"prompt": [dict(x) for x in messages[:j]],
                                 "completion": [dict(m)], "source": conv.get("source", "")})
    return examples


# --- the chat template against the data --------------------------------------------------------

class TemplateCheck(Result):
    """The model's chat template rendered every example the same way alone and in context."""

    model: str
    n_examples: int
    n_prompts: int
    prompt_tokens: int
    completion_tokens: int
    note: str

    def render(self) -> str:
        return (f"chat template of {self.model}: {self.n_examples} examples and {self.n_prompts} "
                f"held-out prompts render consistently; {self.prompt_tokens} prompt tokens "
                f"masked, {self.completion_tokens} completion tokens trained\n{self.note}")


def _ids(tokenizer, messages: list[dict], *, add_generation_prompt: bool) -> list[int]:
    out = tokenizer.apply_chat_template(messages, tokenize=True, return_dict=True,
                                        add_generation_prompt=add_generation_prompt)
    return list(out["input_ids"])


def _render(tokenizer, messages: list[dict], *, model: str, source: str,
            add_generation_prompt: bool) -> str:
    try:
        return tokenizer.apply_chat_template(messages, tokenize=False,
                                             add_generation_prompt=add_generation_prompt)
    except Exception as exc:  # jinja's TemplateError, or a template that raises on a role
        roles = "/".join(dict.fromkeys(m["role"] for m in messages))
        raise ConfigError(
            f"the chat template of {model} cannot render {source} (roles {roles}): "
            f"{type(exc).__name__}: {str(exc)[:200]}", fix="reshape the data to roles that "
            "template takes (e.g. fold a system message into the first user turn), or train a "
            "model whose template renders them") from None


def _divergence(a: Sequence, b: Sequence) -> int:
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def check_chat_template(tokenizer, examples: Sequence[dict], *, model: str,
                        prompts: Sequence[Sequence[dict]] = ()) -> TemplateCheck:
    """Check ``model``'s chat template (``tokenizer``) against every SFT example (the prompt
    rendered alone must start the whole conversation, as text and as tokens, and the reply's text
    follow it) and every held-out prompt; a mismatch is a :class:`ConfigError` naming both."""
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(f"{model} has no chat template, and the SFT data is conversations",
                          fix="train an instruct/chat model, or set tokenizer.chat_template")
    prompt_tokens = completion_tokens = 0
    for ex in examples:
        p, c = _check_example(tokenizer, ex, model)
        prompt_tokens += p
        completion_tokens += c
    for i, prompt in enumerate(prompts):
        _render(tokenizer, list(prompt), model=model, source=f"held-out prompt {i + 1}",
                add_generation_prompt=True)
    return TemplateCheck(
        model=model, n_examples=len(examples), n_prompts=len(prompts),
        prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
        note="loss on the completion tokens only: TRL's completion_only_loss masks the prompt")


def _check_example(tokenizer, ex: dict, model: str) -> tuple[int, int]:
    """One example against the template: (its prompt tokens, its completion tokens)."""
    source = ex.get("source") or "an SFT example"
    alone = _render(tokenizer, ex["prompt"], model=model, source=source,
                    add_generation_prompt=True)
    whole = _render(tokenizer, ex["prompt"] + ex["completion"], model=model, source=source,
                    add_generation_prompt=False)
    if not whole.startswith(alone):
        at = _divergence(alone, whole)
        raise ConfigError(
            f"the chat template of {model} does not fit {source}: the prompt rendered alone "
            f"and the same prompt inside the conversation part at character {at}: alone "
            f"{alone[max(0, at - 40):at + 40]!r}, in the conversation "
            f"{whole[max(0, at - 40):at + 40]!r}. Training would mask the wrong tokens and "
            "teach a context the model never sees when it answers", fix="train a model whose "
            "template renders a prompt the same way alone and in context, or reshape the data "
            "(e.g. one assistant turn per conversation)")
    reply = ex["completion"][0]["content"].strip()
    if reply and reply not in whole[len(alone):]:
        raise ConfigError(
            f"the chat template of {model} does not fit {source}: the reply's text is not "
            f"in what the template renders after the prompt ({whole[len(alone):][:80]!r}); "
            "the template rewrites or drops it (e.g. strips a reasoning block)", fix="train a "
            "model whose template keeps the reply as written, or reshape the reply")
    p_ids = _ids(tokenizer, ex["prompt"], add_generation_prompt=True)
    f_ids = _ids(tokenizer, ex["prompt"] + ex["completion"], add_generation_prompt=False)
    if f_ids[:len(p_ids)] != p_ids:
        at = _divergence(p_ids, f_ids)
        raise ConfigError(
            f"the chat template of {model} does not fit {source}: the prompt's tokens alone "
            f"are not a prefix of the conversation's tokens (they part at token {at} of "
            f"{len(p_ids)}: tokens merge across the prompt/reply boundary). The loss mask "
            "would be off", fix="end the generation prompt on a token boundary (a newline), "
            "or train a model whose template does")
    if len(f_ids) <= len(p_ids):
        raise ConfigError(f"{source}: the reply renders to no tokens under the chat template "
                          f"of {model}", fix="drop empty replies before export_sft")
    return len(p_ids), len(f_ids) - len(p_ids)
