"""The workspace root: every path a tool reads or writes is opened under it, through the door.

A path given by the caller is taken relative to the root (an absolute path inside the root is
accepted too). ``resolve`` checks the text (no ``..``, nothing outside the root, no NUL) and
returns a :class:`~whileai_core.safepath.UserPath`; the core opens it through
``whileai_core.safepath``, one component at a time relative to the root's open directory handle,
never following a symlink, regular files only, within the size and time limits. The two bugs of
the reference filesystem MCP server are closed by construction: CVE-2025-53110 (a string-prefix
check let ``/root-evil`` pass for ``/root``: containment here is by path components) and
CVE-2025-53109 (a symlink out of the allowed folder: no symlink is ever followed, so a link
swapped in between a check and an open cannot lead out either).
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
        """``value`` as a path under the root, or :class:`ArgumentError` naming ``argument``.

        Only the text is checked here; the file is opened (and refused if it is a link, a special
        file, too large...) when the core reads or writes it. ``writes``: the kind of output the
        argument writes (``whileai_core.safepath.OUTPUTS``); a write of no declared kind is
        refused under the root.
        """
        return self.door.locate(value, argument=argument, writes=writes)

    def relative(self, path: str | os.PathLike | UserPath) -> str:
        """``path`` as the caller would write it: relative to the root."""
        if isinstance(path, UserPath):
            return "/".join(path.parts) or "."
        return self.door.relative(Path(os.fspath(path)))
