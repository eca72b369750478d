"""What a string may be before it reaches a prime-rl TOML: an id, a URL, a name; data, never code.

A newline in a string could end the header comment and add keys (``env_vars``, ``output_dir``,
``clean``), so every string the writer puts in a config is checked here first: ids and URLs
against their grammar (which has no room for a newline, a quote or ``#``), free text and every
key and value of the finished config for control characters. The TOML itself is written
by tomli-w, never by string formatting, and the writer parses its own text back and compares it
with the config before writing (``prime_rl.writer``). Placeholders (``<...>``, ``TODO``, empty)
are refused with the fix: prime-rl would refuse them only when the GPUs start.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from ..errors import ArgumentError

# A Hugging Face id ("org/name") or a local checkpoint path ("/models/qwen", "./out/step_100").
_MODEL = re.compile(r"^(?:/|\./)?[A-Za-z0-9_][A-Za-z0-9_.+-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.+-]*)*$")
# A verifiers taskset id ("reverse-text"; imported as reverse_text), optionally "owner/name@ver".
_TASKSET = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)?"
                      r"(?:@[A-Za-z0-9_.+-]+)?$")
# A run / W&B project name.
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
# A dataset split in the datasets library's syntax: "train", "train[:872]", "train[10%:]+test".
_SPLIT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.%:+\[\]-]*$")
# The characters RFC 3986 allows in a URL (no space, quote, backslash, <, >, control character).
_URL_CHARS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+$")
_PLACEHOLDER_WORD = re.compile(r"(?i)(?:^|[^A-Za-z])(todo|tbd|fixme|changeme|placeholder|your)"
                               r"(?:$|[^A-Za-z])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")
_CONTROL_TEXT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u0085\u2028\u2029]")  # \t and \n allowed

MAX_ID = 256
MAX_URL = 2048


def placeholder(value: Any) -> str | None:
    """Why ``value`` looks like a placeholder ("<...>", "TODO", empty), or None."""
    if not isinstance(value, str):
        return None
    if not value.strip():
        return "is empty"
    if "<" in value or ">" in value:
        return "is a placeholder (<...>)"
    if _PLACEHOLDER_WORD.search(value) or value.strip(". ") == "":
        return "is a placeholder"
    return None


def _given(value: Any, *, argument: str, what: str, example: str,
           real: str = "the real one") -> None:
    """Refuse a value that is not a string, or is a placeholder."""
    if not isinstance(value, str):
        raise ArgumentError(f"`{argument}` must be {what} (a string), got {value!r}", fix="e.g. "
                            f"{example!r}")
    why = placeholder(value)
    if why is not None:
        raise ArgumentError(f"`{argument}` = {_short(value)} {why}, not {what}", fix="give "
                            f"{real}, e.g. {example!r}")


def _check(value: Any, pattern: re.Pattern, *, argument: str, what: str, example: str,
           limit: int = MAX_ID) -> str:
    _given(value, argument=argument, what=what, example=example)
    if len(value) > limit or not pattern.fullmatch(value):
        bad = _CONTROL.search(value)
        detail = (f" (it holds the control character {bad.group()!r})" if bad else
                  f" (letters, digits and {_ALLOWED[what]} only, at most {limit} characters)")
        raise ArgumentError(f"`{argument}` = {_short(value)} is not {what}{detail}", fix="e.g. "
                            f"{example!r}")
    return value


_ALLOWED = {
    "a model id": "'_ . + -', with '/' between parts",
    "a taskset id": "'_ . -', one optional '/' and an optional '@version'",
    "a name": "'_ . -'",
    "a dataset split": "'_ . % : + - [ ]'",
}


def model_id(value: Any, *, argument: str = "model") -> str:
    """A model id: "org/name" on the Hugging Face hub, or a local checkpoint path."""
    return _check(value, _MODEL, argument=argument, what="a model id", example="Qwen/Qwen3-8B")


def taskset_id(value: Any, *, argument: str = "taskset") -> str:
    """A verifiers taskset id such as "reverse-text"."""
    return _check(value, _TASKSET, argument=argument, what="a taskset id", example="reverse-text")


def name(value: Any, *, argument: str) -> str:
    """A run name or W&B project: letters, digits, '_', '.', '-'."""
    return _check(value, _NAME, argument=argument, what="a name", example="grpo-qwen3-8b",
                  limit=128)


def split(value: Any, *, argument: str) -> str:
    """A dataset split, e.g. "train[:872]"."""
    return _check(value, _SPLIT, argument=argument, what="a dataset split",
                  example="train[:872]", limit=128)


def url(value: Any, *, argument: str) -> str:
    """An http(s) URL with a host, made of the characters RFC 3986 allows."""
    example = "http://localhost:8001/v1"
    _given(value, argument=argument, what="a URL", example=example,
           real="the server's real base URL")
    if len(value) > MAX_URL or not _URL_CHARS.fullmatch(value):
        raise ArgumentError(f"`{argument}` = {_short(value)} holds characters a URL may not "
                            "(space, quote, backslash, <, >, a control character)",
                            fix=f"percent-encode them, e.g. {example!r}")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise ArgumentError(f"`{argument}` = {_short(value)} is not a valid URL ({exc})",
                            fix=f"e.g. {example!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ArgumentError(f"`{argument}` = {_short(value)} is not an http(s) URL with a host",
                            fix=f"e.g. {example!r}")
    del port
    return value


def text(value: Any, *, argument: str) -> str:
    """Free text (a template): any characters but control characters other than tab and newline."""
    if not isinstance(value, str):
        raise ArgumentError(f"`{argument}` must be text, got {value!r}")
    bad = _CONTROL_TEXT.search(value)
    if bad:
        raise ArgumentError(f"`{argument}` holds the control character {bad.group()!r}",
                            fix="remove it (tab and newline are fine)")
    return value


def check_tree(config: Any, *, where: str = "") -> None:
    """Every key and string of a finished config: no control character in a key, none but tab
    and newline in a value (tomli-w escapes those), and numbers TOML can hold."""
    if isinstance(config, dict):
        for key, value in config.items():
            path = f"{where}.{key}" if where else str(key)
            if not isinstance(key, str) or not key or _CONTROL.search(key):
                raise ArgumentError(f"config key {path!r} is empty or holds a control character",
                                    fix="use a plain key name (check `overrides`)")
            check_tree(value, where=path)
    elif isinstance(config, list):
        for i, value in enumerate(config):
            check_tree(value, where=f"{where}[{i}]")
    elif isinstance(config, str):
        text(config, argument=where)
    elif isinstance(config, bool):
        pass
    elif config is None:
        raise ArgumentError(f"`{where}` is null; TOML has no null", fix="leave the key out (an "
                            "override set to null removes the key)")
    elif isinstance(config, int):
        if not -2**63 <= config < 2**63:
            raise ArgumentError(f"`{where}` = {config} does not fit a TOML integer (64 bits)",
                                fix="a smaller number (check `overrides`)")
    elif isinstance(config, float):
        if config != config or config in (float("inf"), float("-inf")):
            raise ArgumentError(f"`{where}` = {config} is not a finite number", fix="a finite "
                                "value (check `overrides`)")
    else:
        raise ArgumentError(f"`{where}` is a {type(config).__name__}; a TOML value must be a "
                            "string, number, boolean, list or table", fix="check `overrides`")


def _short(value: str, limit: int = 60) -> str:
    shown = repr(value)
    return shown if len(shown) <= limit else shown[:limit] + "...'"
