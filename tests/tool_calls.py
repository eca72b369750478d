"""The one list of calls: a workspace and one valid call of every operation. No tests here
(tests/test_tool_calls.py fails when an operation has no call).

Every test that needs "a good call of each operation" reads it here:
tests/test_surfaces_agree.py (every MCP tool against its CLI twin), tests/test_structured_alone.py
(every fact a tool's text gives is in its structured content), tests/test_cli_language.py (every
command as the shell types it, :func:`shell`), tests/test_server_bounded.py (the same calls on
files of the same names, thousands of tasks each), tests/test_server_fuzz.py (each call with its
file arguments fuzzed), and the red-team tests of writes. A test that needs a call changed says
so in a small dict merged over these (:func:`merged`), with its reason.

Every argument is a file under the workspace (the CLI takes no inline records), every output
is written with overwrite (the two surfaces write the same files in turn), and the numbers are
small enough that no list is cut (the MCP answer is bounded, the CLI's is not).
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

from test_server_support import (AFTER_OUTCOMES, GRPO_OUTCOMES, MODEL, make_workspace, rows_of,
                                 write_jsonl)
from whileai_core.voice import CLI, call, speaking

FIX = Path(__file__).resolve().parent / "fixtures"


def _msg(role: str, content: str) -> dict:
    return {"role": role, "content": content}


def build(root: Path) -> Path:
    """The workspace every call below reads (``root`` emptied first, kept itself: a server may
    hold it open as its root)."""
    root.mkdir(parents=True, exist_ok=True)
    for child in root.iterdir():
        shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    make_workspace(root)
    twelve = {f"{t}{i}": o for i in range(3) for t, o in GRPO_OUTCOMES.items()}
    after12 = {f"{t}{i}": o for i in range(3) for t, o in AFTER_OUTCOMES.items()}
    write_jsonl(root / "evals" / "grpo12.jsonl",
                [dict(r, category="math" if r["task_id"][0] in "ab" else "code",
                      completion="x" * (3 + int(r["reward"]) * 5 + len(r["task_id"])))
                 for r in rows_of(twelve)])
    write_jsonl(root / "evals" / "after12.jsonl",
                [dict(r, category="math" if r["task_id"][0] in "ab" else "code")
                 for r in rows_of(after12)])
    write_jsonl(root / "evals" / "teacher12.jsonl",
                rows_of({t: [1, 1, 1, 1] for t in twelve}, model="Qwen/Qwen3-32B"))
    write_jsonl(root / "tasks.jsonl", [{"task_id": t, "prompt": f"say {t}", "answer": t,
                                        "category": "math" if t[0] in "ab" else "code"}
                                       for t in twelve])
    traces = [{"task_id": f"t{i}", "reward": float(i % 3 != 0),
               "messages": [_msg("user", f"ask number {i}: add {i} and {i + 1}"),
                            _msg("assistant", str(2 * i + 1) + " " * (i % 2))]}
              for i in range(12)]
    write_jsonl(root / "traces.jsonl", traces)
    write_jsonl(root / "held.jsonl", [{"task_id": "t0", "prompt": "ask number 0: add 0 and 1"}])
    write_jsonl(root / "items.jsonl",
                [{"id": f"i{i}", "label": i < 6, "grades": {"a": i < 7, "b": i % 2 == 0},
                  "reply": "x" * (10 + i), "grade": i < 6,
                  "without": {"c1": i < 5, "c2": i < 6}} for i in range(10)])
    write_jsonl(root / "pairs.jsonl",
                [{"id": f"p{i}", "forward": "first", "reversed": "second" if i % 4 else "first"}
                 for i in range(8)])
    write_jsonl(root / "batch.jsonl", [{"reward": float(i % 2), "logprobs": [-0.5, -1.0, -0.2]}
                                       for i in range(4)])
    write_jsonl(root / "watch.jsonl",
                [{"step": s, "train_reward": 0.2 + 0.1 * s,
                  "held_out": [{"task_id": f"h{i}", "reward": float((i + s) % 3 != 0)}
                               for i in range(9)]} for s in range(3)])
    # two replies per task, a pass and a fail on the "a"/"b" tasks only: pairs where there is
    # contrast, none in the "code" category
    write_jsonl(root / "rollouts.jsonl",
                [{"task_id": f"r{i}", "category": "math" if i < 4 else "code",
                  "reward": float(j == 0 or i >= 4),
                  "messages": [_msg("user", f"ask {i}"), _msg("assistant", "ok" * (j + 1))]}
                 for i in range(6) for j in range(2)])
    write_jsonl(root / "dpo_pairs.jsonl",
                [{"task_id": f"r{i}", "prompt": [_msg("user", f"ask {i}")],
                  "chosen": [_msg("assistant", "ok")], "rejected": [_msg("assistant", "okok")]}
                 for i in range(3)])
    write_jsonl(root / "dpo_held.jsonl",
                [{"task_id": "h0", "messages": [_msg("user", "held ask"), _msg("assistant", "x")]}])
    (root / "grader.py").write_text("def grade(ask, reply):\n    return 1.0\n")
    (root / "rewards").mkdir(exist_ok=True)
    (root / "rewards" / "grade.py").write_text(
        "def score(prompts, completions, answer, **kw):\n"
        "    return [1.0 if c == a else 0.0 for c, a in zip(completions, answer)]\n")
    (root / "configs").mkdir(exist_ok=True)
    (root / "configs" / "bad.toml").write_text("[orchestrator]\nrollouts_per_example = 8\n")
    shutil.copytree(FIX / "prime_rl" / "volume" / "e2e-grpo" / "fc-grpo-new", root / "run")
    shutil.copytree(FIX / "prime_rl" / "doctor" / "planted", root / "runs" / "planted")
    (root / "project").mkdir()  # the folder init_project wires (it must exist)
    return root


# operation -> its arguments (the names the MCP tool takes; at the shell: shell()). Every
# operation is here or in STATEFUL; an operation offered at one door only is called there.
CALLS: dict[str, dict] = {
    "describe_rows": {"rows": "evals/grpo12.jsonl", "fields": ["reward", "category"]},  # 2 values each: none cut
    "inspect_rows": {"rows": "evals/grpo12.jsonl", "model": MODEL},
    "route_rows": {"rows": "evals/grpo12.jsonl", "model": MODEL, "teacher_rows": "evals/teacher12.jsonl",
              "taskset": "reverse-text"},
    "rate": {"rows": "evals/grpo12.jsonl", "k": 2, "detail": True, "limit": 3},
    "task_table": {"rows": "evals/grpo.jsonl", "out": "out/table.jsonl", "overwrite": True},
    "compare": {"before": "evals/grpo12.jsonl", "after": "evals/after12.jsonl", "run_std": 0.02,
                "noise_runs": 3},
    "compare_many": {"before": "evals/grpo12.jsonl", "after": "evals/after12.jsonl",
                     "by": "category"},
    "noise_floor": {"runs": ["evals/grpo.jsonl", "evals/after.jsonl", "evals/truncated.jsonl"]},
    "holdout_size": {"effect": 0.1, "k": 4},
    "teacher_clears": {"teacher_rows": "evals/teacher12.jsonl",
                       "student_rows": "evals/grpo12.jsonl"},
    "prime_rl_config": {"taskset": "reverse-text", "model": "Qwen/Qwen3-0.6B", "steps": 20,
                        "out": "configs/rl.toml", "overwrite": True},
    "validate_config": {"path": "configs/bad.toml"},
    "launch_run": {"config_or_recipe": "grpo", "backend": "local"},
    "list_runs": {},
    "cheat_probes": {"tasks": "tasks.jsonl", "reward": "rewards/grade.py:score",
                     "model_rows": "evals/grpo12.jsonl", "probes": ["empty", "most_common"]},
    "hack_scan": {"rows": "evals/grpo12.jsonl", "n_shuffles": 200},
    "watch_run": {"source": "watch.jsonl"},
    "diagnose_run": {"source": "runs/planted", "max_off_policy_steps": 4},
    "eval_fingerprint": {"tasks": "tasks.jsonl"},
    "freeze_holdout": {"tasks": "tasks.jsonl", "out_dir": "frozen"},
    "failure_capable": {"rows": "evals/grpo12.jsonl"},
    "category_table": {"rows": "evals/grpo12.jsonl", "after": "evals/after12.jsonl"},
    "audit_judge": {"items": "items.jsonl"},
    "order_reversal": {"pairs": "pairs.jsonl"},
    "failures_needed": {"half_width": 0.05},
    "rubric_ablation": {"items": "items.jsonl", "clauses": ["c1", "c2"]},
    "split_by_task": {"rows": "traces.jsonl", "share": 0.25, "out": "out/ids.json",
                      "train_out": "out/train.jsonl", "overwrite": True},
    "failed_asks": {"traces": "traces.jsonl"},
    "select_sft": {"attempts": "traces.jsonl"},
    "decontaminate": {"train": "traces.jsonl", "holdout": "held.jsonl"},
    "export_sft": {"records": "traces.jsonl", "out": "out/sft.jsonl", "overwrite": True},
    "import_rows": {"path": "run", "out": "out/imported.jsonl", "step": "last",
                    "overwrite": True},
    "rollout_update": {"method": "flash_reinforce", "batch": "batch.jsonl"},
    "shape_group": {"rewards": [1.0, 1.0, 0.0, 1.0], "scores": [0.9, 0.4, 0.0, 0.7],
                    "mode": "advantage"},
    "list_skills": {},
    "get_skill": {"name": "pick-a-method"},
    "prove_reward": {"tasks": "tasks.jsonl", "reward": "rewards/grade.py:score",
                     "model_rows": "evals/grpo12.jsonl", "group_by": "category"},
    "dpo_pairs": {"rollouts": "rollouts.jsonl", "out": "out/pairs.jsonl", "overwrite": True},
    "write_dpo_data": {"pairs": "dpo_pairs.jsonl", "out_dir": "dpo", "holdout": "dpo_held.jsonl",
                       "grader": "grader.py", "settings": {"beta": 0.2}, "overwrite": True},
    "grpo_plan": {"rows": "evals/grpo12.jsonl", "model": MODEL, "loss": "dr_grpo"},
    "register_experiment": {"name": "e1", "question": "does DPO help?", "hypothesis": "it does",
                            "arms": {"dpo": "one round of DPO"},
                            "holdout": "holdout-0123456789ab",
                            "rule": {"ship_if": [{"kind": "delta_above", "bound": 0.05}]}},
    "list_experiments": {"include_archived": True},
    "export_experiments": {"out": "out/experiments.md", "overwrite": True},
    "init_project": {"root": "project"},
}
RUN_ID = "run-0123456789ab"  # a well-formed id of no run: launch_run above only plans one
# twins whose call needs state another call makes first: archive_experiment's is good after
# CALLS' register_experiment ran (the shell runs them in order, tests/test_cli_language.py); a
# run's is refused for the run that no call here starts. Their refusals below hold the two doors
# to each other.
STATEFUL: dict[str, dict] = {
    "run_status": {"id": RUN_ID},
    "collect_run": {"id": RUN_ID},
    "cancel_run": {"id": RUN_ID},
    "record_run": {"id": RUN_ID, "changed": "a", "moved": "b", "why": "c", "learned": "d",
                   "reproduce": "e"},
    "archive_experiment": {"name": "e1"},
}
# calls that are refused, the same way at both doors
REFUSALS: dict[str, dict] = {
    "rate": {"rows": "evals/grpo.jsonl", "level": 1.5},
    "route_rows": {"rows": "evals/missing.jsonl", "model": MODEL},
    "compare": {"before": "evals/bad_json.jsonl", "after": "evals/after.jsonl"},
    "run_status": STATEFUL["run_status"],
    "collect_run": {"id": "nope"},
    "cancel_run": STATEFUL["cancel_run"],
    "split_by_task": {"rows": "traces.jsonl", "holdout_out": "out/same.jsonl",
                      "train_out": "out/same.jsonl", "overwrite": True},
    "prime_rl_config": {"taskset": "reverse-text", "model": "m", "method": "sao"},
    "holdout_size": {"effect": 0},
    "get_skill": {"name": "no-such-skill"},
    "import_rows": {"path": "no-such-run"},
    "record_run": STATEFUL["record_run"],
    "archive_experiment": {"name": "never-registered"},
    "register_experiment": {"name": "e1", "question": "q", "hypothesis": "h", "arms": {"a": "b"},
                            "holdout": "holdout-0123456789ab", "rule": {"ship_if": []}},
    "grpo_plan": {"rows": "evals/grpo12.jsonl", "model": MODEL, "loss": "dapo",
                  "num_iterations": 1},
}


def served(surface: str) -> dict[str, dict]:
    """CALLS of the operations offered on ``surface`` ("mcp" or "cli")."""
    from whileai_core.operations import operations

    ops = operations()
    return {name: arguments for name, arguments in CALLS.items() if surface in ops[name].surfaces}


def merged(name: str, changes: dict) -> dict:
    """CALLS[name] with ``changes`` over it; an argument changed to None is left out (it takes
    its default, as ``whileai_core.voice.call`` reads None)."""
    return {k: v for k, v in {**CALLS[name], **changes}.items() if v is not None}


def shell(name: str, arguments: dict) -> list[str]:
    """The call as the shell types it, command first (``main``'s argv): spelled by
    ``whileai_core.voice`` for the shell, the way a next step is printed, from the table the
    declarations generate (positionals, flags, the form of each value)."""
    with speaking(CLI):
        return shlex.split(call(name, **arguments))[1:]


def json_lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
