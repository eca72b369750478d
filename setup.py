"""Only what pyproject.toml cannot say: the wheel carries the skills and the recipes.

``skills/`` and ``recipes/`` sit at the top of the repository (beside the packages, where a reader
of the checkout expects them), so setuptools would leave them out of a wheel. ``build_py`` copies
both into the built package as ``whileai_core/_bundled/{skills,recipes}``; the installed server
and ``launch`` find them there (``whileai_core.bundled``). An editable install reads them from the
checkout instead, so nothing is copied in editable mode.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BUNDLED = ("skills", "recipes")
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".*")


class build_py_with_bundle(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "whileai_core" / "_bundled"
        shutil.rmtree(target, ignore_errors=True)  # a stale copy from an earlier build
        for name in BUNDLED:
            shutil.copytree(ROOT / name, target / name, ignore=SKIP)


setup(cmdclass={"build_py": build_py_with_bundle})
