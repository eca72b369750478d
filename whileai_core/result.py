"""The base of every result the library returns: frozen pydantic data with a human rendering."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict


class Result(BaseModel):
    """Frozen, JSON-serialisable result. ``str(result)`` is the human text, rendered from the data.

    A result whose lists grow with the input names them in ``cut_lists`` and has a ``shown``
    field: :meth:`bounded` cuts each to ``limit`` items and says there how many of how many it
    shows. Library callers get the whole result; the MCP server sends ``bounded()`` copies, so
    an answer's size does not grow with the input.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    cut_lists: ClassVar[tuple[str, ...]] = ()

    def bounded(self, limit: int):
        """This result with every list in ``cut_lists`` cut to ``limit`` items ("n of N shown"),
        and every nested result bounded the same way."""
        update, notes = {}, []
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, Result):
                inner = value.bounded(limit)
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

    def summary(self) -> str:
        """The answer in one sentence: the first line of :meth:`render` (a result whose first
        line is not the answer says it better by overriding this)."""
        text = self.render().strip()
        return text.splitlines()[0] if text else ""

    def __str__(self) -> str:
        return self.render()


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
    from .voice import choose

    return choose(python="the full data: .to_dict()", cli="the full data: --json",
                  mcp="in the structured result")
