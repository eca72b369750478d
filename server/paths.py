"""The workspace root: every path a tool reads or writes resolves inside it.

A path given by the caller is taken relative to the root. Refused, with a message that names the
argument and the fix: a `..` component, an absolute path outside the root, and a path that leaves
the root through a symlink (resolved with the symlink followed, then checked). Containment is
checked component-wise on the resolved path, so a symlink inside the root that points outside it
is caught like a plain `../`, and `/root-evil` is not inside `/root`. (The reference filesystem
MCP server had both bugs: CVE-2025-53110, a string-prefix check, and CVE-2025-53109, a symlink
out of the allowed folder.)
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath

from whileai_core.errors import ArgumentError


class Workspace:
    """The folder the server may read from and write to (``--root``)."""

    def __init__(self, root: str | os.PathLike) -> None:
        path = Path(root).expanduser()
        if not path.is_dir():
            raise ArgumentError(f"--root {str(root)!r} is not a folder. Fix: pass an existing "
                                "folder (default: the current directory)")
        self.root = path.resolve()

    def __repr__(self) -> str:
        return f"<Workspace {self.root}>"

    def resolve(self, value: str, *, argument: str) -> Path:
        """``value`` as an absolute path inside the root, or :class:`ArgumentError`.

        ``argument`` is the tool argument's name, used in the message. The file need not exist
        (an output path); existing parts are resolved with their symlinks followed.
        """
        if not isinstance(value, str) or not value.strip():
            raise ArgumentError(f"`{argument}` is empty. Fix: give a path relative to the "
                                f"workspace root {self.root}")
        if "\x00" in value:
            raise ArgumentError(f"`{argument}` contains a NUL byte. Fix: give a plain file path")
        given = PurePath(value)
        if ".." in given.parts:
            raise ArgumentError(f"`{argument}` = {value!r} contains '..'; paths may not climb out "
                                f"of the workspace root {self.root}. Fix: give the path relative "
                                "to the root without '..'")
        candidate = given if given.is_absolute() else self.root / given
        try:
            resolved = Path(candidate).resolve(strict=False)
        except (OSError, RuntimeError) as exc:  # a symlink loop, a name too long
            raise ArgumentError(f"`{argument}` = {value!r} cannot be resolved ({exc}). Fix: give "
                                "a plain path inside the workspace root") from None
        if not resolved.is_relative_to(self.root):
            how = "is a symlink that leads" if _through_link(Path(candidate)) else "is"
            raise ArgumentError(f"`{argument}` = {value!r} {how} outside the workspace root "
                                f"{self.root}. Fix: use a file inside the root, or restart "
                                "whileai-mcp with --root set to a folder that contains it")
        return resolved

    def relative(self, path: Path) -> str:
        """``path`` as the caller would write it: relative to the root."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


def _through_link(path: Path) -> bool:
    """Whether some existing component of ``path`` is a symlink (for the message only)."""
    for part in (path, *path.parents):
        try:
            if part.is_symlink():
                return True
        except OSError:
            return False
    return False
