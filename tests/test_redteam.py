"""An independent red-team re-check: each hole it found, as a test that failed before.

- a secret in the environment came back through a reward's stdout line or its return values;
- (more sections below, one per finding)
"""

from __future__ import annotations

import json
import os

import pytest

from test_server_support import call, error_text, write_jsonl

SECRETS = {"MODAL_TOKEN_ID": "ak-redteamFAKEID123",
           "MODAL_TOKEN_SECRET": "as-redteamFAKESECRET456",
           "WHILEAI_MCP_TOKEN": "tok-redteamFAKEMCP789xyz",
           "OPENAI_API_KEY": "sk-redteamFAKEKEY000"}
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
    # the reward gets a secret only when the call names it (pass_env); what it prints is masked
    text = error_text(call(server, "cheat_probes", {"reward": reward, "tasks": "tasks.jsonl",
                                                    "pass_env": sorted(SECRETS)[:-1]}),
                      "cheat_probes")
    _no_secret(text)
    # nothing the reward printed, returned or raised is quoted, masked or not
    assert "not quoted" in text, text


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


# --- the skills folder: read through the door (a FIFO hung the start, links served outside) ----

def test_the_skills_folder_follows_no_link_and_reads_no_fifo(tmp_path):
    import shutil
    import threading

    from server.app import build_server

    skills, outside, ws = tmp_path / "skills", tmp_path / "outside", tmp_path / "ws"
    outside.mkdir()
    ws.mkdir()
    shutil.copytree(os.path.join(os.path.dirname(__file__), "..", "skills", "pick-a-method"),
                    skills / "pick-a-method")
    marker = "OUTSIDE-redteam-7731"
    (outside / "SKILL.md").write_text(f"---\nname: linked\ndescription: {marker}\n---\n{marker}\n")
    (skills / "pick-a-method" / "notes.md").symlink_to(outside / "SKILL.md")
    (skills / "evil").mkdir()
    (skills / "evil" / "SKILL.md").symlink_to(outside / "SKILL.md")
    (skills / "linked").symlink_to(outside, target_is_directory=True)
    (skills / "fifo").mkdir()
    os.mkfifo(skills / "fifo" / "SKILL.md")
    os.mkfifo(skills / "pick-a-method" / "pipe.md")

    built = []
    starter = threading.Thread(target=lambda: built.append(build_server(ws, skills_dir=skills)),
                               daemon=True)
    starter.start()
    starter.join(20)
    assert built, "the server did not start: a FIFO in the skills folder blocked it"
    server = built[0]
    listing = call(server, "list_skills", {})
    text = json.dumps(listing.structured_content)
    assert marker not in text
    assert [s["name"] for s in listing.structured_content["skills"]] == ["pick-a-method"]
    files = [f["uri"] for f in listing.structured_content["skills"][0]["files"]]
    assert "skill://pick-a-method/notes.md" not in files
    assert "skill://pick-a-method/pipe.md" not in files
    for name in ("evil", "linked", "fifo"):
        said = error_text(call(server, "get_skill", {"name": name}), "get_skill")
        assert "unknown skill" in said and marker not in said


# --- the data folder of a launch: hashed once, and what is hashed is what the run reads --------

def test_a_launch_stages_the_hashed_data_so_a_later_swap_cannot_reach_the_run(tmp_path,
                                                                              monkeypatch):
    from recipes.sft.data import build_refund_demo
    from whileai_core.runs import api
    from whileai_core.runs.local import LocalBackend

    data = tmp_path / "sft"
    build_refund_demo(data, seed=0, share=0.2)
    before = {p.name: p.read_bytes() for p in data.iterdir() if p.is_file()}
    seen = {}

    def launch(self, record, target, run_dir, lock_fd, starting=lambda: None):
        # the recipe starts later, in another process: the user's folder is swapped first
        (data / "train.jsonl").write_text('{"messages": "swapped after the hash"}\n')
        seen["command"] = self.command(target, run_dir, None)
        seen["run_dir"] = run_dir
        return {"pid": 0}

    monkeypatch.setattr(LocalBackend, "launch", launch)
    monkeypatch.setattr(LocalBackend, "check_ready", lambda self, target=None: None)
    out = api.launch_run("sft", backend="local", data=str(data), confirm=True,
                         state_dir=tmp_path / "state")
    assert out.action == "launched" and str(data) in out.run.target
    given = seen["command"][seen["command"].index("--data") + 1]
    assert given == str(seen["run_dir"] / "data")       # the copy, not the user's folder
    staged = {name: (seen["run_dir"] / "data" / name).read_bytes() for name in before}
    assert staged == before                                # the bytes the id was hashed from


# --- names and ids: a trailing newline passed every `^...$` grammar (re.match) -----------------

@pytest.mark.parametrize("field", ["model", "taskset", "run_name", "wandb_project", "train_split",
                                   "eval_split"])
