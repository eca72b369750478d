"""Skills through the protocol: list_skills/get_skill tools, skill:// resources, one prompt each."""

from __future__ import annotations

import hashlib
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from server.app import build_server
from whileai_core.errors import ArgumentError
from server.skills import SKILLS_ENV, SkillCatalog, default_skills_dir
from test_server_support import call, error_text, ok

ALPHA = """---
name: alpha
description: Pick a method from graded rows.
---
# Alpha

Call route first.
"""

# a folded block scalar, as long descriptions are usually written
BETA = """---
name: beta
description: >
  Audit a judge
  before trusting it.
license: Apache-2.0
---
# Beta
"""


HELPER = "def score(prompts, completions, **kw):\n    return [1.0] * len(completions)\n"
FIXTURES = "def prepare(workdir):\n    return {}\n"   # check.py's stand-ins: not the skill's
NOTES = "# Notes\n\nA reference file.\n"


@pytest.fixture()
def skills(tmp_path):
    folder = tmp_path / "skills"
    for name, text in (("alpha", ALPHA), ("beta", BETA)):
        (folder / name).mkdir(parents=True)
        (folder / name / "SKILL.md").write_text(text, encoding="utf-8")
    (folder / "alpha" / "fixtures.py").write_text(FIXTURES, encoding="utf-8")
    (folder / "alpha" / "scripts").mkdir()
    (folder / "alpha" / "scripts" / "helper.py").write_text(HELPER, encoding="utf-8")
    (folder / "alpha" / "refs").mkdir()
    (folder / "alpha" / "refs" / "notes.md").write_text(NOTES, encoding="utf-8")
    (folder / "alpha" / "__pycache__").mkdir()                 # caches are not skill files
    (folder / "alpha" / "__pycache__" / "helper.pyc").write_bytes(b"\x00")
    (folder / "not-a-skill").mkdir()          # no SKILL.md: not listed
    (folder / "README.md").write_text("x")
    return folder


@pytest.fixture()
def server(tmp_path, skills):
    return build_server(tmp_path, skills_dir=skills)


def _file(uri: str, data: bytes) -> dict:
    return {"uri": uri, "size": len(data), "digest": "sha256:" + hashlib.sha256(data).hexdigest()}


def test_list_skills(server, skills):
    out = ok(call(server, "list_skills", {}))
    assert out["folder"] == str(skills.resolve())
    assert out["skills"] == [
        {"name": "alpha", "description": "Pick a method from graded rows.",
         "uri": "skill://alpha/SKILL.md",
         "files": [_file("skill://alpha/SKILL.md", ALPHA.encode()),
                   _file("skill://alpha/refs/notes.md", NOTES.encode()),
                   _file("skill://alpha/scripts/helper.py", HELPER.encode())]},
        {"name": "beta", "description": "Audit a judge before trusting it.",
         "uri": "skill://beta/SKILL.md", "files": [_file("skill://beta/SKILL.md", BETA.encode())]},
    ]


def test_get_skill_returns_the_file_once(server):
    result = call(server, "get_skill", {"name": "alpha"})
    out = ok(result)
    assert result.content[0].text == ALPHA                    # the SKILL.md, as text
    assert "text" not in out and out["uri"] == "skill://alpha/SKILL.md"   # not again
    assert [f["uri"] for f in out["files"]] == ["skill://alpha/SKILL.md",
                                                "skill://alpha/refs/notes.md",
                                                "skill://alpha/scripts/helper.py"]


@pytest.mark.parametrize("name", ["gamma", "../alpha", "alpha/SKILL.md", "not-a-skill"])
def test_get_skill_unknown_names_the_known_ones(server, name):
    text = error_text(call(server, "get_skill", {"name": name}), "get_skill")
    assert f"unknown skill {name!r}" in text and "alpha, beta" in text and "list_skills" in text


