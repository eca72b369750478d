"""whileai_core.extras agrees with pyproject.toml: every requirement of every extra maps to the
extra that installs it, and the torch pin in messages (and scripts/test.sh) is the extra's."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from whileai_core import extras

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# distribution name -> import name, where they differ (from each package's own docs)
IMPORT_NAME = {"tomli-w": "tomli_w", "skills-ref": "skills_ref", "PyYAML": "yaml",
               "pytest-xdist": "xdist"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0]


def test_every_requirement_maps_to_its_extra():
    """Each module maps to an extra that lists it (one listed in several maps to any of them)."""
    listed: dict[str, set[str]] = {IMPORT_NAME.get(_name(r), _name(r)): {""}
                                   for r in PROJECT["dependencies"]}
    for extra, requirements in PROJECT["optional-dependencies"].items():
        for r in requirements:
            listed.setdefault(IMPORT_NAME.get(_name(r), _name(r)), set()).add(extra)
    wrong = {m: extras.MODULES.get(m) for m, where in listed.items()
             if extras.MODULES.get(m) not in where}
    assert wrong == {}, f"whileai_core.extras.MODULES disagrees with pyproject.toml: {wrong}"


def test_needed_modules_belong_to_their_extra():
    for extra, modules in extras.NEEDED.items():
        assert all(extras.MODULES[m] == extra for m in modules), extra


def test_the_torch_pin_is_the_extras():
    (pin,) = [r for r in PROJECT["optional-dependencies"]["train"] if _name(r) == "torch"]
    assert extras.TORCH == pin
    assert f"TORCH={pin}" in (ROOT / "scripts" / "test.sh").read_text()


def test_install_command_from_a_wheel_names_the_distribution(monkeypatch):
    monkeypatch.setattr(extras, "from_checkout", lambda: False)
    assert extras.install_command("train") == "pip install 'whileai-skills[train]'"
    assert extras.install_command("") == "pip install whileai-skills"
    assert PROJECT["name"] == extras.DISTRIBUTION
