"""The Skills extension of MCP (SEP-2640, ``io.modelcontextprotocol/skills``), on the SDK's
extension mechanism (``mcp.server.extension.Extension``).

Per ``specification/stable/skills.mdx`` of modelcontextprotocol/ext-skills: ``skills/list``
gives each skill's ``uri``, ``frontmatter`` and ``resources`` (every file with ``size`` and a
``sha256:`` ``digest``), paginated, with ``ttlMs`` and ``cacheScope``; ``skills/get`` one entry,
or -32602; every file is readable with ``resources/read``. ``directoryRead`` is not offered: the
entries are complete. The catalog is read on each call.
"""

from __future__ import annotations

from typing import Any, Literal

from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, Request, RequestParams
from pydantic import BaseModel, ConfigDict, Field

from .limits import SKILLS_PAGE_SIZE, SKILLS_TTL_MS
from .skills import SkillCatalog, skill_uri

EXTENSION_ID = "io.modelcontextprotocol/skills"


class ListSkillsParams(RequestParams):
    cursor: str | None = None


class GetSkillParams(RequestParams):
    uri: str


class SkillsExtension(Extension):
    """``skills/list`` and ``skills/get`` over one skills folder."""

    identifier = EXTENSION_ID

    def __init__(self, catalog: SkillCatalog) -> None:
        self.catalog = catalog

    def settings(self) -> dict[str, Any]:
        return {}  # no optional feature (directoryRead is not offered)

    def methods(self):
        return (MethodBinding("skills/list", ListSkillsParams, self._list),
                MethodBinding("skills/get", GetSkillParams, self._get))

    def entry(self, name: str) -> dict[str, Any]:
        """One skill's SEP-2640 entry."""
        return {"uri": skill_uri(name), "frontmatter": self.catalog.frontmatter(name),
                "resources": [f.model_dump() for f in self.catalog.manifest(name)]}

    async def _list(self, ctx, params: ListSkillsParams) -> dict[str, Any]:
        names = self.catalog.names()
        start = 0
        if params.cursor is not None:
            if not params.cursor.isdigit() or int(params.cursor) > len(names):
                raise MCPError(code=INVALID_PARAMS, message=(
                    f"cursor {params.cursor!r} is not one this server gave. Fix: pass the "
                    "nextCursor of the previous skills/list answer, or none"))
            start = int(params.cursor)
        page = names[start:start + SKILLS_PAGE_SIZE]
        result: dict[str, Any] = {"skills": [self.entry(n) for n in page],
                                  "ttlMs": SKILLS_TTL_MS, "cacheScope": "public"}
        if start + SKILLS_PAGE_SIZE < len(names):
            result["nextCursor"] = str(start + SKILLS_PAGE_SIZE)
        return result

    async def _get(self, ctx, params: GetSkillParams) -> dict[str, Any]:
        for name in self.catalog.names():
            if params.uri == skill_uri(name):
                return {"skill": self.entry(name), "ttlMs": SKILLS_TTL_MS,
                        "cacheScope": "public"}
        served = ", ".join(skill_uri(n) for n in self.catalog.names()) or "none"
        raise MCPError(code=INVALID_PARAMS, message=(
            f"No skill is served at {params.uri}. Skills served: {served}. Fix: pass the uri of "
            "a skill's SKILL.md, as skills/list gives it"))


# --- for clients: the two requests, typed (the SDK's Client sends them with session.send_request)

class ListSkillsRequest(Request[ListSkillsParams | None, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: ListSkillsParams | None = None


class GetSkillRequest(Request[GetSkillParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"
    params: GetSkillParams


class SkillResource(BaseModel):
    uri: str
    digest: str
    size: int


class Skill(BaseModel):
    model_config = ConfigDict(extra="allow")

    uri: str
    frontmatter: dict[str, Any]
    resources: list[SkillResource] | Literal["dynamic"]


class ListSkillsResult(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    skills: list[Skill]
    next_cursor: str | None = Field(None, alias="nextCursor")
    ttl_ms: int = Field(alias="ttlMs")
    cache_scope: str = Field(alias="cacheScope")


class GetSkillResult(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    skill: Skill
    ttl_ms: int = Field(alias="ttlMs")
    cache_scope: str = Field(alias="cacheScope")
