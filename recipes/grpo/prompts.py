"""Prompts for the refund assistant: a deterministic template writer, a stratified holdout, balance.

``write_prompts(seed)`` builds the same prompt set, byte for byte, for the same seed; each prompt
carries its case (category, and the order id it names), so the reward has ground truth.
``split_holdout`` holds out situations *within each category*: a plain hash split can put every
no-id situation in train, and then a policy that always calls ``lookup_order`` looks perfect on
the holdout. ``balance`` repeats the prompts of a small category in the *train* split only.
``python recipes/grpo/prompts.py --seed 0 --out FILE`` freezes a set for ``--prompts-file``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `recipes` and `whileai_core` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from recipes.defaults import GRPO_BALANCE_MAX_REPEATS, GRPO_PROMPT_SEED
from recipes.grpo.reward import CATEGORIES, LOOKUP_TOOL, NO_ID, REFUND_TOOL, WITH_ID
from whileai_core.defaults import GRPO_HOLDOUT_SHARE, GRPO_PROMPT_COUNTS
from whileai_core.errors import ArgumentError, ConfigError, as_json
from whileai_core.io import write_atomic
from whileai_core.safepath import read_text

SYSTEM_PROMPT = (
    "You are the refund assistant of an online shop. Policy: look an order up before refunding "
    "it; never invent an order id; if the customer gives no order id, ask for it.\n"
    "Tools:\n"
    f'- {LOOKUP_TOOL}(order_id: string): the order\'s status, items and payment.\n'
    f'- {REFUND_TOOL}(order_id: string, reason: string): refund an order you have looked up.\n'
    "To call a tool, reply with exactly one block:\n"
    '<tool_call>\n{"name": "<tool>", "arguments": {"order_id": "..."}}\n</tool_call>\n'
    "Otherwise reply in plain text."
)

_ITEMS = ("blender", "pair of running shoes", "desk lamp", "phone case", "winter jacket",
          "coffee grinder", "set of towels", "backpack", "keyboard", "water bottle")
_REASONS = ("It arrived broken.", "It never showed up.", "It is the wrong size.",
            "I was charged twice.", "It stopped working after a day.", "I changed my mind.",
            "The colour is not what the photo showed.", "Half of the parts are missing.")
_WITH_ID = (
    "Hi, I'd like a refund for order {oid}. {reason}",
    "Order {oid}: the {item}. {reason} Can I get my money back?",
    "Please refund {oid}, the {item}. {reason}",
    "I want to return the {item} from order {oid}. {reason}",
    "{reason} My order number is {oid}. What can you do?",
    "Can you check order {oid}? {reason} I'd like a refund.",
    "Refund request for {oid} ({item}). {reason}",
    "hello, order #{oid}, {item}. {reason} refund pls",
)
_NO_ID = (
    "I want a refund for the {item} I bought last week. {reason}",
    "{reason} Can I get my money back for the {item}?",
    "Please refund my {item}. {reason}",
    "How do I get a refund? I ordered a {item}. {reason}",
    "My {item} is a disaster. {reason} Refund it now.",
    "I'd like to return a {item}. {reason}",
)
_OFF_TOPIC = (
    "What are your opening hours on {day}?",
    "Do you ship to {country}?",
    "Is the {item} available in blue?",
    "Can I change the email address on my account?",
    "Do you have a discount for students buying a {item}?",
    "How long does delivery to {country} usually take?",
    "Is there a warranty on the {item}?",
)
_DAYS = ("Saturday", "Sunday", "public holidays", "Monday")
_COUNTRIES = ("Canada", "Portugal", "Japan", "Kenya", "Chile", "Norway")
_ID_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"


def prompt_messages(text: str) -> list[dict[str, str]]:
    """The chat prompt the policy sees: the policy as the system message, the customer as user."""
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}]


def _order_id(rng: random.Random) -> str:
    return f"{rng.choice(_ID_LETTERS)}{rng.randrange(10000, 100000)}"


def _text(rng: random.Random, category: str) -> tuple[str, str]:
    fill = {"item": rng.choice(_ITEMS), "reason": rng.choice(_REASONS),
            "day": rng.choice(_DAYS), "country": rng.choice(_COUNTRIES), "oid": ""}
    if category == WITH_ID:
        fill["oid"] = _order_id(rng)
        return rng.choice(_WITH_ID).format(**fill), fill["oid"]
    templates = _NO_ID if category == NO_ID else _OFF_TOPIC
    return rng.choice(templates).format(**fill), ""


def write_prompts(seed: int = GRPO_PROMPT_SEED,
                  counts: Sequence[int] = GRPO_PROMPT_COUNTS) -> list[dict]:
    """Distinct template prompts, ``counts`` = (with_id, no_id, off_topic), in a fixed order;
    each its own situation (``scenario_id`` = ``task_id``), ``order_id`` "" when none."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ArgumentError(f"seed must be an integer, got {seed!r}", fix="pass e.g. seed=0")
    if len(counts) != len(CATEGORIES) or any(not isinstance(c, int) or c < 0 for c in counts):
        raise ArgumentError(f"counts must be 3 non-negative integers (with_id, no_id, off_topic), "
                            f"got {tuple(counts)!r}", fix=f"pass e.g. counts={GRPO_PROMPT_COUNTS}")
    rng = random.Random(seed)
    records: list[dict] = []
    for category, wanted in zip(CATEGORIES, counts):
        seen: set[str] = set()
        tries = 0
        while len(seen) < wanted:
            tries += 1
            if tries > 200 * (wanted + 1):
                raise ArgumentError(f"the templates give fewer than {wanted} distinct {category} "
                                    "prompts", fix=f"ask for fewer (counts={tuple(counts)!r})")
            text, oid = _text(rng, category)
            if text in seen:
                continue
            seen.add(text)
            task_id = f"s{seed}-{category}-{len(seen):03d}"
            records.append({"task_id": task_id, "scenario_id": task_id, "category": category,
                            "order_id": oid, "text": text, "prompt": prompt_messages(text)})
    return records


