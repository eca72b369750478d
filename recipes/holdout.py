"""Sample a held-out prompt set from a policy and read before/after with the library's statistics.

Sampling is plain ``model.generate`` with the sampler TRL 1.16's ``GRPOTrainer`` uses
(``trl/trainer/grpo_trainer.py:1155-1173``), passed as one ``GenerationConfig`` so the
checkpoint's own ``generation_config`` fills only what the trainer leaves to it too. Each sample
becomes a graded row. All rates, intervals and verdicts come from ``whileai_core``; the
tool-call, well-formed and truncation shares are pass rates of 0/1 rows, so they carry an
interval clustered by prompt like everything else.
"""

from __future__ import annotations

from collections.abc import Sequence

from recipes.defaults import TRL_SAMPLING
from recipes.grpo.reward import CATEGORIES, Case, read_reply, score
from whileai_core.result import fmt_rate


def chat_text(tokenizer, messages: list[dict]) -> str:
    return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)


def end_tokens(model, tokenizer) -> list[int]:
    """The end tokens GRPOTrainer stops at (``trl/trainer/grpo_trainer.py:409-416``)."""
    configured = model.generation_config.eos_token_id
    ids = [] if configured is None else list(configured) if isinstance(configured, list) \
        else [configured]
    if tokenizer.eos_token_id not in ids:
        ids = [tokenizer.eos_token_id, *ids]
    return [i for i in ids if i is not None]


def trainer_sampling(model, tokenizer, *, max_new_tokens: int,
                     temperature: float = TRL_SAMPLING["temperature"]):
    """The ``GenerationConfig`` GRPOTrainer samples with, given as TRL gives it, so transformers
    fills from the model's own generation config exactly the fields TRL leaves unset."""
    from transformers import GenerationConfig

    knobs = {**TRL_SAMPLING, "temperature": temperature}
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    return GenerationConfig(max_new_tokens=max_new_tokens, do_sample=True, pad_token_id=pad,
                            bos_token_id=tokenizer.bos_token_id,
                            eos_token_id=end_tokens(model, tokenizer), cache_implementation=None,
                            disable_compile=True, **knobs)


def sample_replies(model, tokenizer, messages: Sequence[list[dict]], *, samples: int,
                   max_new_tokens: int, temperature: float = TRL_SAMPLING["temperature"],
                   seed: int = 0, batch_size: int = 32) -> list[list[tuple[str, bool]]]:
    """``samples`` replies per prompt as (text, truncated: no end token in budget)."""
    import torch

    config = trainer_sampling(model, tokenizer, max_new_tokens=max_new_tokens,
                              temperature=temperature)
    eos = set(config.eos_token_id)
    side, tokenizer.padding_side = tokenizer.padding_side, "left"
    flat = [chat_text(tokenizer, m) for m in messages for _ in range(samples)]
    out: list[tuple[str, bool]] = []
    was_training = model.training
    model.eval()
    torch.manual_seed(seed)
    device = next(model.parameters()).device
    try:
        with torch.no_grad():
            for start in range(0, len(flat), batch_size):
                batch = tokenizer(flat[start:start + batch_size], return_tensors="pt",
                                  padding=True, add_special_tokens=False).to(device)
                generated = model.generate(**batch, generation_config=config)
                for row in generated[:, batch["input_ids"].shape[1]:].tolist():
                    ended = any(t in eos for t in row)
                    out.append((tokenizer.decode(row, skip_special_tokens=True), not ended))
    finally:
        tokenizer.padding_side = side
        model.train(was_training)
    return [out[i * samples:(i + 1) * samples] for i in range(len(messages))]


def graded_rows(records: Sequence[dict], replies: Sequence[Sequence[tuple[str, bool]]],
                label: str) -> list[dict]:
    """One graded row per reply, scored by the refund reward."""
    rows = []
    for record, group in zip(records, replies):
        case = Case(record["category"], record["order_id"] or None)
        for text, truncated in group:
            reading = read_reply(text)
            rows.append({"task_id": record["task_id"], "reward": score(text, case),
                         "truncated": bool(truncated), "model": label,
                         "category": record["category"], "called": reading.called,
                         "well_formed": reading.well_formed, "chars": len(text), "reply": text})
    return rows


