"""Do two models share a tokenizer? From vocab sizes or local ``tokenizer.json`` files only.

OPD compares the teacher's and the student's log-probability of the same token id, so the two
must share a tokenizer. No hub download here: the caller gives sizes or local files. A file is
opened through the path door (``whileai_core.safepath``): under ``root`` when one is given (the
server's workspace), regular files only, within the tokenizer size limit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..safepath import Root, UserPath, as_user_path
from .. import safejson

TOKENIZER_FILE = "tokenizer.json"


def load_vocab(path: str | Path | UserPath, *, root: Root | None = None,
               argument: str = "vocab") -> dict[str, int]:
    """token -> id from a local ``tokenizer.json`` (or a folder holding one), added tokens included.

    ``argument`` names where the path came from in messages (``method.teacher.vocab``).
    """
    target = as_user_path(path, root, argument=argument, error=ConfigError)
    where = f"`{argument}` tokenizer file {target}"
    text = target.read_text("tokenizer", error=ConfigError, default_child=TOKENIZER_FILE,
                            fix="point at a Hugging Face tokenizer.json")
    try:
        data = safejson.loads(text)
    except (json.JSONDecodeError, RecursionError) as err:
        raise ConfigError(f"{where} cannot be read as JSON ({err})", fix="point at a Hugging Face "
                          "tokenizer.json") from None
    model = data.get("model") if isinstance(data, dict) else None
    vocab_in = model.get("vocab") if isinstance(model, dict) else None
    added = data.get("added_tokens") if isinstance(data, dict) else None
    if not isinstance(vocab_in, dict) and not isinstance(added, list):
        raise ConfigError(f"{where} has no model.vocab; not a Hugging Face tokenizer.json",
                          fix="point at the tokenizer.json saved with the model, or give the vocab "
                          "size as an int")
    vocab = {}
    for token, index in (vocab_in or {}).items():
        vocab[token] = _token_id(index, where)
    for token in added or []:
        if not isinstance(token, dict) or not isinstance(token.get("content"), str):
            raise ConfigError(f"{where}: an added_tokens entry is not {{'content': str, 'id': "
                              "int}", fix="point at an unmodified tokenizer.json")
        vocab[token["content"]] = _token_id(token.get("id"), where)
    return vocab


def _token_id(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        raise ConfigError(f"{where}: token id {value!r} is not an integer in [0, 2^31)",
                          fix="point at an unmodified tokenizer.json")
    return value


def compare_vocab(teacher: int | str | None, student: int | str | None, *,
                  root: Root | None = None) -> tuple[bool | None, str]:
    """(same?, evidence): True/False when the inputs decide it, None when they cannot.

    A str is a tokenizer path, read through the door under ``root`` (see :func:`load_vocab`).
    """
    for value, argument in ((teacher, "method.teacher.vocab"), (student, "student_vocab")):
        if isinstance(value, str):  # a path is refused by its text even when it goes unread
            as_user_path(value, root, argument=argument, error=ConfigError)
    if teacher is None or student is None:
        missing = [who for who, v in (("teacher", teacher), ("student", student)) if v is None]
        return None, f"no vocab given for the {' and '.join(missing)}"
    sizes = []
    vocabs = []
    for value, argument in ((teacher, "method.teacher.vocab"), (student, "student_vocab")):
        if isinstance(value, int):
            sizes.append(value)
            vocabs.append(None)
        else:
            vocab = load_vocab(value, root=root, argument=argument)
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
