"""The base of every result the library returns: frozen pydantic data with a human rendering."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, PrivateAttr

from .defaults import MCP_ANSWER_MAX_BYTES, MESSAGE_MAX_CHARS, MESSAGE_WORD_CHARS, TEXT_SHOWN_CHARS
from .voice import choose


class Result(BaseModel):
    """Frozen, JSON-serialisable result. ``str(result)`` is the human text, rendered from the data.

    A result whose lists grow with the input names them in ``cut_lists`` and has a ``shown``
    field: :meth:`bounded` cuts each to ``limit`` items and says there how many of how many it
    shows, then cuts long strings (an echoed task id, a label, a path, a log line) until the
    answer fits ``max_bytes``, each saying "n of N characters". Library callers get the whole
    result; the MCP server sends ``bounded()`` copies, so an answer's size does not grow with the
    input, and the CLI prints :func:`shown` (strings cut, terminal controls made visible).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    cut_lists: ClassVar[tuple[str, ...]] = ()
    answer_max_bytes: ClassVar[int | None] = MCP_ANSWER_MAX_BYTES
    """The byte bound :meth:`bounded` cuts strings to fit (None: a result that is one document
    by design, such as a skill's text, is sent whole)."""

    negative_means: ClassVar[str | None] = None
    """What makes this result's verdict negative, in the words of docs/cli.md's exit-code table
    (None: the result carries no verdict). A result with one overrides :attr:`negative` too."""

    @property
    def negative(self) -> bool:
        """Whether the verdict is negative or not ready: exit code 1 at the shell (docs/cli.md's
        exit-code table). A result without a verdict is never negative."""
        return False

    def bounded(self, limit: int):
        """This result with its lists cut to ``limit`` items (:meth:`_cut_lists`), then, while
        the answer is over ``answer_max_bytes``, every string cut to the next of
        ``TEXT_SHOWN_CHARS`` characters."""
        listed = self._cut_lists(limit)
        max_bytes = type(self).answer_max_bytes
        if max_bytes is None or _answer_bytes(listed) <= max_bytes:
            return listed
        for chars in TEXT_SHOWN_CHARS:
            cut = cut_strings(listed, chars)
            if _answer_bytes(cut) <= max_bytes:
                return cut
        return cut

    def _cut_lists(self, limit: int):
        """The lists of ``cut_lists`` cut to ``limit`` items, saying so in ``shown``."""
        update, notes = {}, []
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, Result):
                inner = value._cut_lists(limit)
                if inner is not value:
                    update[name] = inner
        for name in self.cut_lists:
            items = getattr(self, name)
            if items is not None and len(items) > limit:
                update[name] = (dict(list(items.items())[:limit]) if isinstance(items, dict)
                                else list(items[:limit]))
                notes.append(f"{name}: {limit} of {len(items)} shown")
        if not notes:
            return self.model_copy(update=update) if update else self
        previous = getattr(self, "shown", None)
        update["shown"] = "; ".join(([previous] if previous else []) + notes)
        return self.model_copy(update=update)

    def to_dict(self) -> dict:
        return self.model_dump(mode="json")

    def render(self) -> str:  # pragma: no cover - every subclass overrides
        return self.model_dump_json(indent=2)

    _read_notes: tuple[str, ...] = PrivateAttr(default=())
    """What the reader changed in the input to keep it valid JSON (``progress.noting``), said
    after the text and in the summary of whatever answer read it."""

    def summary(self) -> str:
        """The answer in one sentence: the first line of :meth:`render` that is not a warning
        (the warning is a field of its own; a result whose first line is not the answer says it
        better by overriding this)."""
        lines = [line for line in self.render().strip().splitlines() if line.strip()]
        answer = [line for line in lines if not line.startswith("warning:")]
        return (answer or lines or [""])[0]

    def with_read_notes(self, notes: list[str]) -> Result:
        """This result saying ``notes`` (at most ``_NOTES_SHOWN``, then how many more)."""
        notes = list(dict.fromkeys(notes))
        if len(notes) > _NOTES_SHOWN:
            notes = notes[:_NOTES_SHOWN] + [f"and {len(notes) - _NOTES_SHOWN} more such notes"]
        out = self.model_copy()
        out._read_notes = tuple(notes)
        return out

    def __str__(self) -> str:
        return self.render() + "".join(f"\nnote: {n}" for n in self._read_notes)


_NOTES_SHOWN = 5


def fmt_rate(value: float | None, ci: tuple[float, float] | None, n: int | None = None,
             unit: str = "tasks") -> str:
    """'0.625 [0.500, 0.750] (n=8 tasks)': a rate, its 95% interval and n, in one voice."""
    if value is None:
        return "n/a"
    text = f"{value:.3f}"
    text += f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci is not None else " [no interval]"
    if n is not None:
        text += f" (n={n} {unit})"
    return text


