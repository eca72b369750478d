"""An outside red team of the spend gate, answer path, writes and sessions (after the
"gate" branch landed): each case here is one that got through on main, with the fix's test.

Writes (item 9): the allow-list by kind let through names of those kinds that other programs
read where they find them, and spellings a case-blind file system reads as a refused name:
- ``AGENTS.override.md``: Codex reads it before AGENTS.md in each folder from the git root
  down (developers.openai.com/codex/guides/agents-md, "How Codex discovers guidance");
- ``pytest.toml``: pytest 9.0 reads it first, "even when empty" (docs.pytest.org,
  "Configuration file formats"): a prime-rl config written there replaced a project's
  pytest settings in pyproject.toml;
- ``tox.toml``, ``mise.local.toml`` and ``mise.<env>.toml``, ``mise/config.toml``,
  ``lefthook.toml``, ``Makefile.toml`` (cargo-make), ``pyrightconfig.json``,
  ``babel.config.json``, ``devbox.json`` (its ``init_hook`` runs in ``devbox shell``),
  ``AmazonQ.md`` (Amazon Q's default context) and others of the same classes;
- ``AGENTſ.md`` (a long s, U+017F): ``str.lower`` keeps it, while APFS and NTFS fold it to
  's', so the file is AGENTS.md to a host on macOS or Windows; ``pyteﬆ.toml`` (the ligature
  U+FB06, 'st' by compatibility).
"""

from __future__ import annotations

import pytest

import tool_calls
from test_server_support import call, error_text
from whileai_core.safepath import name_key

# (tool, argument) writing each kind; the valid call of tests/tool_calls.py pointed elsewhere
WRITER = {".toml": ("prime_rl_config", "out"), ".json": ("split_by_task", "out"),
          ".md": ("export_experiments", "out")}

# names another program reads where it finds them, by class (each landed on main)
PROGRAM_READ = [
    "AGENTS.override.md", "sub/AGENTS.override.md", "AmazonQ.md", "codex.md",
    "GEMINI.local.md", "pytest.toml", "tox.toml", "ty.toml", "mise.local.toml",
    "mise.production.toml", "mise/config.toml", "lefthook.toml", "Makefile.toml",
    "treefmt.toml", "rustfmt.toml", "pdm.toml", "typos.toml", "cliff.toml", "hugo.toml",
    "pyrightconfig.json", "babel.config.json", "devbox.json", "lefthook.json", "vcpkg.json",
    "dprint.json", "angular.json"]
# spellings a case-blind file system (APFS, NTFS) or a compatibility fold reads as a refused name
LOOK_ALIKES = ["AGENTſ.md", "pyteﬆ.toml", "ＡＧＥＮＴＳ.md", "Claude.Local.MD", "PyProject.TOML",
               "MISE/Config.toml", "sub/ｐａｃｋａｇｅ.json"]
# what the tools are for still lands
LEGITIMATE = ["configs/rl.toml", "configs/config.toml", "EXPERIMENTS.md", "out/agents-notes.md",
              "holdout_tasks.json", "runs/mise-en-place.toml"]


def _kind(name: str) -> str:
    return next(suffix for suffix in WRITER if name_key(name).endswith(suffix))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    from server.app import build_server

    root = tool_calls.build(tmp_path_factory.mktemp("ws"))
    return root, build_server(root, skills_dir=root / "none")


def _write(server, name: str):
    tool, argument = WRITER[_kind(name)]
    return tool, call(server, tool, {**tool_calls.CALLS[tool], argument: name, "overwrite": True})


@pytest.mark.parametrize("name", PROGRAM_READ + LOOK_ALIKES)
def test_a_name_another_program_reads_is_refused_however_it_is_spelled(workspace, name):
    root, server = workspace
    before = set(root.rglob("*"))
    tool, result = _write(server, name)
    assert "reads on its own where it finds it" in error_text(result, tool), name
    assert set(root.rglob("*")) == before, name  # nothing written, not even a folder


@pytest.mark.parametrize("name", LEGITIMATE)
def test_the_outputs_the_tools_are_for_still_land(workspace, name):
    root, server = workspace
    tool, result = _write(server, name)
    assert not result.is_error, result.content[0].text
    assert (root / name).is_file()


def test_names_are_compared_as_a_case_blind_file_system_folds_them():
    # by hand: U+017F LATIN SMALL LETTER LONG S folds to 's' (CaseFolding.txt, status C);
    # U+FB06 LATIN SMALL LIGATURE ST is 'st' by compatibility (NFKC); full-width letters are
    # ASCII under NFKC; Windows drops trailing dots and spaces
    assert name_key("AGENTſ.md") == "agents.md"
    assert name_key("pyteﬆ.toml") == "pytest.toml"
    assert name_key("ＡＧＥＮＴＳ.md") == "agents.md"
    assert name_key("CLAUDE.md. .") == "claude.md"
    assert "AGENTſ.md".lower() != "agents.md"  # what the check compared before


# --- every answer can be sent (item 2): a file name that is not UTF-8 --------------------------

def test_a_data_folder_holding_a_name_that_is_not_utf8_is_refused_by_name(tmp_path):
    """A name of bytes that are not UTF-8 reads as lone surrogates ('\\udcff'); hashing it into
    the run's identity raised UnicodeEncodeError, answered as "a bug in whileai" (plan and
    launch, both backends). Now the folder is refused, the name shown escaped."""
    import os

    from server.app import build_server

    data = tmp_path / "sftdata"
    data.mkdir()
    (data / "train.jsonl").write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    os.close(os.open(os.fsencode(data) + b"/\xff.jsonl", os.O_WRONLY | os.O_CREAT, 0o644))
    server = build_server(tmp_path, skills_dir=tmp_path / "none")
    for backend in ("local", "modal"):
        result = call(server, "launch_run", {"config_or_recipe": "sft", "backend": backend,
                                             "data": "sftdata"})
        text = error_text(result, "launch_run")
        assert "not UTF-8 text (`\\xff.jsonl`)" in text and "Fix: rename it" in text, text
        assert "bug in whileai" not in text
