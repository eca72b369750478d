"""Every message the CLI prints speaks the shell's language: commands and flags, never a Python
call (`name(`, `x=true`, `by='category'`, "None") nor an MCP argument or tool (`teacher_rows` where
the flag is `--teacher-rows`, `route_rows` where the command is `route`, "run cheat_probes").

Every command (the operations, enumerated) runs its call of tests/tool_calls.py, as the shell
types it, in the workspace that file builds, and bad calls made from it (each file it reads
missing or of the wrong shape, each flag's value nonsense), --json off; stdout and stderr are
read together.
"""

from __future__ import annotations

import json
import re

import pytest

from tool_calls import CALLS, STATEFUL, build, shell
from whileai_core.cli import main
from whileai_core.operations import RENAMED, operations
from whileai_core.operations.args import ARM, NAMED, PATH, RUN_OR_PATH, RUNS, SOURCE
from whileai_core.operations.surface import params

# the shell's own arguments (the MCP server's environment decides them), given where a command
# takes them: their bad values are tried too
SHELL_ONLY = {"state_dir": "state"}


def _good_calls() -> dict[str, tuple[str, dict]]:
    """Every command -> (its operation, its good call): tests/tool_calls.py's, in the order of
    the operations (archive_experiment after the register_experiment it archives)."""
    good = {}
    for name, op in operations().items():
        if "cli" not in op.surfaces or name not in {**CALLS, **STATEFUL}:
            continue  # a command without its call: test_every_command_is_called names it
        arguments = CALLS[name] if name in CALLS else STATEFUL[name]
        offered = {p.name for p in params(op, "cli")} - {p.name for p in params(op, "mcp")}
        good[op.command] = name, {**arguments, **{k: v for k, v in SHELL_ONLY.items()
                                                  if k in offered}}
    return good


CALLED = _good_calls()
# A call each command can make in the workspace of tests/tool_calls.py, as the shell types it.
GOOD: dict[str, list[str]] = {command: shell(name, arguments)[1:]
                              for command, (name, arguments) in CALLED.items()}

# These print the skills' own text (written for an agent, with its tool calls), not a message.
DOCUMENTS = {"list-skills", "get-skill"}

WRONG_SHAPE = '{"id": "a", "score": 1, "text": "x"}\n{"id": "b", "score": 0, "text": "y"}\n'


READS = {PATH, SOURCE, ARM, RUNS, NAMED, RUN_OR_PATH}  # the kinds of argument naming a file read


def _reads(name: str, arguments: dict) -> set[str]:
    """The files a call reads: the values of its arguments of a reading kind (declared)."""
    found: set[str] = set()
    for param in params(operations()[name], "cli"):
        value = arguments.get(param.name)
        if param.arg.kind in READS:
            values = value.values() if isinstance(value, dict) else \
                value if isinstance(value, list) else [value]
            found |= {v for v in values if isinstance(v, str)}
    return found


def _bad_calls(command: str, good: list[str]) -> list[list[str]]:
    """Each file the good call reads, missing and of the wrong shape; each flag's value made
    nonsense ('nope', a word no number, choice or path is)."""
    reads = _reads(*CALLED[command])
    calls = []
    for i, word in enumerate(good):
        if word in reads:
            calls.append(good[:i] + ["missing.jsonl"] + good[i + 1:])
            calls.append(good[:i] + ["wrong.jsonl"] + good[i + 1:])
        elif word.startswith("-") and i + 1 < len(good) and not good[i + 1].startswith("-"):
            calls.append(good[:i + 1] + ["nope"] + good[i + 2:])
    return calls or [good + ["--nope"]]


# What never belongs in text meant for a person at a shell. "(s)" is a plural ("task(s)"); a
# one-letter name with a number is notation ("k=2", "n=48 tasks"); another name with a number
# is flagged where it is an argument (`level=0.95`), not a reply feature (`length=518`).
PYTHON_CALL = re.compile(r"\b(?!(?:sqrt|log|exp|min|max)\()[a-z][a-z0-9_]*\((?![)\s]|s\))")
KEYWORD = re.compile(r"(?<![-\w])[a-z][a-z0-9_]*=(true|false|True|False|'|\"|\{|\[)")
NUMBER_KEYWORD = re.compile(r"(?<![-\w])([a-z][a-z0-9_]+)=-?\d")
# a shell one-liner a fix gives (python3 -c '...') is the shell's own words
ONE_LINER = re.compile(r"python3? -c '[^'\n]*'?")  # to its quote, or where a long line is cut
NONE = re.compile(r"\bNone\b")
TOOL_TALK = re.compile(r"\b(run|call|use|with|tool)\s+`?([a-z]+_[a-z_]+)`?")
# an argument named bare where the shell has a flag: "(tasks)", "(with holdout)", "see by_group"
BARE_NAME = re.compile(r"\((?:with |without |given )?([a-z][a-z0-9_]+)\)|\bsee ([a-z]+_[a-z_]+)\b")


