"""Issue 12's independent red-team re-check: each hole it found, as a test that failed before.

- a secret in the environment came back through a reward's stdout line or its return values;
- (more sections below, one per finding)
"""

from __future__ import annotations

import json
import os

import pytest

from test_server_support import call, error_text, write_jsonl

SECRETS = {"MODAL_TOKEN_ID": "ak-redteamFAKEID123", "MODAL_TOKEN_SECRET": "as-redteamFAKESECRET456",
           "WHILEAI_MCP_TOKEN": "tok-redteamFAKEMCP789xyz", "OPENAI_API_KEY": "sk-redteamFAKEKEY000"}
TASKS = [{"task_id": f"t{i}", "prompt": f"p{i}", "answer": "a"} for i in range(4)]


@pytest.fixture()
def secrets(monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    return SECRETS


def _no_secret(text: str) -> None:
    for name, value in SECRETS.items():
        assert value not in text, f"{name} echoed: {text}"


# --- secrets: no reply quotes a token, whatever the reward prints or returns -------------------

@pytest.mark.parametrize("reward, code", [
    (["python", "leak.py"], "import os\nprint(os.environ['MODAL_TOKEN_SECRET'])\n"),
    (["python", "leak.py"], "import os, sys, json\nfor line in sys.stdin:\n"
                            "    print(json.dumps(os.environ['OPENAI_API_KEY']))\n"),
    (["python", "leak.py"], "import os, sys\nsys.stderr.write(os.environ['MODAL_TOKEN_ID'])\n"
                            "sys.exit(3)\n"),
    ("leak.py:score", "import os\ndef score(prompts, completions, **kw):\n"
                      "    return [os.environ['MODAL_TOKEN_ID']] * len(prompts)\n"),
    ("leak.py:score", "import os\ndef score(prompts, completions, **kw):\n"
                      "    raise ValueError(os.environ['MODAL_TOKEN_SECRET'])\n"),
])
def test_a_reward_that_prints_a_token_does_not_make_the_server_echo_it(server, ws, secrets,
                                                                        reward, code):
    write_jsonl(ws / "tasks.jsonl", TASKS)
    (ws / "leak.py").write_text(code)
    text = error_text(call(server, "cheat_probes", {"reward": reward, "tasks": "tasks.jsonl"}),
                      "cheat_probes")
    _no_secret(text)
    assert "<$" in text  # the variable is named instead of its value


def test_a_reward_child_never_gets_the_servers_own_token(tmp_path, secrets):
    from whileai_core.hacking.reward import reward_runner

    (tmp_path / "probe.py").write_text(
        "import os, sys\nfor line in sys.stdin:\n"
        "    print(1.0 if 'WHILEAI_MCP_TOKEN' in os.environ else 0.0)\n")
    runner = reward_runner(["python", "probe.py"], root=tmp_path)
    assert list(runner([{"prompt": "p", "completion": "c"}])) == [0.0]


def test_a_run_log_that_prints_a_token_is_quoted_masked(tmp_path, secrets):
    from whileai_core.failures import bug_report, explain
    from whileai_core.errors import ArgumentError
    from whileai_core.runs.local import log_tail

    log = tmp_path / "run.log"
    log.write_text("step\n" * 100_000 + f"auth with {SECRETS['MODAL_TOKEN_SECRET']}\ndone\n")
    tail = log_tail(log, lines=2)
    assert tail == "auth with <$MODAL_TOKEN_SECRET> | done"
    assert SECRETS["OPENAI_API_KEY"] not in explain(ArgumentError(SECRETS["OPENAI_API_KEY"]))
    assert SECRETS["MODAL_TOKEN_ID"] not in bug_report(KeyError(SECRETS["MODAL_TOKEN_ID"]), "x",
                                                       traceback_at="here")
