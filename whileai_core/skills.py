"""The skills folder: which skills it holds, which files of a skill are the skill's, and what
each SKILL.md's frontmatter says. One walker and one frontmatter reader, for every reader: the
MCP server (tools, resources, prompts, the Skills extension) and ``whileai-skills init`` (which
copies skills into a project).

A skill is a sub-folder holding ``SKILL.md`` whose YAML frontmatter (Agent Skills format) gives
``name`` and ``description``. A skill's files are what its folder holds, less what serves
``check.py`` (``fixtures.py``: the stand-ins its python blocks run with), caches and hidden
files. The folder is read when asked, through the path door: a skill folder or file that is a
symlink, a FIFO or another special file is never followed or read, and only names that are
folders of the catalog are ever opened, so a skill name cannot walk out of the folder.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pydantic import Field, PrivateAttr

from .errors import ArgumentError
from .result import Result

SKILLS_ENV = "WHILEAI_SKILLS_DIR"
# parts of a skill folder that are not the skill's: check.py's stand-ins, caches
NOT_SHIPPED = frozenset({"fixtures.py", "__pycache__"})


def shipped(parts: tuple[str, ...] | list[str]) -> bool:
    """Whether a file at these path parts (relative to its skill folder) is the skill's."""
    return not any(p in NOT_SHIPPED or p.startswith(".") for p in parts)


def skill_uri(name: str) -> str:
    return f"skill://{name}/SKILL.md"


def frontmatter(text: str, *, where: str = "SKILL.md") -> dict:
    """The YAML frontmatter of a SKILL.md (every key the author wrote), or {} without one."""
    import yaml  # lazy: PyYAML loads when a skill is read

    lines = text.splitlines()
    marks = [i for i, line in enumerate(lines) if line.strip() == "---"]
    if not lines or lines[0].strip() != "---" or len(marks) < 2:
        return {}
    try:
        data = yaml.safe_load("\n".join(lines[1:marks[1]]))
    except yaml.YAMLError as err:
        raise ArgumentError(f"{where}: its frontmatter is not valid YAML ({err}). Fix: write "
                            "it as the Agent Skills format says: `name:` and `description:` "
                            "between two --- lines") from None
    return data if isinstance(data, dict) else {}


# --- results -------------------------------------------------------------------------------

class SkillFile(Result):
    """One file of a skill: its resource URI, size in bytes and SHA-256 digest (``sha256:<hex>``,
    of the raw bytes, as SEP-2640 entries carry it)."""

    uri: str
    size: int
    digest: str

    def render(self) -> str:
        return f"{self.uri} ({self.size} bytes)"


class SkillInfo(Result):
    """One skill as listed: what it is for, where to read it, and every file it has (SKILL.md and
    its helper files, each a resource)."""

    name: str
    description: str
    uri: str
    files: list[SkillFile]

    def render(self) -> str:
        helpers = [f.uri.rsplit("/", 1)[-1] for f in self.files if f.uri != self.uri]
        extra = f"; helper files: {', '.join(helpers)}" if helpers else ""
        return f"{self.name}: {self.description} ({self.uri}{extra})"


class SkillList(Result):
    """Every skill in the catalog, sorted by name."""

    skills: list[SkillInfo]
    folder: str
    note: str = Field("", description="Why the list is empty, and the fix; empty otherwise.")

    def render(self) -> str:
        if not self.skills:
            return self.note or f"no skills in {self.folder}"
        return "\n".join([self.summary()] + [s.render() for s in self.skills])

    def summary(self) -> str:
        if not self.skills:
            return self.note or f"no skills in {self.folder}"
        return f"{len(self.skills)} skills in {self.folder}: " + ", ".join(
            s.name for s in self.skills)


class SkillText(Result):
    """One skill: its name, description, URI and files. The SKILL.md itself travels once, as the
    answer's text (``render()``), not again inside the structured content."""

    name: str
    description: str
    uri: str
    files: list[SkillFile]
    _text: str = PrivateAttr(default="")

    @property
    def text(self) -> str:
        return self._text

    def render(self) -> str:
        return self._text

    def summary(self) -> str:
        return f"the {self.name} skill ({self.uri}): {self.description}"


# --- the catalog ---------------------------------------------------------------------------

def default_skills_dir() -> Path:
    """``WHILEAI_SKILLS_DIR`` if set, else ``skills/`` beside the packages (an installed wheel
    carries a copy, see ``whileai_core.bundled``)."""
    from .bundled import folder

    env = os.environ.get(SKILLS_ENV)
    return Path(env) if env else folder("skills")


