"""The fourth red-team round, writes: each writing tool writes only its kind
of output under the server's root, decided from its argument's declared kind, never from a list
of bad names alone. Before: 78 of 84 writes to host and agent configuration landed
(``.devcontainer.json``, ``crush.json``, ``.aider.conf.yml``, ``*.code-workspace``,
``package.json``, CI files, ``CLAUDE.local.md``, ``AGENT.md``...).

Every writing argument of every tool is tried (its valid call from ``tests/tool_calls.py``, the
one argument pointed at a target); ``whileai-skills init``, which the user runs, still writes
host configuration (``tests/test_redteam3.py::test_init_still_writes_host_configuration``).
"""

from __future__ import annotations

import pytest

import tool_calls
from test_server_support import call, error_text
from whileai_core.operations import operations
from whileai_core.operations.args import OUT
from whileai_core.operations.surface import params
from whileai_core.safepath import OUTPUTS

# what the red team wrote to, by class: a host's own file at the top, a hidden config, CI, a
# workspace file, a build manifest, an agent's instructions, code Python runs on its own
FILE_TARGETS = [".devcontainer.json", "crush.json", ".aider.conf.yml", "proj.code-workspace",
                "package.json", ".github/workflows/ci.yml", ".gitlab-ci.yml",
                "azure-pipelines.yml", "CLAUDE.local.md", "AGENT.md", "AGENTS.md",
                "pyproject.toml", "Makefile", "sitecustomize.py", "x.pth", ".envrc",
                "sub/.mcp.json", "skills/x/SKILL.md", "opencode.json", "uv.toml"]
FOLDER_TARGETS = [".github/workflows", ".devcontainer", ".husky", ".claude/skills/x",
                  ".git/hooks", "ok/.vscode"]


def _writing_arguments() -> list[tuple[str, str, str]]:
    """(tool, argument, kind) of every argument that writes, from the declarations."""
    return [(op.name, p.name, p.arg.writes) for op in operations().values()
            for p in params(op, "mcp") if p.arg.kind == OUT]


WRITING = _writing_arguments()


def _pointed(tool: str, argument: str, target: str) -> dict:
    """The tool's valid call with ``argument`` pointed at ``target`` (and overwrite asked for,
    where the tool has it: an existing file is no excuse)."""
    names = {p.name for p in params(operations()[tool], "mcp")}
    extra = {"overwrite": True} if "overwrite" in names else {}
    return {**tool_calls.CALLS[tool], argument: target, **extra}


def test_every_writing_argument_declares_its_kind():
    assert WRITING and all(kind in OUTPUTS for _, _, kind in WRITING), WRITING
    assert {name for name, _, _ in WRITING} <= set(tool_calls.CALLS)  # each one tried below


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    from server.app import build_server

    root = tool_calls.build(tmp_path_factory.mktemp("ws"))
    return root, build_server(root, skills_dir=root / "none")


@pytest.mark.parametrize("tool, argument, kind", WRITING)
def test_no_writing_tool_writes_anything_but_its_kind(workspace, tool, argument, kind):
    root, server = workspace
    targets = FOLDER_TARGETS if OUTPUTS[kind].folder else FILE_TARGETS
    landed = []
    for target in targets:
        before = {p for p in root.rglob("*")}
        result = call(server, tool, _pointed(tool, argument, target))
        text = error_text(result, tool)
        assert "no tool writes" in text or "writes only" in text, (target, text)
        if (root / target).exists() or {p for p in root.rglob("*")} - before:
            landed.append(target)
    assert landed == []


@pytest.mark.parametrize("tool, argument, kind", WRITING)
def test_the_refusal_names_the_kind_the_argument_writes(workspace, tool, argument, kind):
    root, server = workspace
    if OUTPUTS[kind].folder:
        pytest.skip("a data folder is named freely (outside hidden folders): no kind to name")
    text = error_text(call(server, tool, _pointed(tool, argument, "out/wrong.kind")), tool)
    assert f"`{argument}` writes only {OUTPUTS[kind].what}" in text, text
    assert f"e.g. {OUTPUTS[kind].example}" in text and "Fix:" in text
    assert not (root / "out" / "wrong.kind").exists()


def test_the_kind_is_read_from_the_name_case_blind(workspace):
    root, server = workspace
    arguments = {**tool_calls.CALLS["select_sft"], "out": "out/UPPER.JSONL", "overwrite": True}
    assert not call(server, "select_sft", arguments).is_error
    assert (root / "out" / "UPPER.JSONL").exists()
    for name in ("PACKAGE.JSON", "Agents.MD", ".Claude/x.jsonl"):
        arguments = {**tool_calls.CALLS["split_by_task"], "out": name, "overwrite": True}
        assert call(server, "split_by_task", arguments).is_error, name
        assert not (root / name).exists()


def test_a_refused_output_leaves_the_other_outputs_unwritten(workspace):
    """split_by_task writes three files or none: a bad `out` refuses before the sides land."""
    root, server = workspace
    arguments = {**tool_calls.CALLS["split_by_task"], "out": "package.json",
                 "train_out": "out/never.jsonl", "overwrite": True}
    assert call(server, "split_by_task", arguments).is_error
    assert not (root / "out" / "never.jsonl").exists() and not (root / "package.json").exists()
