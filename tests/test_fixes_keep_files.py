"""No fix the product suggests destroys a file.

The red-team case: a CSV refused with a one-liner that wrote ``rows.jsonl`` in the current
folder replaced the user's own ``rows.jsonl``. Now every command a message suggests writes a name
derived from its input that does not exist yet (``graded.csv`` -> ``graded.jsonl``, else
``graded-2.jsonl``), and is a command that refuses to replace a file anyway (the product's
``import --out`` without ``--force``, a one-liner that opens its output with ``"x"``).

Each shape of file the readers name is made here, in a folder that already holds the files the
old fixes wrote (``rows.jsonl``, ``renamed.jsonl``) and the first name each fix would derive;
every suggested command is read out of the message, checked, run twice, and the folder's other
files compared byte for byte.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from whileai_core import RowsError, load_rows
from whileai_core.traces import load_traces
from whileai_core.voice import CLI, MCP, PYTHON, speaking

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
       "PYTHONPATH": str(ROOT)}
USERS_OWN = b'{"task_id": "mine", "reward": 1.0, "note": "the user\'s own rows"}\n'

# file name -> bytes: every shape the readers refuse with a command in the fix
SHAPES = {
    "graded.csv": b"task_id,reward,truncated\n007,1,false\n007,0,false\n8,true,true\n",
    "scores.tsv": b"problem_id\tscore\na\t1\nb\t0\n",
    "semi.csv": b"Task ID;reward\na;1\n",
    "table.parquet": b"PAR1\x15\x04\x15\x00",
    "wide.jsonl": '{"task_id": "a", "reward": 1}\n'.encode("utf-16"),
    "doc.json": json.dumps({"version": 2, "samples": [{"task_id": "a", "reward": 1.0}]},
                           indent=2).encode(),
    "one.json": json.dumps({"samples": [{"task_id": "a", "reward": 1.0}]}).encode() + b"\n",
    "named.jsonl": b'{"id": "a", "score": 1}\n{"id": "b", "score": 0}\n',
    "passed.jsonl": b'{"task_id": "a", "passed": true}\n',
}
TRACES = {"chats.jsonl": b'{"task_id": "a", "conversations": [{"role": "user", "content": "hi"}]}\n'}
# what an old fix wrote, and what each new fix would name first: all taken by the user
TAKEN = ["rows.jsonl", "renamed.jsonl", "scores.jsonl", "named-2.jsonl", "chats-2.jsonl"]


def _folder(tmp_path: Path) -> Path:
    for name, data in {**SHAPES, **TRACES}.items():
        (tmp_path / name).write_bytes(data)
    for name in TAKEN:
        (tmp_path / name).write_bytes(USERS_OWN)
    return tmp_path


def _message(path: Path, reader: str) -> str:
    with speaking(reader), pytest.raises(RowsError) as err:
        (load_traces if path.name in TRACES else load_rows)(path.name)
    return str(err.value)


# a suggested command: a shell line (python3 -c '...' ARGS, whileai-skills ...) or a call
SHELL_COMMAND = re.compile(r"(python3 -c '[^']*'(?: [^\s()]+)+|whileai-skills [^()]*?)(?= \(|$)")
WRITES = re.compile(r"(?:--out|--out-dir|--holdout-out|--train-out) (\S+)|\bout=['\"]([^'\"]+)")


def _commands(message: str) -> list[str]:
    fix = message.split("Fix: ", 1)[1]
    return [m.group(1).rstrip(".,;") for m in SHELL_COMMAND.finditer(fix)]


def _outputs(command: str) -> list[str]:
    words = shlex.split(command)
    named = [a or b for a, b in WRITES.findall(command)]
    if words[0] == "python3":  # a one-liner: sys.argv[2] is what it writes
        named.append(words[-1])
    return named


def test_a_users_rows_jsonl_survives_following_the_csv_fix(tmp_path):
    """The red-team case, end to end at the shell."""
    (tmp_path / "rows.jsonl").write_bytes(USERS_OWN)
    (tmp_path / "graded.csv").write_bytes(SHAPES["graded.csv"])
    refused = subprocess.run(["whileai-skills", "route", "graded.csv", "--model", "m"],
                             cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2, refused.stderr
    (command,) = _commands(refused.stderr.strip())
    assert command == "whileai-skills import graded.csv --out graded.jsonl"
    assert len(refused.stderr) < 200  # one line a person reads (the one-liner was 652 characters)
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=ENV, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "rows.jsonl").read_bytes() == USERS_OWN
    rows = load_rows(tmp_path / "graded.jsonl")
    # typed as a person reads the cells: the id keeps its zeros, 1/0/true a reward, false a flag
    assert rows.task_ids == ["007", "8"]
    assert rows.reward.tolist() == [1.0, 0.0, 1.0] and rows.truncated.tolist() == [False, False, True]
    written = (tmp_path / "graded.jsonl").read_bytes()
    again = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=ENV, capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 2 and "already exists" in again.stderr
    assert (tmp_path / "graded.jsonl").read_bytes() == written
    # the next suggestion names the next free name
    refused = subprocess.run(["whileai-skills", "route", "graded.csv", "--model", "m"],
                             cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=120)
    assert _commands(refused.stderr.strip()) == [
        "whileai-skills import graded.csv --out graded-2.jsonl"]


@pytest.mark.parametrize("name", [*SHAPES, *TRACES])
def test_every_suggested_command_writes_a_new_name_and_refuses_to_overwrite(tmp_path, name,
                                                                            monkeypatch):
    folder = _folder(tmp_path)
    monkeypatch.chdir(folder)
    message = _message(folder / name, CLI)
    commands = _commands(message)
    assert commands, f"no command in the fix of {name}: {message}"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    for command in commands:
        assert " > " not in command and "--force" not in command, command
        outputs = _outputs(command)
        assert outputs, command
        for out in outputs:
            assert not (folder / out).exists(), f"{command} names {out}, which exists"
        if command.startswith("python3 -c "):
            assert 'open(sys.argv[2], "x"' in command, command  # refuses a file that exists
        assert len(command) < 300, command
        first = subprocess.run(["bash", "-c", command], cwd=folder, env=ENV,
                               capture_output=True, text=True, timeout=120)
        if name == "table.parquet":  # needs pandas and pyarrow, not installed here
            continue
        assert first.returncode == 0, (command, first.stderr)
        made = {out: (folder / out).read_bytes() for out in outputs}
        second = subprocess.run(["bash", "-c", command], cwd=folder, env=ENV,
                                capture_output=True, text=True, timeout=120)
        assert second.returncode != 0, f"run twice, {command} replaced its output"
        assert made == {out: (folder / out).read_bytes() for out in outputs}
        for out in outputs:  # what it wrote is read as it should be
            (load_traces if name in TRACES else load_rows)(folder / out)
    for old, data in before.items():
        assert (folder / old).read_bytes() == data, f"following the fix changed {old}"


@pytest.mark.parametrize("name", ["graded.csv", "named.jsonl"])
def test_the_python_and_mcp_spellings_name_the_same_free_file(tmp_path, name, monkeypatch):
    import whileai_core

    folder = _folder(tmp_path)
    monkeypatch.chdir(folder)
    python = _message(folder / name, PYTHON)
    mcp = _message(folder / name, MCP)
    free = shlex.split(_commands(_message(folder / name, CLI))[0])[-1]
    assert f"out='{free}'" in python and f'out="{free}"' in mcp
    call = python.split("Fix: ", 1)[1].split(": ", 1)[-1]
    eval(call, {"import_rows": whileai_core.import_rows})  # noqa: S307 (the message's own call)
    assert load_rows(folder / free).n_rows >= 1
    with pytest.raises(whileai_core.errors.WhileaiError, match="already exists"):
        eval(call, {"import_rows": whileai_core.import_rows})  # noqa: S307


def _strings(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):
            yield node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{}"
                                       for v in node.values)


REDIRECT = re.compile(r"\s>>?\s*[\w{][\w.{}/-]*\.(?:jsonl|json|csv|tsv|txt|toml)\b")


def test_no_message_redirects_a_command_into_a_file():
    """A shell ``>`` replaces what is there: no string in the product suggests one."""
    found = []
    for path in [*(ROOT / "whileai_core").rglob("*.py"), *(ROOT / "server").rglob("*.py"),
                 *(ROOT / "recipes").rglob("*.py")]:
        for line, text in _strings(ast.parse(path.read_text(encoding="utf-8"))):
            if REDIRECT.search(text):
                found.append(f"{path.relative_to(ROOT)}:{line}: {text[:120]!r}")
    assert not found, "\n".join(found)