def test_get_skill_reads_the_folder_now(server, skills):
    (skills / "alpha" / "SKILL.md").write_text(ALPHA + "\nEdited.\n", encoding="utf-8")
    result = call(server, "get_skill", {"name": "alpha"})
    assert result.content[0].text.endswith("Edited.\n")
    edited = (ALPHA + "\nEdited.\n").encode()
    assert ok(result)["files"][0] == _file("skill://alpha/SKILL.md", edited)


def test_resources_index_and_prompts(server):
    async def go():
        async with Client(server) as client:
            resources = {str(r.uri): r for r in (await client.list_resources()).resources}
            alpha = await client.read_resource("skill://alpha/SKILL.md")
            index = await client.read_resource("whileai://skills/index.md")
            helper = await client.read_resource("skill://alpha/scripts/helper.py")
            prompts = {p.name: p for p in (await client.list_prompts()).prompts}
            prompt = await client.get_prompt("beta", {"goal": "check my judge"})
            try:
                await client.read_resource("skill://gamma/SKILL.md")
                missing = None
            except MCPError as err:
                missing = err
            return resources, alpha, index, prompts, prompt, missing, helper

    resources, alpha, index, prompts, prompt, missing, helper = anyio.run(go)
    # the index is not a skill:// URI (it would read as a skill named "index")
    assert set(resources) == {"whileai://skills/index.md", "whileai://methods/schema.json",
                              "skill://alpha/SKILL.md", "skill://alpha/scripts/helper.py",
                              "skill://alpha/refs/notes.md", "skill://beta/SKILL.md"}
    assert not any(u.startswith("skill://index") for u in resources)
    assert resources["skill://alpha/scripts/helper.py"].mime_type == "text/x-python"
    assert helper.contents[0].text == HELPER
    assert "  - helper file: skill://alpha/scripts/helper.py" in index.contents[0].text
    assert "fixtures" not in index.contents[0].text        # check.py's, never served
    assert resources["skill://beta/SKILL.md"].description == "Audit a judge before trusting it."
    assert alpha.contents[0].text == ALPHA and alpha.contents[0].mime_type == "text/markdown"
    assert "- [alpha](skill://alpha/SKILL.md): Pick a method from graded rows." in \
        index.contents[0].text
    assert all(r.mime_type == "text/markdown" for u, r in resources.items()
               if u.endswith(".md"))
    assert set(prompts) == {"alpha", "beta"}
    first, second = prompt.messages
    assert first.content.type == "resource" and first.content.resource.text == BETA
    assert str(first.content.resource.uri) == "skill://beta/SKILL.md"
    assert "Goal: check my judge" in second.content.text
    assert missing is not None


def test_no_skills_folder_is_an_empty_list(tmp_path):
    server = build_server(tmp_path, skills_dir=tmp_path / "none")
    assert ok(call(server, "list_skills", {}))["skills"] == []
    text = error_text(call(server, "get_skill", {"name": "alpha"}), "get_skill")
    assert "has no */SKILL.md" in text


def test_default_folder_and_override(monkeypatch, tmp_path):
    monkeypatch.delenv(SKILLS_ENV, raising=False)
    assert default_skills_dir() == Path(__file__).resolve().parent.parent / "skills"
    monkeypatch.setenv(SKILLS_ENV, str(tmp_path))
    assert default_skills_dir() == tmp_path


def test_an_installed_packages_own_skills_may_be_hard_links(monkeypatch, tmp_path):
    """uv installs a wheel's files as hard links to its cache. The package's own copy is read as
    package resources and served; the same folder named as --skills (a user path) is still
    refused by the door, file by file."""
    import os

    from whileai_core import bundled

    package = tmp_path / "site-packages" / "whileai_core"
    skill = package / "_bundled" / "skills" / "alpha"
    skill.mkdir(parents=True)
    cache = tmp_path / "uv-cache" / "SKILL.md"
    cache.parent.mkdir()
    cache.write_text("---\nname: alpha\ndescription: Linked by uv.\n---\nbody\n")
    os.link(cache, skill / "SKILL.md")                         # what uv's link mode makes
    assert (skill / "SKILL.md").stat().st_nlink == 2
    monkeypatch.delenv(SKILLS_ENV, raising=False)
    monkeypatch.setattr(bundled, "in_checkout", lambda name: False)
    monkeypatch.setattr(bundled.resources, "files", lambda name: package)
    served = SkillCatalog()
    assert served.source.is_package and served.names() == ["alpha"]
    assert served.read("alpha").description == "Linked by uv."
    named = SkillCatalog(package / "_bundled" / "skills")
    assert not named.source.is_package
    with pytest.raises(ArgumentError, match="2 hard links"):
        named.read("alpha")