def test_a_trailing_newline_is_not_an_id(server, ws, field):
    good = {"taskset": "reverse-text", "model": "Qwen/Qwen3-0.6B", "run_name": "run",
            "wandb_project": "proj", "train_split": "train", "eval_split": "test"}
    args = {"taskset": good["taskset"], "model": good["model"], field: good[field] + "\n",
            "out": "c.toml"}
    text = error_text(call(server, "prime_rl_config", args), "prime_rl_config")
    assert "control character '\\n'" in text and "unexpected internal error" not in text, text
    assert not (ws / "c.toml").exists()


@pytest.mark.parametrize("name", ["grpo\n", "..", "..."])
def test_a_run_name_is_one_plain_name(tmp_path, name):
    from whileai_core.errors import ArgumentError
    from whileai_core.runs.api import launch_run

    with pytest.raises(ArgumentError, match="name"):
        launch_run("grpo", backend="local", name=name, state_dir=tmp_path / "s")


@pytest.mark.parametrize("file", ["...toml", "my run.toml", "x\ny.toml"])
def test_a_config_whose_file_name_is_no_run_name_needs_a_name(tmp_path, file):
    from whileai_core.errors import ArgumentError
    from whileai_core.runs.api import launch_run

    (tmp_path / file).write_text('[model]\nname = "Qwen/Qwen3-0.6B"\n')
    with pytest.raises(ArgumentError, match="cannot name the run"):
        launch_run(str(tmp_path / file), state_dir=tmp_path / "s")
    plan = launch_run(str(tmp_path / file), name="ok-run", state_dir=tmp_path / "s")
    assert plan.plan.name == "ok-run"


# --- init: a file where a folder is needed was found only while writing (half-written) ----------

@pytest.mark.parametrize("blocker", [".claude", ".claude/skills", ".claude/skills/pick-a-method"])
@pytest.mark.parametrize("kind", ["fifo", "file", "dangling link"])
def test_init_refuses_a_non_folder_on_a_path_and_writes_nothing(tmp_path, blocker, kind):
    from whileai_core.errors import ConfigError
    from whileai_core.init import init_project

    where = tmp_path / blocker
    where.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(where)
    elif kind == "file":
        where.write_text("not a folder\n")
    else:
        where.symlink_to(tmp_path / "nowhere")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(ConfigError, match="init changed nothing"):
        init_project(tmp_path, hosts=["claude"], command="/opt/whileai/bin/whileai-mcp")
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


# --- zip archives (Inspect .eval logs): what a member unpacks to is under the limit ------------

def _eval_log_with(tmp_path, header_pad: int, compression: int = 8):
    """The canned Inspect log (tests/fixtures/inspect, written by inspect_ai) with header.json
    padded by ``header_pad`` spaces (still valid JSON), re-packed with ``compression``."""
    import zipfile

    pytest.importorskip("zipfile_zstd")  # the fixture is zstd-compressed, as inspect writes it
    fixture = os.path.join(os.path.dirname(__file__), "fixtures", "inspect", "logs",
                           "canned_single.eval")
    out = tmp_path / "log.eval"
    with zipfile.ZipFile(fixture) as src, zipfile.ZipFile(out, "w", compression) as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "header.json":
                data = data[:-1] + b" " * header_pad + data[-1:]
            dst.writestr(name, data)
    return out


def _lie_about_sizes(path, member: str, size: int) -> None:
    """Rewrite the declared unpacked size of ``member`` (local header and central directory)."""
    import struct
    import zipfile

    data = bytearray(path.read_bytes())
    info = zipfile.ZipFile(path).getinfo(member)
    struct.pack_into("<I", data, info.header_offset + 22, size)
    at = data.find(b"PK\x01\x02")
    while at != -1:
        name_len = struct.unpack_from("<H", data, at + 28)[0]
        if bytes(data[at + 46:at + 46 + name_len]) == member.encode():
            struct.pack_into("<I", data, at + 24, size)
        at = data.find(b"PK\x01\x02", at + 4)
    path.write_bytes(bytes(data))


def _root(tmp_path, rows_mb: float):
    from whileai_core.safepath import Limits, Root

    return Root(tmp_path, limits=Limits.from_env({}, max_mb={"rows": rows_mb}))


@pytest.mark.parametrize("compression", [8, 93])  # deflate, zstd (inspect's own)
def test_a_zip_bomb_is_refused_by_what_it_unpacks_to(tmp_path, compression):
    from whileai_core.errors import RowsError

    log = _eval_log_with(tmp_path, 3 << 20, compression)   # 3 MB of spaces: a few KB packed
    assert log.stat().st_size < (1 << 20)
    with pytest.raises(RowsError, match=r"unpacks to 3\.0 MB, over the 1 MB limit"):
        _root(tmp_path, 1).locate("log.eval", argument="path").open_archive("rows",
                                                                             error=RowsError)
    with _root(tmp_path, 8).locate("log.eval", argument="path").open_archive("rows") as fh:
        assert fh.read(2) == b"PK"                         # under the limit: the same handle


