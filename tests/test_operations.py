"""The operations registry: one declaration per operation, and everything read from it.

``whileai_core.operations`` declares each operation once; the MCP tools, the CLI commands, the
package's exports and the spellings of a call (``whileai_core.voice``) are generated from the
declarations. These tests hold the generated pieces to the declarations, and the declarations to
the rules every operation follows (one schema per concept, a description on every command and
argument, one spelling of defaults, a Result that renders).
"""

from __future__ import annotations

import inspect
import json

import pytest

import whileai_core
from whileai_core import voice
from whileai_core.operations import (MODULES, RENAMED, TOOLSETS, Effect, operation,
                                     operations)
from whileai_core.operations.surface import input_model, params
from whileai_core.result import Result

OPS = operations()


def test_every_module_of_the_table_of_contents_declares_operations():
    assert {op.module for op in OPS.values()} == set(MODULES)
    assert {op.toolset for op in OPS.values()} == set(TOOLSETS)


@pytest.mark.parametrize("name", sorted(OPS))
def test_each_operation_is_complete(name):
    op = OPS[name]
    assert op.title and len(op.description) >= 40
    assert isinstance(op.effect, Effect)
    result = op.result_type()
    assert issubclass(result, Result) and result.render is not Result.render
    assert op.serves[0] == name
    # the export is the operation itself, its declared arguments checked (operations.checks)
    assert getattr(whileai_core, name).__wrapped__ is op.fn


def test_the_exports_hold_no_second_name_for_an_operation():
    from whileai_core import _EXPORTS

    assert not set(_EXPORTS) & set(OPS)
    assert set(OPS) <= set(whileai_core.__all__)


def test_the_readers_spellings_come_from_the_declarations():
    # voice.OPS once said noise_floor and split_by_task had no MCP tool; both did
    for name, op in OPS.items():
        spelled = voice.OPS[name]
        assert spelled.command == (op.command if "cli" in op.surfaces else None)
        assert spelled.tool == (name if "mcp" in op.surfaces else None)
        assert spelled.positional == tuple(p.name for p in params(op, "cli")
                                           if p.arg.positional)
    assert voice.OPS["noise_floor"].tool == "noise_floor"
    assert voice.OPS["split_by_task"].tool == "split_by_task"
    assert voice.OPS["init_project"].tool is None


def test_the_table_of_calls_is_what_the_declarations_give():
    # voice and the package's exports read calls.json: they sit below the declarations
    from whileai_core.operations.__main__ import main
    from whileai_core.operations.calls import call_table

    assert main(["--check"]) == 0, "Fix: python -m whileai_core.operations"
    assert set(call_table()) == set(OPS)
    assert {n: e["module"] for n, e in call_table().items()} == {n: op.module
                                                                 for n, op in OPS.items()}


def _schemas(argument: str) -> set[str]:
    found = set()
    for op in OPS.values():
        if "mcp" not in op.surfaces:
            continue
        props = input_model(op).model_json_schema()["properties"]
        if argument in props:
            schema = {k: v for k, v in props[argument].items()
                      if k not in ("default", "description", "title")}
            found.add(json.dumps(schema, sort_keys=True))
    return found


@pytest.mark.parametrize("argument", ["level", "seed", "threshold", "overwrite", "cluster",
                                      "detail", "offset", "limit"])
def test_one_schema_per_concept(argument):
    # before: level had 7 schemas over 19 tools, metric 5, seed 3, threshold 3
    assert len(_schemas(argument)) == 1, _schemas(argument)


