"""An outside red team of the reward sandbox (issue 35 items 3, 4, 11 and the lows), after the
"sandbox" round: each break found on inputs that round did not try, a test that failed before
its fix. The same cases at their full sizes, with totals: ``bench/redteam_sandbox.py``.

- whose code: a conda or pixi environment, a Python installation's standard library
  (``env/lib/python3.11/http/server.py`` serves the folder), ``node_modules``, eggs, an
  unpacked sdist, a legacy ``--target .`` install and a RECORD path CSV quotes all ran as
  rewards, in both forms, over MCP and the library;
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from test_server_support import call, error_text, write_jsonl
from whileai_core.hacking.reward import reward_runner

ONE = [{"prompt": "p", "completion": "c"}]
MARK = ("open('pwned', 'w').close()\nimport sys\nfor line in sys.stdin: print(0.0)\n"
        "def main(prompts, completions, **kw):\n    return [0.0] * len(prompts)\n")
OWN = "import sys\nfor line in sys.stdin: print(0.5)\n"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


# --- whose code: installed layouts the first round did not know --------------------------------

# layout -> (the files, the script given as the reward, the reason its refusal must give)
INSTALLED = {
    "conda env script": ({"env/conda-meta/history": "", "env/bin/jp.py": MARK}, "env/bin/jp.py",
                         "conda environment (env holds conda-meta)"),
    "conda env stdlib": ({"env/conda-meta/history": "", "env/lib/python3.11/http/server.py": MARK},
                         "env/lib/python3.11/http/server.py",
                         "a Python installation's standard library (env/lib/python3.11)"),
    "pixi": ({".pixi/envs/default/conda-meta/history": "",
              ".pixi/envs/default/lib/python3.11/ensurepip/__main__.py": MARK},
             ".pixi/envs/default/lib/python3.11/ensurepip/__main__.py",
             "standard library (.pixi/envs/default/lib/python3.11)"),
    "standalone build": ({".python/bin/python3.11": "", ".python/lib/python3.11/compileall.py":
                          MARK}, ".python/lib/python3.11/compileall.py",
                         "standard library (.python/lib/python3.11)"),
    "prefix's own script": ({".python/bin/python3.11": "", ".python/tools/run.py": MARK},
                            ".python/tools/run.py", "(.python holds bin/python3.11)"),
    "windows prefix": ({"py/python.exe": "", "py/Lib/http/server.py": MARK},
                       "py/Lib/http/server.py", "(py holds python.exe)"),
    "a standard library alone": ({"std/os.py": "", "std/site.py": "",
                                  "std/_collections_abc.py": "", "std/compileall.py": MARK},
                                 "std/compileall.py",
                                 "std holds os.py, site.py and _collections_abc.py"),
    "node_modules": ({"node_modules/node-gyp/gyp/gyp_main.py": MARK},
                     "node_modules/node-gyp/gyp/gyp_main.py", "installed package (node_modules/)"),
    ".eggs": ({".eggs/foo-1.0-py3.11.egg/foo/cli.py": MARK}, ".eggs/foo-1.0-py3.11.egg/foo/cli.py",
              "installed package (.eggs/)"),
    "egg folder": ({"lib/foo-1.0.egg/foo/__main__.py": MARK}, "lib/foo-1.0.egg/foo/__main__.py",
                   "installed package (foo-1.0.egg/)"),
    "EGG-INFO": ({"vendor/foo/EGG-INFO/PKG-INFO": "", "vendor/foo/foo/run.py": MARK},
                 "vendor/foo/foo/run.py", "install target (vendor/foo holds EGG-INFO)"),
    "unpacked sdist": ({"vendor/pip-24.0/PKG-INFO": "Name: pip\n",
                        "vendor/pip-24.0/src/pip/__main__.py": MARK},
                       "vendor/pip-24.0/src/pip/__main__.py", "(vendor/pip-24.0 holds PKG-INFO)"),
    "legacy --target .": ({"old-1.0.egg-info/installed-files.txt": "../old/run.py\n",
                           "old/run.py": MARK}, "old/run.py",
                          "old-1.0.egg-info/installed-files.txt lists it"),
    "quoted RECORD path": ({"weird-1.0.dist-info/RECORD": '"weird/a,b.py",sha256=x,1\n',
                            "weird/a,b.py": MARK}, "weird/a,b.py",
                           "weird-1.0.dist-info/RECORD lists it"),
}


@pytest.mark.parametrize("layout", INSTALLED)
@pytest.mark.parametrize("form", ["command", "function"])
def test_an_installed_layout_is_never_a_reward(server, ws, layout, form):
    files, script, reason = INSTALLED[layout]
    for path, text in files.items():
        _write(ws / path, text)
    write_jsonl(ws / "tasks.jsonl", [{"task_id": "t1", "prompt": "p"}])
    reward = ["python", script] if form == "command" else f"{script}:main"
    text = error_text(call(server, "cheat_probes", {"reward": reward, "tasks": "tasks.jsonl"}),
                      "cheat_probes")
    assert "is not your own code" in text and reason in text, text
    assert not (ws / "pwned").exists()  # before: the installed file's code ran (48 of 48 tries)


def test_the_projects_own_code_beside_every_installed_layout_still_runs(tmp_path):
    for files, _, _ in INSTALLED.values():
        for path, text in files.items():
            _write(tmp_path / path, text)
    # the project's own folders, named like nothing an installer makes: a lib/ of its own code,
    # a bin/ of its own scripts, a package with a version in its name, an egg-info of its own
    # (editable, no installed-files.txt) in the root
    _write(tmp_path / "bin/tool.sh", "")
    _write(tmp_path / "mine.egg-info/PKG-INFO", "Name: mine\n")
    for script in ("grade.py", "lib/grading/score.py", "bin/grade.py", "rewards/v1.0/grade.py",
                   "old/mine.py", "weird/own.py"):
        _write(tmp_path / script, OWN)
        assert list(reward_runner(["python", script], root=tmp_path)(ONE)) == [0.5], script