def sample_holdout(model, tokenizer, holdout: Sequence[dict], *, samples: int,
                   max_new_tokens: int, label: str, seed: int = 0) -> list[dict]:
    replies = sample_replies(model, tokenizer, [r["prompt"] for r in holdout], samples=samples,
                             max_new_tokens=max_new_tokens, seed=seed)
    return graded_rows(holdout, replies, label)


def read_arm(before: Sequence[dict], after: Sequence[dict],
             fields: Sequence[str] = ("called", "well_formed", "truncated")) -> dict:
    """pass@1 before/after, the paired delta, and the shares of the 0/1 ``fields``."""
    from whileai_core import compare, field_share, pass_at

    out = {"n_tasks": len({r["task_id"] for r in before}),
           "pass_before": pass_at(list(before)).to_dict(),
           "pass_after": pass_at(list(after)).to_dict(),
           # the delta of the pass@1 above (the recipe's reward grades partial credit 0.3, which
           # compare's metric="auto" would read as a mean reward)
           "delta": compare(list(before), list(after), metric="pass").to_dict()}
    for field in fields:
        out[f"{field}_before"] = field_share(list(before), field).to_dict()
        out[f"{field}_after"] = field_share(list(after), field).to_dict()
    return out


def summarize(before: Sequence[dict], after: Sequence[dict],
              categories: Sequence[str] = CATEGORIES) -> dict:
    """The overall read and the same by category, with ``corrected``: ``compare_many`` over the
    categories (which deltas survive Benjamini-Hochberg and Holm for having looked at several)."""
    from whileai_core import compare_many

    summary = {"overall": read_arm(before, after), "by_category": {}, "corrected": None}
    for category in categories:
        b = [r for r in before if r["category"] == category]
        a = [r for r in after if r["category"] == category]
        if b and a:
            summary["by_category"][category] = read_arm(b, a)
    if len(summary["by_category"]) > 1:
        summary["corrected"] = compare_many(list(before), list(after), by="category").to_dict()
    return summary


def rate_text(d: dict) -> str:
    """A rate's value, interval and n, as ``fmt_rate`` writes them."""
    ci = d.get("ci")
    return fmt_rate(d.get("pass_at_1", d.get("value")), tuple(ci) if ci else None,
                    d.get("n_tasks"))


def delta_text(delta: dict) -> str:
    """A paired delta with its interval (``+0.125 [-0.050, +0.300]``), or ``n/a``."""
    d, ci = delta.get("delta"), delta.get("ci")
    if d is None:
        return "n/a"
    return f"{d:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else " [no interval]")


def _shift(arm: dict, field: str) -> str:
    return f"{rate_text(arm[field + '_before'])} -> {rate_text(arm[field + '_after'])}"


def _corrected(b: dict, n: int) -> str:
    if b["p_value"] is None:
        return f"  after correction for {n} categories: no test (too few paired prompts)"
    keeps = ("survives Holm" if b["survives_holm"] else "survives Benjamini-Hochberg only"
             if b["survives_bh"] else "does not survive")
    return (f"  after correction for {n} categories: p={b['p_value']:.3g}, BH {b['p_bh']:.3g}, "
            f"Holm {b['p_holm']:.3g}: {keeps}")


def render_summary(summary: dict) -> str:
    """The before/after table, one block per group: pass@1, delta with interval and verdict."""
    lines = []
    groups: list[tuple[str, dict]] = [("overall", summary["overall"])]
    groups += list(summary["by_category"].items())
    corrected = {b["name"]: b for b in (summary.get("corrected") or {}).get("behaviours", [])}
    for name, arm in groups:
        delta = arm["delta"]
        lines += [f"{name}:",
                  f"  pass@1 before {rate_text(arm['pass_before'])}",
                  f"  pass@1 after  {rate_text(arm['pass_after'])}",
                  f"  delta {delta_text(delta)}, verdict {delta['verdict']} "
                  f"(n={delta['n_paired']} paired prompts)",
                  *([_corrected(corrected[name], len(corrected))] if name in corrected else []),
                  f"  tool-call rate {_shift(arm, 'called')}",
                  f"  well-formed    {_shift(arm, 'well_formed')}",
                  f"  truncated      {_shift(arm, 'truncated')}"]
    return "\n".join(lines)