def _snake_names() -> dict[str, str]:
    """Every MCP argument and tool name with an underscore -> how the shell says it."""
    names = {}
    for op in operations().values():
        if "_" in op.name and "mcp" in op.surfaces:
            names[op.name] = f"the command `{op.command}`"
        for param in params(op, "mcp"):
            if "_" in param.name:
                names[param.name] = "--" + param.name.replace("_", "-")
    for old, new in RENAMED.items():
        names[old] = f"the command `{operations()[new].command}`"
    return names


# Words that are snake_case in the shell's own language too: a field of the user's rows or a
# result's own label (`task_id`, noise-floor's `run_std` line, rollout-update's `mean_reward`),
# and a prime-rl TOML key printed as the key it is (`config`: "--seq-len -> seq_len", the
# top-level key of that name; `doctor`: the orchestrator's `max_off_policy_steps`).
NOT_ARGUMENTS = {"task_id", "max_tokens", "n_tasks", "run_std", "n_runs", "seq_len",
                 "mean_reward", "max_off_policy_steps"}


# Argument names that are values too: `(reward)` is a metric or a mode as often as the flag.
VALUES = {"reward"}


def _arguments() -> set[str]:
    return {param.name for op in operations().values() for param in params(op, "mcp")}


def problems(text: str) -> list[str]:
    text = ONE_LINER.sub("python3 -c '...'", text)
    found = [f"a keyword argument: {m.group(0)!r}" for m in NUMBER_KEYWORD.finditer(text)
             if m.group(1) in _arguments()]
    for pattern, what in ((PYTHON_CALL, "a Python call"), (KEYWORD, "a keyword argument"),
                          (NONE, "a Python None"), (TOOL_TALK, "a tool named")):
        found += [f"{what}: {m.group(0)!r}" for m in pattern.finditer(text)]
    found += [f"an argument named bare: {m.group(0)!r}" for m in BARE_NAME.finditer(text)
              if (m.group(1) or "") in _arguments() - NOT_ARGUMENTS - VALUES or m.group(2)]
    snake = _snake_names()
    for word in re.findall(r"(?<![-\w./])`?([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`?(?![\w/.-])", text):
        if word in snake and word not in NOT_ARGUMENTS:
            found.append(f"{word!r} where the shell says {snake[word]}")
    return found


@pytest.fixture(scope="module")
def transcript(tmp_path_factory) -> dict[str, str]:
    """Every command's output, good and bad calls, by the call's words."""
    here = build(tmp_path_factory.mktemp("cli-language"))
    (here / "wrong.jsonl").write_text(WRONG_SHAPE)
    out: dict[str, str] = {}
    mp = pytest.MonkeyPatch()
    mp.chdir(here)
    mp.setenv("WHILEAI_STATE_DIR", str(here / "state"))
    try:
        for command, good in GOOD.items():
            if command in DOCUMENTS:
                continue
            for argv in [good, *_bad_calls(command, good)]:
                out[" ".join([command, *argv])] = _run([command, *argv])
    finally:
        mp.undo()
    return out


def _run(argv: list[str]) -> str:
    import contextlib
    import io

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    assert code != 70, f"{argv}: a bug\n{stderr.getvalue()}"
    return stdout.getvalue() + stderr.getvalue()


def test_every_command_is_called():
    commands = {op.command for op in operations().values() if "cli" in op.surfaces}
    assert commands == set(GOOD), f"no call in tests/tool_calls.py of {commands - set(GOOD)}"


def test_every_good_call_gets_past_the_parser(transcript):
    # a good call refused by argparse would leave its command's real messages unread
    refused = {command: transcript[" ".join([command, *good])]
               for command, good in GOOD.items() if command not in DOCUMENTS}
    refused = {c: t for c, t in refused.items()
               if "unrecognized arguments" in t or "arguments are required" in t
               or "invalid choice" in t}
    assert not refused, refused


