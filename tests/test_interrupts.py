"""Ctrl-C while a program starts (its modules loading, the parser being built, the server being
set up) exits 130 without a traceback. The interrupt is sent from inside the child at a chosen
point (an import hook, a wrapped function), so the test does not race the clock."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

HOOK = """
import os, signal, sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Interrupt())
"""


def _run(body: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(body)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("module", ["whileai_core.operations", "whileai_core.cli.words",
                                    "argparse"])
def test_ctrl_c_while_the_cli_loads_is_one_word_and_130(module):
    done = _run(HOOK.format(module=module) + """
sys.modules.pop("argparse", None)
sys.argv = ["whileai-skills", "route", "examples/graded.jsonl", "--model", "Qwen/Qwen3-8B"]
from whileai_core.shell import main
sys.exit(main())
""")
    assert done.returncode == 130, done.stderr
    assert done.stderr == "interrupted\n" and done.stdout == ""


def test_ctrl_c_while_the_parser_is_built_is_one_word_and_130():
    done = _run("""
import os, signal, sys
import whileai_core.cli as cli
build = cli.build_parser
def interrupted(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)
    return build(*args, **kwargs)
cli.build_parser = interrupted
sys.argv = ["whileai-skills", "route", "examples/graded.jsonl", "--model", "Qwen/Qwen3-8B"]
from whileai_core.shell import main
sys.exit(main())
""")
    assert done.returncode == 130, done.stderr
    assert done.stderr == "interrupted\n"


def test_ctrl_c_once_the_command_runs_is_still_the_clis_own():
    """After start-up the CLI's own handler answers (the same one word and 130)."""
    done = _run("""
import os, signal, sys
import whileai_core.cli as cli
def interrupted(op, args):
    os.kill(os.getpid(), signal.SIGINT)
    raise AssertionError("not interrupted")
cli.run_operation = interrupted
sys.argv = ["whileai-skills", "route", "examples/graded.jsonl", "--model", "Qwen/Qwen3-8B"]
from whileai_core.shell import main
sys.exit(main())
""")
    assert done.returncode == 130, done.stderr
    assert done.stderr == "interrupted\n"


def test_ctrl_c_while_the_server_sets_up_exits_130_without_a_traceback(tmp_path):
    done = _run(HOOK.format(module="server.app") + f"""
from server.main import main
sys.exit(main(["--root", {str(tmp_path)!r}]))
""")
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr


def test_the_console_script_is_the_quiet_entry():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'whileai-skills = "whileai_core.shell:main"' in text
