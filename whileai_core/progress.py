"""Progress of a long call, and the point where it can be stopped.

A long core call says how far it is with :func:`step`; nobody listens by default. A caller that
wants to know (the MCP server: progress notifications) installs a listener with :func:`reporting`.
The listener may raise to stop the call (the server's raises the request's cancellation), so a
step is also where a cancelled call stops, between two pieces of work, never half-way through a
write. The listener, and the notes a call makes about its input (:func:`note`, collected by
:func:`noting`), live in context variables: they follow the call into its worker thread and never
leak to another request.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

Listener = Callable[[float, "float | None", str], None]
"""``listener(done, total, message)``: ``done`` grows; ``total`` is None when unknown."""

_LISTENER: ContextVar[Listener | None] = ContextVar("whileai_progress", default=None)


def step(done: float, total: float | None, message: str) -> None:
    """Report that ``done`` of ``total`` units are done (``message`` says what is next)."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(float(done), None if total is None else float(total), message)


def active() -> bool:
    """Whether someone listens (lets a hot loop skip building messages nobody reads)."""
    return _LISTENER.get() is not None


@contextlib.contextmanager
def reporting(listener: Listener | None) -> Iterator[None]:
    """Send every :func:`step` made inside the block to ``listener``."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


_NOTES: ContextVar[list[str] | None] = ContextVar("whileai_notes", default=None)


def note(text: str) -> None:
    """Say ``text`` in the answer of the call under way (nothing when no one collects)."""
    notes = _NOTES.get()
    if notes is not None:
        notes.append(text)


@contextlib.contextmanager
def noting() -> Iterator[list[str]]:
    """Collect every :func:`note` made inside the block into the list this yields."""
    notes: list[str] = []
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)
