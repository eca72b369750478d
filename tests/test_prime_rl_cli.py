"""`whileai-skills config` and `whileai-skills validate` from the shell entry point:
the same arguments as the MCP tools, every knob a flag."""

from __future__ import annotations

import json
import tomllib

from whileai_core.cli import main

SFT = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"
TEACHER = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL@http://localhost:8001/v1"


def test_config_writes_the_opd_arm_and_validate_accepts_it(tmp_path, capsys):
    out = tmp_path / "opd.toml"
    opd = json.dumps({"name": "opd", "teacher": TEACHER})
    rc = main(["config", "reverse-text", "--model", SFT, "--method", opd, "--steps", "20",
               "--lr", "3e-6", "--no-lora", "--max-tokens", "128", "--group-size", "16",
               "--train-split", "train[:872]", "--eval-split", "train[872:]", "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0 and f"prime-rl config: {out}" in text and f"run: uv run rl @ {out}" in text
    data = tomllib.loads(out.read_text())
    assert data["orchestrator"]["algo"]["teacher"]["base_url"] == "http://localhost:8001/v1"
    assert main(["validate", str(out)]) == 0
    assert capsys.readouterr().out.startswith("OK:")
    # a second write without --force is refused as one line, exit 2
    assert main(["config", "reverse-text", "--model", SFT, "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_config_json_method_correction_and_overrides(capsys):
    method = {"name": "async", "method": {"name": "max_rl"}, "correction": "icepop",
              "off_policy_steps": 2}
    rc = main(["config", "reverse-text", "--model", SFT, "--method", json.dumps(method),
               "--overrides", "trainer.optim.weight_decay=0.0", 'run.name="rt"', "--json"])
    result = json.loads(capsys.readouterr().out)
    assert rc == 0 and result["method"] == "async(max_rl, icepop)"
    assert result["config"]["orchestrator"]["max_off_policy_steps"] == 2
    assert result["config"]["trainer"]["optim"]["weight_decay"] == 0.0
    assert result["config"]["run"] == {"name": "rt"}


def test_config_refusal_is_one_line_with_exit_2(capsys):
    assert main(["config", "reverse-text", "--model", SFT, "--method", "sao"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: prime-rl cannot run SAO") and err.count("\n") == 1


def test_validate_rejects_with_exit_1(tmp_path, capsys):
    bad = tmp_path / "old.toml"
    bad.write_text('[orchestrator]\nrollouts_per_example = 8\n[trainer]\n')
    assert main(["validate", str(bad), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert not report["ok"] and any("rollouts_per_example" in e for e in report["errors"])
    assert main(["validate", str(tmp_path / "missing.toml")]) == 2


def test_every_knob_of_the_writer_is_a_flag():
    # the CLI once passed 16 of the writer's 30 knobs; now every one has its flag
    import inspect

    from whileai_core.cli import build_parser
    from whileai_core.prime_rl import prime_rl_config

    parser = build_parser("config")
    sub = next(a for a in parser._actions if a.dest == "command").choices["config"]
    dests = {a.dest for a in sub._actions}
    knobs = set(inspect.signature(prime_rl_config).parameters) - {"root"}
    assert len(knobs) == 31 and knobs <= dests, knobs - dests



def test_serve_policy_takes_a_base_url_at_the_shell(capsys):
    # the knob is `true`, `false` or the base URL of a policy the user serves; a URL typed at
    # the shell once failed to parse ("expected bool or Annotated")
    url = "http://10.1.2.3:9001/v1"
    rc = main(["config", "reverse-text", "--model", SFT, "--serve-policy", url, "--json"])
    result = json.loads(capsys.readouterr().out)
    assert rc == 0 and result["config"]["orchestrator"]["model"]["client"]["base_url"] == url
    assert "inference" not in result["config"]
    rc = main(["config", "reverse-text", "--model", SFT, "--serve-policy", "false", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert rc == 0 and "inference" not in result["config"]
