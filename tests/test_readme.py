"""README.md says what the code does: the tool table is the server's, the set-up is two commands
that need no activated venv, every command the README and docs/ tell a reader to type uses a
program that exists, every page they link to exists, and the README stays a front door."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {path: path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").glob("*.md"))}
SKILLS = sorted(p.name for p in (ROOT / "skills").iterdir() if (p / "SKILL.md").is_file())


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def bash_lines(text: str) -> list[list[str]]:
    """The command lines (comments and blanks dropped) of each ```bash block, in order."""
    blocks = re.findall(r"^```bash\n(.*?)^```", text, re.S | re.M)
    return [[line.split("  #")[0].strip() for line in block.splitlines()
             if line.strip() and not line.lstrip().startswith("#")] for block in blocks]


def test_the_tool_table_is_the_servers():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_tools.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_every_tool_is_in_the_table():
    from server.registry import tool_specs

    page = DOCS[ROOT / "docs" / "mcp-server.md"]
    table = page.split("<!-- tools:begin", 1)[1].split("<!-- tools:end -->", 1)[0]
    for spec in tool_specs():
        assert f"| `{spec.name}` |" in table


def test_get_started_is_two_one_liners_that_need_no_activation():
    first, *_ = bash_lines(section(README, "## Get started"))
    assert len(first) == 2, first
    setup, tests = first
    assert setup.startswith("python3 -m venv .venv && ")
    # every program after the venv exists is the venv's own, called by path
    for step in setup.split(" && ")[1:]:
        assert step.startswith(".venv/bin/"), step
    assert ".venv/bin/whileai-skills route examples/" in setup
    assert (ROOT / setup.split("route ", 1)[1].split()[0]).is_file()
    assert tests == "bash scripts/test.sh"
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == "exec bash scripts/test.sh"


def test_get_started_activates_the_venv_before_bare_commands():
    activated = False
    for block in bash_lines(section(README, "## Get started")):
        for line in block:
            activated = activated or line.startswith(". .venv/bin/activate")
            if re.match(r"(whileai-skills|whileai-mcp|python|pip) ", line):
                assert activated, f"{line!r} runs before the venv is activated"
    assert activated


def test_only_the_dated_measurements_say_how_long_the_suite_takes():
    """The set-up's and the suite's times are measured, dated and kept in one place,
    docs/development.md ("How long the suite takes"); the README and scripts/test.sh say no
    number that could disagree with it."""
    minutes = re.compile(r"\b\d+ min(?:utes)?\b|\b\d+(?:\.\d+)? minutes?\b")
    test_sh = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    for name, text in (("README.md", README), ("scripts/test.sh", test_sh)):
        assert not minutes.findall(" ".join(text.split())), (name, minutes.findall(text))
    assert "docs/development.md" in test_sh and "docs/development.md" in README
    log = section(DOCS[ROOT / "docs" / "development.md"], "### How long the suite takes")
    assert re.search(r"20\d\d-\d\d-\d\d", log) and re.search(r"load", log)


def test_the_intro_and_the_skills_table_name_every_skill():
    intro = README[:README.index("## Get started")]
    table = section(README, "## Skills")
    for name in SKILLS:
        assert name in intro, name
        assert f"| `{name}` |" in table, name
    assert len(SKILLS) == 8


def test_the_readme_is_a_front_door():
    """Reference-sized blocks (the tool table, exit codes, security, install details, the
    study's tables, host configs, recipes) live in docs/, each page linked."""
    for name in ("install.md", "core.md", "statistics-study.md", "cli.md", "mcp-server.md",
                 "security.md", "launching.md", "importing.md", "methods.md",
                 "reward-hacking.md", "development.md", "experiments.md"):
        assert f"](docs/{name})" in README, name


def test_the_python_example_prints_what_its_comments_say():
    """Each ```python block of the README runs from the clone's root; a `print(...)  # text`
    line's comment is a line of what it prints."""
    for block in re.findall(r"^```python\n(.*?)^```", README, re.S | re.M):
        out = subprocess.run([sys.executable, "-c", block], cwd=ROOT, capture_output=True,
                             text=True, timeout=120, check=True).stdout.splitlines()
        said = re.findall(r"^print\(.*\)\s+# (.+)$", block, re.M)
        assert said
        for text in said:
            if not text.startswith("the "):
                assert text.strip() in out, (text, out)


def test_every_local_link_leads_to_a_file():
    pages = {ROOT / "README.md": README, **DOCS}
    for page, text in pages.items():
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def test_every_cli_subcommand_in_the_readme_exists():
    from whileai_core.cli import build_parser

    parser = build_parser()
    commands = set(parser._subparsers._group_actions[0].choices)  # noqa: SLF001
    for page, text in {"README.md": README, **{p.name: t for p, t in DOCS.items()}}.items():
        used = set(re.findall(r"whileai-skills ([a-z][a-z-]+)", text))
        assert used - commands == set(), f"{page} names commands that do not exist: {used - commands}"


# --- the journey, run on examples/ ----------------------------------------------------------------

def journey_lines() -> list[str]:
    (block,) = bash_lines(section(README, "## The journey"))
    return block


