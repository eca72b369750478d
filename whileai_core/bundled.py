"""Where the skills and the recipes are: the checkout's folders, or the copies in the wheel.

A source checkout (an editable install, or tests run from the repository) reads ``skills/`` and
``recipes/`` beside the packages, so an edit shows at once. A wheel (``pip install .``, ``pip
install whileai_skills-*.whl``, ``pipx``, ``uvx``) carries copies in ``whileai_core/_bundled/``,
made by ``setup.py`` when the wheel is built. The checkout is recognised by its
``pyproject.toml``, so a stray ``skills`` folder in site-packages is never taken for ours.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
CHECKOUT = PACKAGE.parent
BUNDLE = PACKAGE / "_bundled"


def folder(name: str) -> Path:
    """``skills`` or ``recipes``: the checkout's when running from one, else the wheel's copy.

    The path is returned even when it does not exist; callers say what is missing and how to
    point elsewhere.
    """
    if (CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / name).is_dir():
        return CHECKOUT / name
    return BUNDLE / name