def test_metric_means_one_thing():
    # import_rows' scorer was called metric
    assert "scorer" in input_model(OPS["import_rows"]).model_fields
    assert "metric" not in input_model(OPS["import_rows"]).model_fields
    # three shared types: a metric the caller names, one the rows may choose ("auto": the core
    # reads the reward's kind), and one a registered experiment may have named (null: the
    # registered one); no operation spells its own
    from whileai_core.operations.args import AutoMetric, Metric, RegisteredMetric

    for name, op in OPS.items():
        for param in params(op, "mcp"):
            if param.name == "metric":
                assert param.annotation in (Metric, AutoMetric, RegisteredMetric), name
    literal = {tuple(json.loads(s)["enum"]) if "enum" in json.loads(s) else
               tuple(json.loads(s)["anyOf"][0]["enum"]) + (None,) for s in _schemas("metric")}
    assert literal == {("pass", "reward"), ("auto", "pass", "reward"), ("pass", "reward", None)}


def test_every_command_has_a_description_every_flag_a_help_and_json(capsys):
    from whileai_core.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")  # noqa: SLF001
    assert set(sub.choices) == {op.command for op in OPS.values() if "cli" in op.surfaces}
    for command, p in sub.choices.items():
        assert p.description and len(p.description) >= 40, command
        dests = {a.dest for a in p._actions}  # noqa: SLF001
        assert "json" in dests, command
        for action in p._actions:  # noqa: SLF001
            if action.dest != "help":
                assert action.help, (command, action.dest)
                # one spelling for defaults
                assert "(default " not in action.help and "%(default)" not in action.help


def test_flags_are_the_argument_names_with_dashes():
    from whileai_core.cli import build_parser, cli_form

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")  # noqa: SLF001
    for name, op in OPS.items():
        if "cli" not in op.surfaces:
            continue
        flags = {s for a in sub.choices[op.command]._actions for s in a.option_strings}  # noqa: SLF001
        for param in params(op, "cli"):
            if param.arg.positional or param.name == "plot":
                continue
            want = voice.CLI_FLAGS.get(param.name, ("-" if len(param.name) == 1 else "--")
                                       + param.name.replace("_", "-"))
            if cli_form(param) == "negated":
                want = "--no-" + param.name.replace("_", "-")
            assert want in flags, (name, param.name, flags)


def test_a_renamed_name_is_not_an_operation_and_points_to_one():
    for old, new in RENAMED.items():
        assert new in OPS, (old, new)
        assert old not in OPS


# The commands `whileai-skills --help` listed before the registry (and the three skills that came
# with it): users, the README, the examples and the issues type these names.
COMMANDS_BEFORE = (
    "describe route pass-at compare compare-many noise-floor holdout-size launch status collect "
    "cancel runs config validate audit-judge order-reversal split select-sft decontaminate "
    "export-sft fingerprint freeze failure-capable by-category init import cheat-probes "
    "prove-reward hack-scan watch doctor register-experiment record-run experiments "
    "export-experiments archive-experiment dpo-pairs dpo-data grpo-plan").split()


def test_the_command_names_come_from_the_declarations():
    from whileai_core.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")  # noqa: SLF001
    for name, op in OPS.items():
        if "cli" not in op.surfaces:
            continue
        # declared once: the declaration's cli name, else the operation's name with dashes
        assert op.command == (op.cli or name.replace("_", "-")), name
        assert sub.choices[op.command].get_default("op") is op, name
    # each command is one operation's
    commands = [op.command for op in OPS.values() if "cli" in op.surfaces]
    assert len(commands) == len(set(commands))
    # a short name is declared where the operation's name is not what users type
    assert {n: op.cli for n, op in OPS.items() if op.cli} == {
        "describe_rows": "describe", "route_rows": "route", "rate": "pass-at", "prime_rl_config": "config",
        "validate_config": "validate", "launch_run": "launch", "run_status": "status",
        "list_runs": "runs", "collect_run": "collect", "cancel_run": "cancel",
        "watch_run": "watch", "diagnose_run": "doctor", "eval_fingerprint": "fingerprint",
        "freeze_holdout": "freeze", "category_table": "by-category", "split_by_task": "split",
        "import_rows": "import", "init_project": "init", "list_experiments": "experiments",
        "write_dpo_data": "dpo-data"}


