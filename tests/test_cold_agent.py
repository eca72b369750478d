"""What a cold agent with only the MCP server hit on new files (issue 11, the checker's round).

Each test is one defect found by driving ``whileai-mcp`` as an agent would, on row files the
project had not seen: a message that told an MCP caller to type Python, a cut list that did not
say "n of N", an answer over the size bound, a plan that said ready for a run that cannot start.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from server.app import build_server
from test_server_support import call, ok, write_jsonl
from whileai_core.defaults import LIST_SHOWN_MAX, MCP_ANSWER_MAX_BYTES

MODEL = "Qwen/Qwen3-8B"


@pytest.fixture
def server(tmp_path):
    return tmp_path, build_server(tmp_path, skills_dir=tmp_path / "none")


def answer_bytes(result) -> int:
    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return len(text.encode()) + len(json.dumps(result.structured_content).encode())


# --- an MCP caller is told what it types, never Python ----------------------------------------

def test_the_opd_vocab_note_names_the_mcp_arguments_not_python(server):
    _, srv = server
    out = ok(call(srv, "prime_rl_config", {
        "taskset": "reverse-text", "model": MODEL,
        "method": {"name": "opd", "teacher": {"url": "http://localhost:8001/v1",
                                              "model": "Qwen/Qwen3-32B"}}}))
    note = next(n for n in out["notes"] if n.startswith("tokenizers not compared"))
    assert "Endpoint(" not in note and "vocab=)" not in note, note
    assert '"vocab"' in note and '"student_vocab"' in note, note
    # the arguments the note names are the ones the schema takes: following it clears the note
    followed = ok(call(srv, "prime_rl_config", {
        "taskset": "reverse-text", "model": MODEL,
        "method": {"name": "opd", "teacher": {"url": "http://localhost:8001/v1",
                                              "model": "Qwen/Qwen3-32B", "vocab": 151936},
                   "student_vocab": 151936}}))
    assert not any(n.startswith("tokenizers not compared") for n in followed["notes"])
