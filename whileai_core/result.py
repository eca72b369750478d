"""The base of every result the library returns: frozen pydantic data with a human rendering."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Result(BaseModel):
    """Frozen, JSON-serialisable result. ``str(result)`` is the human text, rendered from the data."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_dict(self) -> dict:
        return self.model_dump(mode="json")

    def render(self) -> str:  # pragma: no cover - every subclass overrides
        return self.model_dump_json(indent=2)

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
