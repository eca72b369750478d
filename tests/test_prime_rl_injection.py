"""Config text is data (a red-team finding; placeholders refused up front).

A newline in `model` or `taskset` used to end the header comment and add keys (`env_vars` with
an LD_PRELOAD, `output_dir`, `clean`) that the reply did not report and validate_config called
ok. Here every string field of prime_rl_config gets newlines, quotes, `#`, a CR, Unicode line
separators and TOML table headers. Each attempt must be either refused with a clear error, or
written so that tomllib (independent of the writer) and validate_config see exactly the keys of
the same config written with a clean value: the payload may only ever be a string value.
"""

from __future__ import annotations

import tomllib

import pytest

from test_server_support import call, error_text, ok
from whileai_core.errors import WhileaiError
from whileai_core.prime_rl import prime_rl_config, validate_config

BASE = dict(taskset="reverse-text", model="Qwen/Qwen3-0.6B")
TEACHER = {"url": "http://localhost:8001/v1", "model": "Qwen/Qwen3-1.7B"}

PAYLOADS = [
    'x\nenv_vars = { LD_PRELOAD = "/tmp/evil.so" }',
    'x"\noutput_dir = "/"\n#',
    "x'\n[clean]\nvalue = true",
    "x # comment",
    'x\r\nclean = true',
    "x\u2028clean = true",
    "x\u0085clean = true",
    'x\\"\nclean = true',
    "x\n[[orchestrator.train.source]]\nname = \"evil\"",
    "x\x00y",
    "x\x1b[31m",
]


def _keys(tree, prefix=""):
    """Every key path of a parsed config (list items by index)."""
    out = set()
    if isinstance(tree, dict):
        for k, v in tree.items():
            out.add(prefix + k)
            out |= _keys(v, prefix + k + ".")
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            out |= _keys(v, f"{prefix}{i}.")
    return out


# (field, how to pass a value, a clean value to compare the keys with)
FIELDS = {
    "model": lambda v: {"model": v},
    "taskset": lambda v: {"taskset": v},
    "train_split": lambda v: {"train_split": v},
    "eval_split": lambda v: {"eval_split": v},
    "run_name": lambda v: {"run_name": v},
    "wandb_project": lambda v: {"wandb_project": v},
    "renderer": lambda v: {"renderer": v},
    "serve_policy": lambda v: {"serve_policy": v},
    "teacher.model": lambda v: {"method": {"name": "opd", "teacher": {**TEACHER, "model": v}}},
    "teacher.url": lambda v: {"method": {"name": "opd", "teacher": {**TEACHER, "url": v}}},
    "teacher.api_key_var": lambda v: {"method": {"name": "opd", "teacher": {
        **TEACHER, "api_key_var": v}}},
    "opsd.privileged": lambda v: {"method": {"name": "opsd", "privileged": v}},
    "opsd.template": lambda v: {"method": {"name": "opsd", "template": "{demonstration} " + v}},
    "override value": lambda v: {"overrides": {"trainer.optim.type": v}},
    "override key": lambda v: {"overrides": {v: 1}},
}
CLEAN = {"model": "Qwen/Qwen3-1.7B", "taskset": "kuhn-poker", "train_split": "train",
         "eval_split": "test", "run_name": "clean", "wandb_project": "clean",
         "renderer": "qwen3", "serve_policy": "http://localhost:8000/v1",
         "teacher.model": "Qwen/Qwen3-4B", "teacher.url": "http://localhost:8002/v1",
         "teacher.api_key_var": "OTHER_KEY", "opsd.privileged": "answer",
         "opsd.template": "clean", "override value": "adamw", "override key": "clean"}


def _config(**kwargs):
    args = {**BASE, **kwargs}
    if "eval_split" in kwargs or "train_split" in kwargs:
        args["taskset"] = "reverse-text"      # the taskset with a split key
    return prime_rl_config(args.pop("taskset"), args.pop("method", "grpo"), **args)


