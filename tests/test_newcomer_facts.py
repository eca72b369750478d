"""What the newcomer's third pass found said wrong, each checked where it is
said: a note said once, the HTTP banner's tool count, reads that create nothing, and the local
smoke's plan naming the model it trains."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from whileai_core.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def test_teacher_clears_says_its_budget_note_once(capsys):
    # examples/: neither side records max_tokens, so the budget is not checked (said once)
    assert main(["teacher-clears", str(EXAMPLES / "teacher.jsonl"),
                 str(EXAMPLES / "graded.jsonl")]) in (0, 1)
    out = capsys.readouterr().out
    assert out.count("budget not checked") == 1, out


def test_the_http_banner_counts_the_tools_a_client_lists(tmp_path):
    """It said "all tools on" while the default surface lists 13."""
    from mcp import Client

    from server.app import build_server
    from server.transport import http_settings

    for toolsets in (None, "all"):
        server = build_server(tmp_path, skills_dir=ROOT / "skills", toolsets=toolsets)

        async def go():
            async with Client(server) as client:
                return (await client.list_tools()).tools

        names = [t.name for t in anyio.run(go)]
        token = {"WHILEAI_MCP_TOKEN": "abcdefghijklmnopqrstuvwxyz012345"}  # --http needs one on every address
        banner = http_settings("127.0.0.1", 8765, environ=token).describe(str(tmp_path),
                                                                    server.listing())
        assert "all tools on" not in banner
        assert f"  {len(names)} tools listed: {len(names) - 1} of the toolset" in banner, banner
        assert ("more in the toolsets off" in banner) == (toolsets is None)


@pytest.mark.parametrize("argv", [
    ["status", "run-0123456789ab"], ["collect", "run-0123456789ab"], ["runs"],
    ["cancel", "run-0123456789ab"], ["watch", "run-0123456789ab"],
    ["doctor", "run-0123456789ab"], ["experiments"],
])
def test_a_read_of_an_unknown_run_creates_no_registry(tmp_path, monkeypatch, capsys, argv):
    """`status` of an unknown run created ~/.whileai/runs.sqlite3 (the newcomer's finding; the
    lookups read with create=False on main since e7b2582/f8e2423): no read writes the registry,
    in the default state folder or a named one."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("WHILEAI_STATE_DIR", raising=False)
    (tmp_path / "home").mkdir()
    (tmp_path / "named").mkdir()
    for extra in ([], ["--state-dir", str(tmp_path / "named")]):
        assert main([*argv, *extra]) in (0, 2)
    capsys.readouterr()
    assert sorted(tmp_path.rglob("*")) == [tmp_path / "home", tmp_path / "named"]


def test_the_local_smokes_plan_names_the_tiny_model_it_trains(tmp_path):
    """The plan said "trains Qwen/Qwen3-8B (settings.json)" for a local run whose CPU smoke
    trains the tiny model it builds; on Modal it does train the folder's model."""
    from recipes.tiny_model import TINY_MODEL_NAME
    from whileai_core import launch_run

    def data_note(backend):
        notes = launch_run("sft", data=str(EXAMPLES / "sft-data"), backend=backend,
                           state_dir=str(tmp_path)).plan.notes
        (note,) = [n for n in notes if n.startswith("data: ")]
        return note

    local = data_note("local")
    assert local.startswith(f"data: trains {TINY_MODEL_NAME} (the CPU smoke's tiny random model")
    assert "backend='modal' trains Qwen/Qwen3-8B, from settings.json" in local
    assert data_note("modal").startswith("data: trains Qwen/Qwen3-8B (settings.json)")
