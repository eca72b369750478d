"""The skills catalog: which skills a folder holds, each one's files, and what its SKILL.md's
frontmatter says, for every reader (the MCP server, ``whileai-skills init``); the one walker of
a skill's files is ``whileai_core.bundled.skill_files``.

A skill is a sub-folder holding ``SKILL.md`` whose YAML frontmatter (Agent Skills format) gives
``name`` and ``description``. The folder is read when asked (``whileai_core.bundled.SkillsSource``)
and only names that are folders of the catalog are ever opened, so a skill name cannot walk out.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import Field, PrivateAttr

from .bundled import SKILLS_ENV, SkillsSource, skill_files
from .errors import ArgumentError
from .operations import HERE, READS, Context, operation
from .operations.args import Arg
from .result import Result
from .voice import name

__all__ = ["SKILLS_ENV", "SkillCatalog", "SkillFile", "SkillInfo", "SkillList", "SkillText",
           "default_skills_dir", "frontmatter", "get_skill", "list_skills", "skill_uri"]


def skill_uri(name: str) -> str:
    return f"skill://{name}/SKILL.md"


def frontmatter(text: str, *, where: str = "SKILL.md") -> dict:
    """The YAML frontmatter of a SKILL.md (every key the author wrote), or {} without one."""
    import yaml  # lazy: PyYAML costs 10 ms at server start (the server loads this module)

    lines = text.splitlines()
    marks = [i for i, line in enumerate(lines) if line.strip() == "---"]
    if not lines or lines[0].strip() != "---" or len(marks) < 2:
        return {}
    try:
        data = yaml.safe_load("\n".join(lines[1:marks[1]]))
    except yaml.YAMLError as err:
        raise ArgumentError(f"{where}: its frontmatter is not valid YAML ({err})", fix="write "
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
    """Every skill in the catalog, sorted by name; the text names them and how to read one, the
    structured content carries the descriptions and files. Bounded like any other answer."""

    skills: list[SkillInfo]
    folder: str
    note: str = Field("", description="Why the list is empty, and the fix; empty otherwise.")
    shown: str | None = Field(None, description="which lists were cut, as 'n of N shown'")
    cut_lists = ("skills",)

    def render(self) -> str:
        if not self.skills:
            return self.note or f"no skills in {self.folder}"
        lines = [self.summary(), f"read one: {name('get_skill')} or the resource "
                                 "skill://<name>/SKILL.md (what each is for: its description)"]
        return "\n".join(lines + ([f"({self.shown})"] if self.shown else []))

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
    answer_max_bytes: ClassVar[int | None] = None  # one document, sent whole

    @property
    def text(self) -> str:
        return self._text

    def render(self) -> str:
        return self._text

    def summary(self) -> str:
        return f"the {self.name} skill ({self.uri}): {self.description}"


# --- the catalog ---------------------------------------------------------------------------

def default_skills_dir() -> Path:
    """``WHILEAI_SKILLS_DIR`` if set, else ``skills/`` beside the packages, else the installed
    package's copy (one rule: ``whileai-skills init`` installs from the same folder)."""
    return SkillsSource().folder


class SkillCatalog:
    """The skills of one source (``whileai_core.bundled.SkillsSource``), read on each call.

    A chosen folder is a confined root: a skill folder or file that is a symlink, a FIFO or
    another special file is never followed or read (a FIFO would block the server's start; a link
    could serve a file from outside the folder), so skills from ``init --link`` are not served.
    """

    def __init__(self, folder: str | os.PathLike | None = None) -> None:
        self.source = SkillsSource(folder)
        self.folder = self.source.folder

    def _skill_dir(self, name: str):
        """The skill's folder (a UserPath), or None when ``name`` is not a skill of the folder."""
        try:
            root = self.source.root()
        except ArgumentError:
            return None
        entries = dict(root.locate(".", argument="skills").list_dir())
        if entries.get(name) != "dir":
            return None
        folder = root.locate(name, argument="skill")
        return folder if folder.child("SKILL.md").kind() == "file" else None

    def names(self) -> list[str]:
        return self.source.names()

    def _folder(self, name: str):
        folder = self._skill_dir(name)
        if folder is None:
            known = self.names()
            listing = ", ".join(known) if known else f"none: {self.folder} has no */SKILL.md"
            raise ArgumentError(f"unknown skill {name!r}; known skills: {listing}", fix="call "
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
        bytes): the one walker's (``whileai_core.bundled.skill_files``)."""
        return skill_files(self._folder(name))

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
        raise ArgumentError(f"skill {name!r} has no file {rel!r}", fix="list_skills shows its "
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


# --- the operations: the playbooks as tools (over MCP also resources and prompts) -------------

def _catalog(ctx: Context) -> SkillCatalog:
    """The catalog the caller is served: the server's (``--skills DIR``), else the pack's own."""
    return ctx.skills if ctx.skills is not None else SkillCatalog()


@operation(
    toolset="skills", effect=READS, title="List the skills",
    description=(
        "List the playbooks (skills) this server carries: name, one-line description, the "
        "resource URI of each SKILL.md, and every file of each skill (helper files too) with its "
        "size and digest. Call first when you do not know which playbook fits the user's goal."),
    doing="listing the skills folder")
def list_skills(*, ctx: Context = HERE) -> SkillList:
    return _catalog(ctx).listing()


@operation(
    toolset="skills", effect=READS, title="Read one skill",
    description=(
        "Return one skill's whole SKILL.md (a Markdown playbook: each step as Python and as MCP "
        "tool calls) as the answer's text, with its files in the structured content. Same text "
        "as the resource skill://<name>/SKILL.md."),
    doing="reading a SKILL.md")
def get_skill(name: Annotated[str, Field(min_length=1, max_length=200, description=(
                  "The skill's name exactly as list_skills returns it, e.g. 'pick-a-method'.")),
                  Arg(positional=True)], *, ctx: Context = HERE) -> SkillText:
    return _catalog(ctx).read(name)