REPO_SKILLS = sorted(p.parent for p in (Path(__file__).resolve().parent.parent / "skills")
                     .glob("*/SKILL.md"))


@pytest.mark.skipif(not REPO_SKILLS, reason="no skills committed yet")
@pytest.mark.parametrize("folder", REPO_SKILLS, ids=[p.name for p in REPO_SKILLS])
def test_repo_skills_agree_with_the_agent_skills_reference_parser(folder):
    # skills-ref (the Agent Skills reference implementation) is the outside reference
    from skills_ref.parser import read_properties

    props = read_properties(folder)
    info = SkillCatalog(folder.parent).info(folder.name)
    assert props.name == folder.name == info.name
    assert " ".join(props.description.split()) == " ".join(info.description.split())


# --- the Skills extension (SEP-2640), through the Python SDK's client ---------------------------

def _client_calls(server, *requests):
    from server.skills_extension import GetSkillResult, ListSkillsRequest, ListSkillsResult

    async def go():
        async with Client(server) as client:
            out = [client.server_capabilities.extensions]
            for request in requests:
                kind = ListSkillsResult if isinstance(request, ListSkillsRequest) else \
                    GetSkillResult
                try:
                    out.append(await client.session.send_request(request, kind))
                except MCPError as err:
                    out.append(err)
            return out
    return anyio.run(go)


def test_skills_list_and_get_follow_sep_2640(server, skills):
    from skills_ref.parser import read_properties

    from server.skills_extension import (EXTENSION_ID, GetSkillParams, GetSkillRequest,
                                         ListSkillsRequest)

    caps, listed, got, missing = _client_calls(
        server, ListSkillsRequest(),
        GetSkillRequest(params=GetSkillParams(uri="skill://alpha/SKILL.md")),
        GetSkillRequest(params=GetSkillParams(uri="skill://gamma/SKILL.md")))
    # declared, no directoryRead; beside it the Tasks extension (server/run_tasks.py), no settings
    assert caps == {EXTENSION_ID: {}, "io.modelcontextprotocol/tasks": {}}
    assert [s.uri for s in listed.skills] == ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]
    assert listed.next_cursor is None and listed.ttl_ms > 0 and listed.cache_scope == "public"
    alpha = listed.skills[0]
    # every file of the skill, SKILL.md first, digests of the raw bytes (hashlib, here)
    assert [r.model_dump() for r in alpha.resources] == [
        _file("skill://alpha/SKILL.md", ALPHA.encode()),
        _file("skill://alpha/refs/notes.md", NOTES.encode()),
        _file("skill://alpha/scripts/helper.py", HELPER.encode())]
    # the frontmatter verbatim: every key, as the Agent Skills reference parser reads it
    beta = read_properties(skills / "beta")
    front = listed.skills[1].frontmatter
    assert front["name"] == beta.name == "beta" and front["license"] == beta.license
    assert " ".join(front["description"].split()) == " ".join(beta.description.split())
    assert got.skill.model_dump() == alpha.model_dump()
    assert isinstance(missing, MCPError) and missing.error.code == -32602
    assert "No skill is served at skill://gamma/SKILL.md" in missing.error.message


