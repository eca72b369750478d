"""Whose code a reward file is: a reward is a file the project wrote, never one an installer
put there or one that builds the project (an installed program, a standard library or a build
script run as a reward can run a shell, install files or read credentials).

A file is someone else's when, between its folder and the workspace root (both included):

- a folder is named ``site-packages``, ``dist-packages``, ``__pypackages__``, ``node_modules``
  or ``.eggs``, or ends in ``.egg`` (any case);
- a folder is a Python environment or installation: it holds ``pyvenv.cfg`` (a virtual
  environment) or ``conda-meta`` (conda, mamba, pixi), or is a venv's script folder (it holds
  ``activate``); below the root, a folder holding ``bin/python*`` or ``python.exe`` (a Python
  prefix), or a standard library (a ``lib/pythonX.Y`` folder, or one holding ``os.py``,
  ``site.py`` and ``_collections_abc.py``);
- a folder below the root holds a ``*.dist-info``, an ``EGG-INFO``, an installed ``*.egg-info``
  (with ``installed-files.txt``) or a ``PKG-INFO`` (an unpacked sdist or egg). In the root
  itself such a folder claims only the files it lists (a ``RECORD``, read as CSV, or an
  ``installed-files.txt``, relative to its folder): a project's own files sit beside it;
- the file is a ``setup.py``, or lies in a folder ``pyproject.toml`` names as its in-tree build
  backend (``[build-system] backend-path``).

Only names, folder listings and these metadata files are read here (the bytes that run are read
by the door); a listing that cannot be read refuses nothing.
"""

from __future__ import annotations

import csv
import os
import re
import tomllib
from pathlib import Path, PurePosixPath

from ..errors import ArgumentError
from ..safepath import UserPath

INSTALL_FOLDERS = frozenset({"site-packages", "dist-packages", "__pypackages__", "node_modules",
                             ".eggs"})
STDLIB_MARKERS = frozenset({"os.py", "site.py", "_collections_abc.py"})
_STDLIB_FOLDER = re.compile(r"python\d+(\.\d+)?t?", re.IGNORECASE)  # lib/python3.11, python3.13t
_PYTHON_PROGRAM = re.compile(r"python(\d+(\.\d+)?t?)?", re.IGNORECASE)  # bin/python3.11
_RECORD_MAX_BYTES = 64 << 20


def _entries(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _installed_here(folder: Path, names: list[str]) -> str | None:
    for name in names:
        if name.endswith(".dist-info") or name in ("EGG-INFO", "PKG-INFO"):
            return name
        if name.endswith(".egg-info") and os.path.isfile(folder / name / "installed-files.txt"):
            return name
    return None


def _python_here(folder: Path, names: list[str], shown: str) -> str | None:
    """Why ``folder`` (below the root, ``shown`` as the user sees it) is part of a Python
    installation, if it is."""
    if _STDLIB_FOLDER.fullmatch(folder.name) and folder.parent.name.lower() in ("lib", "lib64"):
        return f"it lies in a Python installation's standard library ({shown})"
    if STDLIB_MARKERS <= set(names):
        return (f"it lies in a Python installation's standard library ({shown} holds os.py, "
                "site.py and _collections_abc.py)")
    found = [n for n in names if n.lower() == "python.exe"]  # a Windows prefix: no bin/
    if not found and "bin" in names:
        found = [f"bin/{n}" for n in _entries(folder / "bin") if _PYTHON_PROGRAM.fullmatch(n)]
    if found:
        return f"it lies in a Python installation ({shown} holds {found[0]})"
    return None


def _read_metadata(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:  # metadata an installer wrote, never run
            return fh.read(_RECORD_MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


def _listed(folder: Path, names: list[str], relative: PurePosixPath) -> str | None:
    """The install metadata in ``folder`` (the root) that lists ``relative``, if any: a
    ``*.dist-info/RECORD`` (CSV: a path holding a comma is quoted) or an
    ``*.egg-info/installed-files.txt`` (paths relative to the egg-info folder)."""
    wanted = os.path.normpath(relative.as_posix())
    for name in names:
        if name.endswith(".dist-info"):
            text = _read_metadata(folder / name / "RECORD")
            rows = csv.reader((text or "").splitlines())
            listed = (os.path.normpath(row[0]) for row in rows if row)
            where = f"{name}/RECORD"
        elif name.endswith(".egg-info"):
            text = _read_metadata(folder / name / "installed-files.txt")
            listed = (os.path.normpath(os.path.join(name, line.strip()))
                      for line in (text or "").splitlines() if line.strip())
            where = f"{name}/installed-files.txt"
        else:
            continue
        if text is not None and wanted in listed:
            return where
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
        if part.lower() in INSTALL_FOLDERS or part.lower().endswith(".egg"):
            return f"it lies in an installed package ({part}/)"
    for folder in folders:
        names = _entries(folder)
        shown = folder.relative_to(root).as_posix() if folder != root else "the workspace root"
        if "pyvenv.cfg" in names:
            return f"it lies in a virtual environment ({shown} holds pyvenv.cfg)"
        if "conda-meta" in names:
            return f"it lies in a conda environment ({shown} holds conda-meta)"
        if "activate" in names and folder.name in ("bin", "Scripts"):
            return f"it is a virtual environment's script ({shown} holds activate)"
        if folder != root:
            python = _python_here(folder, names, shown)
            if python:
                return python
            claimed = _installed_here(folder, names)
            if claimed:
                return f"it lies in an install target ({shown} holds {claimed})"
        else:
            claimed = _listed(folder, names, relative)
            if claimed:
                return f"an installed package claims it ({claimed} lists it)"
        for backend in _backend_folders(folder):
            if file.is_relative_to(backend):
                return f"it is the project's build backend ({shown}/pyproject.toml backend-path)"
    return None


REWARD_RULE = ("A reward runs a file your project wrote, never an installed program's or a "
               "build script", "write the reward as a .py file of your own in the workspace (it "
                               "may import the package)")

def own_code(path: UserPath, root: Path, *, argument: str = "reward",
             rule: tuple[str, str] = REWARD_RULE) -> UserPath:
    """``path`` when it is the project's own code (see the module docstring), else an
    :class:`ArgumentError` saying whose it is and the fix. ``argument`` names what the user
    gave; ``rule`` is (what may run, the fix), :data:`REWARD_RULE` for a reward (a run's data
    folder gives its own: ``runs.targets``)."""
    reason = whose(path.absolute, Path(root))
    if reason is not None:
        raise ArgumentError(f"`{argument}` {str(path)[:200]!r} is not your own code: {reason}. "
                            f"{rule[0]}", fix=f"{rule[1]}")
    return path