@pytest.mark.parametrize("field", sorted(FIELDS))
@pytest.mark.parametrize("payload", PAYLOADS, ids=[f"p{i}" for i in range(len(PAYLOADS))])
def test_a_payload_is_refused_or_stays_one_string_value(field, payload):
    try:
        result = _config(**FIELDS[field](payload))
    except WhileaiError as err:                 # refused: the message says what to give
        text = str(err)
        assert any(w in text for w in ("Fix", "fix", "allowed:")), text
        return
    parsed = tomllib.loads(result.text)         # the standard library, not our writer
    assert parsed == result.config
    try:
        clean = _config(**FIELDS[field](CLEAN[field]))
    except WhileaiError:
        clean = None
    if clean is not None:
        assert _keys(parsed) == _keys(tomllib.loads(clean.text)), field
    for bad in ("env_vars", "output_dir", "clean", "evil"):
        assert bad not in _keys(parsed) - (_keys(tomllib.loads(clean.text)) if clean else set())
    # the header is comments only: every non-comment line parses into the config above
    header = result.text.split("\n\n", 1)[0]
    assert all(line.startswith("#") for line in header.splitlines()), header
    check = validate_config(result.text)
    assert check.ok, check.errors


@pytest.mark.parametrize("field, payload", [
    ("model", 'Qwen/Qwen3-8B\nenv_vars = { LD_PRELOAD = "/tmp/evil.so" }'),
    ("taskset", 'reverse-text\noutput_dir = "/"\nclean = true'),
])
def test_the_red_team_strings_are_refused_through_the_server(server, field, payload):
    text = error_text(call(server, "prime_rl_config", {**BASE, field: payload}),
                      "prime_rl_config")
    assert f"`{field}`" in text and "control character" in text and "Fix" in text


# --- placeholders -------------------------------------------------------------------------

@pytest.mark.parametrize("field, value", [
    ("taskset", "<your taskset>"), ("taskset", "TODO"), ("taskset", ""), ("taskset", " "),
    ("model", "<model>"), ("model", "todo"), ("model", ""),
    ("teacher.model", "<teacher>"), ("teacher.url", "http://<host>:8001/v1"),
])
def test_placeholders_are_refused_with_the_fix(field, value):
    with pytest.raises(WhileaiError) as err:
        _config(**FIELDS[field](value))
    text = str(err.value)
    assert ("placeholder" in text or "is empty" in text), text
    assert "Fix" in text


GOOD = prime_rl_config("reverse-text", "grpo", model="Qwen/Qwen3-0.6B").text


@pytest.mark.parametrize("old, new, says", [
    ('id = "reverse-text"', 'id = "<your taskset>"', "is a placeholder"),
    ('id = "reverse-text"', 'id = "TODO"', "is a placeholder"),
    ('name = "Qwen/Qwen3-0.6B"', 'name = "<model>"', "model.name"),
])
def test_validate_config_refuses_placeholders(old, new, says):
    check = validate_config(GOOD.replace(old, new, 1))
    assert not check.ok and any(says in e for e in check.errors), check.errors


def test_validate_config_never_answers_a_bare_ok_for_an_unchecked_taskset():
    import importlib.util

    check = validate_config(GOOD)
    assert check.ok
    if importlib.util.find_spec("verifiers") is None:       # this test machine: not importable
        assert any(n.startswith("taskset not checked: 'reverse-text'") for n in check.not_checked)
        assert "not checked: taskset not checked" in check.render()
    else:
        assert not check.not_checked


def test_validate_config_through_the_server_says_what_it_did_not_check(server):
    out = ok(call(server, "validate_config", {"text": GOOD}))
    assert out["ok"] is True
    import importlib.util

    if importlib.util.find_spec("verifiers") is None:
        assert out["not_checked"] and "taskset not checked" in out["not_checked"][0]
