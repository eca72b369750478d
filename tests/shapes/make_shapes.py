"""Write the corpus of row shapes (tests/shapes/readings.py says what an expert reads in each).

Each shape is one set of rows as a real system or team writes them. Where the system's own code
runs here it made the files: the Inspect logs come from ``inspect_ai``'s own ``eval`` on its
offline ``mockllm`` provider (0.3.285, installed with this project's test extra; committed under
``inspect/``, rewritten by ``python tests/shapes/make_shapes.py --inspect``). prime-rl, verifiers,
lm-eval and TRL do not run here, so their shapes are built from their documented formats:

* prime-rl: every episode is a copy of one episode record that verifiers a60a606 wrote for the
  project's fixtures (``tests/fixtures/prime_rl/volume``, made by verifiers' own models), with
  its prompt, reply, reward, finish reason and step changed, laid out as prime-rl 559b447's
  ``FileMonitor.log_episodes`` lays them out (``rollouts/step_<S>/eval/all/traces.jsonl``);
* lm-eval: ``samples_<task>_<date>.jsonl`` lines with the keys lm-eval 0.4.13's own writer gave
  ``tests/fixtures/lm_eval/output`` (``doc_id``, ``doc``, ``target``, ``arguments``, ``resps``,
  ``filtered_resps``, ``filter``, ``metrics``, hashes, one key per metric) and a
  ``results_<date>.json`` naming the model;
* verifiers: ``vf-eval --save-results`` rows (``example_id``, ``prompt`` and ``completion`` as
  chat messages, ``answer``, ``task``, ``reward`` and one column per reward function), from
  verifiers' README and ``GenerateOutputs``;
* TRL: the completions table ``GRPOTrainer`` logs with ``log_completions`` (``step``,
  ``prompt``, ``completion``, one column per reward function, ``advantage``), with a task id a
  team's script added;
* the others (an LLM-judge pipeline, a production log, teams' own files) are written as teams
  write them: extra fields, missing ones, several models and checkpoints in one file.

Every random draw is seeded, so the files are the same on every run. :func:`build` writes them
all under a folder and returns their paths; the numbers an expert would check (a model's pass
rate, a family's delta) are computed here from the draws, independently of the library.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import shutil
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures"
INSPECT = HERE / "inspect"
MODEL = "Qwen/Qwen3-8B"
SMALL = "Qwen/Qwen3-1.7B"
BIG = "Qwen/Qwen3-32B"
PRIME_MODEL = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"

FACTS: dict[str, dict] = {}
"""Numbers each shape's expert reading may cite, filled by :func:`build` (hand-countable)."""


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _binary(rng, p_tasks, k, model=MODEL, prefix="t", **extra) -> list[dict]:
    return [{"task_id": f"{prefix}{t}", "reward": float(rng.random() < p), "model": model,
             **extra} for t, p in enumerate(p_tasks) for _ in range(k)]


def _pass1(rows: list[dict]) -> float:
    by: dict[str, list[float]] = {}
    for r in rows:
        by.setdefault(r["task_id"], []).append(float(r["reward"] >= 1.0))
    return float(np.mean([np.mean(v) for v in by.values()]))


# --- an LLM-judge pipeline -------------------------------------------------------------------

def judge_likert(out: Path) -> Path:
    """A team grades replies with an LLM judge on a 1-10 rubric and logs who graded."""
    rng = np.random.default_rng(1)
    rows = []
    for t in range(60):
        quality = rng.uniform(2, 9)
        for j in range(4):
            score = int(np.clip(round(quality + rng.normal(0, 1.5)), 1, 10))
            rows.append({"task_id": f"support-{t:03d}", "prompt": f"Customer question {t}",
                         "completion": "Thanks for reaching out. " * (1 + j), "reward": score,
                         "grader": "llm-judge", "judge_model": "gpt-4o-2024-08-06",
                         "rubric": "helpfulness-v3 (1 useless .. 10 expert)", "model": MODEL})
    return _jsonl(out / "judge_likert.jsonl", rows)


