"""The skills folder, served three ways: tools (`list_skills`, `get_skill`), resources
(`skill://<name>/SKILL.md` plus `skill://index`) and one prompt per skill.

The folder is read when asked, so an edited SKILL.md is served as it is now. It is found next to
the package (``<repo>/skills``) unless ``--skills DIR`` or ``WHILEAI_SKILLS_DIR`` says otherwise.
A skill is a sub-folder holding ``SKILL.md`` whose frontmatter (Agent Skills format) gives
``name`` and ``description``. Only names that are folders of the catalog are ever opened, so a
skill name cannot walk out of the folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer, UserMessage
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.resources import FunctionResource
from mcp.types import EmbeddedResource, TextResourceContents
from pydantic import Field

from whileai_core.errors import ArgumentError
from whileai_core.result import Result

from .tooling import READ_ONLY, Env, ToolInput, ToolSpec

SKILLS_ENV = "WHILEAI_SKILLS_DIR"  # the same variable as whileai_core.init.SKILLS_ENV
MARKDOWN = "text/markdown"
INDEX_URI = "skill://index"


def default_skills_dir() -> Path:
    """``WHILEAI_SKILLS_DIR`` if set, else ``skills/`` beside the packages (one rule, in the core:
    ``whileai-skills init`` installs from the same folder)."""
    from whileai_core.init import bundled_skills_dir

    return bundled_skills_dir()


def skill_uri(name: str) -> str:
    return f"skill://{name}/SKILL.md"


# --- results -------------------------------------------------------------------------------

class SkillInfo(Result):
    """One skill as listed: what it is for and where to read it."""

    name: str
    description: str
    uri: str

    def render(self) -> str:
        return f"{self.name}: {self.description} ({self.uri})"


class SkillList(Result):
    """Every skill in the catalog, sorted by name."""

    skills: list[SkillInfo]
    folder: str

    def render(self) -> str:
        if not self.skills:
            return f"no skills in {self.folder}"
        return "\n".join(s.render() for s in self.skills)


class SkillText(Result):
    """One skill's SKILL.md, whole (frontmatter included)."""

    name: str
    description: str
    uri: str
    text: str

    def render(self) -> str:
        return self.text


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
    """The skills under one folder, read on each call."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder).expanduser().resolve()

    def names(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        return sorted(p.parent.name for p in self.folder.glob("*/SKILL.md"))

    def path(self, name: str) -> Path:
        known = self.names()
        if name not in known:
            listing = ", ".join(known) if known else f"none: {self.folder} has no */SKILL.md"
            raise ArgumentError(f"unknown skill {name!r}; known skills: {listing}. Fix: call "
                                "list_skills and pass one of the names it returns")
        return self.folder / name / "SKILL.md"

    def read(self, name: str) -> SkillText:
        text = self.path(name).read_text(encoding="utf-8")
        meta = _frontmatter(text)
        return SkillText(name=name, description=meta.get("description", ""),
                         uri=skill_uri(name), text=text)

    def info(self, name: str) -> SkillInfo:
        skill = self.read(name)
        return SkillInfo(name=name, description=skill.description, uri=skill.uri)

    def listing(self) -> SkillList:
        return SkillList(skills=[self.info(n) for n in self.names()], folder=str(self.folder))

    def index_markdown(self) -> str:
        listing = self.listing()
        lines = ["# whileai skills", "",
                 "Read one with resources/read on its URI, or call the get_skill tool.", ""]
        lines += [f"- [{s.name}]({s.uri}): {s.description}" for s in listing.skills]
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
                     "description, and the resource URI to read each. Call first when you "
                     "do not know which playbook fits the user's goal."),
        input=ListSkillsInput, output=SkillList, run=list_skills,
        annotations=READ_ONLY, doing="listing the skills folder"),
    ToolSpec(
        name="get_skill", title="Read one skill",
        description=("Return one skill's whole SKILL.md (a Markdown playbook with runnable "
                     "Python blocks). Same text as the resource skill://<name>/SKILL.md."),
        input=GetSkillInput, output=SkillText, run=get_skill,
        annotations=READ_ONLY, doing="reading a SKILL.md"),
]


# --- resources and prompts -----------------------------------------------------------------

def register_skills(server: MCPServer, catalog: SkillCatalog) -> None:
    """Resources (each skill + the index) and one prompt per skill present at start-up."""
    server.add_resource(FunctionResource(
        uri=INDEX_URI, name="skills-index", title="Index of the whileai skills",
        description="Every skill: name, description and URI, as Markdown.",
        mime_type=MARKDOWN, fn=catalog.index_markdown))
    for name in catalog.names():
        try:
            info = catalog.info(name)
        except (OSError, UnicodeDecodeError):
            continue  # unreadable now; list_skills will say so when asked
        server.add_resource(FunctionResource(
            uri=info.uri, name=name, title=f"Skill: {name}", description=info.description,
            mime_type=MARKDOWN, fn=_reader(catalog, name)))
        server.add_prompt(Prompt.from_function(
            _prompt(catalog, name), name=name, title=f"Follow the {name} skill",
            description=f"Embed the {name} playbook and ask to follow it. {info.description}"))


def _reader(catalog: SkillCatalog, name: str):
    def read() -> str:
        try:
            return catalog.read(name).text
        except (ArgumentError, OSError, UnicodeDecodeError) as err:
            raise ResourceError(f"{skill_uri(name)} cannot be read now: {err}") from err
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
