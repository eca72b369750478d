"""A misspelt command, flag, value, method or config key: one line, exit 2 (a config that
`validate` reads exits 1, its verdict), naming what was probably meant."""

from __future__ import annotations

from pathlib import Path

import pytest

from whileai_core.cli import EXIT_USER, main
from whileai_core.errors import close_to
from whileai_core.prime_rl.key_tree import key_tree

ROOT = Path(__file__).resolve().parents[1]
ROWS = str(ROOT / "examples" / "graded.jsonl")


def _refused(capsys, argv: list[str]) -> str:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's refusal
        code = exc.code
    assert code == EXIT_USER
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert "Traceback" not in captured.err and "usage:" not in captured.err
    return captured.err


@pytest.mark.parametrize("argv, meant", [
    (["rout", ROWS], "did you mean `route`?"),
    (["pass-a", ROWS], "did you mean `pass-at`?"),
    (["route", ROWS, "--modle", "Qwen/Qwen3-8B"], "did you mean --model?"),
    (["pass-at", ROWS, "--treshold", "0.5"], "did you mean --threshold?"),
    (["pass-at", ROWS, "--metric", "rewrd"], "did you mean reward?"),
    (["launch", "sft", "--backend", "locl"], "did you mean local?"),
    (["config", "env", "--model", "Qwen/Qwen3-8B", "--method", "gpro"], "did you mean 'grpo'?"),
    (["config", "env", "--model", "Qwen/Qwen3-8B", "--method", "grpo", "--overrides",
      "trainer.optim.max_nrom=0.5"], "did you mean `trainer.optim.max_norm`?"),
    (["launch", "sfft", "--state-dir", "state"], "did you mean `sft`?"),
    (["hack-scan", ROWS, "--features", "lenght"], "did you mean `length`?"),
])
def test_a_misspelling_names_what_was_meant(argv, meant, capsys):
    err = _refused(capsys, argv)
    assert meant in err


def test_a_word_close_to_nothing_lists_where_the_choices_are(capsys):
    err = _refused(capsys, ["xyzzy"])
    assert "unknown command `xyzzy`" in err and "did you mean" not in err
    assert "`whileai-skills --help`" in err
    err = _refused(capsys, ["route", ROWS, "--model", "Q/Q", "--qqqqqq"])
    assert "unknown flag --qqqqqq" in err and "did you mean" not in err


def test_a_unique_prefix_and_a_negative_number_are_not_misspellings(capsys):
    assert main(["route", ROWS, "--model", "Qwen/Qwen3-8B", "--thresh", "1"]) == 0  # an abbreviation
    capsys.readouterr()
    # -0.5 is read as a number, not a flag: it is refused for what it is, a pass mark every
    # 0/1 reward reaches
    assert main(["pass-at", ROWS, "--threshold", "-0.5"]) == 2
    err = capsys.readouterr().err
    assert "did you mean" not in err and "-0.5 is at or below every reward" in err


def test_validate_names_the_close_key_of_the_pinned_schema(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["config", "env", "--model", "Qwen/Qwen3-8B", "--method", "grpo",
                 "--out", "rl.toml"]) == 0
    text = Path("rl.toml").read_text()
    Path("bad.toml").write_text(text.replace("[trainer.optim]\n",
                                             "[trainer.optim]\nmax_nrom = 1.0\n"))
    capsys.readouterr()
    assert main(["validate", "bad.toml"]) == 1
    out = capsys.readouterr().out
    assert "unknown key `trainer.optim.max_nrom` (did you mean `trainer.optim.max_norm`?)" in out


def test_the_key_tree_is_the_schemas_and_close_means_close():
    keys = key_tree()
    # keys the writer emits and prime-rl 559b447 declares (packages/prime-rl-configs/src/
    # prime_rl/configs/: trainer.py, orchestrator.py)
    assert {"trainer.optim.max_norm", "trainer.optim.lr", "orchestrator.batch_size"} <= keys
    assert close_to("max_nrom", ["max_norm", "lr", "weight_decay"]) == ["max_norm"]
    assert close_to("zzz", ["max_norm", "lr"]) == []


def test_a_missing_launch_config_names_the_command_that_writes_one(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = _refused(capsys, ["launch", "missing.toml", "--state-dir", "state"])
    assert "`whileai-skills config` wrote" in err and "prime_rl_config" not in err