class SkillCatalog:
    """The skills under one folder, read on each call through the path door.

    The folder is opened as a confined root (``whileai_core.safepath``): a skill folder or file
    that is a symlink, a FIFO or another special file is never followed or read (a FIFO would
    block the server's start; a link could serve a file from outside the folder). Skills from
    ``whileai-skills init-project --link`` are links: serve the pack's own folder instead.
    """

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder).expanduser().resolve()

    def _root(self):
        from .safepath import Root

        return Root(self.folder, label="the skills folder")

    def _skill_dir(self, name: str):
        """The skill's folder (a UserPath), or None when ``name`` is not a skill of the folder."""
        try:
            root = self._root()
        except ArgumentError:
            return None
        entries = dict(root.locate(".", argument="skills").list_dir())
        if entries.get(name) != "dir":
            return None
        folder = root.locate(name, argument="skill")
        return folder if folder.child("SKILL.md").kind() == "file" else None

    def names(self) -> list[str]:
        try:
            top = self._root().locate(".", argument="skills")
            return [name for name, kind in top.list_dir() if kind == "dir"
                    and top.child(name, "SKILL.md").kind() == "file"]
        except ArgumentError:
            return []

    def _folder(self, name: str):
        folder = self._skill_dir(name)
        if folder is None:
            known = self.names()
            listing = ", ".join(known) if known else f"none: {self.folder} has no */SKILL.md"
            raise ArgumentError(f"unknown skill {name!r}; known skills: {listing}. Fix: call "
                                "list_skills and pass one of the names it returns")
        return folder

    def path(self, name: str) -> Path:
        """Where the skill's SKILL.md is (for messages; it is read through the door)."""
        return self._folder(name).child("SKILL.md").absolute

    def _skill_md(self, name: str) -> str:
        return self._folder(name).child("SKILL.md").read_bytes(
            "config", error=ArgumentError).decode("utf-8")

    def files(self, name: str) -> list[tuple[str, bytes]]:
        """Every file of the skill (SKILL.md first, then by path), as (relative path, raw
        bytes): regular files the skill ships (:func:`shipped`); links and special files are
        left out."""
        found = []
        todo = [(self._folder(name), ())]
        while todo:
            here, rel = todo.pop()
            for entry, kind in here.list_dir():
                if not shipped(rel + (entry,)):
                    continue
                if kind == "dir":
                    todo.append((here.child(entry), rel + (entry,)))
                elif kind == "file":
                    data = here.child(entry).read_bytes("config", error=ArgumentError)
                    found.append(("/".join(rel + (entry,)), data))
        found.sort(key=lambda item: (item[0] != "SKILL.md", item[0]))
        return found

    def manifest(self, name: str) -> list[SkillFile]:
        return [SkillFile(uri=f"skill://{name}/{rel}", size=len(data),
                          digest="sha256:" + hashlib.sha256(data).hexdigest())
                for rel, data in self.files(name)]

    def file_text(self, name: str, rel: str) -> str | bytes:
        """One file's content: text when it is UTF-8 (decoded as is, no newline translation, so
        its bytes hash to the listed digest), else the raw bytes."""
        for path, data in self.files(name):
            if path == rel:
                try:
                    return data.decode("utf-8")
                except UnicodeDecodeError:
                    return data
        raise ArgumentError(f"skill {name!r} has no file {rel!r}. Fix: list_skills shows its "
                            "files")

    def frontmatter(self, name: str) -> dict:
        """The SKILL.md's YAML frontmatter (every key the author wrote)."""
        return frontmatter(self._skill_md(name), where=f"skills/{name}/SKILL.md")

    def read(self, name: str) -> SkillText:
        text = self._skill_md(name)
        meta = frontmatter(text, where=f"skills/{name}/SKILL.md")
        description = meta.get("description", "")
        skill = SkillText(name=name, description=" ".join(str(description).split()),
                          uri=skill_uri(name), files=self.manifest(name))
        skill._text = text
        return skill

    def info(self, name: str) -> SkillInfo:
        skill = self.read(name)
        return SkillInfo(name=name, description=skill.description, uri=skill.uri,
                         files=skill.files)

    def listing(self) -> SkillList:
        skills = [self.info(n) for n in self.names()]
        return SkillList(skills=skills, folder=str(self.folder),
                         note="" if skills else self.missing())

    def missing(self) -> str:
        """Why there are no skills, and the fix (empty when there are some)."""
        what = "does not exist" if not self.folder.is_dir() else "holds no */SKILL.md"
        return (f"no skills: the skills folder {self.folder} {what}. Fix: start whileai-mcp "
                f"with --skills DIR (or set {SKILLS_ENV}) to the folder holding "
                "<name>/SKILL.md")

    def index_markdown(self) -> str:
        listing = self.listing()
        lines = ["# whileai skills", "",
                 "Read one with resources/read on its URI, or call the get_skill tool; "
                 "skills/list gives each skill's files with their digests.", ""]
        for s in listing.skills:
            helpers = [f.uri for f in s.files if f.uri != s.uri]
            lines.append(f"- [{s.name}]({s.uri}): {s.description}")
            lines += [f"  - helper file: {u}" for u in helpers]
        if not listing.skills:
            lines.append(f"(no skills in {listing.folder})")
        return "\n".join(lines) + "\n"