def test_shape_group_takes_its_scores_as_json_and_says_so(capsys):
    # mode reward: the passes 0 and 3 are scaled by solution * behaviour (0.9 * 1, 0.4 * 0.8)
    assert main(["shape-group", "--rewards", "1", "0", "0", "1", "--scores",
                 "[[0.9,1],[0,0],[0,0],[0.4,0.8]]", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rewards"] == pytest.approx([0.9, 0, 0, 0.32])
    with pytest.raises(SystemExit):
        main(["shape-group", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--scores JSON" in text and "typed as JSON in quotes, e.g. '[[" in text


def test_no_message_speaks_python_or_mcp(transcript):
    found = {call: problems(text) for call, text in transcript.items()}
    found = {call: p for call, p in found.items() if p}
    report = "\n".join(f"whileai-skills {call}\n  " + "\n  ".join(sorted(set(p)))
                       for call, p in found.items())
    assert not found, f"{len(found)} of {len(transcript)} calls:\n{report}"


@pytest.mark.parametrize("text, expected", [
    ("Fix: call noise_floor(run1, run2, run3).run_std", "a Python call"),
    ("Fix: pass detail=true", "a keyword argument"),
    ("NCCL: overrides={'weight_broadcast': 1}", "a keyword argument"),
    ("at level=0.95", "a keyword argument"),
    ("group by='category'", "a keyword argument"),
    ("`messages` is None", "a Python None"),
    ("run cheat_probes again", "a tool named"),
    ("Fix: give teacher_rows", "--teacher-rows"),
    ("see route_rows", "the command `route`"),
    ("the category comes from the task set (tasks)", "an argument named bare"),
    ("and (with holdout) whether", "an argument named bare"),
    ("falls short of the effect 0.05 (strict): better", "an argument named bare"),
    ("on some tasks (see by_group and the example)", "an argument named bare"),
])
def test_the_grep_finds_what_it_looks_for(text, expected):
    assert any(expected in p for p in problems(text)), problems(text)


def test_the_grep_leaves_the_shells_own_words(  # a flag, a command, a verdict, a number
        ):
    assert problems("whileai-skills pass-at rows.jsonl --detail --level 0.9 (n=48 tasks, k=2); "
                    "length=518 -> reward 1; 2 problem(s); python3 -c 'import json; f(x=1)'; "
                    "verdict: moved_the_wrong_way; field `task_id`; next: `whileai-skills "
                    "route ROWS --model ID`") == []




def test_a_bad_positional_is_named_as_the_usage_line_names_it(tmp_path, monkeypatch, capsys):
    # noise-floor takes its runs positionally (usage: RUN [RUN ...]): one run is too few, and
    # the error names RUN as typed, not the MCP argument `--runs` with a Python list
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.jsonl").write_text('{"task_id": "t", "reward": 1.0}\n')
    assert main(["noise-floor", "a.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "`RUN` = a.jsonl" in err and "needs at least 2, got 1" in err
    assert "--runs" not in err and "['" not in err and "List should" not in err
    # a list flag given one bare number: how the shell writes a list
    assert main(["shape-group", "--rewards", "1", "0", "--scores", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "`--scores` = 0.5" in err and "a JSON list in quotes" in err


NEIGHBOURS = [  # calls next to the good ones, each refused with a message of its own
    (["compare-many", "a.jsonl", "a.jsonl"], "Fix: --by category"),
    (["compare-many", "a.jsonl"], "AFTER is missing. Fix: give AFTER and --by category"),
    (["split", "a.jsonl", "--holdout-out", "h.jsonl", "--train-out", "t.jsonl"],
     "`whileai-skills split` needs at least 2 tasks"),
    (["dpo-data", "empty.jsonl", "--out-dir", "d", "--holdout", "a.jsonl", "--grader", "g.py"],
     '"chosen": [{"role": "assistant"'),
    (["dpo-data", "none.json", "--out-dir", "d", "--holdout", "a.jsonl", "--grader", "g.py"],
     "`whileai-skills dpo-pairs` found no contrast; construct rejected replies (--constructed)"),
    # pass-at's flags that exclude each other (read by the operation, after the parser)
    (["pass-at", "a.jsonl", "--metric", "reward", "-k", "2"],
     "`-k` (pass@k) is for pass rates. Fix: drop `-k`, or use --metric pass without `--field`"),
    (["pass-at", "a.jsonl", "--metric", "reward", "--field", "truncated"],
     "give `--field` (a share of rollouts) or --metric reward, not both"),
    (["pass-at", "a.jsonl", "--field", "truncated", "--cluster", "category"],
     "Fix: drop `--cluster`, or `--field`"),
    (["compare-many", "a.jsonl", "a.jsonl", "--by", ""], "Fix: e.g. --by category"),
]


@pytest.mark.parametrize("argv, said", NEIGHBOURS)
def test_neighbouring_refusals_speak_the_shells_words(argv, said, tmp_path, monkeypatch):
    # an empty DPO pairs file was shown order-reversal's pair ({"forward": ...}) as its form
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.jsonl").write_text(
        '{"task_id": "t", "reward": 1.0, "category": "x", "messages": [{"role": "user", '
        '"content": "hi"}, {"role": "assistant", "content": "yo"}]}\n')
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "none.json").write_text("[]")
    (tmp_path / "g.py").write_text("def grade(ask, reply):\n    return 1.0\n")
    text = _run(argv)
    assert said in text and not problems(text), (text, problems(text))
    assert "forward" not in text


def test_a_strict_teachers_reason_names_the_flag(tmp_path, capsys):
    # 200 tasks, 2 rollouts: the student passes none, the teacher passes every rollout of 20
    # tasks, so the gap is 20 / 200 = 0.1 on the nose; its interval (tasks resampled) lies above
    # 0 but its lower end stays under 0.09 (a binomial share of 0.1 on 200 tasks has a standard
    # error of ~0.021, so the lower end sits near 0.06): strict refuses, and says which flag did
    def rows(name: str, passing: int) -> str:
        path = tmp_path / name
        path.write_text("".join(json.dumps({"task_id": f"t{i}", "reward": float(i < passing)})
                                + "\n" for i in range(200) for _ in range(2)))
        return str(path)

    teacher, student = rows("teacher.jsonl", 20), rows("student.jsonl", 0)
    assert main(["teacher-clears", teacher, student, "--effect", "0.09", "--strict"]) == 1
    out = capsys.readouterr().out
    assert "(--strict)" in out and not problems(out), problems(out)
