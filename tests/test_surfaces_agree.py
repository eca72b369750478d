"""Every MCP tool against its CLI twin, on the same arguments: the same result, the same refusal.

Both doors are generated from one declaration per operation (``whileai_core.operations``); this
holds them to it from outside. Each call of ``tests/tool_calls.py`` goes once through an
in-process ``mcp.Client`` and once through ``whileai-skills`` (its command line spelled by
``whileai_core.voice`` for the shell, the way a next step is printed: ``tool_calls.shell``), each
in the same workspace
built afresh: the server's root, and the shell's current directory. The structured content and the
``--json`` output must be equal but for the next step (a call spelled for its reader); a refused
call must be refused by both, with the same words up to the fix (which names the flag at the
shell and the argument over MCP).
"""

from __future__ import annotations

import json
import re

import anyio
import pytest
from mcp import Client

from server.app import build_server
from tool_calls import CALLS, REFUSALS, STATEFUL, build, shell
from whileai_core.cli import main
from whileai_core.operations import operations

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
TWINS = sorted(n for n, op in operations().items() if op.surfaces >= {"mcp", "cli"})
# the calls of the twins (an operation offered at one door only has no twin to agree with)
TWIN_CALLS = sorted(set(CALLS) & set(TWINS))


@pytest.fixture()
def here(tmp_path, monkeypatch):
    root = build(tmp_path / "ws")
    monkeypatch.chdir(root)
    monkeypatch.setenv("WHILEAI_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("WHILEAI_SKILLS_DIR", str(ROOT / "skills"))
    return root, build_server(root, skills_dir=ROOT / "skills")


def by_mcp(server, name: str, arguments: dict):
    async def go():
        async with Client(server) as client:
            return await client.call_tool(name, arguments)
    result = anyio.run(go)
    if result.is_error:
        return True, result.content[0].text.removeprefix(f"Error executing tool {name}: ")
    return False, result.structured_content


def by_cli(name: str, arguments: dict, capsys):
    code = main(shell(name, arguments) + ["--json"])
    out = capsys.readouterr()
    if code not in (0, 1):  # 1: validate_config's "refused" exit, with its JSON
        return True, out.err.removeprefix("error: ").strip()
    return False, json.loads(out.out)


def test_every_twin_has_a_call_or_a_refusal():
    assert set(TWIN_CALLS) | set(STATEFUL) == set(TWINS)
    assert set(STATEFUL) <= set(REFUSALS)


@pytest.mark.parametrize("name", TWIN_CALLS)
def test_the_same_result_at_both_doors(here, capsys, name):
    root, server = here
    refused, over_mcp = by_mcp(server, name, CALLS[name])
    assert not refused, over_mcp
    build(root)  # the same files again: what the first call wrote is gone
    refused, at_shell = by_cli(name, CALLS[name], capsys)
    assert not refused, at_shell
    # the next call, as its reader types it (a nested answer's too: prove_reward's probes)
    at_shell, over_mcp = _without_next_steps(at_shell), _without_next_steps(over_mcp)
    assert _same(_as_tools(at_shell), over_mcp), (at_shell, over_mcp)


def _without_next_steps(value):
    if isinstance(value, dict):
        return {k: _without_next_steps(v) for k, v in value.items() if k != "next_step"}
    if isinstance(value, list):
        return [_without_next_steps(v) for v in value]
    return value


COMMANDS = {op.command: name for name, op in operations().items()}


def _as_tools(value):
    """The shell's answer with every operation it names as its reader types it
    (`whileai-skills by-category`) named as the tool (`category_table`)."""
    if isinstance(value, dict):
        return {k: _as_tools(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_tools(v) for v in value]
    if isinstance(value, str):
        return re.sub(r"whileai-skills ([a-z][a-z-]*)",
                      lambda m: COMMANDS.get(m.group(1), m.group(0)), value)
    return value


def _as_names(text: str) -> str:
    """Every flag a text names (`--detail`, `--overrides`) as its argument's name: the shell
    says the flag where MCP says the argument."""
    return re.sub(r"(?<![\w-])--([a-z][a-z-]*)", lambda m: m.group(1).replace("-", "_"), text)


_CUT = re.compile(r"^(.*)\.\.\.\(([\d,]+) of ([\d,]+) characters\)$", re.S)


def _same(whole, sent) -> bool:
    """``sent`` (an MCP answer) is ``whole`` (the shell's), but for what the answer's byte bound
    cut (``Result.bounded``): strings, each saying "n of N characters", and lists, the first or
    last items kept and ``shown`` saying "n of N shown". An answer such as diagnose_run's never
    fits whole, so it arrives cut."""
    if isinstance(whole, dict) and isinstance(sent, dict):
        return whole.keys() == sent.keys() and all(
            _same(whole[k], sent[k]) or (k == "shown" and " shown" in (sent[k] or ""))
            for k in whole)
    if isinstance(whole, list) and isinstance(sent, list):
        if len(sent) < len(whole):  # a list cut: its first or its last items
            return _same(whole[:len(sent)], sent) or _same(whole[-len(sent):], sent)
        return len(whole) == len(sent) and all(map(_same, whole, sent))
    if isinstance(whole, str) and isinstance(sent, str) and whole != sent:
        cut = _CUT.match(sent)
        if cut is None:
            return _as_names(whole) == _as_names(sent)
        flags = _as_names(whole) != whole  # the whole MCP text, cut, cannot be renamed alike
        return _as_names(whole).startswith(_as_names(cut.group(1))) and (
            flags or len(whole) == int(cut.group(3).replace(",", "")))
    return whole == sent


def _words(text: str) -> str:
    """A refusal up to its fix, every flag written as its argument's name."""
    text = text.split(". Fix:")[0]
    text = re.sub(r"`([A-Z][A-Z_]*)`", lambda m: f"`{m.group(1).lower()}`", text)  # a metavar
    text = re.sub(r" \(`\w+`\)", "", text)          # a path's argument, named over MCP only
    text = re.sub(r"= (\d+)\.0\b", r"= \1", text)     # 0 read at the shell as the float 0.0
    return re.sub(r"(?<![\w-])--?([a-z][a-z-]*)", lambda m: m.group(1).replace("-", "_"), text)


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_the_same_refusal_at_both_doors(here, capsys, name):
    root, server = here
    refused, over_mcp = by_mcp(server, name, REFUSALS[name])
    assert refused, over_mcp
    refused, at_shell = by_cli(name, REFUSALS[name], capsys)
    assert refused, at_shell
    assert _words(at_shell) == _words(over_mcp)
