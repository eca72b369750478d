"""Skills through the protocol: list_skills/get_skill tools, skill:// resources, one prompt each."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from server.app import build_server
from server.skills import SKILLS_ENV, SkillCatalog, default_skills_dir
from test_server_support import call, error_text, ok

ALPHA = """---
name: alpha
description: Pick a method from graded rows.
---
# Alpha

Call route_rows first.
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


@pytest.fixture()
def skills(tmp_path):
    folder = tmp_path / "skills"
    for name, text in (("alpha", ALPHA), ("beta", BETA)):
        (folder / name).mkdir(parents=True)
        (folder / name / "SKILL.md").write_text(text, encoding="utf-8")
    (folder / "not-a-skill").mkdir()          # no SKILL.md: not listed
    (folder / "README.md").write_text("x")
    return folder


@pytest.fixture()
def server(tmp_path, skills):
    return build_server(tmp_path, skills_dir=skills)


def test_list_skills(server, skills):
    out = ok(call(server, "list_skills", {}))
    assert out["folder"] == str(skills.resolve())
    assert out["skills"] == [
        {"name": "alpha", "description": "Pick a method from graded rows.",
         "uri": "skill://alpha/SKILL.md"},
        {"name": "beta", "description": "Audit a judge before trusting it.",
         "uri": "skill://beta/SKILL.md"},
    ]


def test_get_skill_returns_the_file(server):
    out = ok(call(server, "get_skill", {"name": "alpha"}))
    assert out["text"] == ALPHA and out["uri"] == "skill://alpha/SKILL.md"


@pytest.mark.parametrize("name", ["gamma", "../alpha", "alpha/SKILL.md", "not-a-skill"])
def test_get_skill_unknown_names_the_known_ones(server, name):
    text = error_text(call(server, "get_skill", {"name": name}), "get_skill")
    assert f"unknown skill {name!r}" in text and "alpha, beta" in text and "list_skills" in text


def test_get_skill_reads_the_folder_now(server, skills):
    (skills / "alpha" / "SKILL.md").write_text(ALPHA + "\nEdited.\n", encoding="utf-8")
    assert ok(call(server, "get_skill", {"name": "alpha"}))["text"].endswith("Edited.\n")


def test_resources_index_and_prompts(server):
    async def go():
        async with Client(server) as client:
            resources = {str(r.uri): r for r in (await client.list_resources()).resources}
            alpha = await client.read_resource("skill://alpha/SKILL.md")
            index = await client.read_resource("skill://index")
            prompts = {p.name: p for p in (await client.list_prompts()).prompts}
            prompt = await client.get_prompt("beta", {"goal": "check my judge"})
            try:
                await client.read_resource("skill://gamma/SKILL.md")
                missing = None
            except MCPError as err:
                missing = err
            return resources, alpha, index, prompts, prompt, missing

    resources, alpha, index, prompts, prompt, missing = anyio.run(go)
    assert set(resources) == {"skill://index", "skill://alpha/SKILL.md", "skill://beta/SKILL.md"}
    assert all(r.mime_type == "text/markdown" for r in resources.values())
    assert resources["skill://beta/SKILL.md"].description == "Audit a judge before trusting it."
    assert alpha.contents[0].text == ALPHA and alpha.contents[0].mime_type == "text/markdown"
    assert "- [alpha](skill://alpha/SKILL.md): Pick a method from graded rows." in \
        index.contents[0].text
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