def judge_verdicts(out: Path) -> Path:
    """Pass/fail verdicts of a model judge, its reasoning kept, no `grader` field."""
    rng = np.random.default_rng(2)
    rows = []
    for t in range(50):
        p = rng.uniform(0.1, 0.9)
        for _ in range(4):
            ok = rng.random() < p
            rows.append({"task_id": f"qa-{t}", "reward": float(ok), "model": MODEL,
                         "judge_model": BIG, "judge_reasoning":
                         "The answer matches the reference." if ok else "It misses the point."})
    return _jsonl(out / "judge_verdicts.jsonl", rows)


def program_percent(out: Path) -> Path:
    """Percent of unit tests passed (0-100), graded by a program that says so."""
    rng = np.random.default_rng(3)
    rows = []
    for t in range(50):
        p = rng.uniform(0.2, 0.8)
        for _ in range(4):
            rows.append({"task_id": f"repo-fn-{t}", "reward": float(20 * rng.binomial(5, p)),
                         "grader": "unit-tests", "tests_total": 5, "model": MODEL})
    return _jsonl(out / "program_percent.jsonl", rows)


# --- several models and checkpoints in one file ------------------------------------------------

def two_models(out: Path) -> Path:
    """60 tasks x 4 rollouts of the 8B, then the same tasks x 4 of the 1.7B, concatenated."""
    rng = np.random.default_rng(4)
    p = rng.uniform(0.15, 0.85, 60)
    big = _binary(rng, p, 4, MODEL)
    small = _binary(rng, p * 0.5, 4, SMALL)
    FACTS["two_models"] = {"rows_each": 240, "pass1_8b": _pass1(big),
                           "pass1_1.7b": _pass1(small)}
    return _jsonl(out / "two_models.jsonl", big + small)


def two_other_models(out: Path) -> Path:
    """Rows of the 8B and the 32B; the model to train is the 4B."""
    rng = np.random.default_rng(5)
    p = rng.uniform(0.2, 0.8, 40)
    return _jsonl(out / "two_other_models.jsonl",
                  _binary(rng, p, 4, MODEL) + _binary(rng, np.minimum(1, p + 0.2), 4, BIG))


def checkpoints(out: Path) -> Path:
    """One model at three checkpoints on the same 50 tasks, told apart by `checkpoint`."""
    rng = np.random.default_rng(6)
    p = rng.uniform(0.1, 0.7, 50)
    rows = []
    for name, lift in (("base", 0.0), ("step-100", 0.1), ("step-200", 0.2)):
        rows += _binary(rng, np.minimum(1, p + lift), 4, MODEL, checkpoint=name)
    return _jsonl(out / "checkpoints.jsonl", rows)


# --- teachers ----------------------------------------------------------------------------------

def smaller_teacher(out: Path) -> tuple[Path, Path]:
    """The 8B student, and a 1.7B fine-tune that scores higher on the same tasks."""
    rng = np.random.default_rng(7)
    p = rng.uniform(0.1, 0.7, 60)
    return (_jsonl(out / "student_8b.jsonl", _binary(rng, p, 4, MODEL)),
            _jsonl(out / "teacher_1.7b.jsonl",
                   _binary(rng, np.minimum(1, p + 0.35), 4, "acme/Qwen3-1.7B-support-sft")))


def budget_teacher(out: Path, budgets: bool) -> tuple[Path, Path]:
    """The 8B student and the 32B teacher on the same tasks; with ``budgets`` both rows carry
    the same 2048-token cap and each reply's length."""
    rng = np.random.default_rng(8)
    p = rng.uniform(0.1, 0.6, 60)

    def rows(pp, model):
        out_rows = _binary(rng, pp, 4, model)
        if budgets:
            for r in out_rows:
                r.update(max_tokens=2048, completion_tokens=int(rng.integers(200, 1900)),
                         finish_reason="stop")
        return out_rows

    tag = "budgets" if budgets else "nobudget"
    return (_jsonl(out / f"student_{tag}.jsonl", rows(p, MODEL)),
            _jsonl(out / f"teacher_{tag}.jsonl", rows(np.minimum(1, p + 0.35), BIG)))


