"""cheat_probes, hack_scan, watch_run and the picture tools through the protocol.

Expected numbers are derived by hand from the literal files written below.
"""

from __future__ import annotations

import base64
import json

import pytest

from test_server_support import call, error_text, ok, write_jsonl

pytest.importorskip("matplotlib")

TASKS = [{"task_id": f"t{i}", "prompt": f"What is {i} plus {i}?", "answer": str(2 * i)}
         for i in range(8)]
# 7 of 8: the most common answer "0" passes t0 only, 6 tasks worse, exact McNemar p = 2/2^6
MODEL = [{"task_id": f"t{i}", "reward": 1.0 if i < 7 else 0.0} for i in range(8)]
REWARD = ("def score(prompts, completions, answer, **kw):\n"
          "    # pays any reply over 1000 characters: the filler hole\n"
          "    return [1.0 if c.strip() == a or len(c) > 1000 else 0.0\n"
          "            for c, a in zip(completions, answer)]\n")
CMD = ("import json, sys\n"
       "for line in sys.stdin:\n"
       "    item = json.loads(line)\n"
       "    print(1.0 if item['completion'].strip() == item['answer'] else 0.0)\n")


@pytest.fixture()
def ws(tmp_path):
    root = tmp_path / "ws"
    write_jsonl(root / "tasks.jsonl", TASKS)
    write_jsonl(root / "model.jsonl", MODEL)
    (root / "rewards").mkdir()
    (root / "rewards" / "grade.py").write_text(REWARD)
    (root / "rewards" / "exact.py").write_text(CMD)
    return root


def test_cheat_probes_finds_the_filler_hole(server, ws):
    out = ok(call(server, "cheat_probes", {"reward": "rewards/grade.py:score",
                                           "tasks": "tasks.jsonl", "model_rows": "model.jsonl"}))
    by = {p["name"]: p for p in out["probes"]}
    # 512 tokens x 4 characters = 2048 > 1000: filler passes all 8 tasks; the model passes 7
    assert by["filler"]["rate"]["value"] == 1.0 and by["filler"]["delta"] == 0.125
    assert out["holes"] == ["filler"] and out["verdict"] == "holes"
    assert out["model"]["value"] == 0.875 and out["n_tasks"] == 8


def test_cheat_probes_command_reward_clean(server, ws):
    out = ok(call(server, "cheat_probes", {"reward": ["python", "rewards/exact.py"],
                                           "tasks": "tasks.jsonl", "model_rows": "model.jsonl",
                                           "probes": ["empty", "filler", "echo"]}))
    assert out["verdict"] == "closed" and [p["verdict"] for p in out["probes"]] == ["closed"] * 3


def test_cheat_probes_refuses_code_outside_the_root(server, ws, tmp_path):
    (tmp_path / "evil.py").write_text("print(1)\n")
    for reward in ("../evil.py:score", ["python", "../evil.py"], [str(tmp_path / "evil.py")],
                   ["/bin/sh", "-c", "echo 1"], "python ../evil.py", "/bin/sh -c 'echo 1'"):
        text = error_text(call(server, "cheat_probes", {"reward": reward, "tasks": "tasks.jsonl"}),
                          "cheat_probes")
        assert ("outside the workspace root" in text or "contains '..'" in text
                or "never another program" in text), text


def test_hack_scan_tool(server, ws):
    # 4 tasks x 4 replies; within each task the longer reply always scores more
    rows = [{"task_id": f"t{t}", "reward": r / 3, "completion": "x" * (10 * r + 5 * t)}
            for t in range(4) for r in range(4)]
    out = ok(call(server, "hack_scan", {"rows": rows}))
    assert out["verdict"] == "suspect" and out["suspects"] == ["length"]
    length = next(f for f in out["features"] if f["feature"] == "length")
    assert length["strength"] == pytest.approx(1.0) and length["n_tasks"] == 4