def fmt_value(value: object, *, limit: int = 8) -> str:
    """Any JSON-like value in plain words for human text: never ``None``, a Python repr or a
    dump. ``None`` is "none", booleans "yes"/"no"; a short list of scalars is listed (the first
    ``limit``, then "n of N"); a mapping of scalars is ``key value`` pairs; anything deeper is
    counted and left to the full data (``--json`` at the shell)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (int, str)):
        return str(value)
    scalars = (str, int, float, bool, type(None))
    if isinstance(value, dict):
        if value and len(value) <= limit and all(isinstance(v, scalars) for v in value.values()):
            return ", ".join(f"{k} {fmt_value(v)}" for k, v in value.items())
        return f"{len(value)} fields ({_full_data()})" if value else "none"
    if isinstance(value, (list, tuple)):
        if not value:
            return "none"
        if all(isinstance(v, scalars) for v in value):
            shown = ", ".join(fmt_value(v) for v in value[:limit])
            return shown if len(value) <= limit else f"{shown} ({limit} of {len(value)})"
        return f"{len(value)} entries ({_full_data()})"
    return str(value)


def _full_data() -> str:
    return choose(python="the full data: .to_dict()", cli="the full data: --json",
                  mcp="in the structured result")


# --- strings in answers: cut, and safe for a terminal -----------------------------------------

_ENDS = (". ", "; ", ": ", ", ", " ")  # where a cut may fall, the end of a sentence first


def cut_text(text: str, limit: int) -> str:
    """``text``, or at most its first ``limit`` characters and "...(n of N characters)": cut
    at the end of the last sentence (or clause, or word) that fits in the second half of the
    limit, never in the middle of one when one ends there."""
    if len(text) <= limit:
        return text
    keep = limit
    for end in _ENDS:
        at = text.rfind(end, limit // 2, limit)
        if at > 0:
            keep = at + (1 if end.strip() else 0)
            break
    return f"{text[:keep]}...({keep:,} of {len(text):,} characters)"


def cut_strings(value: Any, limit: int) -> Any:
    """``value`` with every string in it cut to ``limit`` characters (:func:`cut_text`)."""
    return map_strings(value, lambda text: cut_text(text, limit))


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` with ``change`` applied to every string in it (nested results, lists, mapping
    keys and values); a part holding no changed string is returned as it is."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, BaseModel):
        update = {}
        for name in type(value).model_fields:
            item = getattr(value, name)
            new = map_strings(item, change)
            if new is not item:
                update[name] = new
        return value.model_copy(update=update) if update else value
    if isinstance(value, dict):
        items = [(map_strings(k, change), map_strings(v, change)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items())):
            return value
        return dict(items)
    if isinstance(value, (list, tuple)):
        items = [map_strings(v, change) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return type(value)(items) if isinstance(value, tuple) else items
    return value


def _answer_bytes(result: Result) -> int:
    """What an MCP answer of ``result`` weighs: its JSON with its summary sentence (the
    structured content stands alone) and its text (the server sends both)."""
    text = result.render() if hasattr(result, "render") else str(result)
    data = {**result.model_dump(mode="json"), "summary": result.summary()}
    return len(json.dumps(data).encode()) + len(text.encode())  # json.dumps' spaced form: the
    # larger of the two a client may count


# C0 controls but tab and newline, DEL, and the C1 controls (0x9b opens a CSI sequence alone)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain(text: str) -> str:
    """``text`` safe to print on a terminal: every control character that could start an
    escape sequence (ESC, CSI, OSC's BEL, a carriage return...) shown as ``\\xNN`` instead,
    so an id or a log line cannot move the cursor, retitle the window or hide a line."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def shown(result: Any, *, limit: int = TEXT_SHOWN_CHARS[0]) -> str:
    """The human text of ``result`` for a terminal: strings cut to ``limit`` characters, then
    rendered, controls made visible (:func:`plain`)."""
    if isinstance(result, BaseModel):
        result = cut_strings(result, limit)
    return plain(str(result))


_LONG_WORD = re.compile(r"\S{%d,}" % (MESSAGE_WORD_CHARS + 1))


def short_message(text: str) -> str:
    """An error message fit to show: each run of more than ``MESSAGE_WORD_CHARS`` characters
    without a space (an echoed id or path) cut, the whole at most ``MESSAGE_MAX_CHARS`` (its
    head and its fix kept), controls made visible."""
    text = _LONG_WORD.sub(lambda m: cut_text(m.group(), MESSAGE_WORD_CHARS), text)
    if len(text) > MESSAGE_MAX_CHARS:
        half = MESSAGE_MAX_CHARS // 2
        text = (f"{text[:half]} ...({len(text) - 2 * half:,} characters cut)... "
                f"{text[-half:]}")
    return plain(text)
