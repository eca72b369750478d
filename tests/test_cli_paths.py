"""The CLI opens every path through the door too (a red-team finding).

The CLI's root is the path's own folder (the path is resolved as the user's shell would, their
own symlinks followed once, then opened without following any link): it confines nothing, since
the user can read their own files anyway, but it refuses special files before they can block and
never replaces anything that is not a regular file, --force or not. Before, `--force` replaced a
character device (/dev/full) with a regular file, and a FIFO hung a read forever.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from whileai_core.cli import main

CLI = Path(sys.executable).with_name("whileai-skills")
ROWS = [{"task_id": t, "reward": r} for t, r in (("a", 1), ("a", 0), ("b", 1), ("b", 1))]
TRACES = [{"task_id": "a", "messages": [{"role": "user", "content": "hi"},
                                        {"role": "assistant", "content": "hello"}]}]


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / "rows.jsonl")
    # a real process, so a hang is a timeout here rather than a stuck test run
    out = subprocess.run([str(CLI), "pass-at", str(tmp_path / "rows.jsonl")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "is a FIFO (named pipe), not a regular file" in out.stderr and "Fix" in out.stderr
    assert out.stderr.count("\n") == 1                        # one line, no traceback


def _records(path: Path) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in TRACES))
    return str(path)


@pytest.mark.parametrize("force", [False, True])
def test_an_output_that_is_not_a_regular_file_is_never_replaced(tmp_path, capsys, force):
    records = _records(tmp_path / "traces.jsonl")
    os.mkfifo(tmp_path / "out.jsonl")
    (tmp_path / "dir.jsonl").mkdir()
    (tmp_path / "kept.jsonl").write_text("mine\n")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "kept.jsonl")
    for target, kind in (("out.jsonl", "a FIFO (named pipe)"), ("dir.jsonl", "a directory")):
        argv = ["export-sft", records, "--out", str(tmp_path / target)] + (
            ["--force"] if force else [])
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"exists and is {kind}, not a regular file; it is never replaced" in err
    assert stat.S_ISFIFO(os.lstat(tmp_path / "out.jsonl").st_mode)
    assert (tmp_path / "dir.jsonl").is_dir()
    # a symlink the user names is theirs: followed once, to the file it points at
    argv = ["export-sft", records, "--out", str(tmp_path / "link.jsonl")] + (
        ["--force"] if force else [])
    assert main(argv) == (0 if force else 2)
    assert (tmp_path / "link.jsonl").is_symlink()
    assert ((tmp_path / "kept.jsonl").read_text() == "mine\n") is (not force)
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_a_device_is_never_replaced_even_with_force(tmp_path, capsys):
    device = tmp_path / "full"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 7))   # /dev/full's numbers
    except PermissionError:
        pytest.skip("making a device node needs root (the FIFO case above covers the rule)")
    records = _records(tmp_path / "traces.jsonl")
    assert main(["export-sft", records, "--out", str(device), "--force"]) == 2
    assert "exists and is a character device" in capsys.readouterr().err
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_rows_through_a_users_own_symlinked_folder_still_read(tmp_path, capsys):
    real = tmp_path / "real"
    real.mkdir()
    (real / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)
    assert main(["pass-at", str(tmp_path / "alias" / "rows.jsonl"), "--json"]) == 0
    # (1 + 0) / 2 for a, (1 + 1) / 2 for b: mean over tasks 0.75
    assert json.loads(capsys.readouterr().out)["rate"]["value"] == 0.75
