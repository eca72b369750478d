"""What a launch runs: a recipe (``recipes/<name>/``) or a prime-rl TOML config, and its sha256.

The sha256 is the run's identity: a config's bytes, or every file of a recipe's folder (caches
left out), and of its data folder when given one (read through the path door): the same thing
under the same name is the same run. A recipe takes a data folder when its ``modal_call`` hook
has a ``data`` parameter (read from the source, nothing imported).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import hashlib
import os
import re
import tempfile
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..bundled import folder
from ..defaults import PRIME_RL_RECIPE
from ..errors import ArgumentError, ConfigError, did_you_mean
from ..voice import arg, name
from ..safepath import Root, UserPath, as_user_path, user_path
from ..io import write_atomic
from ..hacking.reward_origin import own_code

RECIPES_DIR_ENV = "WHILEAI_RECIPES_DIR"


def _target_arg() -> str:
    """The target argument as the reader names it (``TARGET`` at the shell)."""
    return arg("config_or_recipe", op="launch_run")
RECIPE_ENTRY = "run.py"
_SKIP_PARTS = ("__pycache__",)
_RECIPE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class Target:
    kind: str            # "recipe" | "config"
    recipe: str          # the recipe that runs it (a config runs on PRIME_RL_RECIPE)
    path: Path           # the recipe folder, or the config file
    sha256: str
    recipe_dir: Path | None = None  # the folder of the recipe that runs it, when there is one
    data: bytes | None = None       # a config's bytes, read once through the path door: what
                                    # was hashed is what is parsed and what is launched
    data_dir: Path | None = None    # the data folder a recipe trains on, when one was given
    # the data folder's files (name, bytes) as read and hashed through the door; a launch writes
    # these into the run's own folder and the recipe reads that copy (stage_data)
    data_files: tuple[tuple[str, bytes], ...] | None = None
    data_label: Path | None = None  # the user's data folder, for messages (data_dir may be the copy)

    @property
    def label(self) -> str:
        if self.kind == "config":
            return str(self.path)
        shown = self.data_label or self.data_dir
        return self.recipe if shown is None else f"{self.recipe} (data {shown})"

    @property
    def default_name(self) -> str:
        return self.recipe if self.kind == "recipe" else self.path.stem


def recipes_root(value: str | os.PathLike | None = None) -> Path:
    """The recipes folder: ``value``, else ``$WHILEAI_RECIPES_DIR``, else this checkout's
    ``recipes/`` (or, installed from a wheel, the copy it carries: ``whileai_core.bundled``)."""
    chosen = value if value not in (None, "") else os.environ.get(RECIPES_DIR_ENV)
    path = Path(chosen).expanduser() if chosen else folder("recipes")
    if not path.is_dir():
        raise ArgumentError(f"recipes folder {str(path)!r} not found", fix="pass --recipes-dir (or "
                            f"set {RECIPES_DIR_ENV}) to the folder holding <name>/{RECIPE_ENTRY}")
    return path.resolve()


def available_recipes(root: Path) -> list[str]:
    return sorted(p.parent.name for p in root.glob(f"*/{RECIPE_ENTRY}"))


def _looks_like_path(value: str) -> bool:
    return os.sep in value or "/" in value or value.endswith(".toml") or Path(value).is_file()


def resolve_target(config_or_recipe: str | os.PathLike | UserPath, *,
                   recipes_dir: str | os.PathLike | None = None,
                   root: Root | None = None,
                   data: str | os.PathLike | UserPath | None = None) -> Target:
    """A recipe name (``grpo``) or a prime-rl TOML path, checked and hashed.

    A config is read once through the path door: under ``root`` when given (then a value with a
    '/' or ending in '.toml' is a path there, anything else a recipe name), else as the user's
    own path. ``data``: a recipe's data folder, read the same way and hashed into the identity.
    """
    target = _resolve(config_or_recipe, recipes_dir, root)
    if data is None:
        return target
    return _with_data(target, as_user_path(data, root, argument="data"),
                      Path(root.path if root is not None else ".").resolve())


def _resolve(config_or_recipe: str | os.PathLike | UserPath,
             recipes_dir: str | os.PathLike | None, root: Root | None) -> Target:
    if isinstance(config_or_recipe, UserPath):
        return _config_target(config_or_recipe, recipes_dir)
    if not isinstance(config_or_recipe, (str, os.PathLike)) or not str(config_or_recipe).strip():
        raise ArgumentError(f"`{_target_arg()}` must be a recipe name or a TOML path, got "
                            f"{config_or_recipe!r}", fix="e.g. 'grpo' or 'configs/rl.toml'")
    value = os.fspath(config_or_recipe).strip()
    if root is not None:
        if "/" in value or value.endswith(".toml"):
            return _config_target(root.locate(value, argument="config_or_recipe"), recipes_dir)
    elif _looks_like_path(value):
        return _config_target(user_path(value, argument="config_or_recipe"), recipes_dir)
    root = recipes_root(recipes_dir)
    if not _RECIPE_NAME.fullmatch(value):
        raise ArgumentError(f"`{_target_arg()}` = {value!r} is not a recipe name (letters, digits, "
                            "'_', '.', '-')", fix="use one of: "
                            f"{', '.join(available_recipes(root)) or 'none yet'}; or a TOML path")
    folder = root / value
    if not (folder / RECIPE_ENTRY).is_file():
        known = ", ".join(available_recipes(root)) or "none yet"
        close = did_you_mean(value, available_recipes(root))
        raise ArgumentError(f"`{_target_arg()}` = {value!r} is neither a recipe in {root} nor a "
                            + (f"file ({close})" if close else "file"),
                            fix=f"use one of: {known}; or a prime-rl TOML path")
    return Target(kind="recipe", recipe=value, path=folder, sha256=_folder_sha256(folder),
                  recipe_dir=folder)


def _config_target(path: UserPath, recipes_dir: str | os.PathLike | None) -> Target:
    if path.kind() is None:
        raise ArgumentError(f"`{_target_arg()}` = {str(path)!r}: no such file", fix="pass the TOML "
                            f"that {name('prime_rl_config')} wrote, or a recipe name")
    if path.suffix != ".toml":
        raise ArgumentError(f"`{_target_arg()}` = {str(path)!r} is not a .toml file; only prime-rl "
                            "TOML configs are launched from a file", fix="write one with "
                            "prime_rl_config, or pass a recipe name")
    data = path.read_bytes("config", error=ArgumentError)
    try:
        tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})", fix="regenerate it with "
                          "prime_rl_config") from None
    try:
        recipe_dir: Path | None = recipes_root(recipes_dir) / PRIME_RL_RECIPE
    except ArgumentError:
        recipe_dir = None  # planning still works; a Modal launch says the recipe is missing
    return Target(kind="config", recipe=PRIME_RL_RECIPE, path=path.absolute,
                  sha256=hashlib.sha256(data).hexdigest(), recipe_dir=recipe_dir, data=data)


def _folder_sha256(folder: Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = file.relative_to(folder)
        if any(part in _SKIP_PARTS or part.startswith(".") for part in rel.parts):
            continue
        digest.update(rel.as_posix().encode() + b"\x00")
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()


DATA_HOOK_PARAMETER = "data"


def takes_data(recipe_dir: Path) -> bool:
    """Whether the recipe's ``run.py`` defines ``modal_call`` with a ``data`` parameter (read
    with ``ast``: importing a recipe may pull in its trainer's packages)."""
    try:
        tree = ast.parse((recipe_dir / RECIPE_ENTRY).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "modal_call":
            names = [a.arg for a in (*node.args.args, *node.args.kwonlyargs)]
            return DATA_HOOK_PARAMETER in names
    return False


def _with_data(target: Target, folder: UserPath, base: Path) -> Target:
    """The target with its data folder: each regular file in it (not hidden) read through the
    path door and hashed, name and bytes, into the identity; a link or special file refused.
    Its Python files (``grader.py``: the run imports and calls it) must be the project's own
    code, by the origin check rewards use (``reward_origin.own_code``, ``base`` the workspace
    root): a folder an installed package ships is refused with the check's reason."""
    if target.kind != "recipe" or target.recipe_dir is None or not takes_data(target.recipe_dir):
        raise ArgumentError(f"`data` was given, but {target.label} takes no data folder (only a "
                            "recipe whose run.py modal_call has a `data` parameter does, e.g. "
                            "'sft')", fix="omit `data`, or launch 'sft'")
    if folder.kind() != "dir":
        raise ArgumentError(f"`data` = {folder} is not a folder", fix="the folder holding the "
                            "recipe's data files (sft: train.jsonl, holdout.jsonl, grader.py)")
    digest = hashlib.sha256(target.sha256.encode() + b"\x00data\x00")
    files = []
    for name, kind in folder.list_dir():  # sorted by name, no link followed
        if name.startswith(".") or kind == "dir":
            continue
        if kind != "file":
            raise ArgumentError(f"`data` folder {folder} holds {name}, a {kind}; a run reads only "
                                "regular files it can hash", fix="put the file itself there")
        if not _is_text(name):  # bytes that are not UTF-8 read as lone surrogates: no answer,
            # hash or recipe could name the file (it was "a bug in whileai")
            shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            raise ArgumentError(f"`data` folder {folder} holds a file whose name is not UTF-8 "
                                f"text (`{shown}`); a run's files are named in its identity, "
                                "its answers and the recipe's own reading", fix="rename it (or "
                                "move it out of the folder)")
        if name.endswith(".py"):
            from ..voice import name as op_name  # `name` is the file's name here

            own_code(folder.child(name), base, argument="data", rule=(
                "A run's grader runs a file your project wrote, never one an installed package "
                "ships", "put the data folder (train.jsonl, holdout.jsonl, grader.py) in your "
                f"project, outside any environment or installed package ({op_name('export_sft')} "
                "writes one), and pass that folder"))
        data = folder.child(name).read_bytes("rows")
        digest.update(name.encode() + b"\x00")
        digest.update(hashlib.sha256(data).digest())
        files.append((name, data))
    return Target(kind=target.kind, recipe=target.recipe, path=target.path,
                  sha256=digest.hexdigest(), recipe_dir=target.recipe_dir,
                  data_dir=folder.absolute, data_files=tuple(files), data_label=folder.absolute)


def _is_text(name: str) -> bool:
    """Whether a file name read from the disk is text (not bytes decoded as surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


STAGED_DATA = "data"


def stage_data(target: Target, run_dir: Path) -> Target:
    """The target with its data folder replaced by a copy in the run's folder, written from the
    bytes that were hashed: what the run trains on is what its id names."""
    if target.data_files is None:
        return target
    staged = run_dir / STAGED_DATA
    for name, data in target.data_files:
        write_atomic(staged / name, data, overwrite=True)
    return dataclasses.replace(target, data_dir=staged)


@contextlib.contextmanager
def verified_copy(target: Target) -> Iterator[Target]:
    """The target with its data folder replaced by a private temporary copy of the hashed bytes,
    for the recipe's hooks a plan calls (they read the folder by name, and the user's folder
    could be swapped for a link meanwhile)."""
    if target.data_files is None:
        yield target
        return
    with tempfile.TemporaryDirectory(prefix="whileai-plan-data-") as tmp:
        copy = Path(tmp) / STAGED_DATA
        copy.mkdir(mode=0o700)
        for name, data in target.data_files:
            fd = os.open(copy / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        yield dataclasses.replace(target, data_dir=copy)
