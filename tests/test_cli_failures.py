"""No traceback reaches a user of the CLI: what is theirs to fix is one line naming the path (or
the package) and the fix, exit 2; a bug is one line saying so and where to report it, exit 70.

The output-path cases are the ones a newcomer hit: a folder given as --out with
--force, a folder that cannot be created (/proc), a folder the system refuses (/sys).
"""

from __future__ import annotations

import errno
import json
import subprocess
import sys
from pathlib import Path

import pytest

from whileai_core.cli import EXIT_BUG, main
from whileai_core.failures import explain, explain_os_error

ROOT = Path(__file__).resolve().parents[1]
TRACE = {"task_id": "t1", "reward": 1.0,
         "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}


@pytest.fixture
def files(tmp_path):
    traces = tmp_path / "traces.jsonl"
    traces.write_text(json.dumps(TRACE) + "\n")
    held = tmp_path / "held.jsonl"
    held.write_text(json.dumps({"task_id": "h1", "prompt": "something else entirely"}) + "\n")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    return {"traces": str(traces), "held": str(held), "folder": str(folder)}


def _one_line(capsys, argv: list[str], code: int = 2) -> str:
    assert main(argv) == code
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in err and "Errno" not in err
    return err


OUTPUT_CASES = {
    # id: (argv with {placeholders}, the path the message must name, what it must say)
    "export-sft --out FOLDER --force": (
        ["export-sft", "{traces}", "--out", "{folder}", "--force"], "{folder}", "directory"),
    "export-sft --out /proc/nope/x.jsonl": (
        ["export-sft", "{traces}", "--out", "/proc/nope/x.jsonl"], "/proc/nope", "no such file"),
    "select-sft --out /sys/x.jsonl": (
        ["select-sft", "{traces}", "--out", "/sys/x.jsonl"], "/sys/x.jsonl", "permission denied"),
    "config --out FOLDER --force": (
        ["config", "reverse-text", "--model", "Qwen/Qwen3-8B", "--out", "{folder}",
         "--force"],
        "{folder}", "directory"),
    "decontaminate --out FILE/x.jsonl": (
        ["decontaminate", "{traces}", "{held}", "--out", "{traces}/x.jsonl"], "{traces}",
        "a file is in the way, where a folder is needed"),
}


@pytest.mark.parametrize("case", list(OUTPUT_CASES))
def test_bad_output_path_is_one_line_and_exit_2(case, files, capsys):
    argv, path, says = OUTPUT_CASES[case]
    err = _one_line(capsys, [a.format(**files) for a in argv])
    assert path.format(**files) in err and says in err and "Fix:" in err


def test_bad_output_path_as_a_process_prints_no_traceback(files):
    proc = subprocess.run([sys.executable, "-m", "whileai_core.cli", "export-sft",
                           files["traces"], "--out", files["folder"], "--force"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_an_existing_file_names_the_cli_flag(files, capsys):
    out = Path(files["folder"]) / "kept.jsonl"
    out.write_text("old\n")
    err = _one_line(capsys, ["select-sft", files["traces"], "--out", str(out)])
    assert "Fix: pass --force" in err and "overwrite" not in err
    assert out.read_text() == "old\n"


def test_unreadable_input_names_the_path(files, capsys):
    err = _one_line(capsys, ["pass-at", files["traces"] + "/rows.jsonl"])
    assert files["traces"] in err and "no such file" in err


@pytest.fixture()
def rows_here(tmp_path, monkeypatch):
    """A valid rows.jsonl in the current directory: the call reaches the core's statistics."""
    (tmp_path / "rows.jsonl").write_text('{"task_id": "a", "reward": 1}\n')
    monkeypatch.chdir(tmp_path)


def test_a_bug_says_so_and_where_to_report_it(monkeypatch, capsys, tmp_path, rows_here):
    import whileai_core.stats.report as report  # where rate calls pass_at

    def broken(*args, **kwargs):
        raise KeyError("per_task")

    monkeypatch.setattr(report, "pass_at", broken)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.delenv("WHILEAI_DEBUG", raising=False)
    err = _one_line(capsys, ["pass-at", "rows.jsonl"], code=EXIT_BUG)
    assert "bug in whileai, not in your input" in err and "report it" in err
    assert "KeyError" in err and "whileai-skills pass-at" in err
    (saved,) = tmp_path.glob("whileai-skills-crash-*.txt")
    assert str(saved) in err and "raise KeyError" in saved.read_text()


def test_a_bug_with_debug_shows_the_traceback(monkeypatch, capsys, rows_here):
    import whileai_core.stats.report as report  # where rate calls pass_at

    monkeypatch.setattr(report, "pass_at", lambda *args, **kwargs: 1 / 0)
    monkeypatch.setenv("WHILEAI_DEBUG", "1")
    assert main(["pass-at", "rows.jsonl"]) == EXIT_BUG
    assert "Traceback" in capsys.readouterr().err


def test_a_missing_extra_names_the_pip_command(monkeypatch, capsys, rows_here):
    import whileai_core.stats.report as report  # where rate calls pass_at

    def needs_tokenizers(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'tokenizers'", name="tokenizers")

    monkeypatch.setattr(report, "pass_at", needs_tokenizers)
    err = _one_line(capsys, ["pass-at", "rows.jsonl"])
    assert "`tokenizers` is not installed" in err and "[train]" in err and "pip install" in err
    assert "--index-url https://download.pytorch.org/whl/cpu" in err


def test_a_missing_module_of_ours_is_a_bug():
    assert explain(ModuleNotFoundError("No module named 'whileai_core.nope'",
                                       name="whileai_core.nope")) is None


def test_a_rename_names_the_target_not_the_temporary_file(tmp_path):
    # os.replace(tmp, target) fails naming both; the user gave the second
    err = IsADirectoryError(errno.EISDIR, "Is a directory", str(tmp_path / ".x.abcd1234.tmp"),
                            None, str(tmp_path / "x"))
    text = explain_os_error(err)
    assert text.startswith(f"{tmp_path / 'x'}: is a folder") and ".tmp" not in text


def test_the_temporary_file_is_reported_as_its_target(tmp_path):
    err = PermissionError(errno.EACCES, "Permission denied", str(tmp_path / ".out.jsonl.whileai-4242-0123456789ab.tmp"))
    text = explain_os_error(err)
    assert text == (f"{tmp_path / 'out.jsonl'}: cannot create a file in {tmp_path} (permission "
                    "denied). Fix: choose a folder you may write to")


def test_an_unlisted_errno_still_names_the_path():
    text = explain_os_error(OSError(errno.ENXIO, "No such device or address", "/dev/x"))
    assert text == "/dev/x: no such device or address. Fix: check the path and try again"