@pytest.mark.parametrize("compression", [8, 93])
def test_a_member_that_unpacks_past_its_declared_size_is_refused(tmp_path, compression):
    from whileai_core.errors import RowsError

    log = _eval_log_with(tmp_path, 3 << 20, compression)
    _lie_about_sizes(log, "header.json", 2000)             # "2 KB", while it unpacks to 3 MB
    with pytest.raises(RowsError, match="unpacks past the 2000 bytes its header declares"):
        _root(tmp_path, 1).locate("log.eval", argument="path").open_archive("rows",
                                                                             error=RowsError)


def test_import_rows_refuses_a_zip_bomb_and_keeps_serving(tmp_path, monkeypatch):
    pytest.importorskip("inspect_ai")
    from server.app import build_server

    monkeypatch.setenv("WHILEAI_MAX_ROWS_MB", "1")
    ws = tmp_path / "ws"
    ws.mkdir()
    _eval_log_with(ws, 3 << 20).rename(ws / "bomb.eval")
    server = build_server(ws, skills_dir=ws / "no-skills")
    text = error_text(call(server, "import_rows", {"path": "bomb.eval", "out": "rows.jsonl"}),
                      "import_rows")
    assert "unpacks to 3.0 MB, over the 1 MB limit" in text
    assert "WHILEAI_MAX_ROWS_MB=5" in text  # 3 MB and the log's own 35 KB, rounded up, + 1
    assert call(server, "list_skills", {}).is_error is False


# --- JSON the standard parser fails on in other ways: deep nesting, over-long integers ---------

DEEP = "[" * 100_000 + "]" * 100_000
HOSTILE = {"deep.jsonl": DEEP + "\n",
           "deep_field.jsonl": '{"task_id": "a", "reward": 1, "x": ' + DEEP + "}\n",
           "long_int.jsonl": '{"task_id": "a", "reward": ' + "9" * 5000 + "}\n",
           "deep_array.json": "[" + DEEP + "]\n"}
READERS = [("rate", "rows", {}), ("inspect_rows", "rows", {}), ("hack_scan", "rows", {}),
           ("route_rows", "rows", {"model": "Qwen/Qwen3-8B"}),
           ("import_rows", "path", {"out": "o.jsonl"}), ("audit_judge", "items", {}),
           ("failed_asks", "traces", {"out": "f.jsonl"}), ("eval_fingerprint", "tasks", {})]


@pytest.mark.parametrize("tool, field, rest", READERS)
@pytest.mark.parametrize("file", sorted(HOSTILE))
def test_hostile_json_is_an_input_error_naming_the_file(server, ws, tool, field, rest, file):
    (ws / file).write_text(HOSTILE[file])
    text = error_text(call(server, tool, {field: file, **rest}), tool)
    assert "unexpected internal error" not in text and file in text, text


def test_order_reversal_names_a_pick_that_is_not_a_string(server, ws):
    # the fuzz suite's find once hostile lines were added: a list is unhashable, so `in` the
    # picks' table raised TypeError ("a bug in whileai")
    (ws / "pairs.jsonl").write_text('{"forward": [], "reversed": "first"}\n')
    text = error_text(call(server, "order_reversal", {"pairs": "pairs.jsonl"}), "order_reversal")
    assert "`forward` is []" in text and "line 1" in text, text


# --- a reward command's script: checked as strictly as a read (a hard link was run) ------------

def test_a_reward_command_refuses_a_hard_linked_script(server, ws, tmp_path):
    write_jsonl(ws / "tasks.jsonl", TASKS)
    outside = tmp_path / "outside.py"
    outside.write_text("print('ran the outside script')\n")
    os.link(outside, ws / "grade.py")
    for reward in (["python", "grade.py"], "grade.py:score"):
        text = error_text(call(server, "cheat_probes", {"reward": reward,
                                                        "tasks": "tasks.jsonl"}), "cheat_probes")
        assert "has 2 hard links" in text and "ran the outside script" not in text, text


# --- a local run's results.json: read through the door (a FIFO there hung run_status) ----------

@pytest.mark.parametrize("trap", ["fifo", "link"])
def test_a_local_runs_results_file_is_read_through_the_door(tmp_path, trap):
    import threading

    from whileai_core.runs.local import LocalBackend
    from whileai_core.runs.registry import RunRecord

    run_dir = tmp_path / "run"
    (run_dir / "out").mkdir(parents=True)
    (run_dir / "exit_code").write_text("0\n")
    (tmp_path / "secret.json").write_text('{"OUTSIDE": "redteam"}')
    results = run_dir / "out" / "results.json"
    if trap == "fifo":
        os.mkfifo(results)
    else:
        results.symlink_to(tmp_path / "secret.json")
    record = RunRecord.model_construct(id="run-0123456789ab", handle={"pid": 1})
    seen = []
    poller = threading.Thread(target=lambda: seen.append(LocalBackend().poll(record, run_dir)),
                              daemon=True)
    poller.start()
    poller.join(20)
    assert seen, "polling the run blocked on its results file"
    assert seen[0].status == "failed" and "OUTSIDE" not in json.dumps(seen[0].results or {})
    assert ("FIFO" if trap == "fifo" else "symlink") in seen[0].error
