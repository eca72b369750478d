"""Offline stand-ins for the strengthen-your-evals blocks (used by check.py, not by the skill's
reader).

``prepare(workdir)`` writes the held-out tasks of a support assistant (``heldout_tasks.jsonl``:
200 tasks, four behaviours of 50) and the graded rows of the model before any training, 4
rollouts per task: three re-runs of the same eval (``run1.jsonl``..``run3.jsonl``), the first run
graded by a lenient grader that passes a reply cut off at the token cap (``run1_lenient.jsonl``),
and an easy eval the model nearly always passes (``easy.jsonl``). Rows carry ``task_id``,
``reward``, ``truncated`` and ``model``; the behaviour is in the task file only. Each task's true
pass rate is drawn once and every run samples it afresh, so the three runs differ by sampling
noise alone (so no behaviour really changes between them). ``CHECKS[i]`` asserts what block i produced, from counts made here without the
library.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

MODEL = "Qwen/Qwen3-8B"
CATEGORIES = ("refund", "order_status", "escalation", "off_topic")
N_TASKS = 200
K = 4
HERE = Path(__file__).resolve().parent


def _u(*key) -> float:
    h = hashlib.sha256("\x00".join(map(str, key)).encode()).hexdigest()
    return int(h[:12], 16) / 16**12


def _p(t: int) -> float:
    """True pass rate of task t: 15% never pass, 15% always pass, the rest in between."""
    u = _u("kind", t)
    if u < 0.15:
        return 0.0
    if u < 0.30:
        return 1.0
    return 0.1 + 0.8 * _u("p", t)


def _task(t: int) -> dict:
    category = CATEGORIES[t % len(CATEGORIES)]
    return {"task_id": f"support-{t:03d}", "category": category,
            "prompt": f"Customer message #{t} about {category.replace('_', ' ')}.",
            "answer": f"reference reply {t}"}


def _rows(run: int, *, lenient: bool = False, tasks=range(N_TASKS), rate=_p) -> list[dict]:
    rows = []
    for t in tasks:
        for j in range(K):
            passed = _u("run", run, t, j) < rate(t)
            cut = not passed and _u("cut", run, t, j) < 0.06  # some failures hit the token cap
            reward = 1.0 if passed or (lenient and cut) else 0.0
            rows.append({"task_id": f"support-{t:03d}", "reward": reward, "truncated": cut,
                         "model": MODEL})
    return rows


def _write(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def prepare(workdir: Path) -> dict:
    # the harness writes tasks in its own order; the frozen file sorts them
    _write(workdir / "heldout_tasks.jsonl", [_task(t) for t in reversed(range(N_TASKS))])
    for run in (1, 2, 3):
        _write(workdir / f"run{run}.jsonl", _rows(run))
    _write(workdir / "run1_lenient.jsonl", _rows(1, lenient=True))
    # an easy eval: 57 of 60 tasks always pass
    _write(workdir / "easy.jsonl", _rows(9, tasks=range(60), rate=lambda t: 0.75 if t < 3 else 1.0))
    return {}


# --- counts made without the library ---------------------------------------------------------

def _read(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def _per_task(path) -> dict[str, tuple[int, int]]:
    counts: dict[str, tuple[int, int]] = {}
    for row in _read(path):
        c, n = counts.get(row["task_id"], (0, 0))
        counts[row["task_id"]] = (c + (row["reward"] >= 1.0), n + 1)
    return counts


def _pass_at_1(path) -> float:
    counts = _per_task(path)
    return sum(c / n for c, n in counts.values()) / len(counts)


def _mcp_lines(heading: str) -> list[dict]:
    """The ```mcp block under a SKILL.md heading, parsed (one JSON object per line)."""
    text = (HERE / "SKILL.md").read_text()
    section = text.split(heading, 1)[1]
    block = re.search(r"```mcp\n(.*?)```", section, re.S).group(1)
    return [json.loads(line) for line in block.splitlines() if line.strip()]


def frozen_by_content(ns):
    import hashlib as h

    frozen = ns["frozen"]
    # the name is the SHA-256 of the records as canonical JSON, sorted by id, one per line
    lines = [json.dumps(r, sort_keys=True, separators=(",", ":"))
             for r in sorted(_read("heldout_tasks.jsonl"), key=lambda r: r["task_id"])]
    digest = h.sha256(("\n".join(lines) + "\n").encode()).hexdigest()
    assert frozen.sha256 == digest and frozen.name == f"holdout-{digest[:12]}"
    assert Path(frozen.path).read_text() == "\n".join(lines) + "\n"
    assert frozen.written and not ns["again"].written and ns["again"].name == frozen.name
    assert ns["edited"].name != frozen.name and ns["edited"].n_tasks == N_TASKS
    # the MCP form names the same file the Python step wrote, everywhere in the skill
    paths = {line["arguments"].get("tasks") for line in _mcp_lines("## 1.") if "tool" in line}
    assert f"evals/{frozen.name}.jsonl" in paths, paths
    named = set(re.findall(r"evals/holdout-[0-9a-f]+\.jsonl", (HERE / "SKILL.md").read_text()))
    assert named == {f"evals/{frozen.name}.jsonl"}, named


def truncation_trap_found(ns):
    lenient = ns["lenient"]
    cut_passes = sum(r["truncated"] and r["reward"] >= 1.0 for r in _read("run1_lenient.jsonl"))
    assert cut_passes > 0 and lenient.truncated_passes == cut_passes
    assert lenient.verdict == "truncation_trap"


def baseline_can_fail(ns):
    base, easy = ns["base"], ns["easy"]
    counts = _per_task("run1.jsonl")
    assert abs(base.pass_at_1 - _pass_at_1("run1.jsonl")) < 1e-12
    assert base.n_fail_capable == sum(c < n for c, n in counts.values())
    assert base.n_never_pass == sum(c == 0 for c, n in counts.values())
    assert base.verdict == "ready" and base.holdout == ns["frozen"].name
    assert base.ci[0] < base.pass_at_1 < base.ci[1]
    assert easy.verdict == "little_headroom" and easy.n_fail_capable <= 3
    assert abs(easy.headroom - (1 - _pass_at_1("easy.jsonl"))) < 1e-12
    assert ns["lenient"].pass_at_1 > base.pass_at_1


def noise_floor_measured(ns):
    from statistics import stdev

    scores = [_pass_at_1(f"run{r}.jsonl") for r in (1, 2, 3)]
    assert abs(ns["floor"].run_std - stdev(scores)) < 1e-12
    assert ns["floor"].n_runs == 3


def holdout_sized(ns):
    size, frozen = ns["size"], ns["frozen"]
    assert size.inputs_from == "one-arm pilot" and size.k == K
    # the smallest effect the frozen set can see: the first effect whose n fits in it
    sees = ns["sees"]
    assert ns["sizes"][sees] <= frozen.n_tasks
    smaller = [e for e in ns["sizes"] if e < sees]
    assert all(ns["sizes"][e] > frozen.n_tasks for e in smaller)
    # the numbers the prose states after this block
    assert (sees, size.n_tasks, size.table[8]) == (0.07, 360, 244), (sees, size.n_tasks, size.table)
    assert round(1 - 0.95 ** 4, 2) == 0.19  # step 6's chance that one of four moves by luck


def every_behaviour_its_line(ns):
    table = ns["table"]
    tasks = {r["task_id"]: r["category"] for r in _read("heldout_tasks.jsonl")}
    counts = _per_task("run1.jsonl")
    assert [ln.category for ln in table.lines] == sorted(CATEGORIES)
    for line in table.lines:
        mine = [c / n for t, (c, n) in counts.items() if tasks[t] == line.category]
        assert line.n_tasks == len(mine) == N_TASKS // len(CATEGORIES)
        assert abs(line.pass_at_1 - sum(mine) / len(mine)) < 1e-12
        assert line.ci[0] <= line.pass_at_1 <= line.ci[1]


def luck_does_not_survive(ns):
    many = ns["rerun"].comparison
    assert many.n_tested == len(CATEGORIES) and many.family == "group"
    # paired deltas by hand: per task, run3's pass rate minus run1's, averaged over the category
    tasks = {r["task_id"]: r["category"] for r in _read("heldout_tasks.jsonl")}
    one, three = _per_task("run1.jsonl"), _per_task("run3.jsonl")
    for b in many.behaviours:
        d = [three[t][0] / three[t][1] - one[t][0] / one[t][1] for t in one if tasks[t] == b.name]
        assert b.n_paired == len(d) and abs(b.delta - sum(d) / len(d)) < 1e-12
    # Holm by hand from the reported p-values: the i-th smallest times (m - i), running max
    ps = sorted((b.p_value, b.name) for b in many.behaviours)
    running, m = 0.0, len(ps)
    for i, (p, name) in enumerate(ps):
        running = max(running, min(1.0, (m - i) * p))
        assert abs(next(b.p_holm for b in many.behaviours if b.name == name) - running) < 1e-12
    # the prose: escalation moves on its own (p ~ 0.02), Holm ~ 0.09, nothing survives
    esc = next(b for b in many.behaviours if b.name == "escalation")
    assert esc.verdict == "moved_the_wrong_way" and round(esc.delta, 2) == -0.09
    assert round(esc.p_value, 2) == 0.02 and round(esc.p_holm, 2) == 0.09, esc
    assert ns["lucky"] == ["escalation"] and many.survive_holm == [] and many.survive_bh == []


CHECKS = [frozen_by_content, truncation_trap_found, baseline_can_fail, noise_floor_measured,
          holdout_sized, every_behaviour_its_line, luck_does_not_survive]
