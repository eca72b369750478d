"""The skills folder, served four ways: tools (`list_skills`, `get_skill`), resources (every file
of a skill as `skill://<name>/<path>`, plus the index `whileai://skills/index.md`), one prompt
per skill, and the Skills extension of MCP (SEP-2640: `skills/list`, `skills/get`;
``server.skills_extension``).

The folder is read when asked, so an edited SKILL.md is served as it is now. It is found next to
the package (``<repo>/skills``; an installed wheel carries a copy, read as the package's own
files, see ``whileai_core.bundled``) unless ``--skills DIR`` or ``WHILEAI_SKILLS_DIR`` says
otherwise.
A skill is a sub-folder holding ``SKILL.md`` whose frontmatter (Agent Skills format) gives
``name`` and ``description``. Only names that are folders of the catalog are ever opened, so a
skill name cannot walk out of the folder.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import re
from pathlib import Path
from typing import Annotated, ClassVar

from mcp.server.mcpserver import MCPServer, UserMessage
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.resources import FunctionResource
from mcp.types import EmbeddedResource, TextResourceContents
from pydantic import Field, PrivateAttr

from whileai_core.bundled import SKILLS_ENV, SkillsSource, skill_files
from whileai_core.errors import ArgumentError
from whileai_core.result import Result

from .tooling import READ_ONLY, Env, ToolInput, ToolSpec

MARKDOWN = "text/markdown"
# The index of the skills lives outside the skill:// scheme: under SEP-2640 a skill:// URI names a
# skill's file, and `skill://index` would read as a skill called "index".
INDEX_URI = "whileai://skills/index.md"


def default_skills_dir() -> Path:
    """``WHILEAI_SKILLS_DIR`` if set, else ``skills/`` beside the packages, else the installed
    package's copy (one rule, in the core: ``whileai-skills init`` installs from the same
    folder)."""
    return SkillsSource().folder


def skill_uri(name: str) -> str:
    return f"skill://{name}/SKILL.md"


# --- results -------------------------------------------------------------------------------

class SkillFile(Result):
    """One file of a skill: its resource URI, size in bytes and SHA-256 digest (``sha256:<hex>``,
    of the raw bytes, as SEP-2640 entries carry it)."""

    uri: str
    size: int
    digest: str


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
    answer_max_bytes: ClassVar[int | None] = None  # the catalog, sent whole
    note: str = Field("", description="Why the list is empty, and the fix; empty otherwise.")

    def render(self) -> str:
        if not self.skills:
            return self.note or f"no skills in {self.folder}"
        return "\n".join(s.render() for s in self.skills)


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


# --- the catalog ---------------------------------------------------------------------------

_KEY = re.compile(r"^([A-Za-z_][\w-]*):\s*(.*)$")


def _frontmatter(text: str) -> dict[str, str]:
    """Top-level scalar keys of a YAML frontmatter block (plain, quoted, or `>`/`|` blocks).

    Enough for the two keys served here; the full format is checked by `skills-ref` in tests.
    """
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    out: dict[str, str] = {}
    key, block, folded = None, [], True
    for line in lines[1:]:
        if line.strip() == "---":
            break
        if key is not None and (line.startswith((" ", "\t")) or not line.strip()):
            block.append(line.strip())
            continue
        if key is not None:
            out[key] = (" " if folded else "\n").join(b for b in block if b).strip()
            key = None
        match = _KEY.match(line)
        if not match:
            continue
        name, value = match.groups()
        value = value.strip()
        if value[:1] in (">", "|"):
            key, block, folded = name, [], value[0] == ">"
        elif len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            out[name] = value[1:-1]
        else:
            out[name] = value
    if key is not None:
        out[key] = (" " if folded else "\n").join(b for b in block if b).strip()
    return out


class SkillCatalog:
    """The skills under one folder, read on each call.

    A folder a person chose (``--skills DIR``, ``WHILEAI_SKILLS_DIR``, the checkout's
    ``skills/``) is opened as a confined root (``whileai_core.safepath``): a skill folder or file
    that is a symlink, a FIFO or another special file is never followed or read (a FIFO would
    block the server's start; a link could serve a file from outside the folder). Skills from
    ``whileai-skills init --link`` are links: serve the pack's own folder instead. With no folder
    chosen, an installed package serves its own copy (``whileai_core.bundled.SkillsSource``).
    """

    def __init__(self, folder: str | os.PathLike | None = None) -> None:
        self.source = SkillsSource(folder)
        self.folder = self.source.folder

    def _root(self):
        return self.source.root()

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
        return self.source.names()

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
        """Every regular file of the skill (SKILL.md first, then by path), as (relative path,
        raw bytes). Links, special files and caches are left out: a skill's files are what its
        folder holds."""
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
        raise ArgumentError(f"skill {name!r} has no file {rel!r}. Fix: list_skills shows its "
                            "files")

    def frontmatter(self, name: str) -> dict:
        """The SKILL.md's YAML frontmatter, parsed as YAML (every key the author wrote)."""
        import yaml

        text = self._skill_md(name)
        lines = text.splitlines()
        if not lines or lines[0].strip() != "---" or "---" not in [x.strip() for x in lines[1:]]:
            return {}
        end = [x.strip() for x in lines[1:]].index("---") + 1
        data = yaml.safe_load("\n".join(lines[1:end]))
        return data if isinstance(data, dict) else {}

    def read(self, name: str) -> SkillText:
        text = self._skill_md(name)
        meta = _frontmatter(text)
        skill = SkillText(name=name, description=meta.get("description", ""),
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


# --- tools ---------------------------------------------------------------------------------

class ListSkillsInput(ToolInput):
    """No arguments."""


class GetSkillInput(ToolInput):
    name: Annotated[str, Field(
        description="The skill's name exactly as list_skills returns it, e.g. 'pick-a-method'.",
        min_length=1, max_length=200)]


def list_skills(args: ListSkillsInput, env: Env) -> SkillList:
    return env.skills.listing()


def get_skill(args: GetSkillInput, env: Env) -> SkillText:
    return env.skills.read(args.name)


TOOLS = [
    ToolSpec(
        name="list_skills", title="List the skills",
        description=("List the playbooks (skills) this server carries: name, one-line "
                     "description, the resource URI of each SKILL.md, and every file of each "
                     "skill (helper files too) with its size and digest. Call first when you "
                     "do not know which playbook fits the user's goal."),
        input=ListSkillsInput, output=SkillList, run=list_skills,
        annotations=READ_ONLY, doing="listing the skills folder"),
    ToolSpec(
        name="get_skill", title="Read one skill",
        description=("Return one skill's whole SKILL.md (a Markdown playbook: each step as "
                     "Python and as MCP tool calls) as the answer's text, with its files in the "
                     "structured content. Same text as the resource skill://<name>/SKILL.md."),
        input=GetSkillInput, output=SkillText, run=get_skill,
        annotations=READ_ONLY, doing="reading a SKILL.md"),
]


# --- resources and prompts -----------------------------------------------------------------

def register_skills(server: MCPServer, catalog: SkillCatalog) -> None:
    """Resources (every file of each skill, and the index) and one prompt per skill present at
    start-up."""
    server.add_resource(FunctionResource(
        uri=INDEX_URI, name="whileai-skills-index", title="Index of the whileai skills",
        description="Every skill: name, description, URI and helper files, as Markdown.",
        mime_type=MARKDOWN, fn=catalog.index_markdown))
    for name in catalog.names():
        try:
            info = catalog.info(name)
        except (ArgumentError, OSError, UnicodeDecodeError):
            continue  # unreadable now (or a link, a FIFO): list_skills will say so when asked
        for file in info.files:
            rel = file.uri.removeprefix(f"skill://{name}/")
            top = rel == "SKILL.md"
            mime = MARKDOWN if rel.endswith(".md") else (
                mimetypes.guess_type(rel)[0] or "text/plain")
            server.add_resource(FunctionResource(
                uri=file.uri, name=name if top else rel,
                title=f"Skill: {name}" if top else f"{name}: {rel}",
                description=info.description if top else f"A helper file of the {name} skill.",
                mime_type=mime, fn=_reader(catalog, name, rel)))
        server.add_prompt(Prompt.from_function(
            _prompt(catalog, name), name=name, title=f"Follow the {name} skill",
            description=f"Embed the {name} playbook and ask to follow it. {info.description}"))


def _reader(catalog: SkillCatalog, name: str, rel: str = "SKILL.md"):
    def read() -> str | bytes:
        try:
            return catalog.file_text(name, rel)
        except (ArgumentError, OSError) as err:
            raise ResourceError(f"skill://{name}/{rel} cannot be read now: {err}") from err
    return read


def _prompt(catalog: SkillCatalog, name: str):
    def prompt(goal: Annotated[str, Field(
            description="What the user wants done with this playbook (optional).")] = ""):
        skill = catalog.read(name)
        embedded = EmbeddedResource(type="resource", resource=TextResourceContents(
            uri=skill.uri, mime_type=MARKDOWN, text=skill.text))
        ask = f"Follow the {name} playbook above, step by step, calling the whileai tools it names."
        if goal:
            ask += f"\n\nGoal: {goal}"
        return [UserMessage(embedded), UserMessage(ask)]
    return prompt
