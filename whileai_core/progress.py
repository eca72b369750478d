"""Progress of a long call, and the point where it can be stopped.

A long core call (loading a large rows file, the task bootstrap, a launch, a collect) says how
far it is with :func:`step`. Nobody listens by default, so the call costs nothing extra. A caller
that wants to know (the MCP server, which turns each step into a progress notification) installs
a listener around the call with :func:`reporting`. The listener may raise to stop the call: the
server's listener raises the cancellation of the request that started it, so a step is also the
place where a cancelled call stops, between two pieces of work, never half-way through a write.

The listener lives in a context variable, so it follows the call into the worker thread that
runs it and never leaks to another request. So do the notes a call makes about its input
(:func:`note`: what the reader changed to keep a record valid JSON), which the surfaces collect
around each call (:func:`noting`) and say in its answer.
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
