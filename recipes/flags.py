"""argparse types that validate a flag where it is parsed, before any GPU starts.

TRL's configs accept many bad values silently; a bad value here ends the script with argparse's
one-line usage error naming the flag, the value and the range.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

_RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def int_in(low: int, high: int | None = None):
    """An integer in [low, high] (``high`` None: no upper bound)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        if value < low or (high is not None and value > high):
            span = f">= {low}" if high is None else f"in [{low}, {high}]"
            raise argparse.ArgumentTypeError(f"must be an integer {span}, got {value}")
        return value
    parse.__name__ = "integer"
    return parse


def float_in(low: float, high: float, *, low_open: bool = False, high_open: bool = False):
    """A finite number in the interval given (open ends marked with ``low_open``/``high_open``)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
        bad_low = value <= low if low_open else value < low
        bad_high = value >= high if high_open else value > high
        if not math.isfinite(value) or bad_low or bad_high:
            span = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
            raise argparse.ArgumentTypeError(f"must be a number in {span}, got {text}")
        return value
    parse.__name__ = "number"
    return parse


def run_name(text: str) -> str:
    """A run name that is safe as a folder on a Modal volume: letters, digits, ``_ . -``."""
    if not _RUN_NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"must be 1-64 characters of letters, digits, '_', '.', '-' (starting with a letter or "
            f"digit), got {text!r}")
    return text


def existing_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text!r}")
    return path
