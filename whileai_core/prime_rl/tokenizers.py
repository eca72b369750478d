"""Do two models share a tokenizer? From vocab sizes or local ``tokenizer.json`` files only.

OPD compares the teacher's and the student's log-probability of the same token id, so the two
must share a tokenizer. No hub download here: the caller gives sizes or local files.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ConfigError


def load_vocab(path: str | Path) -> dict[str, int]:
    """token -> id from a local ``tokenizer.json`` (or a folder holding one), added tokens included."""
    target = Path(path)
    if target.is_dir():
        target = target / "tokenizer.json"
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"tokenizer file {target} not found. Fix: give the vocab size as an int, "
                          "or a local path to tokenizer.json (or its folder)") from None
    except (OSError, json.JSONDecodeError) as err:
        raise ConfigError(f"tokenizer file {target} cannot be read as JSON ({err}). Fix: point at "
                          "a Hugging Face tokenizer.json") from None
    vocab = dict((data.get("model") or {}).get("vocab") or {})
    if not vocab and not data.get("added_tokens"):
        raise ConfigError(f"{target} has no model.vocab; not a Hugging Face tokenizer.json")
    for token in data.get("added_tokens") or []:
        vocab[token["content"]] = int(token["id"])
    return vocab


def compare_vocab(teacher: int | str | None, student: int | str | None) -> tuple[bool | None, str]:
    """(same?, evidence): True/False when the inputs decide it, None when they cannot."""
    if teacher is None or student is None:
        missing = [who for who, v in (("teacher", teacher), ("student", student)) if v is None]
        return None, f"no vocab given for the {' and '.join(missing)}"
    sizes = []
    vocabs = []
    for value in (teacher, student):
        if isinstance(value, int):
            sizes.append(value)
            vocabs.append(None)
        else:
            vocab = load_vocab(value)
            sizes.append(len(vocab))
            vocabs.append(vocab)
    if vocabs[0] is not None and vocabs[1] is not None:
        if vocabs[0] == vocabs[1]:
            return True, f"identical tokenizer.json vocabularies ({sizes[0]} tokens)"
        differ = sum(1 for tok, i in vocabs[0].items() if vocabs[1].get(tok) != i)
        return False, (f"vocabularies of {sizes[0]} and {sizes[1]} tokens; {differ} teacher tokens "
                       "have another id (or none) in the student's")
    if sizes[0] != sizes[1]:
        return False, f"vocab sizes {sizes[0]} (teacher) and {sizes[1]} (student)"
    return True, f"equal vocab sizes ({sizes[0]}); ids not compared"