def test_the_journey_names_every_step_of_the_skills():
    """The block covers the journey's five steps, each command at least once."""
    used = {line.split()[1] for line in journey_lines() if line.startswith("whileai-skills ")}
    assert {"freeze", "fingerprint", "failure-capable", "noise-floor",
            "holdout-size", "by-category", "audit-judge", "order-reversal", "route",
            "config", "validate", "split", "select-sft", "decontaminate",
            "export-sft", "launch", "status", "collect", "cheat-probes", "hack-scan",
            "watch", "compare", "teacher-clears", "doctor"} <= used


def test_the_examples_are_what_make_examples_writes(tmp_path):
    """examples/ is regenerated byte for byte by its script (deterministic)."""
    import shutil

    copy = tmp_path / "examples"
    copy.mkdir()
    shutil.copy(ROOT / "examples" / "make_examples.py", copy)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, str(copy / "make_examples.py")], check=True, env=env,
                   cwd=tmp_path, timeout=300)
    made = {p.relative_to(copy).as_posix(): p.read_bytes() for p in copy.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}
    ours = {p.relative_to(ROOT / "examples").as_posix(): p.read_bytes()
            for p in (ROOT / "examples").rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert sorted(made) == sorted(ours)
    for name in made:
        assert made[name] == ours[name], f"examples/{name} differs from what make_examples.py writes"


# The steps whose verdict the README says is negative on the examples (a judge that clears
# nothing, one that follows the slot, a teacher that does not clear, a length hack, a run to
# stop, a run that learns nothing): exit code 1.
NEGATIVE_ON_EXAMPLES = {"audit-judge", "order-reversal", "teacher-clears", "hack-scan", "watch",
                        "doctor"}


def test_the_readme_names_the_journey_steps_that_exit_1():
    shown = " ".join(section(README, "## The journey").split("What they show:", 1)[1].split())
    said = shown.split("exit 1, a negative verdict", 1)[0].rsplit(").", 1)[-1]
    assert set(re.findall(r"`([a-z-]+)`", said)) == NEGATIVE_ON_EXAMPLES


@pytest.mark.slow
def test_every_journey_command_runs_on_the_examples(tmp_path):
    """Each line of the journey block, in order, from a copy of the clone's examples/, as a user
    types it: exit 0, or 1 where the README says the verdict is negative, and what the README
    says each step shows is there."""
    import shutil

    pytest.importorskip("trl")  # step 4 trains the SFT recipe's CPU smoke (the train extra)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT), "WHILEAI_STATE_DIR": str(tmp_path / "unused-state")}
    outputs: dict[str, str] = {}
    run_id = None
    for line in journey_lines():
        if "RUN" in line.split():
            assert run_id, f"{line!r} needs the run id, but no launch printed one"
            line = line.replace(" RUN ", f" {run_id} ")
        deadline = time.monotonic() + 600
        while True:
            proc = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=600)
            words = line.split()
            code = 1 if words[0] == "whileai-skills" and words[1] in NEGATIVE_ON_EXAMPLES else 0
            assert proc.returncode == code, \
                f"{line}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
            # `status` says launching, then running, until the smoke ends: the README says
            # run it again (on a loaded machine the first look can come before the run's pid file)
            unfinished = " running " in proc.stdout or " launching " in proc.stdout
            if " status " not in line or not unfinished or time.monotonic() > deadline:
                break
            time.sleep(3)
        found = re.search(r"launched (run-[0-9a-f]+)", proc.stdout)
        run_id = found.group(1) if found else run_id
        outputs[line] = proc.stdout
    by_command = {line.split()[1]: out for line, out in outputs.items()
                  if line.startswith("whileai-skills")}
    assert list((tmp_path / "out").glob("holdout-*.jsonl"))
    assert "verdict: ready" in by_command["failure-capable"]
    assert "best: none" in by_command["audit-judge"]
    assert "top_pick_only" in by_command["order-reversal"]
    assert "route: grpo" in by_command["route"] or "GRPO" in by_command["route"]
    assert by_command["validate"].startswith("OK")
    assert "dropped: ngram_overlap 7" in by_command["decontaminate"]
    for name in ("train.jsonl", "holdout.jsonl", "grader.py", "settings.json"):
        assert (tmp_path / "out/sft" / name).read_bytes() == \
            (ROOT / "examples/sft-data" / name).read_bytes(), name
    assert " succeeded " in by_command["status"], by_command["status"]
    assert "verdict:" in by_command["collect"]
    assert "most_common  leak" in by_command["cheat-probes"]
    # "the most common answer (0.00) on the no-refund third": its by-group line
    assert "no-refund 1.000" in by_command["cheat-probes"]
    assert by_command["hack-scan"].startswith("hack scan: suspect")
    assert by_command["watch"].startswith("watch: stop")
    assert "does not clear" in by_command["teacher-clears"]
    assert "verdict: moved: pass rate +0.125" in by_command["compare"]
    assert by_command["doctor"].startswith("doctor: sick")
    assert "zero_advantage       found at steps 6-11" in by_command["doctor"]
