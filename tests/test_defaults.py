"""Every default lives once in whileai_core.defaults, with its source."""

from __future__ import annotations

from whileai_core import defaults


def test_every_default_names_its_source():
    names = [n for n in vars(defaults) if n.isupper() and not n.startswith("_") and n != "SOURCES"]
    missing = [n for n in names if not defaults.SOURCES.get(n, "").strip()]
    assert not missing, f"defaults without a _source(...) line: {missing}"
    stray = sorted(set(defaults.SOURCES) - set(names))
    assert not stray, f"_source(...) for names that are not defaults: {stray}"


def test_the_documented_core_defaults():
    # values the README and the issue state; the sources cite where each comes from
    assert defaults.PROVE_EFFECT == 0.05 and defaults.PASS_THRESHOLD == 1.0
    assert defaults.CONFIDENCE_LEVEL == 0.95 and defaults.MIN_TASKS_FOR_INTERVAL == 3
    assert "Miller" in defaults.SOURCES["HOLDOUT_POWER"]
