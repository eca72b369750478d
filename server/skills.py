"""The skills folder as resources (every file of a skill as ``skill://<name>/<path>``, and the
index ``whileai://skills/index.md``) and one prompt per skill. The catalog is the core's
(``whileai_core.skills``), read when asked; SEP-2640's ``skills/list`` and ``skills/get`` are
``server.skills_extension``.
"""

from __future__ import annotations

import mimetypes
from typing import Annotated

from mcp.server.mcpserver import MCPServer, UserMessage
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.resources import FunctionResource
from mcp.types import EmbeddedResource, TextResourceContents
from pydantic import Field

from whileai_core.errors import ArgumentError
from whileai_core.skills import (SKILLS_ENV, SkillCatalog, SkillFile, SkillInfo, SkillList,
                                 SkillText, default_skills_dir, skill_uri)

__all__ = ["SKILLS_ENV", "SkillCatalog", "SkillFile", "SkillInfo", "SkillList", "SkillText",
           "default_skills_dir", "register_skills", "skill_uri"]

MARKDOWN = "text/markdown"
# The index of the skills lives outside the skill:// scheme: under SEP-2640 a skill:// URI names a
# skill's file, and `skill://index` would read as a skill called "index".
INDEX_URI = "whileai://skills/index.md"


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