# --- families ----------------------------------------------------------------------------------

def families(out: Path) -> tuple[Path, Path]:
    """300 tasks from 10 repositories (field `repo`), before and after a change whose gain sits
    in two repositories; the other eight are the same rollouts again."""
    rng = np.random.default_rng(9)
    before, after = [], []
    deltas = []
    for r in range(10):
        base = rng.uniform(0.2, 0.7)
        d_repo = []
        for t in range(30):
            p = float(np.clip(base + rng.normal(0, 0.1), 0.05, 0.95))
            b = [float(rng.random() < p) for _ in range(4)]
            a = ([float(rng.random() < min(1.0, p + 0.32)) for _ in range(4)] if r < 2 else b)
            tid = f"r{r}-t{t}"
            before += [{"task_id": tid, "repo": f"org/repo-{r}", "reward": x, "model": MODEL}
                       for x in b]
            after += [{"task_id": tid, "repo": f"org/repo-{r}", "reward": x, "model": MODEL}
                      for x in a]
            d_repo.append(np.mean(a) - np.mean(b))
        deltas.append(np.mean(d_repo))
    deltas = np.array(deltas)
    # CR1 by hand on equal family sizes: the repos' mean deltas, t with 9 df (scipy's 2.262)
    se = deltas.std(ddof=1) / math.sqrt(10)
    FACTS["families"] = {"delta": float(deltas.mean()),
                         "clustered_ci": (float(deltas.mean() - 2.2622 * se),
                                          float(deltas.mean() + 2.2622 * se))}
    return _jsonl(out / "repos_before.jsonl", before), _jsonl(out / "repos_after.jsonl", after)


def few_families(out: Path) -> tuple[Path, Path]:
    """90 tasks from 3 datasets; the gain is in one of them."""
    rng = np.random.default_rng(10)
    before, after = [], []
    for d, name in enumerate(("gsm8k", "math", "aime")):
        for t in range(30):
            p = rng.uniform(0.2, 0.6)
            b = [float(rng.random() < p) for _ in range(4)]
            a = [float(rng.random() < min(1, p + 0.4)) for _ in range(4)] if d == 0 else b
            tid = f"{name}-{t}"
            before += [{"task_id": tid, "dataset": name, "reward": x} for x in b]
            after += [{"task_id": tid, "dataset": name, "reward": x} for x in a]
    return _jsonl(out / "datasets_before.jsonl", before), _jsonl(out / "datasets_after.jsonl", after)


# --- lm-eval --log_samples ---------------------------------------------------------------------

LM_DATE = "2026-12-01T10-00-00.000000"