def test_a_read_file_hashes_to_its_listed_digest(server):
    from server.skills_extension import ListSkillsRequest

    _, listed = _client_calls(server, ListSkillsRequest())

    async def read_all():
        async with Client(server) as client:
            return {r.uri: (await client.read_resource(r.uri)).contents[0].text
                    for s in listed.skills for r in s.resources}
    for uri, text in anyio.run(read_all).items():
        entry = next(r for s in listed.skills for r in s.resources if r.uri == uri)
        data = text.encode("utf-8")
        assert len(data) == entry.size
        assert "sha256:" + hashlib.sha256(data).hexdigest() == entry.digest


def test_skills_list_pages(server, monkeypatch):
    from server.skills_extension import ListSkillsParams, ListSkillsRequest

    monkeypatch.setattr("server.skills_extension.SKILLS_PAGE_SIZE", 1)
    _, first = _client_calls(server, ListSkillsRequest())
    assert [s.uri for s in first.skills] == ["skill://alpha/SKILL.md"] and first.next_cursor
    _, second = _client_calls(server, ListSkillsRequest(
        params=ListSkillsParams(cursor=first.next_cursor)))
    assert [s.uri for s in second.skills] == ["skill://beta/SKILL.md"]
    assert second.next_cursor is None
    _, bad = _client_calls(server, ListSkillsRequest(params=ListSkillsParams(cursor="x")))
    assert isinstance(bad, MCPError) and bad.error.code == -32602


def test_the_repo_skills_serve_no_fixtures():
    # skills/*/fixtures.py are check.py's stand-ins for the python blocks, not the agent's: one
    # walker (whileai_core.skills) decides a skill's files for the server and for init alike
    from server.app import build_server
    from server.skills_extension import ListSkillsRequest

    repo = Path(__file__).resolve().parent.parent / "skills"
    _, listed = _client_calls(build_server(repo.parent, skills_dir=repo), ListSkillsRequest())
    for skill in listed.skills:
        name = skill.frontmatter["name"]
        assert skill.uri == f"skill://{name}/SKILL.md"     # the last segment is the name
        files = {r.uri for r in skill.resources}
        assert (repo / name / "fixtures.py").is_file()
        assert not any(uri.endswith("fixtures.py") for uri in files), files
        assert sum(r.size for r in skill.resources) <= 16 * 2**20 and len(files) <= 512
    listing = ok(call(build_server(repo.parent, skills_dir=repo), "list_skills", {}))
    assert not any(f["uri"].endswith("fixtures.py") for s in listing["skills"] for f in s["files"])


def test_list_skills_stays_within_the_answer_bound(tmp_path):
    """The pack's own listing answered 14 KB against the 8 KB bound (every
    description twice: text and structured). The text now names the skills; the structured
    content carries the rest, and a folder of many skills is cut, saying n of N."""
    import json

    from whileai_core.defaults import MCP_ANSWER_MAX_BYTES

    def size(result) -> int:
        return len(result.content[0].text.encode()) + len(json.dumps(
            result.structured_content).encode())

    pack = call(build_server(tmp_path, skills_dir=default_skills_dir()), "list_skills", {})
    out = ok(pack)
    assert size(pack) <= MCP_ANSWER_MAX_BYTES, size(pack)
    assert out["shown"] is None and "characters)" not in json.dumps(out)  # whole, nothing cut
    many = tmp_path / "many"
    for i in range(60):  # 60 skills of 1,000-character descriptions: ~70 KB uncut
        (many / f"s{i:02d}").mkdir(parents=True)
        (many / f"s{i:02d}" / "SKILL.md").write_text(
            f"---\nname: s{i:02d}\ndescription: {'word ' * 200}\n---\n# s{i:02d}\n")
    listing = call(build_server(tmp_path, skills_dir=many), "list_skills", {})
    assert size(listing) <= MCP_ANSWER_MAX_BYTES, size(listing)
    shown = ok(listing)["shown"]
    assert shown is not None and "of 60 shown" in shown
    assert f"({shown})" in listing.content[0].text
