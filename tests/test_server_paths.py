"""The workspace root confines every path a tool touches.

Property guarded: a tool can only read or write under --root. Two advisories against the
reference filesystem MCP server show the traps: CVE-2025-53110 (a string-prefix check let
`/allowed-evil` pass for `/allowed`) and CVE-2025-53109 (a symlink inside the allowed folder led
out of it). Both are tested here. Since the red-team pass the workspace follows no symlink at all (one
inside the root can be swapped for one leading out between a check and an open): the race
itself is tested in tests/test_safepath.py.
"""

from __future__ import annotations

import pytest

from server.paths import Workspace
from whileai_core.errors import ArgumentError, ConfigError


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
    rows = ws.resolve("evals/a.jsonl", argument="rows")
    assert rows.absolute == (root / "evals" / "a.jsonl").resolve()
    assert rows.read_bytes("rows") == b"{}\n"
    absolute = ws.resolve(str(root / "evals" / "a.jsonl"), argument="rows")
    assert absolute.absolute == rows.absolute and absolute.read_bytes("rows") == b"{}\n"
    # a file that does not exist yet (an output) is fine, in a folder that does not exist yet too
    out = ws.resolve("configs/new/rl.toml", argument="out", writes="toml")
    assert out.absolute == root.resolve() / "configs/new/rl.toml"
    out.write_text("a = 1\n")
    assert (root / "configs" / "new" / "rl.toml").read_text() == "a = 1\n"
    assert ws.relative(rows) == "evals/a.jsonl"


@pytest.mark.parametrize("value, says", [
    ("../root-evil/secret.jsonl", "contains '..'"),
    ("evals/../../root-evil/secret.jsonl", "contains '..'"),
    ("evals/../a.jsonl", "contains '..'"),                  # stays inside, still refused: no '..'
    ("/etc/hostname", "is outside the workspace root"),
    ("", "is empty"),
    ("a\x00b", "NUL byte"),
])
def test_escapes_are_refused_by_their_text(layout, value, says):
    root, _ = layout
    with pytest.raises(ArgumentError) as err:
        Workspace(root).resolve(value, argument="rows")
    assert says in str(err.value) and "`rows`" in str(err.value)


@pytest.mark.parametrize("value, says", [
    ("out-link.jsonl", "is a symlink that leads outside the workspace root"),   # CVE-2025-53109
    ("out-dir/secret.jsonl", "`out-dir` is a symlink that leads outside the workspace root"),
    ("inside-link.jsonl", "is a symlink (to evals/a.jsonl inside the root: pass that path"),
])
def test_symlinks_are_refused_when_opened(layout, value, says):
    root, _ = layout
    with pytest.raises(ArgumentError) as err:
        Workspace(root).resolve(value, argument="rows").read_bytes("rows")
    assert says in str(err.value) and "`rows`" in str(err.value)


def test_a_write_through_a_symlinked_folder_is_refused(layout):
    root, evil = layout
    with pytest.raises(Exception) as err:
        Workspace(root).resolve("out-dir/new.toml", argument="out", writes="toml").write_text(
            "x = 1\n")
    assert "`out-dir` is a symlink that leads outside the workspace root" in str(err.value)
    assert sorted(p.name for p in evil.iterdir()) == ["secret.jsonl"]   # nothing written there


def test_a_write_of_no_declared_kind_is_refused_under_the_root(layout):
    root, _ = layout
    with pytest.raises(ConfigError, match="is not an output this tool declares"):
        Workspace(root).resolve("configs/x.toml", argument="out").write_text("x = 1\n")
    assert not (root / "configs" / "x.toml").exists()


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
    given = ws.resolve(str(alias / "evals" / "a.jsonl"), argument="rows")
    assert given.absolute == (root / "evals" / "a.jsonl").resolve()
    assert given.read_bytes("rows") == b"{}\n"


def test_root_must_be_a_folder(tmp_path):
    with pytest.raises(ArgumentError, match="is not a folder"):
        Workspace(tmp_path / "missing")
