"""Preference pairs from on-policy samples, scored by the refund reward, length-matched.

A prompt gives a pair when its best sample beats another by at least ``min_margin``; of the
candidates, the pair with the closest lengths is taken, because DPO otherwise learns "longer
wins" whenever the better reply happens to be longer (Park et al. 2024, arXiv:2403.19159).
Across the set, chosen is longer in under ``max_chosen_longer`` of the pairs: prompts with an
equally good pair with a shorter chosen switch to it, then the pairs with the largest length
ratio are dropped until the share is under the cap.

Constructed negatives (``negative_share`` > 0) put contrast where sampling found none: the
policy's best reply against one that breaks the rule for that category (an invented
``lookup_order`` id; a refund with no lookup). They go first to prompts with no on-policy pair
and stay at most ``negative_share`` of the final set.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from recipes.defaults import DPO_NEGATIVE_SHARE
from recipes.grpo.reward import LOOKUP_TOOL, REFUND_TOOL, WITH_ID, Case, score
from whileai_core.defaults import DPO_MAX_CHOSEN_LONGER, DPO_MIN_MARGIN
from whileai_core.errors import ArgumentError


@dataclass(frozen=True)
class Pair:
    task_id: str
    category: str
    chosen: str
    rejected: str
    chosen_reward: float
    rejected_reward: float
    constructed: bool = False

    @property
    def chosen_longer(self) -> bool:
        return len(self.chosen) > len(self.rejected)


@dataclass(frozen=True)
class PairSet:
    pairs: list[Pair]
    prompts: int                # train prompts sampled
    with_contrast: int          # prompts whose samples gave an on-policy pair
    swapped_for_length: int     # pairs switched to a candidate with a shorter chosen
    dropped_for_length: int     # pairs dropped to bring the chosen-longer share under the cap
    constructed: int            # constructed-negative pairs added

    @property
    def chosen_longer_share(self) -> float | None:
        return (sum(p.chosen_longer for p in self.pairs) / len(self.pairs)) if self.pairs else None

    def stats(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if k != "pairs"}
        out.update(n_pairs=len(self.pairs), chosen_longer_share=self.chosen_longer_share)
        return out


def _check(min_margin: float, max_chosen_longer: float, negative_share: float) -> None:
    if not 0 < min_margin <= 1:
        raise ArgumentError(f"min_margin must be in (0, 1], got {min_margin!r}",
                            fix=f"e.g. {DPO_MIN_MARGIN}")
    if not 0 < max_chosen_longer <= 1:
        raise ArgumentError(f"max_chosen_longer must be in (0, 1], got {max_chosen_longer!r}",
                            fix=f"e.g. {DPO_MAX_CHOSEN_LONGER}")
    if not 0 <= negative_share < 1:
        raise ArgumentError(f"negative_share must be in [0, 1), got {negative_share!r}")


def _candidates(texts: Sequence[str], rewards: Sequence[float], margin: float):
    best = max(rewards)
    chosen = [i for i, r in enumerate(rewards) if r == best]
    rejected = [i for i, r in enumerate(rewards) if r <= best - margin + 1e-12]
    return [(c, r) for c in chosen for r in rejected if texts[c] != texts[r]]


def _gap(texts, pair) -> tuple[int, int, int]:
    c, r = pair
    return (abs(len(texts[c]) - len(texts[r])), c, r)


def invented_id(task_id: str, seed: int) -> str:
    digest = hashlib.sha256(f"invented:{seed}:{task_id}".encode()).hexdigest()
    return f"Q{int(digest[:8], 16) % 90000 + 10000}"


def constructed_negative(record: dict, seed: int) -> str:
    """A reply that breaks the policy for this prompt's category, as a well-formed call."""
    if record["category"] == WITH_ID:
        call = {"name": REFUND_TOOL, "arguments": {"order_id": record["order_id"],
                                                   "reason": "customer request"}}
    else:
        call = {"name": LOOKUP_TOOL, "arguments": {"order_id": invented_id(record["task_id"], seed)}}
    return "<tool_call>\n" + json.dumps(call) + "\n</tool_call>"


def _case(record: dict) -> Case:
    return Case(record["category"], record["order_id"] or None)


