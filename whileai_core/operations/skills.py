"""Operations that read the playbooks: list_skills, get_skill. Over MCP the skills are also
resources (``skill://<name>/<path>``) and prompts, whatever the toolsets (``server.skills``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from . import READS, operation
from .args import Arg
from .surface import HERE, Context


def _catalog(ctx: Context):
    from ..skills import SkillCatalog  # lazy: loads with the call

    return ctx.skills if ctx.skills is not None else SkillCatalog()


@operation(
    toolset="skills", effect=READS, title="List the skills",
    description=(
        "List the playbooks (skills) this server carries: name, one-line description, the "
        "resource URI of each SKILL.md, and every file of each skill (helper files too) with its "
        "size and digest. Call first when you do not know which playbook fits the user's goal."),
    result="whileai_core.skills:SkillList", doing="listing the skills folder")
def list_skills(*, ctx: Context = HERE):
    return _catalog(ctx).listing()


@operation(
    toolset="skills", effect=READS, title="Read one skill",
    description=(
        "Return one skill's whole SKILL.md (a Markdown playbook: each step as Python and as MCP "
        "tool calls) as the answer's text, with its files in the structured content. Same text "
        "as the resource skill://<name>/SKILL.md."),
    result="whileai_core.skills:SkillText", doing="reading a SKILL.md")
def get_skill(name: Annotated[str, Field(min_length=1, max_length=200, description=(
                  "The skill's name exactly as list_skills returns it, e.g. 'pick-a-method'.")),
                  Arg(positional=True)], *, ctx: Context = HERE):
    return _catalog(ctx).read(name)
