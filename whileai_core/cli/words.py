"""The shell's words for what the declarations say once for every surface: a flag's spelling,
a description with its arguments written as flags (``confirm=true`` is ``--confirm``), and
argparse's refusals in one line naming the close choice (``--modle``: did you mean
``--model``?; Python 3.11's argparse has no ``suggest_on_error``)."""

from __future__ import annotations

import argparse
import re
from typing import Any

from ..errors import did_you_mean
from ..operations.calls import cli_form
from ..operations.surface import params
from ..voice import OPS, flag

NUMBER = re.compile(r"-\d[\d.e+-]*|-\.\d+|-inf|-nan", re.I)
_CHOICE = re.compile(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)")


def suggest(message: str, parser: argparse.ArgumentParser) -> str:
    """argparse's message in one line, with the close choice and where the choices are."""
    where = f"`{parser.prog} --help` lists every flag"
    found = _CHOICE.fullmatch(message)
    if found:
        argument, word, listed = found.groups()
        choices = re.findall(r"'([^']*)'", listed)
        if argument == "COMMAND":
            message, where = f"unknown command `{word}`", f"`{parser.prog} --help` lists them"
            close = did_you_mean(word, choices)
        else:
            message, where = f"{argument} {word} is not a choice", f"one of {', '.join(choices)}"
            close = did_you_mean(word, choices, spell=lambda c: c)
    else:
        found = re.fullmatch(r"(.*); (did you mean .*\?)", message)
        message, close = found.groups() if found else (message, "")
    if close:
        return f"{parser.prog}: {message}; {close} ({where})"
    return f"{parser.prog}: {message}. Fix: {where}"


_SETTING = re.compile(r"`?\b([a-z][a-z0-9_]*)=(true|false)\b`?")
_NAMED = re.compile(r"`([a-z][a-z0-9_]*)`")


def shell_text(text: str, op: Any) -> str:
    """A description written once for every surface, in the shell's words: an argument set
    (``confirm=true``) is its flag (``--confirm``), an argument named (```offset```) its flag or
    positional's metavar, another operation its command (``task_table``: ``task-table``)."""
    taken = {param.name: param for param in params(op, "cli")}
    commands = {name: o.command for name, o in OPS.items() if o.command}

    def spell(name: str) -> str | None:
        if name in taken:
            param = taken[name]
            positional = param.arg.positional and cli_form(param) in ("positional", "many")
            return (param.arg.metavar or name.upper()) if positional else flag(name)
        return None

    def setting(m: re.Match) -> str:
        name, value = m.groups()
        if name not in taken:
            return m.group(0)
        on = flag(name)
        form = cli_form(taken[name])
        if form == "negated":
            return f"--no-{name.replace('_', '-')}" if value == "false" else f"no --no-{name}"
        return on if value == "true" else f"no {on}"

    def named(m: re.Match) -> str:  # `name`: an argument of this command
        word = spell(m.group(1))
        return f"`{word}`" if word else m.group(0)

    def bare(m: re.Match) -> str:  # an argument of this command written without backticks
        return spell(m.group(1)) or m.group(0)

    text = _SETTING.sub(setting, text)
    text = _NAMED.sub(named, text)
    own = sorted((n for n in taken if "_" in n), key=len, reverse=True)
    if own:
        text = re.sub(r"(?<![-\w.`])(" + "|".join(own) + r")(?![\w`])", bare, text)
    return re.sub(r"\b(" + "|".join(sorted((n for n in commands if "_" in n), key=len,
                                           reverse=True)) + r")\b",
                  lambda m: commands[m.group(1)], text)