def build_pairs(records: Sequence[dict], samples: Sequence[Sequence[str]], *,
                min_margin: float = DPO_MIN_MARGIN,
                max_chosen_longer: float = DPO_MAX_CHOSEN_LONGER,
                negative_share: float = DPO_NEGATIVE_SHARE, seed: int = 0) -> PairSet:
    """Pairs from ``samples[i]`` (the k reply texts of ``records[i]``); see the module docstring."""
    _check(min_margin, max_chosen_longer, negative_share)
    if len(records) != len(samples):
        raise ArgumentError(f"{len(records)} prompts but {len(samples)} sample lists: give one "
                            "list of replies per prompt")
    scored, options = _on_policy(records, samples, min_margin)
    chosen, swapped = _prefer_shorter(samples, options, max_chosen_longer)
    pairs = [Pair(records[i]["task_id"], records[i]["category"], samples[i][c], samples[i][r],
                  scored[i][c], scored[i][r]) for i, (c, r) in sorted(chosen.items())]
    added = 0
    if negative_share > 0:
        # room for c constructed pairs next to m on-policy ones: c / (m + c) <= share
        room = math.floor(negative_share / (1 - negative_share) * len(pairs) + 1e-9)
        built = _constructed_pairs(records, samples, scored, options, room=room,
                                   min_margin=min_margin, seed=seed)
        pairs += built
        added = len(built)
    dropped, removed = _apply_caps(pairs, max_chosen_longer, negative_share)
    return PairSet(pairs=pairs, prompts=len(records), with_contrast=len(options),
                   swapped_for_length=swapped, dropped_for_length=dropped,
                   constructed=added - removed)


def _on_policy(records, samples, min_margin: float):
    """Each prompt's sample rewards, and its candidate pairs closest lengths first (prompts
    with at least one)."""
    scored: list[list[float]] = []
    options: dict[int, list[tuple[int, int]]] = {}
    for i, (record, texts) in enumerate(zip(records, samples)):
        case = _case(record)
        rewards = [score(t, case) for t in texts]
        scored.append(rewards)
        if not texts:
            continue
        cands = _candidates(texts, rewards, min_margin)
        if cands:
            options[i] = sorted(cands, key=lambda p: _gap(texts, p))
    return scored, options


def _prefer_shorter(samples, options: dict, max_chosen_longer: float):
    """Each prompt's pair; while the chosen-longer share breaks the cap, an equally good pair
    with a shorter (or equal) chosen replaces one. Returns (pairs by prompt, swaps)."""
    def longer(i: int, pair: tuple[int, int]) -> bool:
        return len(samples[i][pair[0]]) > len(samples[i][pair[1]])

    chosen = {i: pairs[0] for i, pairs in options.items()}
    swapped = 0
    over = sum(longer(i, p) for i, p in chosen.items())
    for i in sorted(chosen):
        if over / len(chosen) < max_chosen_longer:
            break
        if longer(i, chosen[i]):
            alt = [p for p in options[i] if not longer(i, p)]
            if alt:
                chosen[i], swapped, over = alt[0], swapped + 1, over - 1
    return chosen, swapped


def _constructed_pairs(records, samples, scored, options, *, room: int, min_margin: float,
                       seed: int) -> list[Pair]:
    """Up to ``room`` pairs of a prompt's best sample over its constructed negative, prompts
    without an on-policy pair first."""
    order = sorted(range(len(records)),
                   key=lambda i: (i in options, hashlib.sha256(
                       f"{seed}:{records[i]['task_id']}".encode()).hexdigest()))
    built: list[Pair] = []
    for i in order:
        if len(built) >= room:
            break
        if not samples[i]:
            continue
        record = records[i]
        negative = constructed_negative(record, seed)
        neg_reward = score(negative, _case(record))
        best = max(range(len(samples[i])), key=lambda j: (scored[i][j], -len(samples[i][j])))
        if scored[i][best] >= neg_reward + min_margin - 1e-12:
            built.append(Pair(record["task_id"], record["category"], samples[i][best],
                              negative, scored[i][best], neg_reward, constructed=True))
    return built


def _apply_caps(pairs: list[Pair], max_chosen_longer: float, negative_share: float):
    """Both caps over the final set, one pair at a time, in place: the chosen-longer pair with
    the largest length ratio goes first; then the last constructed pair while they are over
    their share. Returns (dropped for length, constructed removed)."""
    dropped = removed = 0
    while pairs:
        n_longer = sum(p.chosen_longer for p in pairs)
        n_built = sum(p.constructed for p in pairs)
        if n_longer / len(pairs) >= max_chosen_longer:
            worst = max((k for k, p in enumerate(pairs) if p.chosen_longer),
                        key=lambda k: (len(pairs[k].chosen) / max(1, len(pairs[k].rejected)), -k))
            del pairs[worst]
            dropped += 1
        elif n_built / len(pairs) > negative_share + 1e-12:
            del pairs[max(k for k, p in enumerate(pairs) if p.constructed)]
            removed += 1
        else:
            break
    return dropped, removed
