"""`whileai-skills init` while a skills folder is moved aside or swapped for a link: refused, and
everything is left as it was, including the folder that was moved (it used to keep the skill
folders made in it before the swap), and the refusal at the shell says what to do there.

The swap is made at every point of the write: after the k-th file is staged (``os.fsync`` of a
staged file) and before the k-th file is put in place (``os.link``). What "as it was" means is a
snapshot of the tree taken before init ran, compared file by file and folder by folder.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from whileai_core.cli import main
from whileai_core.errors import ConfigError
from whileai_core.init import init_project
from whileai_core.voice import MCP, speaking

CMD = "whileai-mcp"


def _tree(root: Path) -> dict[str, object]:
    """Every entry under root: a folder as "dir", a link as its target, a file as its bytes."""
    out: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = ("link", os.readlink(path))
        elif path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = path.read_bytes()
    return out


def _pack(tmp_path: Path) -> Path:
    """Three small skills of two files each (one in a subfolder): eight files to stage with
    `.mcp.json` and AGENTS.md, and folders made inside folders made."""
    skills = tmp_path / "pack"
    for name in ("alpha", "beta", "gamma"):
        (skills / name / "references").mkdir(parents=True)
        (skills / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\n")
        (skills / name / "references" / "notes.md").write_text(f"notes of {name}\n")
    return skills


def _project(tmp_path: Path, pack: Path) -> Path:
    """A project whose `.claude/skills` already holds the user's own skill and the pack's
    `beta` without its notes (init adds a file to a folder that was there)."""
    project = tmp_path / "proj"
    skills = project / ".claude" / "skills"
    (skills / "mine").mkdir(parents=True)
    (skills / "mine" / "SKILL.md").write_text("---\nname: mine\ndescription: my own\n---\n")
    (skills / "beta").mkdir()
    (skills / "beta" / "SKILL.md").write_bytes((pack / "beta" / "SKILL.md").read_bytes())
    return project


def _swap(project: Path, tmp_path: Path, how: str) -> Path:
    """Move `.claude/skills` aside and (but for "renamed") put a link in its place; return where
    it went."""
    skills = project / ".claude" / "skills"
    if how == "link in":   # moved inside the project, and the link leads to it
        moved = project / ".claude" / "skills-moved"
        os.rename(skills, moved)
        skills.symlink_to("skills-moved", target_is_directory=True)
        return moved
    moved = tmp_path / "moved-away"
    os.rename(skills, moved)
    if how == "link out":
        (tmp_path / "outside").mkdir()
        skills.symlink_to(tmp_path / "outside", target_is_directory=True)
    return moved


def _run_with_swap(tmp_path, monkeypatch, how: str, at: str, k: int):
    """init with the swap made at the k-th staged file (``at="stage"``) or before the k-th file
    put in place (``at="commit"``); (whether it was made, the error, the trees before, the
    folder moved)."""
    pack = _pack(tmp_path)
    project = _project(tmp_path, pack)
    before = _tree(project)
    calls, moved = [], []
    real_fsync, real_link = os.fsync, os.link

    def fsync(fd):
        real_fsync(fd)
        if at == "stage" and stat.S_ISREG(os.fstat(fd).st_mode):
            calls.append(fd)
            if len(calls) == k and not moved:
                moved.append(_swap(project, tmp_path, how))

    def link(*args, **kwargs):
        calls.append(args)
        if at == "commit" and len(calls) == k and not moved:
            moved.append(_swap(project, tmp_path, how))
        return real_link(*args, **kwargs)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "link", link)
    error = None
    try:
        init_project(project, hosts=["claude"], command=CMD, skills_dir=pack)
    except ConfigError as err:
        error = err
    monkeypatch.undo()
    return error, before, project, (moved[0] if moved else None)


def _as_it_was(before: dict, project: Path, tmp_path: Path, moved: Path, how: str) -> None:
    inside = {k[len(".claude/skills/"):]: v for k, v in before.items()
              if k.startswith(".claude/skills/")}
    assert _tree(moved) == inside                      # the moved folder: exactly what it held
    rest = {k: v for k, v in before.items() if not k.startswith(".claude/skills")}
    if how == "renamed":
        assert _tree(project) == rest                  # nothing remade in its place
        return
    after = _tree(project)
    link = after.pop(".claude/skills")                 # the test's own link
    assert link[0] == "link"
    if how == "link in":
        after = {k: v for k, v in after.items() if not k.startswith(".claude/skills-moved")}
    else:
        assert _tree(tmp_path / "outside") == {}       # nothing written where the link leads
    assert after == rest


@pytest.mark.parametrize("how", ["link out", "link in", "renamed"])
@pytest.mark.parametrize("at", ["stage", "commit"])
def test_a_folder_moved_at_any_point_is_left_as_it_was(tmp_path, monkeypatch, how, at):
    k, seen = 0, 0
    while True:
        k += 1
        case = tmp_path / f"{k}"
        case.mkdir()
        error, before, project, moved = _run_with_swap(case, monkeypatch, how, at, k)
        if moved is None:      # fewer than k files: every point has been tried
            assert error is None
            break
        seen += 1
        assert error is not None and "init changed nothing" in str(error), (k, error)
        _as_it_was(before, project, case, moved, how)
    # 8 files are staged (.mcp.json, 3 x 2 skill files less beta's SKILL.md, which is there,
    # AGENTS.md: 7) and each of the 7 is put in place with a link
    assert seen == 7


def test_a_swap_after_the_first_skill_keeps_the_moved_folder_clean(tmp_path, monkeypatch):
    """The case found from outside: the folder is swapped once a skill folder is made in it
    (the third staged file: `.mcp.json`, then alpha's two). That folder used to stay behind in
    the moved one."""
    error, before, project, moved = _run_with_swap(tmp_path, monkeypatch, "link out", "stage", 3)
    assert error is not None and moved is not None
    assert sorted(p.name for p in moved.iterdir()) == ["beta", "mine"]
    assert sorted(p.name for p in (moved / "beta").iterdir()) == ["SKILL.md"]
    _as_it_was(before, project, tmp_path, moved, "link out")


def _cli_refusal(tmp_path, monkeypatch, capsys) -> str:
    pack = _pack(tmp_path)
    project = _project(tmp_path, pack)
    real_fsync, count = os.fsync, []

    def fsync(fd):
        real_fsync(fd)
        if stat.S_ISREG(os.fstat(fd).st_mode):
            count.append(fd)
            if len(count) == 2:
                _swap(project, tmp_path, "link out")

    monkeypatch.setattr(os, "fsync", fsync)
    code = main(["init", str(project), "--hosts", "claude", "--command", CMD,
                 "--skills-dir", str(pack)])
    monkeypatch.undo()
    assert code == 2
    return capsys.readouterr().err


def test_the_refusal_at_the_shell_says_to_replace_the_link_with_a_folder(tmp_path, monkeypatch,
                                                                          capsys):
    err = _cli_refusal(tmp_path, monkeypatch, capsys)
    assert "init changed nothing" in err
    assert "replace the link `.claude/skills` with a real folder" in err
    assert f"leads outside {(tmp_path / 'proj').resolve()}" in err
    assert "server" not in err and "workspace" not in err      # not the server's words
    assert err.count("Fix:") == 1 and err.count("\n") == 1


def test_the_server_keeps_its_own_words_for_a_link(tmp_path):
    """Over MCP a link on a path is fixed by passing another path: that wording stays."""
    from whileai_core.safepath import Root

    (tmp_path / "outside").mkdir()
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "data").symlink_to(tmp_path / "outside", target_is_directory=True)
    door = Root(tmp_path / "ws")
    with speaking(MCP), pytest.raises(ConfigError) as err:
        door.locate("data/x", argument="path").open_folder(create=True, error=ConfigError)
    assert "leads outside the workspace root" in str(err.value)
    assert "the server follows no links" in str(err.value)
