"""prime_rl_config and validate_config through the protocol: the file written, refusals, checks.

The written TOML is parsed with the standard library (tomllib), independently of the writer.
"""

from __future__ import annotations

import tomllib

import pytest

from test_server_support import call, error_text, ok

GRPO = {"taskset": "reverse-text", "method": "grpo", "model": "Qwen/Qwen3-0.6B"}


def test_writes_the_toml_it_reports(server, ws):
    out = ok(call(server, "prime_rl_config", {**GRPO, "out": "configs/rl.toml", "steps": 40}))
    path = ws / "configs" / "rl.toml"
    assert out["path"] == str(path.resolve())
    text = path.read_text(encoding="utf-8")
    assert text == out["text"]
    parsed = tomllib.loads(text)
    assert parsed["max_steps"] == 40 == out["steps"]
    assert parsed["model"]["name"] == "Qwen/Qwen3-0.6B"
    assert parsed["orchestrator"]["batch_size"] == out["batch"]
    assert out["batch"] % out["group_size"] == 0
    assert out["command"]                                     # the launch line is given
    assert ok(call(server, "validate_config", {"path": "configs/rl.toml"}))["ok"] is True


def test_preview_writes_nothing(server, ws):
    out = ok(call(server, "prime_rl_config", GRPO))
    assert out["path"] is None and list(ws.iterdir()) == []
    assert tomllib.loads(out["text"])["model"]["name"] == "Qwen/Qwen3-0.6B"


def test_an_existing_file_is_kept_unless_overwrite(server, ws):
    target = ws / "rl.toml"
    target.write_text("# mine\n")
    text = error_text(call(server, "prime_rl_config", {**GRPO, "out": "rl.toml"}),
                      "prime_rl_config")
    assert "already exists; not overwriting it" in text and "overwrite" in text
    assert target.read_text() == "# mine\n"
    ok(call(server, "prime_rl_config", {**GRPO, "out": "rl.toml", "overwrite": True}))
    assert tomllib.loads(target.read_text())["model"]["name"] == "Qwen/Qwen3-0.6B"


@pytest.mark.parametrize("out, says", [
    ("../escape.toml", "contains '..'"),
    ("/tmp/whileai-escape.toml", "outside the workspace root"),
    ("link/escape.toml", "symlink that leads outside"),
])
def test_out_stays_inside_the_root(server, ws, tmp_path, out, says):
    (ws / "link").symlink_to(tmp_path, target_is_directory=True)
    text = error_text(call(server, "prime_rl_config", {**GRPO, "out": out}), "prime_rl_config")
    assert says in text and "`out`" in text
    assert not (tmp_path / "escape.toml").exists()


@pytest.mark.parametrize("args, says", [
    ({"method": "sorcery"}, "unknown method 'sorcery'. Fix: one of grpo"),
    ({"method": {"name": "opd"}}, "needs a teacher"),
    ({"method": {"name": "grpo", "bogus": 1}}, "unknown knob `bogus`"),
    ({"batch": 100, "group_size": 16}, "batch"),             # 100 is not a multiple of 16
    ({"gpus": 0}, "gpus"),
    ({"taskset": " "}, "`taskset`"),
    ({"student_vocab": "../tokenizer.json"}, "invalid arguments: `student_vocab`"),
])
def test_bad_knobs_name_the_knob(server, args, says):
    text = error_text(call(server, "prime_rl_config", {**GRPO, **args}), "prime_rl_config")
    assert says in text


def test_validate_text_names_the_renamed_key(server):
    out = ok(call(server, "validate_config",
                  {"text": "[orchestrator]\nrollouts_per_example = 4\n"}))
    assert out["ok"] is False
    assert any("rollouts_per_example" in e and "group_size" in e for e in out["errors"])


def test_validate_text_is_never_read_as_a_path(server):
    # one line, no '=': the core would take it for a path; the tool keeps it as TOML text
    out = ok(call(server, "validate_config", {"text": "/etc/hostname"}))
    assert out["ok"] is False and out["source"] is None
    assert out["errors"][0].startswith("not valid TOML")


@pytest.mark.parametrize("args, says", [
    ({}, "give exactly one of `path`"),
    ({"path": "a.toml", "text": "x = 1"}, "not both"),
    ({"path": "missing.toml"}, "not found"),
    ({"path": "../x.toml"}, "contains '..'"),
    ({"path": "/etc/hostname"}, "outside the workspace root"),
])
def test_validate_bad_arguments(server, args, says):
    text = error_text(call(server, "validate_config", args), "validate_config")
    assert says in text and "Fix" in text
