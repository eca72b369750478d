"""The workspace root confines every path a tool touches.

Property guarded: a tool can only read or write under --root. Two advisories against the
reference filesystem MCP server show the traps: CVE-2025-53110 (a string-prefix check let
`/allowed-evil` pass for `/allowed`) and CVE-2025-53109 (a symlink inside the allowed folder led
out of it). Both are tested here.
"""

from __future__ import annotations

import pytest

from server.paths import Workspace
from whileai_core.errors import ArgumentError


@pytest.fixture()
def layout(tmp_path):
    root = tmp_path / "root"
    (root / "evals").mkdir(parents=True)
    (root / "evals" / "a.jsonl").write_text("{}\n")
    evil = tmp_path / "root-evil"
    evil.mkdir()
    (evil / "secret.jsonl").write_text("{}\n")
    (root / "inside-link.jsonl").symlink_to(root / "evals" / "a.jsonl")
    (root / "out-link.jsonl").symlink_to(evil / "secret.jsonl")
    (root / "out-dir").symlink_to(evil, target_is_directory=True)
    return root, evil


def test_paths_inside_resolve(layout):
    root, _ = layout
    ws = Workspace(root)
    assert ws.resolve("evals/a.jsonl", argument="rows") == (root / "evals" / "a.jsonl").resolve()
    assert ws.resolve(str(root / "evals" / "a.jsonl"), argument="rows") == \
        (root / "evals" / "a.jsonl").resolve()
    assert ws.resolve("inside-link.jsonl", argument="rows") == (root / "evals" / "a.jsonl").resolve()
    # a file that does not exist yet (an output) is fine, in a folder that does not exist yet too
    assert ws.resolve("configs/new/rl.toml", argument="out") == root.resolve() / "configs/new/rl.toml"
    assert ws.relative(ws.resolve("evals/a.jsonl", argument="rows")) == "evals/a.jsonl"


@pytest.mark.parametrize("value, says", [
    ("../root-evil/secret.jsonl", "contains '..'"),
    ("evals/../../root-evil/secret.jsonl", "contains '..'"),
    ("evals/../a.jsonl", "contains '..'"),                  # stays inside, still refused: no '..'
    ("/etc/hostname", "is outside the workspace root"),
    ("out-link.jsonl", "is a symlink that leads outside the workspace root"),   # CVE-2025-53109
    ("out-dir/secret.jsonl", "is a symlink that leads outside the workspace root"),
    ("out-dir/new.toml", "is a symlink that leads outside the workspace root"),  # a write target
    ("", "is empty"),
    ("a\x00b", "NUL byte"),
])
def test_escapes_are_refused(layout, value, says):
    root, _ = layout
    with pytest.raises(ArgumentError) as err:
        Workspace(root).resolve(value, argument="rows")
    assert says in str(err.value) and "`rows`" in str(err.value)


def test_a_sibling_with_the_root_as_prefix_is_outside(layout):
    # CVE-2025-53110: '/x/root-evil' starts with the string '/x/root' but is not inside it
    root, evil = layout
    with pytest.raises(ArgumentError, match="outside the workspace root"):
        Workspace(root).resolve(str(evil / "secret.jsonl"), argument="rows")


def test_root_through_a_symlink(layout, tmp_path):
    root, _ = layout
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    ws = Workspace(alias)
    assert ws.root == root.resolve()
    assert ws.resolve(str(alias / "evals" / "a.jsonl"), argument="rows") == \
        (root / "evals" / "a.jsonl").resolve()


def test_root_must_be_a_folder(tmp_path):
    with pytest.raises(ArgumentError, match="is not a folder"):
        Workspace(tmp_path / "missing")
