"""The workspace root: every path a tool reads or writes is opened under it, through the door.

A path is taken relative to the root (an absolute one inside it too) and opened by
``whileai_core.safepath`` one component at a time from the root's directory handle, never
following a symlink, regular files only, within size and time limits. This closes the reference
filesystem server's CVE-2025-53110 (a string-prefix containment check) and CVE-2025-53109 (a
symlink out of the allowed folder) by construction.
"""

from __future__ import annotations

import os
from pathlib import Path

from whileai_core.safepath import Limits, Root, UserPath


class Workspace:
    """The folder the server may read from and write to (``--root``)."""

    def __init__(self, root: str | os.PathLike, *, limits: Limits | None = None) -> None:
        self.door = Root(root, confined=True, limits=limits)
        self.root = self.door.path

    def __repr__(self) -> str:
        return f"<Workspace {self.root}>"

    @property
    def limits(self) -> Limits:
        return self.door.limits

    def resolve(self, value: str, *, argument: str, writes: str | None = None) -> UserPath:
        """``value`` as a path under the root, or :class:`ArgumentError` naming ``argument``
        (only the text is checked; the file when the core opens it). ``writes``: the kind of
        output (``safepath.OUTPUTS``); a write of no declared kind is refused."""
        return self.door.locate(value, argument=argument, writes=writes)

    def relative(self, path: str | os.PathLike | UserPath) -> str:
        """``path`` as the caller would write it: relative to the root."""
        if isinstance(path, UserPath):
            return "/".join(path.parts) or "."
        return self.door.relative(Path(os.fspath(path)))
