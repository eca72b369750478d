"""check.py: runs the skills' python blocks from SKILL.md, a verdict per skill, fails loudly."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _check_module():
    spec = importlib.util.spec_from_file_location("check_runner", ROOT / "check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_check_py_passes_and_prints_a_verdict_per_skill():
    proc = subprocess.run([sys.executable, str(ROOT / "check.py")], capture_output=True,
                          text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    skills = sorted(p.parent.name for p in (ROOT / "skills").glob("*/SKILL.md"))
    for name in skills:
        assert f"{name}: verdict: pass" in proc.stdout
    assert f"summary: {len(skills)} of {len(skills)} skills pass" in proc.stdout
    assert "each valid under skills-ref" in proc.stdout


@pytest.mark.train
def test_a_skill_the_reference_validator_refuses_fails(tmp_path, capsys):
    """check.py runs the Agent Skills reference validator (skills-ref) on each folder: a
    frontmatter name that is not the folder's fails the skill though its blocks pass."""
    import pytest

    pytest.importorskip("skills_ref")
    check = _check_module()
    fixtures = "def prepare(w):\n    return {}\nCHECKS = [lambda ns: None]\n"
    body = "---\nname: {name}\ndescription: Demo.\n---\n```python\na = 1\n```\n"
    good = _skill(tmp_path, body.format(name="demo"), fixtures)
    assert check.main([str(good)]) == 0
    bad = tmp_path / "elsewhere"
    good.rename(bad)
    assert check.main([str(bad)]) == 1
    out = capsys.readouterr().out
    assert "elsewhere: verdict: FAIL" in out and "skills-ref validation:" in out


def test_blocks_come_from_the_markdown_with_line_numbers():
    check = _check_module()
    text = "# t\n\n```python\nx = 1\n```\n\ntext\n\n```bash\nls\n```\n```python\ny = x + 1\n```\n"
    blocks = check.python_blocks(text)
    assert [b.code for b in blocks] == ["x = 1\n", "y = x + 1\n"]
    assert [b.line for b in blocks] == [4, 13]


def _skill(tmp_path, body, checks):
    skill = tmp_path / "demo"
    skill.mkdir()
    (skill / "SKILL.md").write_text(body)
    (skill / "fixtures.py").write_text(textwrap.dedent(checks))
    return skill


def test_a_failing_block_or_check_fails_the_skill(tmp_path):
    check = _check_module()
    md = "```python\nvalue = start * 2\n```\n```python\nraise RuntimeError('boom')\n```\n"
    fixtures = """
        def prepare(workdir):
            return {"start": 21}
        def doubled(ns):
            assert ns["value"] == 42
        def never(ns):
            pass
        CHECKS = [doubled, never]
    """
    v = check.check_skill(_skill(tmp_path, md, fixtures))
    assert not v.ok and "block 2" in v.detail and "boom" in v.detail

    ok = tmp_path / "ok"
    ok.mkdir()
    (ok / "SKILL.md").write_text(md.split("```\n```python")[0] + "```\n")
    (ok / "fixtures.py").write_text(textwrap.dedent(fixtures).replace(
        "CHECKS = [doubled, never]", "CHECKS = [doubled]"))
    assert check.check_skill(ok).ok

    wrong = tmp_path / "wrong"
    wrong.mkdir()
    (wrong / "SKILL.md").write_text("```python\nvalue = 1\n```\n")
    (wrong / "fixtures.py").write_text(textwrap.dedent(fixtures).replace(
        "CHECKS = [doubled, never]", "CHECKS = [doubled]"))
    v = check.check_skill(wrong)
    assert not v.ok and "doubled" in v.detail  # the check's assertion fails


def test_block_check_count_mismatch_fails(tmp_path):
    check = _check_module()
    skill = _skill(tmp_path, "```python\na = 1\n```\n```python\nb = 2\n```\n",
                   "def prepare(w):\n    return {}\nCHECKS = [lambda ns: None]\n")
    v = check.check_skill(skill)
    assert not v.ok and "2 python blocks but fixtures.py has 1 CHECKS" in v.detail


def test_blocks_are_offline(tmp_path):
    check = _check_module()
    skill = _skill(tmp_path, "```python\nimport socket\n"
                   "socket.create_connection(('192.0.2.1', 80), timeout=1)\n```\n",
                   "def prepare(w):\n    return {}\nCHECKS = [lambda ns: None]\n")
    v = check.check_skill(skill)
    assert not v.ok and "offline" in v.detail


def test_without_the_extras_it_says_so_in_one_line(tmp_path):
    """A core-only install (no torch, trl, matplotlib, skills-ref): one line naming what is
    missing and the install command, exit 2, no traceback and no skill called passing."""
    runner = tmp_path / "run_check.py"
    runner.write_text(textwrap.dedent(f"""
        import runpy, sys

        class NotInstalled:  # what a venv without the extras answers for these modules
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {{"torch", "trl", "transformers", "peft", "datasets",
                                           "matplotlib", "skills_ref"}}:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)

        sys.meta_path.insert(0, NotInstalled())
        sys.argv = [{str(ROOT / "check.py")!r}]
        sys.exit(runpy.run_path(sys.argv[0], run_name="not_main")["main"]())
    """))
    proc = subprocess.run([sys.executable, str(runner)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr
    line = proc.stderr
    assert "torch" in line and "skills_ref" in line and "pip install -e '.[test,train]'" in line
    assert "Traceback" not in line and "verdict" not in line
