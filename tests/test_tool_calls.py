"""The one list of calls (tests/tool_calls.py) holds a call of every operation, each one its
declaration takes: an operation added without its call fails here, saying where to add it."""

from __future__ import annotations

import pytest

from tool_calls import CALLS, REFUSALS, STATEFUL
from whileai_core.errors import ArgumentError
from whileai_core.operations import operations
from whileai_core.operations.surface import validate


def test_every_operation_has_a_call():
    missing = sorted(set(operations()) - set(CALLS) - set(STATEFUL))
    assert not missing, (
        f"no call of {', '.join(missing)}: add one good call of each to CALLS in "
        "tests/tool_calls.py (its arguments by name, as the MCP tool takes them, on the files "
        "build() writes there; or to STATEFUL, with a refusal in REFUSALS, when it needs a run "
        "or an experiment another call makes first)")


def test_every_call_is_of_an_operation():
    for table in (CALLS, STATEFUL, REFUSALS):
        assert set(table) <= set(operations()), set(table) - set(operations())
    assert not set(CALLS) & set(STATEFUL)


@pytest.mark.parametrize("name", sorted({**CALLS, **STATEFUL}))
def test_every_call_takes_its_declared_arguments(name):
    op = operations()[name]
    surface = "mcp" if "mcp" in op.surfaces else "cli"
    arguments = CALLS[name] if name in CALLS else STATEFUL[name]
    try:
        validate(op, arguments, surface)
    except ArgumentError as exc:
        pytest.fail(f"tests/tool_calls.py's call of {name}: {exc}")