@pytest.mark.parametrize("command", COMMANDS_BEFORE)
def test_every_command_users_type_still_parses(command, capsys):
    from whileai_core.cli import main

    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert f"usage: whileai-skills {command}" in capsys.readouterr().out


def test_an_old_tool_name_at_the_shell_names_the_command(capsys):
    from whileai_core.cli import main

    assert main(["mean-reward", "rows.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "`whileai-skills mean-reward` is now `whileai-skills pass-at`" in err
    assert "Fix: call `whileai-skills pass-at`" in err


def test_a_command_name_is_checked_and_declared_once():
    def fake(rows):
        return rows

    with pytest.raises(ValueError, match="not a command name"):
        operation(toolset="core", effect=OPS["route_rows"].effect, title="t", description="d",
                  result="whileai_core.routing:Route", doing="d", cli="Pass_At")(fake)


def test_a_second_declaration_of_a_name_is_refused():
    def route_rows(rows):  # another module declaring an operation of the same name
        return rows

    route_rows.__module__ = "somewhere.else"
    with pytest.raises(RuntimeError, match="declared twice"):
        operation(toolset="core", effect=OPS["route_rows"].effect, title="t", description="d",
                  result="whileai_core.routing:Route", doing="d")(route_rows)


def test_an_operation_s_python_call_matches_its_tool(tmp_path):
    # Python callers get the whole result; the signature is the tool's arguments
    sig = inspect.signature(OPS["rate"].fn)
    assert {"rows", "metric", "field", "k", "level", "seed", "threshold", "cluster"} == \
        set(sig.parameters)
    assert set(input_model(OPS["rate"]).model_fields) == set(sig.parameters) | {
        "detail", "offset", "limit", "model_filter"}


def _beyond(info) -> list[tuple[str, float]]:
    """A number just outside each end of a field's declared range, with the end's name."""
    out = []
    for item in info.metadata:
        for end, step in (("ge", -1), ("gt", 0), ("le", 1), ("lt", 0)):
            bound = getattr(item, end, None)
            if bound is not None:
                out.append((end, bound + step * max(1, abs(bound)) if step else bound))
    return out


# (the surfaces' own options, the page of a table, are not the function's: left out)
NUMBERS = [(name, p.name, end, value)
           for name, op in sorted(OPS.items()) for p in params(op, "cli")
           if p.name in inspect.signature(op.fn).parameters
           and set(getattr(p.info.annotation, "__args__", ()) or {p.info.annotation}) & {int, float}
           for end, value in _beyond(p.info)]


def test_the_numbers_checked_are_every_declared_range():
    assert len(NUMBERS) > 80  # a filter that lost its numbers would pass the test below vacuously
    assert {"level", "seed", "k", "effect", "threshold", "looks", "n_shuffles"} <= {
        n for _, n, _, _ in NUMBERS}


@pytest.mark.parametrize("name, arg, end, value", NUMBERS,
                         ids=[f"{n}-{a}-{e}" for n, a, e, _ in NUMBERS])
def test_a_python_call_meets_the_declared_range_in_the_surfaces_words(name, arg, end, value):
    """Out of its declared range, a number is refused before the function runs (the other
    arguments are placeholders it never reads), in the words the shell's and MCP's model use."""
    op = OPS[name]
    required = {p.name: "x" for p in params(op, "cli") if p.required and not p.many}
    with pytest.raises(whileai_core.ArgumentError) as python:
        getattr(whileai_core, name)(**{**required, arg: value})
    with voice.speaking(voice.CLI):
        with pytest.raises(whileai_core.ArgumentError) as shell:
            from whileai_core.operations.surface import validate
            validate(op, {**required, arg: value}, "cli")
    said = str(python.value)
    assert said.startswith("invalid arguments: ") and f"`{arg}` = " in said, said
    # the same refusal of this argument, up to how each door spells its name and its fix
    assert said.split(": ", 2)[2].split(". Fix:")[0] in str(shell.value), (said, shell.value)
