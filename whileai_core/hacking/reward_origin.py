"""Whose code a reward file is: a reward is a file the project wrote, never one an installer
put there or one that builds the project.

A red team ran installed programs inside the workspace as command rewards, each with the
caller's arguments: ``lib/torch/distributed/run.py --no-python sh -c ...`` (a ``pip install
--target lib`` folder) ran a shell; ``__pypackages__/.../pip/__main__.py`` wrote a pip config
and installed files outside the root; ``setup.py egg_info`` wrote outside; ``.venv/bin/jp.py``
read an outside credential. Free arguments are gone (:func:`.reward.command_script`); this
module refuses the files themselves. A file is someone else's when, between its folder and the
workspace root (both included):

- a folder is named ``site-packages``, ``dist-packages`` or ``__pypackages__`` (any case);
- a folder holds ``pyvenv.cfg`` (a virtual environment: its ``bin/`` scripts, its packages) or
  is a venv's script folder (it holds ``activate``);
- a folder below the root holds a ``*.dist-info`` or an installed ``*.egg-info`` (with
  ``installed-files.txt``): an install target (``pip install --target``). In the root itself
  such a folder claims only the files its ``RECORD`` lists (a project's own files sit beside
  it);
- the file is a ``setup.py``, or lies in a folder ``pyproject.toml`` names as its in-tree build
  backend (``[build-system] backend-path``).

Only names and folder listings are read here (the bytes that run are read by the door); a
listing that cannot be read refuses nothing.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path, PurePosixPath

from ..errors import ArgumentError
from ..safepath import UserPath

INSTALL_FOLDERS = frozenset({"site-packages", "dist-packages", "__pypackages__"})
_RECORD_MAX_BYTES = 64 << 20


def _entries(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _installed_here(folder: Path, names: list[str]) -> str | None:
    for name in names:
        if name.endswith(".dist-info"):
            return name
        if name.endswith(".egg-info") and os.path.isfile(folder / name / "installed-files.txt"):
            return name
    return None


def _listed(folder: Path, names: list[str], relative: PurePosixPath) -> str | None:
    """The ``*.dist-info`` in ``folder`` whose RECORD lists ``relative``, if any."""
    wanted = relative.as_posix()
    for name in names:
        record = folder / name / "RECORD"
        if not name.endswith(".dist-info") or not os.path.isfile(record):
            continue
        try:
            with open(record, "rb") as fh:  # metadata an installer wrote, never run
                text = fh.read(_RECORD_MAX_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        if any(line.split(",", 1)[0] == wanted for line in text.splitlines()):
            return name
    return None


def _backend_folders(folder: Path) -> list[Path]:
    pyproject = folder / "pyproject.toml"
    if not os.path.isfile(pyproject):
        return []
    try:
        with open(pyproject, "rb") as fh:
            table = tomllib.loads(fh.read(1 << 20).decode("utf-8", "replace"))
    except (OSError, tomllib.TOMLDecodeError):
        return []
    paths = table.get("build-system", {}).get("backend-path", [])
    return [folder / p for p in paths if isinstance(p, str)] if isinstance(paths, list) else []


def whose(file: Path, root: Path) -> str | None:
    """Why ``file`` (a real path inside ``root``) is not the project's own code, or None."""
    if file.name == "setup.py":
        return "it is a setup.py (a build script)"
    if not file.is_relative_to(root):  # the library's own paths: every folder above it counts
        root = Path(file.anchor)
    relative = PurePosixPath(file.relative_to(root).as_posix())
    folders = [root.joinpath(*relative.parts[:i]) for i in range(len(relative.parts) - 1, -1, -1)]
    for part in relative.parts[:-1]:
        if part.lower() in INSTALL_FOLDERS:
            return f"it lies in an installed package ({part}/)"
    for folder in folders:
        names = _entries(folder)
        shown = folder.relative_to(root).as_posix() if folder != root else "the workspace root"
        if "pyvenv.cfg" in names:
            return f"it lies in a virtual environment ({shown} holds pyvenv.cfg)"
        if "activate" in names and folder.name in ("bin", "Scripts"):
            return f"it is a virtual environment's script ({shown} holds activate)"
        if folder != root:
            claimed = _installed_here(folder, names)
            if claimed:
                return f"it lies in an install target ({shown} holds {claimed})"
        else:
            claimed = _listed(folder, names, relative)
            if claimed:
                return f"an installed package claims it ({claimed}/RECORD lists it)"
        for backend in _backend_folders(folder):
            if file.is_relative_to(backend):
                return f"it is the project's build backend ({shown}/pyproject.toml backend-path)"
    return None


def own_code(path: UserPath, root: Path) -> UserPath:
    """``path`` when it is the project's own code (see the module docstring), else an
    :class:`ArgumentError` saying whose it is and the fix."""
    reason = whose(path.absolute, Path(root))
    if reason is not None:
        raise ArgumentError(f"`reward` {str(path)[:200]!r} is not your own code: {reason}. A "
                            "reward runs a file your project wrote, never an installed "
                            "program's or a build script. Fix: write the reward as a .py file of "
                            "your own in the workspace (it may import the package)")
    return path