def dumps_prompts(records: Sequence[dict]) -> str:
    """JSONL with sorted keys: the byte-for-byte form the determinism promise is about."""
    return "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records)


def load_prompts(path: str | Path) -> list[dict]:
    """Read a prompts JSONL (``text``, ``category``, ``order_id`` for with_id, ``scenario_id``);
    a row without ``scenario_id`` is its own situation; ``prompt`` is rebuilt from ``text``."""
    source = Path(path)
    # through the path door: a FIFO or device is refused, never read; size-limited
    lines = read_text(source, "rows", argument="--prompts-file", error=ConfigError,
                      fix="give a JSONL file written by `python recipes/grpo/prompts.py --out "
                          "FILE`").splitlines()
    records = []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"--prompts-file {source}, line {lineno}"
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ConfigError(f"{where}: invalid JSON ({exc})",
                              fix="one JSON object per line") from None
        if not isinstance(row, dict) or not isinstance(row.get("text"), str) or not row["text"].strip():
            raise ConfigError(f"{where}: needs a non-empty string `text`",
                              fix='{"text": "...", "category": "with_id", "order_id": "K12345"}')
        category = row.get("category")
        if category not in CATEGORIES:
            raise ConfigError(f"{where}: `category` is {as_json(category)}, must be one of "
                              f"{', '.join(CATEGORIES)}")
        oid = row.get("order_id") or ""
        if not isinstance(oid, str) or (category == WITH_ID) != bool(oid.strip()):
            raise ConfigError(f"{where}: `order_id` is {oid!r}; a with_id prompt needs the id it "
                              "names and other categories have none. Fix the row or its category")
        task_id = str(row.get("task_id") or f"{source.stem}-{lineno:05d}")
        records.append({"task_id": task_id, "scenario_id": str(row.get("scenario_id") or task_id),
                        "category": category, "order_id": oid.strip(), "text": row["text"],
                        "prompt": prompt_messages(row["text"])})
    if not records:
        raise ConfigError(f"--prompts-file {source}: no prompts",
                          fix="write one JSON object per line")
    return records


def _rank(seed: int, scenario: str) -> str:
    return hashlib.sha256(f"{seed}:{scenario}".encode()).hexdigest()


def split_holdout(records: Sequence[dict], share: float = GRPO_HOLDOUT_SHARE,
                  seed: int = GRPO_PROMPT_SEED) -> tuple[list[dict], list[dict]]:
    """(train, holdout): ``round(share * situations)`` situations of each category held out,
    never one on both sides; a category with two or more keeps one on each side."""
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
        raise ArgumentError(f"holdout share must be in (0, 1), got {share!r}",
                            fix=f"e.g. {GRPO_HOLDOUT_SHARE}")
    held: set[str] = set()
    for category in CATEGORIES:
        scenarios = sorted({r["scenario_id"] for r in records if r["category"] == category},
                           key=lambda s: (_rank(seed, s), s))
        n = len(scenarios)
        take = min(max(round(share * n), 1), n - 1) if n >= 2 else 0
        held.update(scenarios[:take])
    train = [r for r in records if r["scenario_id"] not in held]
    holdout = [r for r in records if r["scenario_id"] in held]
    return train, holdout


def balance(train: Sequence[dict], share: float,
            max_repeats: int = GRPO_BALANCE_MAX_REPEATS) -> list[dict]:
    """Repeat the prompts of each category below ``share`` of ``train`` until it reaches it.

    A category at count c among N rows needs c' >= share * (N - c) / (1 - share); several small
    categories push each other up, so the targets are re-solved until they stop moving. Each
    prompt appears at most ``max_repeats`` times; repeats are appended in cycle order.
    """
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 0.5:
        raise ArgumentError(f"--balance must be in (0, 0.5], got {share!r}",
                            fix="e.g. --balance 0.25")
    by_cat = {c: [r for r in train if r["category"] == c] for c in CATEGORIES}
    target = {c: len(rows) for c, rows in by_cat.items()}
    small = [c for c, rows in by_cat.items() if rows and len(rows) < share * len(train)]
    for _ in range(100):
        moved = False
        for c in small:
            others = sum(target.values()) - target[c]
            need = min(math.ceil(share * others / (1 - share) - 1e-9), len(by_cat[c]) * max_repeats)
            if need > target[c]:
                target[c], moved = need, True
        if not moved:
            break
    out = list(train)
    for c in small:
        rows = by_cat[c]
        out.extend(rows[i % len(rows)] for i in range(target[c] - len(rows)))
    return out


def category_counts(records: Sequence[dict]) -> dict[str, int]:
    return {c: sum(1 for r in records if r["category"] == c) for c in CATEGORIES}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the refund-assistant prompt set (JSONL).")
    parser.add_argument("--seed", type=int, default=GRPO_PROMPT_SEED, help="prompt seed (default %(default)s)")
    parser.add_argument("--out", required=True, help="JSONL file to write")
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    args = parser.parse_args(argv)
    try:
        records = write_prompts(args.seed)
        write_atomic(args.out, dumps_prompts(records), overwrite=args.force)
    except (ArgumentError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(records)} prompts to {args.out}: {category_counts(records)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
