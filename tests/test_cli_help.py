"""`whileai-skills COMMAND --help` for every command: a description, defaults in one spelling,
the shell's words (flags, commands) rather than the MCP arguments the descriptions are written
once for."""

from __future__ import annotations

import argparse
import re

import pytest

from whileai_core.cli import build_parser, main
from whileai_core.operations import operations

from test_cli_language import problems

COMMANDS = sorted(op.command for op in operations().values() if "cli" in op.surfaces)

# A signature of the user's own code that a flag asks for ('file.py:function', called like a
# TRL reward: function(prompts=[...], ...); grader.py's grade(ask, reply)): Python by design.
USER_CODE = ("function(", "grade(", "prompts=[", "completions=[")


def _help(command: str) -> tuple[str, argparse.ArgumentParser]:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]  # noqa: SLF001
    return sub.format_help(), sub


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_a_description_and_one_spelling_of_defaults(command):
    text, sub = _help(command)
    op = next(o for o in operations().values() if o.command == command)
    assert sub.description and sub.description != op.title, "no description beyond the title"
    flat = " ".join(text.split())
    # "(default: X)" is the one spelling; a switch is off and a --no-X switch on by default
    assert not re.search(r"\(default(?!: )", flat), flat
    assert not re.search(r"\(default: (True|False|None|true|false|null|do)\)", flat), flat
    for action in sub._actions:  # noqa: SLF001
        if not action.option_strings or action.dest in ("help", "json"):
            continue
        words = " ".join((action.help or "").split())
        assert words, f"{action.option_strings[0]}: no help"
        if action.nargs == 0:  # a switch
            on = action.option_strings[0].startswith("--no-")
            assert words.endswith("(default: on)" if on else "(default: off)"), words
        assert words.count("(default:") <= 1, words


@pytest.mark.parametrize("command", COMMANDS)
def test_help_speaks_the_shells_words(command):
    text, _ = _help(command)
    flat = " ".join(text.split())
    found = [p for p in problems(flat) if not any(code in p for code in USER_CODE)]
    assert not found, f"whileai-skills {command} --help: {found}"


def test_the_translation_reads_flags_and_commands(capsys):
    text, _ = _help("pass-at")
    flat = " ".join(text.split())
    # the Detail description says `offset`, `limit`, task_table and detail=true for every surface
    assert "(`--offset`, `--limit`;" in flat and "task-table writes" in flat
    assert "With --detail:" in flat
    text, _ = _help("launch")
    assert "Without --confirm it returns the plan only" in " ".join(text.split())
    with pytest.raises(SystemExit) as exc:
        main(["route", "--help"])
    assert exc.value.code == 0 and "usage: whileai-skills route" in capsys.readouterr().out


@pytest.mark.parametrize("command", COMMANDS)
def test_help_says_null_only_where_the_shell_can_type_it(command):
    # "--threshold: ...; null: 1.0" told the reader to type a word the flag refused; a flag that
    # cannot take `null` is just left out
    text, sub = _help(command)
    head = " ".join(text.split("\noptions:")[0].split("\npositional arguments:")[0].split())
    assert not re.search(r"\bnull\b", head), head
    for action in sub._actions:  # noqa: SLF001
        if re.search(r"\bnull\b", action.help or ""):
            assert action.option_strings and callable(action.type), action.help
            action.type("null")  # raises argparse.ArgumentTypeError when null is no value here


def test_a_flag_that_cannot_be_typed_null_says_left_out(capsys):
    # hack-scan --threshold refuses the word null, so its help says what leaving it out gives
    text, _ = _help("hack-scan")
    assert "; left out: 1.0" in " ".join(text.split())
    text, _ = _help("by-category")  # a sentence that began with null begins with a capital
    assert "(the frozen file). Left out: read the category" in " ".join(text.split())
    with pytest.raises(SystemExit):
        main(["hack-scan", "rows.jsonl", "--threshold", "null"])
    assert "invalid value null" in capsys.readouterr().err
