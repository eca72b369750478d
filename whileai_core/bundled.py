"""Where the skills and the recipes are: the checkout's folders, or the copies in the wheel.

A source checkout (an editable install, or tests run from the repository) reads ``skills/`` and
``recipes/`` beside the packages, so an edit shows at once. A wheel (``pip install .``, ``pip
install whileai_skills-*.whl``, ``pipx``, ``uvx``) carries copies in ``whileai_core/_bundled/``,
made by ``setup.py`` when the wheel is built. The checkout is recognised by its
``pyproject.toml``, so a stray ``skills`` folder in site-packages is never taken for ours.

The wheel's copies are the package's own files, read as package resources
(``importlib.resources``), not through the path door: the door refuses a file with more than
one hard link (under a confined root it cannot be told from one outside), and uv, ``uvx`` and
``pipx`` install package files as hard links on purpose. A skills folder a user names, or the
checkout's ``skills/``, is still read through the door.
"""

from __future__ import annotations

import os
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import ArgumentError, WhileaiError
from .safepath import Root

PACKAGE = Path(__file__).resolve().parent
CHECKOUT = PACKAGE.parent
BUNDLE = PACKAGE / "_bundled"
SKILLS_ENV = "WHILEAI_SKILLS_DIR"
# files of a skill folder that are not the skill's: check.py's stand-ins for the python blocks
# (fixtures.py) and caches. The one rule of every reader: the server's resources, list_skills,
# skills/list and init's copies list the same files
SKIP_NAMES = frozenset({"fixtures.py", "__pycache__"})


def in_checkout(name: str) -> bool:
    """True when ``name`` (``skills`` or ``recipes``) is read from a source checkout."""
    return (CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / name).is_dir()


def folder(name: str) -> Path:
    """``skills`` or ``recipes``: the checkout's when running from one, else the wheel's copy
    (returned even when missing: callers say so)."""
    return CHECKOUT / name if in_checkout(name) else BUNDLE / name


def in_a_cache(path: str | os.PathLike) -> bool:
    """True when ``path`` lies in a cache folder (one marked by a ``CACHEDIR.TAG`` file, as uv
    marks its cache and each environment ``uvx`` makes there): a tool may delete it at any time,
    so nothing that must last (a host's config, a link) should point into it."""
    here = Path(path).absolute()
    return any((p / "CACHEDIR.TAG").is_file() for p in (here, *here.parents))


def running_from_a_cache() -> bool:
    """True when this Python's environment is one ``uvx`` made in uv's cache."""
    return in_a_cache(sys.prefix)


# --- the package's own files -----------------------------------------------------------------

class ShippedPath:
    """A file or folder of the installed package, read with ``importlib.resources``.

    It offers the reading side of a :class:`whileai_core.safepath.UserPath` (``child``,
    ``list_dir``, ``kind``, ``read_bytes``, ``absolute``), so code that lists and reads skills
    takes either. The files are the distribution's own, so no door rule applies: hard links from
    an installer are fine, and a wheel holds no symlinks or special files.
    """

    __slots__ = ("node", "parts", "top")

    def __init__(self, top: Path, node: Any, parts: tuple[str, ...] = ()) -> None:
        self.top, self.node, self.parts = top, node, parts

    def __str__(self) -> str:
        return str(self.absolute)

    @property
    def name(self) -> str:
        return self.parts[-1] if self.parts else self.top.name

    @property
    def absolute(self) -> Path:
        """Where it is (for messages)."""
        return self.top.joinpath(*self.parts)

    def child(self, *names: str) -> ShippedPath:
        node = self.node
        for name in names:
            if not name or name in (".", "..") or "/" in name:
                raise ArgumentError(f"{self}: {name!r} is not a plain file name")
            node = node.joinpath(name)
        return ShippedPath(self.top, node, self.parts + tuple(names))

    def kind(self) -> str | None:
        if self.node.is_dir():
            return "dir"
        return "file" if self.node.is_file() else None

    def list_dir(self, *, error: type[WhileaiError] = ArgumentError) -> list[tuple[str, str]]:
        if not self.node.is_dir():
            raise error(f"{self}: not a folder of the installed package. Fix: reinstall "
                        "whileai-skills")
        return sorted((c.name, "dir" if c.is_dir() else "file") for c in self.node.iterdir())

    def read_bytes(self, kind: str = "config", *, error: type[WhileaiError] = ArgumentError,
                   **_: Any) -> bytes:
        try:
            return self.node.read_bytes()
        except OSError as exc:
            raise error(f"{self}: a file of the installed package cannot be read "
                        f"({exc.strerror or exc}). Fix: reinstall whileai-skills") from None