def watch_lines(flat: bool):
    base = {f"h{i}": i % 3 for i in range(30)}
    later = base if flat else {t: min(4, c + 2) for t, c in base.items()}
    held = lambda passes: [{"task_id": t, "reward": 1.0 if j < c else 0.0}  # noqa: E731
                           for t, c in passes.items() for j in range(4)]
    # the recipes' callback writes the schedule into the step-0 record: 3 planned looks
    lines = [{"step": 0, "held_out": held(base), "eval_every": 4, "max_steps": 12}]
    lines += [{"step": s, "train_reward": 0.1 + 0.05 * s} for s in range(1, 13)]
    lines += [{"step": s, "held_out": held(later)} for s in (4, 8, 12)]
    return lines


def test_watch_run_folder_and_plot(server, ws):
    write_jsonl(ws / "runs" / "hacked" / "watch.jsonl", watch_lines(flat=True))
    write_jsonl(ws / "runs" / "honest" / "watch.jsonl", watch_lines(flat=False))
    result = call(server, "watch_run", {"source": "runs/hacked", "plot": True})
    out = ok(result)
    assert out["decision"] == "stop" and out["n_evals"] == 4 and out["held_out_delta"] == 0.0
    assert out["schedule"] == "planned" and out["planned_looks"] == 3
    image = result.content[1]
    assert image.type == "image" and image.mime_type == "image/png"
    assert base64.b64decode(image.data)[:8] == b"\x89PNG\r\n\x1a\n"
    honest = call(server, "watch_run", {"source": "runs/honest"})
    assert ok(honest)["decision"] == "continue" and len(honest.content) == 1
    text = error_text(call(server, "watch_run", {"source": "../x"}), "watch_run")
    assert "contains '..'" in text
    text = error_text(call(server, "watch_run", {"source": "runs"}), "watch_run")
    assert "holds 2 watch.jsonl files" in text and "point at one run" in text
    (ws / "empty").mkdir()
    text = error_text(call(server, "watch_run", {"source": "empty"}), "watch_run")
    assert "holds no watch.jsonl" in text


def test_pictures_are_a_plot_option_of_the_tool_that_owns_the_numbers(server, ws):
    # 12 tasks (a-d three times): below 6 the route stops before the band (ROUTE_MIN_TASKS)
    rows = [{"task_id": f"{t}{i}", "reward": float(r), "category": "a" if t < "c" else "b"}
            for i in range(3) for t, rs in {"a": [1, 1, 1, 0], "b": [0, 0, 0, 0],
                                            "c": [1, 1, 1, 1], "d": [1, 0, 0, 0]}.items()
            for r in rs]
    write_jsonl(ws / "rows.jsonl", rows)
    result = call(server, "route_rows", {"rows": "rows.jsonl", "model": "m", "plot": True})
    out = ok(result)
    # per-task rates 0.75, 0, 1, 0.25: a third always fail, a third always pass, a third split
    band = out["answers"][2]["evidence"]
    assert (band["n_always_fail"], band["n_split"], band["n_always_pass"]) == (3, 6, 3)
    assert base64.b64decode(result.content[1].data).startswith(b"\x89PNG")
    assert len(ok(call(server, "route_rows", {"rows": "rows.jsonl", "model": "m"}))) == len(out)
    after = [dict(r, reward=1.0) for r in rows]
    result = call(server, "compare", {"before": "rows.jsonl", "after": after, "by": "category",
                                      "plot": True})
    # overall: mean before 0.5, after 1.0
    assert ok(result)["delta"] == 0.5 and result.content[1].mime_type == "image/png"
    text = error_text(call(server, "compare", {"before": ["rows.jsonl", "rows.jsonl"],
                                               "after": after, "plot": True}), "compare")
    assert "plot draws one run per arm" in text
    items = [{"id": i, "label": i < 5, "grades": {"j": i < 5}} for i in range(10)]
    result = call(server, "audit_judge", {"items": items, "plot": True})
    judge = ok(result)["judges"][0]
    assert judge["agreement"] == 1.0 and judge["kappa"] == 1.0
    assert result.content[1].mime_type == "image/png"
