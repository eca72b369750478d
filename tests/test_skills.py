"""Every skill is a valid Agent Skill (checked by the reference validator, skills-ref)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

skills_ref = pytest.importorskip("skills_ref")

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = {"audit-your-judge", "sft-from-traces", "pick-a-method", "strengthen-your-evals",
            "catch-reward-hacking", "dpo-pairs", "grpo-verifier", "manage-experiments"}
FOUND = sorted(p.parent for p in (ROOT / "skills").glob("*/SKILL.md"))


def test_every_expected_skill_is_present():
    assert {p.name for p in FOUND} == EXPECTED


@pytest.mark.parametrize("skill", FOUND, ids=lambda p: p.name)
def test_skill_validates_with_skills_ref(skill):
    assert skills_ref.validate(skill) == []
    props = skills_ref.read_properties(skill)
    assert props.name == skill.name
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", props.name)
    assert re.fullmatch(r"\d+\.\d+\.\d+", props.metadata["version"])
    assert "Use when" in props.description  # what it does and when to use it


@pytest.mark.parametrize("skill", FOUND, ids=lambda p: p.name)
def test_skill_is_listed_in_the_index(skill):
    index = (ROOT / "skills" / "README.md").read_text()
    assert f"[{skill.name}](" in index