class ShippedRoot:
    """The installed package's copy of ``skills`` or ``recipes``, as a root to ``locate`` in."""

    def __init__(self, name: str) -> None:
        self.node = resources.files("whileai_core").joinpath("_bundled", name)
        self.path = Path(str(self.node))

    def locate(self, value: str, *, argument: str) -> ShippedPath:
        top = ShippedPath(self.path, self.node)
        parts = [p for p in str(value).split("/") if p not in ("", ".")]
        return top.child(*parts) if parts else top


def shipped(name: str) -> ShippedRoot | None:
    """The wheel's copy of ``name`` read as the package's own files, or None when running from
    a checkout (whose folder is read through the door) or when the package carries none."""
    if in_checkout(name):
        return None
    root = ShippedRoot(name)
    return root if root.node.is_dir() else None


# --- skills: which folder, read how ------------------------------------------------------------

class SkillsSource:
    """The skills folder and how to read it: ``folder`` given (``--skills DIR``), else
    ``$WHILEAI_SKILLS_DIR``, else the checkout's ``skills/``, each a confined root of the path
    door; else the installed package's own copy."""

    def __init__(self, folder_: str | os.PathLike | None = None) -> None:
        chosen = folder_ if folder_ is not None else os.environ.get(SKILLS_ENV) or None
        self.package: ShippedRoot | None = None if chosen is not None else shipped("skills")
        if self.package is not None:
            self.folder = self.package.path
        else:
            self.folder = Path(chosen if chosen is not None else folder("skills")
                               ).expanduser().resolve()

    @property
    def is_package(self) -> bool:
        """True when the skills are the installed package's own copy."""
        return self.package is not None

    def root(self):
        """Something to ``locate`` skills in: the package's copy, or the folder through the
        door (raises ``ArgumentError`` when the folder cannot be opened)."""
        if self.package is not None:
            return self.package
        return Root(self.folder, label="the skills folder")

    def names(self) -> list[str]:
        """The skills: sub-folders holding a regular ``SKILL.md`` (none when the folder is
        missing or unreadable: callers say why)."""
        try:
            top = self.root().locate(".", argument="skills")
            return [name for name, kind in top.list_dir() if kind == "dir"
                    and top.child(name, "SKILL.md").kind() == "file"]
        except ArgumentError:
            return []


def skill_files(skill, *, skip: frozenset[str] = SKIP_NAMES,
                error: type[WhileaiError] = ArgumentError) -> list[tuple[str, bytes]]:
    """Every regular file of a skill folder (a ``UserPath`` or a :class:`ShippedPath`), as
    ``(relative path, raw bytes)``: ``SKILL.md`` first, then by path. Names in ``skip`` and
    names starting with a dot are left out, and so are links and special files (a skill's files
    are what its folder holds)."""
    found = []
    todo = [(skill, ())]
    while todo:
        here, rel = todo.pop()
        for entry, kind in here.list_dir(error=error):
            if entry in skip or entry.startswith("."):
                continue
            if kind == "dir":
                todo.append((here.child(entry), rel + (entry,)))
            elif kind == "file":
                data = here.child(entry).read_bytes("config", error=error)
                found.append(("/".join(rel + (entry,)), bytes(data)))
    found.sort(key=lambda item: (item[0] != "SKILL.md", item[0]))
    return found
