"""`whileai-skills`: the library from a shell. Human output by default, ``--json`` for machines.

Every subcommand is an operation of the core (``whileai_core.operations``), generated from its
declaration: a positional argument or a flag per argument, ``--json`` everywhere, the picture as
``--plot FILE``. A call is checked against the same input model as over MCP, so both refuse the
same calls with the same words, in the CLI's voice (``whileai_core.voice``).

The exit code is the same for every command: 0 done, 1 a negative or not-ready verdict (an
operation declared ``exit_code=VERDICT``), 2 what is the user's to fix (one line on stderr:
``whileai_core.failures``), 70 a bug (one line, the traceback in a file, or in the terminal with
``WHILEAI_DEBUG=1``), 130 Ctrl-C. No traceback reaches the terminal otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import traceback
import types
import typing
from typing import Any

from .. import __version__, safejson
from ..errors import did_you_mean
from ..failures import bug_report, explain
from ..operations import RENAMED, load, renamed
from ..operations.args import ARM, NAMED, PATH, RUN_OR_PATH, SOURCE
from ..operations.calls import cli_form
from ..operations.calls import members as member_types
from ..operations.surface import HERE, invoke, params, picture, structured, validate
from ..result import shown
from ..voice import CLI, OPS, speaking
from .words import NUMBER, flag, shell_text, suggest

__all__ = ["build_parser", "cli_form", "flag", "main"]

# the README's exit-code table is written from these and each result's ``negative_means``
EXIT_NEGATIVE = 1  # the verdict is negative or not ready (the operation's exit_code=VERDICT)
EXIT_USER = 2      # the input or the environment is the user's to fix
EXIT_BUG = 70      # EX_SOFTWARE (sysexits.h): an internal error
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a Ctrl-C
DEBUG_ENV = "WHILEAI_DEBUG"


def _commands() -> dict[str, str]:
    """Command -> operation name, read from ``calls.json``: listing the commands imports no
    declaration; the one command run imports its own module (``operations.load``)."""
    return {op.command: name for name, op in OPS.items() if op.command}


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line refusal (exit 2) that names the close choice, for a misspelt
    command, flag or value: Python 3.11's argparse has no ``suggest_on_error``."""

    def error(self, message: str) -> typing.NoReturn:
        print(f"error: {suggest(message, self)}", file=sys.stderr)
        sys.exit(EXIT_USER)

    def unknown_flags(self, words: list[str]) -> None:
        """Refuse a flag this command does not have before argparse reads the words (it would
        first say a required flag is missing: ``--modle X`` reads as "--model is required")."""
        known = [o for a in self._actions for o in a.option_strings]  # noqa: SLF001
        for word in words:
            if word == "--":
                return
            name = word.split("=", 1)[0]
            if not name.startswith("-") or name == "-" or NUMBER.fullmatch(name):
                continue
            if name in known or (name.startswith("--") and any(o.startswith(name)
                                                                for o in known)):
                continue  # argparse takes a unique prefix (--mod for --model)
            close = did_you_mean(name, known, spell=lambda o: o)
            self.error(f"unknown flag {name}" + (f"; {close}" if close else ""))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s flags are built when it is given (the others are listed
    by name and title, from ``calls.json``), so a command imports its own declaration alone.
    ``None``: every command's flags (imports every declaration)."""
    parser = _Parser(
        prog="whileai-skills",
        description="Decide how to post-train an open-weight model from graded rows.")
    parser.add_argument("--version", action="version", version=f"whileai-skills {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, op_name in _commands().items():
        title = OPS[op_name].title
        if command is None or command == name:
            op = load(op_name)
            p = sub.add_parser(name, help=title.replace("%", "%%"), description=_LEFT_NULL.sub(
                "left out", shell_text(op.description, op)))
            add_operation(p, op)
            p.set_defaults(op=op)
        else:
            sub.add_parser(name, help=title.replace("%", "%%"), description=title)
    return parser


# --- one operation's arguments ---------------------------------------------------------------

def _nullable(annotation: Any) -> bool:
    """Whether null is a value of its own (``null``: the core's choice, e.g. a fresh seed)."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return typing.get_origin(annotation) in (typing.Union, types.UnionType) and \
        type(None) in typing.get_args(annotation)


class _Null:
    """``null`` typed at the shell: the argument is None, not left to its default."""


NULL = _Null()


_NULL_WORD = re.compile(r"\bnull\b")
_LEFT_NULL = re.compile(r"\bleft null\b")


def _unset(text: str, param: Any) -> str:
    """A description's ``null: X`` (written once for every surface) as the shell says it: a
    flag that cannot be typed ``null`` is simply left out (``left out: X``)."""
    if _nullable(param.annotation) and param.default is not None:
        return text  # ``null`` is a word this flag takes (e.g. --seed null: a fresh seed)
    text = _NULL_WORD.sub("left out", _LEFT_NULL.sub("left out", text))
    return re.sub(r"(^|[.?!]\s+)left out", r"\1Left out", text)  # a sentence's first word


def _literal_values(members: list[Any]) -> list[Any]:
    return [v for m in members if typing.get_origin(m) is typing.Literal
            for v in typing.get_args(m)]


def _scalar(members: list[Any], metavar: str, nullable: bool = False):
    """A converter from one shell word to a value of one of ``members`` (``null``: None, when
    ``nullable``)."""
    literals = _literal_values(members)
    structured = any(typing.get_origin(m) in (list, dict) or m in (list, dict) for m in members)

    def convert(text: str) -> Any:
        if nullable and text == "null":
            return NULL
        if structured and text.lstrip()[:1] in ("[", "{"):
            try:
                return safejson.loads(text)
            except ValueError as err:
                raise argparse.ArgumentTypeError(f"{metavar}: not valid JSON ({err})") from None
        if bool in members and text.lower() in ("true", "false"):
            return text.lower() == "true"
        for kind in (int, float):
            if kind in members:
                try:
                    return kind(text)
                except ValueError:
                    pass
        if text in [str(v) for v in literals]:
            return next(v for v in literals if str(v) == text)
        if str in members or structured:
            return text
        expected = ", ".join(map(str, literals)) or " or ".join(
            _WORDS.get(m, getattr(m, "__name__", str(m))) for m in members)
        close = did_you_mean(text, map(str, literals), spell=lambda c: c)
        raise argparse.ArgumentTypeError(f"invalid value {text}: expected {expected}"
                                         + (f"; {close}" if close else ""))

    return convert


# a value's type in a shell user's words (``expected float`` is Python's)
_WORDS = {int: "a whole number", float: "a number", bool: "true or false", str: "a word",
          type(None): "null"}


def _pair(value: Any):
    def convert(text: str) -> tuple[str, Any]:
        key, sep, raw = text.partition("=")
        if not sep or not key.strip():
            raise argparse.ArgumentTypeError(f"{text!r} is not NAME=VALUE")
        return key.strip(), value(raw.strip())
    return convert


def _json_value(text: str) -> Any:
    """A KEY=VALUE value as written: a number, true/false, a quoted string, a list; else text."""
    try:
        return safejson.loads(text)
    except ValueError:
        return text


def _json_only(members: list[Any]) -> bool:
    """Whether every value the flag takes is a list or a mapping (no word, number or path):
    the shell gives it as one word of JSON."""
    kinds = [m for m in members if m is not type(None)]
    return bool(kinds) and all(typing.get_origin(m) in (list, dict) or m in (list, dict)
                               for m in kinds)


def _typed_as_json(help_text: str, param: Any) -> str:
    """``help_text`` saying how the shell types a JSON-only flag, with the declaration's first
    example written as it is typed (compact, in single quotes)."""
    examples = param.info.examples or []
    if not examples:
        return f"{help_text}; typed as JSON in quotes"
    example = json.dumps(examples[0], separators=(",", ":"))
    return f"{help_text}; typed as JSON in quotes, e.g. '{example}'"


def _default_text(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def add_operation(p: argparse.ArgumentParser, op: Any) -> None:
    """The operation's arguments as positionals and flags, plus ``--json``."""
    cli_params = params(op, "cli")
    for param in cli_params:
        if param.name == "plot":
            p.add_argument("--plot", metavar="FILE", default=None,
                           help="also draw the picture of these numbers as a PNG to FILE (needs "
                                "matplotlib: pip install 'whileai-skills[plot]')")
            if not any(q.name == "overwrite" for q in cli_params):
                p.add_argument(flag("overwrite"), action="store_true", dest="_plot_force",
                               help="replace the --plot file if it exists (default: off)")
            continue
        spec, kw = _argument(op, param)
        p.add_argument(*spec, **kw)
        if param.arg.kind == ARM:
            p.add_argument(f"--{param.name.replace('_', '-')}-seed", action="append",
                           default=None, metavar="FILE", dest=f"_{param.name}_seeds",
                           help=f"another run of {param.name} (a training seed); repeatable")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def _argument(op: Any, param: Any) -> tuple[list[str], dict[str, Any]]:
    """One argument's positional or flag: argparse's names and keywords."""
    name, arg = param.name, param.arg
    described = help_text = _unset(shell_text(param.description.rstrip("."), op), param)
    if not arg.positional and cli_form(param) == "json" and \
            _json_only(member_types(param.annotation)):
        described = help_text = _typed_as_json(help_text, param)
    if not param.required and param.default is not None and param.default is not False \
            and param.default != ():  # 0 is a default to show
        help_text += f" (default: {_default_text(param.default)})"
    members = member_types(param.annotation)
    metavar = arg.metavar or name.upper()
    form = cli_form(param)
    kw: dict[str, Any] = {"help": help_text}
    if form in ("positional", "many") and arg.positional:
        spec = [name]
        if form == "many":
            kw.update(nargs="+", type=_scalar([str, float], metavar), metavar=metavar)
        else:
            kw.update(type=str, metavar=metavar)
            if not param.required:
                kw.update(nargs="?", default=param.default)
    else:
        spec = [flag(name)]
        kw["dest"] = name
        if form in ("switch", "negated"):
            if form == "negated":
                spec, kw["action"] = ["--no-" + name.replace("_", "-")], "store_false"
                kw["help"] = f"turn off: {described} (default: on)"
            else:
                kw["action"] = "store_true"
                kw["help"] = f"{described} (default: off)"
            kw["default"] = bool(param.default)
        elif form == "pairs":
            value = str if arg.kind == NAMED else _json_value
            kw.update(nargs="+", action="extend", type=_pair(value),
                      metavar=arg.metavar or "KEY=VALUE", default=None)
        elif form == "many":
            inner = member_types(typing.get_args(members[0])[0])
            kw.update(nargs="+", action="extend", type=_scalar(inner, metavar),
                      metavar=metavar, default=None)
            if _literal_values(inner):
                kw["choices"] = _literal_values(inner)
                kw.pop("metavar")
        else:
            nullable = _nullable(param.annotation) and param.default is not None
            if _json_only(members):  # a list of lists or a mapping: one word of JSON
                metavar = arg.metavar or "JSON"
            kw.update(type=_scalar(members, metavar, nullable), metavar=metavar,
                      default=None if param.required else param.default)
            literals = _literal_values(members)
            if literals and len(members) == 1 and not nullable:
                kw["choices"] = literals
                kw.pop("metavar")
        if param.required and form not in ("switch", "negated"):
            kw["required"] = True
    kw["help"] = kw["help"].replace("%", "%%")  # argparse formats help with %
    return spec, kw


def _values(op: Any, ns: argparse.Namespace) -> dict[str, Any]:
    """The arguments of the call, as the shell gave them (mappings from NAME=VALUE pairs, an
    arm with its seeds as a list)."""
    values = {}
    for param in params(op, "cli"):
        if param.name == "plot":
            continue
        value = getattr(ns, param.name)
        if isinstance(value, list) and value and all(isinstance(v, tuple) for v in value):
            value = dict(value)
        seeds = getattr(ns, f"_{param.name}_seeds", None) if param.arg.kind == ARM else None
        if seeds:
            value = [value, *seeds]
        if value is NULL:
            values[param.name] = None
        elif value is not None or param.required:
            values[param.name] = value
    return values


def run_operation(op: Any, ns: argparse.Namespace) -> Any:
    """Check, call and (with --plot) picture one operation from the parsed shell words."""
    checked = validate(op, _values(op, ns), "cli")
    result = invoke(op, checked, HERE)
    out = getattr(ns, "plot", None)
    if out and op.picture is not None:
        drawn = picture(op, checked, result, HERE, out=out, overwrite=bool(
            getattr(ns, "_plot_force", False) or checked.get("overwrite")))
        print(f"picture: {drawn.path} ({drawn.title})", file=sys.stderr)
    return result


# --- the program -------------------------------------------------------------------------------

def _command(argv: list[str]) -> str | None:
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: list[str] | None = None, *, on_ready: Any = None) -> int:
    """Run one command. ``on_ready``: called once a Ctrl-C is this function's to handle (the
    ``whileai-skills`` program keeps Ctrl-C quiet until then: ``whileai_core.shell``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = _command(argv)
    commands = _commands()
    if command is not None and command not in commands:
        old = command.replace("-", "_")
        if old in RENAMED:  # an old tool's name: no alias, the operation's command named
            def spell(name: str) -> str:
                return f"`whileai-skills {OPS[name].command if name in OPS else command}`"
            print(f"error: {renamed(old, spell=spell)}", file=sys.stderr)
            return EXIT_USER
    parser = build_parser("" if command is None else command)  # "": no command's flags
    if command in commands:
        sub = next(a for a in parser._actions if a.dest == "command")  # noqa: SLF001
        sub.choices[command].unknown_flags(argv[argv.index(command) + 1:])
    args, extra = parser.parse_known_args(argv)
    if extra:
        _one_word_too_many(extra, getattr(args, "op", None), parser)
    with speaking(CLI):
        try:
            if on_ready is not None:
                on_ready()
            op = args.op
            result = run_operation(op, args)
            if args.json:
                text = json.dumps(structured(result), indent=2)
            else:
                text = shown(result)  # long strings cut, terminal controls made visible
            code = op.exit_code(result) if op.exit_code else 0
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except Exception as exc:  # noqa: BLE001 - every failure becomes one line
            return _failed(exc, args.command)
    try:
        if text is not None:
            print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return code


def _one_word_too_many(extra: list[str], op: Any, parser: argparse.ArgumentParser
                       ) -> typing.NoReturn:
    """Refuse words the command does not take, naming the flag that takes a file where one does
    (a second rows file given to ``route`` is its ``--teacher-rows``), never only the top-level
    help."""
    if op is None:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    commands = next(a for a in parser._actions if a.dest == "command")  # noqa: SLF001
    sub = commands.choices[op.command]
    words = [w for w in extra if not w.startswith("-")]
    takers = [flag(p.name) for p in params(op, "cli")
              if p.arg.kind in (SOURCE, PATH, ARM, RUN_OR_PATH)
              and cli_form(p) not in ("positional", "many")]
    if words and takers:
        shown = " ".join(words)
        sub.error(f"{shown} is more than `{op.command}` takes without a flag; did you mean "
                  + " or ".join(f"{t} {words[0]}" for t in takers) + "?")
    sub.error(f"unrecognized arguments: {' '.join(extra)}")


def _failed(exc: Exception, command: str) -> int:
    """Print the one line for ``exc``; return the exit code."""
    message = explain(exc)
    if message is not None:
        print(f"error: {message}", file=sys.stderr)
        return EXIT_USER
    if os.environ.get(DEBUG_ENV):
        traceback.print_exception(exc, file=sys.stderr)
        where = f"above ({DEBUG_ENV} is set)"
    else:
        where = _save_traceback(exc)
    print(f"error: {bug_report(exc, f'running `whileai-skills {command}`', traceback_at=where)}",
          file=sys.stderr)
    return EXIT_BUG


def _save_traceback(exc: Exception) -> str:
    """Write the traceback to a file; say where it is (or how to see it)."""
    try:
        fd, path = tempfile.mkstemp(prefix="whileai-skills-crash-", suffix=".txt")
        with os.fdopen(fd, "w") as fh:
            traceback.print_exception(exc, file=fh)
    except OSError:
        return f"shown with {DEBUG_ENV}=1"
    return f"in {path}"