def _lm_eval_folder(folder: Path, model: str, rows: list[dict], task: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    _jsonl(folder / f"samples_{task}_{LM_DATE}.jsonl", rows)
    (folder / f"results_{LM_DATE}.json").write_text(json.dumps({
        "results": {task: {"alias": task}}, "model_name": model,
        "config": {"model": "hf", "model_args": f"pretrained={model}"}}), encoding="utf-8")
    return folder


def _lm_sample(doc_id: int, metrics: dict[str, float], reply: str) -> dict:
    doc = {"question": f"Question {doc_id}", "answer": str(doc_id % 7)}
    h = hashlib.sha256(json.dumps(doc).encode()).hexdigest()
    return {"doc_id": doc_id, "doc": doc, "target": doc["answer"],
            "arguments": {"gen_args_0": {"arg_0": doc["question"] + ":",
                                         "arg_1": {"until": ["\n"], "max_gen_toks": 256}}},
            "resps": [[reply]], "filtered_resps": [reply], "filter": "none",
            "metrics": list(metrics), "doc_hash": h, "prompt_hash": h, "target_hash": h,
            **metrics}


def lm_eval_pair(out: Path) -> tuple[Path, Path]:
    """Base and fine-tune, 250 docs each, exact_match: 6 docs fixed, 4 broken (McNemar on 10
    discordant docs: two-sided p 0.75), so nothing moved."""
    rng = np.random.default_rng(11)
    base = rng.random(250) < 0.55
    ft = base.copy()
    wrong, right = np.flatnonzero(~base), np.flatnonzero(base)
    ft[wrong[:6]] = True
    ft[right[:4]] = False
    FACTS["lm_eval_pair"] = {"n": 250, "delta": (int(ft.sum()) - int(base.sum())) / 250}
    folders = []
    for name, model, hits in (("base", MODEL, base), ("ft", "acme/Qwen3-8B-ft", ft)):
        rows = [_lm_sample(i, {"exact_match": float(h)}, "x") for i, h in enumerate(hits)]
        folders.append(_lm_eval_folder(out / f"lm_eval_{name}" / model.replace("/", "__"),
                                       model, rows, "gsm8k_cot"))
    return folders[0], folders[1]


def lm_eval_two_metrics(out: Path) -> Path:
    """A multiple-choice task: lm-eval logs `acc` and `acc_norm` for every doc."""
    rng = np.random.default_rng(12)
    rows = [_lm_sample(i, {"acc": float(rng.random() < 0.6), "acc_norm": float(rng.random() < 0.65)},
                       "B") for i in range(100)]
    return _lm_eval_folder(out / "lm_eval_mc" / "Qwen__Qwen3-8B", MODEL, rows, "arc_easy")


# --- prime-rl run folders ----------------------------------------------------------------------

def _prime_template() -> dict:
    path = (FIXTURES / "prime_rl" / "volume" / "e2e-opsd" / "fc-opsd-1" / "rollouts" / "step_0"
            / "eval" / "all" / "traces.jsonl")
    return json.loads(path.read_text(encoding="utf-8").splitlines()[0])


def _episode(template: dict, idx: int, k: int, step: int, score: float, cut: bool) -> dict:
    ep = copy.deepcopy(template)
    text = f"prompt-{idx:03d}"
    ep["id"] = hashlib.md5(f"{idx}-{k}-{step}".encode()).hexdigest()
    ep["group"]["id"] = f"run-s{step}-g{idx}"
    ep["run"]["work"].update(step=step, policy={"start": step, "end": step})
    for holder in (ep["task"], ep["traces"][0]["task"]):
        holder["data"].update(idx=idx, prompt=text, answer=text[::-1])
    trace = ep["traces"][0]
    trace["id"] = hashlib.md5(f"t{idx}-{k}-{step}".encode()).hexdigest()
    trace["agent"]["config"]["model"] = PRIME_MODEL
    trace["calls"][0]["model"] = PRIME_MODEL
    trace["calls"][0]["finish_reason"] = "length" if cut else "stop"
    trace["rewards"] = {"lcs": {"score": score, "weight": 1.0}}
    return ep


def prime_rl_run(out: Path, steps: tuple[int, ...]) -> Path:
    """A prime-rl run folder with eval episodes at ``steps``: 20 prompts x 4, LCS rewards."""
    rng = np.random.default_rng(13)
    template = _prime_template()
    run = out / ("prime_rl_" + "_".join(map(str, steps)))
    for step in steps:
        eps = []
        for idx in range(20):
            centre = rng.uniform(0.2, 0.7) + 0.01 * step
            for k in range(4):
                score = round(float(np.clip(centre + rng.normal(0, 0.15), 0, 0.99)), 3)
                eps.append(_episode(template, idx, k, step, score, False))
        _jsonl(run / "rollouts" / f"step_{step}" / "eval" / "all" / "traces.jsonl", eps)
    return run


# --- truncation on partial credit --------------------------------------------------------------

def truncation(out: Path, paid: bool) -> Path:
    """An overlap score (0-1): with ``paid``, replies that run to the cap score about twice
    what finished ones do; otherwise a cut reply scores less."""
    rng = np.random.default_rng(14 if paid else 15)
    rows = []
    for t in range(60):
        base = rng.uniform(0.15, 0.4)
        for _ in range(8):
            cut = bool(rng.random() < 0.3)
            centre = base * (2.0 if paid else 0.4) if cut else base
            rows.append({"task_id": f"sum-{t}", "reward": round(float(np.clip(
                centre + rng.normal(0, 0.05), 0, 0.98)), 4), "truncated": cut,
                "completion_tokens": 1024 if cut else int(rng.integers(200, 900)),
                "max_tokens": 1024, "model": MODEL})
    return _jsonl(out / ("paid_truncation.jsonl" if paid else "honest_truncation.jsonl"), rows)


# --- the route's own next step -----------------------------------------------------------------

def pilot(out: Path) -> Path:
    """A pilot of 120 tasks x 4 on the model to train, pass rates spread over [0, 1]."""
    rng = np.random.default_rng(16)
    return _jsonl(out / "pilot_120.jsonl", _binary(rng, rng.uniform(0, 1, 120), 4))


def binary_48(out: Path) -> Path:
    rng = np.random.default_rng(17)
    return _jsonl(out / "binary_48.jsonl", _binary(rng, rng.uniform(0, 0.6, 48), 4))


# --- fields the route reads or should not ------------------------------------------------------

def turns_zero(out: Path) -> Path:
    """A team's export: `turns` is 0 on every row and the cap is one number."""
    rng = np.random.default_rng(18)
    rows = _binary(rng, rng.uniform(0.2, 0.8, 30), 4)
    for r in rows:
        r.update(turns=0, max_tokens=4096)
    return _jsonl(out / "turns_zero.jsonl", rows)


def multi_turn(out: Path) -> Path:
    """An agent's episodes: turns 1-6, tokens summed over turns, tool calls counted."""
    rng = np.random.default_rng(19)
    rows = _binary(rng, rng.uniform(0.2, 0.8, 30), 4)
    for r in rows:
        turns = int(rng.integers(1, 7))
        r.update(turns=turns, completion_tokens=int(300 * turns), max_tokens=4096,
                 tool_calls=int(rng.integers(0, turns + 1)))
    return _jsonl(out / "multi_turn.jsonl", rows)


def production_log(out: Path) -> Path:
    """One reply per request from production: a user's thumbs-up is the reward."""
    rng = np.random.default_rng(20)
    rows = []
    for i in range(200):
        up = bool(rng.random() < 0.6)
        prompt = f"How do I reset my password? (variant {i})"
        rows.append({"task_id": hashlib.sha1(prompt.encode()).hexdigest()[:12],
                     "request_id": f"req-{i:05d}", "timestamp": f"2026-11-{1 + i % 28:02d}T12:00:00Z",
                     "user_id": f"u{int(rng.integers(0, 50))}", "latency_ms": int(rng.integers(300, 4000)),
                     "prompt": prompt, "response": "Open settings, then security. " * 3,
                     "thumbs_up": up, "reward": float(up), "feedback_source": "user",
                     "model": MODEL})
    return _jsonl(out / "production_log.jsonl", rows)


def trl_completions(out: Path) -> Path:
    """TRL GRPOTrainer's completions table at steps 50 and 100, with a task id added."""
    rng = np.random.default_rng(21)
    rows = []
    for step in (50, 100):
        for t in range(32):
            for _ in range(4):
                acc = float(rng.random() < 0.3 + step / 400)
                fmt = float(rng.random() < 0.9)
                rows.append({"step": step, "task_id": f"prompt-{t}", "prompt": f"Solve {t}",
                             "completion": "<think>...</think> 42", "accuracy_reward": acc,
                             "format_reward": fmt, "reward": acc + 0.2 * fmt,
                             "advantage": round(float(rng.normal()), 3)})
    return _jsonl(out / "trl_completions.jsonl", rows)


def verifiers_results(out: Path) -> Path:
    """`vf-eval -s` results: example_id is the task, one column per reward function."""
    rng = np.random.default_rng(22)
    rows = []
    for ex in range(40):
        p = rng.uniform(0.1, 0.9)
        for _ in range(3):
            ok = float(rng.random() < p)
            rows.append({"example_id": ex, "prompt": [{"role": "user", "content": f"Q{ex}"}],
                         "completion": [{"role": "assistant", "content": "A"}],
                         "answer": "A", "task": "gsm8k", "info": {}, "reward": ok,
                         "correct_answer_reward_func": ok, "format_reward_func": 1.0})
    FACTS["verifiers_results"] = {"n_tasks": 40}
    return _jsonl(out / "verifiers_results.jsonl", rows)


def score_not_reward(out: Path) -> Path:
    """A team's file that calls the reward `score`."""
    rng = np.random.default_rng(23)
    rows = [{"task_id": f"t{t}", "score": float(rng.random() < 0.5), "model": MODEL}
            for t in range(20) for _ in range(4)]
    return _jsonl(out / "score_not_reward.jsonl", rows)


# --- Inspect logs, made by inspect_ai's own eval ------------------------------------------------

def make_inspect_logs() -> None:
    """Run ``shapes_task.py`` with inspect_ai's ``eval`` on ``mockllm`` and keep the logs."""
    import tempfile

    from inspect_ai import eval as inspect_eval

    if INSPECT.exists():
        shutil.rmtree(INSPECT)
    INSPECT.mkdir()
    for name in ("one_scorer", "two_scorers"):
        with tempfile.TemporaryDirectory() as tmp:
            [log] = inspect_eval(f"{HERE / 'shapes_task.py'}@{name}", model="mockllm/model",
                                 log_dir=tmp, display="none")
            shutil.copyfile(Path(log.location), INSPECT / f"{name}.eval")
            print(f"{name}.eval: {log.status}, {len(log.samples or [])} samples")


def build(out: Path) -> dict[str, object]:
    """Every shape written under ``out``: name -> its path (or a pair of paths)."""
    out.mkdir(parents=True, exist_ok=True)
    for log in INSPECT.glob("*.eval"):
        shutil.copyfile(log, out / f"inspect_{log.name}")
    return {
        "judge_likert": judge_likert(out), "judge_verdicts": judge_verdicts(out),
        "program_percent": program_percent(out), "two_models": two_models(out),
        "two_other_models": two_other_models(out), "checkpoints": checkpoints(out),
        "smaller_teacher": smaller_teacher(out), "budget_teacher": budget_teacher(out, True),
        "nobudget_teacher": budget_teacher(out, False), "families": families(out),
        "few_families": few_families(out), "lm_eval_pair": lm_eval_pair(out),
        "lm_eval_roots": (out / "lm_eval_base", out / "lm_eval_ft"),
        "lm_eval_two_metrics": lm_eval_two_metrics(out),
        "inspect_one_scorer": out / "inspect_one_scorer.eval",
        "inspect_two_scorers": out / "inspect_two_scorers.eval",
        "prime_rl_one_step": prime_rl_run(out, (0,)),
        "prime_rl_two_steps": prime_rl_run(out, (0, 20)),
        "paid_truncation": truncation(out, True), "honest_truncation": truncation(out, False),
        "pilot": pilot(out), "binary_48": binary_48(out), "turns_zero": turns_zero(out),
        "multi_turn": multi_turn(out), "production_log": production_log(out),
        "trl_completions": trl_completions(out), "verifiers_results": verifiers_results(out),
        "score_not_reward": score_not_reward(out),
    }


if __name__ == "__main__":
    if "--inspect" in sys.argv:
        make_inspect_logs()
    else:
        for name, path in build(Path(sys.argv[1] if len(sys.argv) > 1 else "shapes-out")).items():
            print(name, path)
