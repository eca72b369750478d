"""The prime-rl recipe around a real run: what a launch keeps, how it stops the OPD teacher, what
--collect does arm by arm, and what the noise floor says it is.

The run folders are laid out as prime-rl 559b447 writes them (``src/prime_rl/utils/pathing.py``:
``rollouts/step_<S>/eval``, ``logs/attempt_<n>`` with a ``latest`` link, ``configs``,
``checkpoints/step_<N>``, ``broadcasts/step_<N>``); the eval episodes are the fixture volume's
(``tests/fixtures/prime_rl/make_episodes.py``, verifiers a60a606's own models).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from argparse import Namespace
from pathlib import Path

import pytest

from whileai_core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "recipes" / "prime-rl"
VOLUME = ROOT / "tests" / "fixtures" / "prime_rl" / "volume"
LAUNCHES = {"grpo": ("e2e-grpo", "fc-grpo-new"), "opsd": ("e2e-opsd", "fc-opsd-1"),
            "opd": ("e2e-opd", "fc-opd-1")}


def load(name):
    sys.path.insert(0, str(RECIPE))  # run.py imports its siblings by name, as when run
    spec = importlib.util.spec_from_file_location(f"_prime_rl_runs_{name}", RECIPE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def app(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    for key in ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET"):
        monkeypatch.delenv(key, raising=False)
    return load("modal_prime_rl")


collect = load("collect")


# --- the noise floor says what it is ---------------------------------------------------------

def _config(seed: int | None, temperature: float | None) -> str:
    text = (RECIPE / "configs" / "grpo.toml").read_text()
    text = text.replace("seed = 1\n", "" if seed is None else f"seed = {seed}\n")
    return text.replace("temperature = 1.0\n", "" if temperature is None
                        else f"temperature = {temperature}\n")


def test_the_committed_arms_are_re_runs_at_distinct_seeds():
    samplers = {arm: collect.sampler((RECIPE / "configs" / f"{arm}.toml").read_text())
                for arm in ("grpo", "opsd", "opd")}
    assert samplers == {"grpo": {"seed": 1, "eval_temperature": 1.0},
                        "opsd": {"seed": 2, "eval_temperature": 1.0},
                        "opd": {"seed": 3, "eval_temperature": 1.0}}
    measured, what = collect.noise_source(samplers)
    assert measured and what.startswith("re-runs at distinct seeds")
    assert "grpo seed 1, opsd seed 2, opd seed 3; eval temperature 1" in what


@pytest.mark.parametrize("configs, why", [
    # the configs before this fix: no seed (prime-rl's 0 for every engine), no eval temperature
    ({"grpo": (None, None), "opd": (None, None)}, "share a seed (grpo seed 0, opd seed 0)"),
    ({"grpo": (1, None), "opd": (2, None)}, "one explicit, non-zero temperature"),
    ({"grpo": (1, 1.0), "opd": (2, 0.7)}, "one explicit, non-zero temperature"),
    ({"grpo": (1, 0.0), "opd": (2, 0.0)}, "one explicit, non-zero temperature"),
    ({"grpo": (1, 1.0)}, "a floor needs the first evals of 2 or more"),
])
def test_a_floor_that_is_not_a_re_run_is_not_measured(configs, why):
    samplers = {arm: collect.sampler(_config(*c)) for arm, c in configs.items()}
    measured, what = collect.noise_source(samplers)
    assert not measured and why in what


def test_a_report_without_re_runs_carries_only_the_paired_interval():
    def rows(step, rewards):
        return [{"task_id": str(i), "reward": r, "truncated": False, "step": step,
                 "errored": False, "policy_version": step} for i, r in enumerate(rewards)]

    arms = {arm: {"rows": rows(0, [0.1, 0.2, 0.3, 0.4]) + rows(20, [0.5, 0.6, 0.7, 0.8]),
                  "sampler": collect.sampler(None)} for arm in ("grpo", "opd")}
    rep = collect.report(arms)
    assert rep["noise_floor"] is None
    assert rep["noise_floor_note"].startswith("not measured: the configs of grpo, opd are not")
    assert rep["noise_floor_note"].endswith("each delta carries only its paired interval")
    assert rep["arms"]["grpo"]["lcs_delta"]["noise_band"] is None
    assert "noise floor: not measured" in collect.render(rep)


# --- --collect arm by arm ---------------------------------------------------------------------

def _calls(out: Path, launches=LAUNCHES) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    calls = {arm: {"call_id": cid, "run_name": name, "config": str(RECIPE / "configs" /
                                                                   f"{arm}.toml"),
                   "run_dir": f"{name}/{cid}"} for arm, (name, cid) in launches.items()}
    (out / "calls.json").write_text(json.dumps(calls))
    return calls


def _run(args, cwd):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODAL_")}
    env["HOME"] = str(cwd)
    return subprocess.run([sys.executable, str(RECIPE / "run.py"), *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=120)


@pytest.mark.slow
def test_collect_reports_the_arms_it_has_and_names_the_one_it_has_not(tmp_path):
    volume = tmp_path / "volume"
    for arm in ("grpo", "opd"):
        name, cid = LAUNCHES[arm]
        shutil.copytree(VOLUME / name / cid, volume / name / cid)
    out = tmp_path / "out"
    _calls(out)
    proc = _run(["--collect", "--runs-dir", str(volume), "--out", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "opsd: not in this report: no run folder" in proc.stdout
    assert "partial: opsd not in it" in proc.stdout
    results = json.loads((out / "results.json").read_text())
    assert results["complete"] is False and list(results["missing"]) == ["opsd"]
    assert set(results["report"]["arms"]) == {"grpo", "opd"}
    # two arms at seeds 1 and 3: their first evals are still re-runs of each other
    assert results["report"]["noise_floor"]["n_runs"] == 2
    # the copy is completed: the next --collect replaces the partial file without --force
    name, cid = LAUNCHES["opsd"]
    shutil.copytree(VOLUME / name / cid, volume / name / cid)
    proc = _run(["--collect", "--runs-dir", str(volume), "--out", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["complete"] is True and set(results["report"]["arms"]) == set(LAUNCHES)
    # a complete results.json is not replaced without --force
    proc = _run(["--collect", "--runs-dir", str(volume), "--out", str(out)], tmp_path)
    assert proc.returncode == 2 and "--force" in proc.stderr


def test_an_arm_that_finished_without_eval_rows_is_named_and_the_others_reported(tmp_path):
    """rl exited 0 but wrote no eval episodes (an eval block dropped, a copy that failed): that
    arm is named with why, the other two are reported; before, the whole collect raised."""
    volume = tmp_path / "volume"
    for arm in ("grpo", "opd"):
        name, cid = LAUNCHES[arm]
        shutil.copytree(VOLUME / name / cid, volume / name / cid)
    name, cid = LAUNCHES["opsd"]
    (volume / name / cid / "logs" / "attempt_1").mkdir(parents=True)  # a run, no evals
    (volume / name / cid / "logs" / "attempt_1" / "orchestrator.log").write_text("done")
    # one step only: the last eval never ran, so nothing pairs with the first
    only_first = tmp_path / "volume-first" / name / cid / "rollouts" / "step_0"
    shutil.copytree(VOLUME / LAUNCHES["grpo"][0] / LAUNCHES["grpo"][1] / "rollouts" / "step_0",
                    only_first)
    out = tmp_path / "out"
    _calls(out)
    proc = _run(["--collect", "--runs-dir", str(volume), "--out", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["complete"] is False and set(results["report"]["arms"]) == {"grpo", "opd"}
    assert results["missing"]["opsd"].startswith("wrote no eval rows")
    assert "opsd: not in this report: wrote no eval rows" in proc.stdout
    calls = _calls(out)
    # an arm whose evals cover one step cannot be paired: named, not raised
    for arm in ("grpo", "opd"):
        n, c = LAUNCHES[arm]
        shutil.copytree(VOLUME / n / c, tmp_path / "volume-first" / n / c)
    run = load("run")
    results = run.collect_local(tmp_path / "volume-first", calls)
    assert set(results["report"]["arms"]) == {"grpo", "opd"}
    assert results["missing"]["opsd"].startswith("its eval rows cover step 0 only")


class _Call:
    def __init__(self, outcome):
        self.outcome = outcome

    def get(self, timeout=None):
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


class _Volume:
    """read_file as modal.Volume gives it (an iterator of bytes), from a folder on disk."""

    def __init__(self, root: Path):
        self.root = root

    def read_file(self, path: str):
        yield (self.root / path).read_bytes()


def test_modal_collect_keeps_the_finished_arm_and_names_the_running_and_the_failed(
        app, monkeypatch, tmp_path):
    import modal

    run = load("run")
    importlib.import_module("modal_prime_rl")  # what collect() imports, before Modal is faked
    volume = tmp_path / "volume"
    name, cid = LAUNCHES["grpo"]
    shutil.copytree(VOLUME / name / cid, volume / name / cid)
    (volume / name / f"{cid}.config.toml").write_text((RECIPE / "configs" / "grpo.toml")
                                                       .read_text())
    out = tmp_path / "out"
    _calls(out)
    outcomes = {
        "fc-grpo-new": {"returncode": 0, "run_dir": f"{name}/{cid}", "launch_id": cid,
                        "wall_clock_s": 884.0, "log_tail": "done",
                        "eval_files": app.eval_files(volume / name / cid)},
        "fc-opsd-1": TimeoutError(),
        "fc-opd-1": {"returncode": 1, "run_dir": "e2e-opd/fc-opd-1", "launch_id": "fc-opd-1",
                     "log_tail": "line\n" * 40 + "RuntimeError: NCCL error", "eval_files": []},
    }
    monkeypatch.setattr(modal.FunctionCall, "from_id", lambda cid: _Call(outcomes[cid]))
    monkeypatch.setattr(modal.Volume, "from_name", lambda name, **_: _Volume(volume))
    results = run.collect(Namespace(out=out))
    assert results["complete"] is False and set(results["report"]["arms"]) == {"grpo"}
    assert results["missing"]["opsd"].startswith("still running")
    failed = results["missing"]["opd"]
    assert failed.startswith("failed: return code 1") and failed.endswith("RuntimeError: NCCL error")
    assert failed.count("line") == run.FAILED_TAIL_LINES - 1  # the tail, not the whole log
    assert results["runs"]["opd"]["returncode"] == 1 and "log_tail" not in results["runs"]["opd"]
    assert results["runs"]["grpo"]["wall_clock_s"] == 884.0
    # the config as launched came down beside the run folder: the floor knows the seed
    assert (out / "runs" / name / f"{cid}.config.toml").is_file()
    assert results["report"]["arms"]["grpo"]["wall_clock_s"] == 884.0
    # an arm that exited 0 with no eval episodes kept is named; the others still come back
    outcomes["fc-opsd-1"] = {"returncode": 0, "run_dir": "e2e-opsd/fc-opsd-1",
                             "launch_id": "fc-opsd-1", "log_tail": "done", "eval_files": []}
    results = run.collect(Namespace(out=out))
    assert set(results["report"]["arms"]) == {"grpo"}
    assert results["missing"]["opsd"].startswith("wrote no eval rows: rl exited 0")
    assert results["runs"]["opsd"]["returncode"] == 0
    # nothing finished at all: one error naming every arm
    monkeypatch.setattr(modal.FunctionCall, "from_id", lambda cid: _Call(TimeoutError()))
    with pytest.raises(ConfigError, match="no arm finished: grpo: still running"):
        run.collect(Namespace(out=out))


# --- what a launch keeps, and the teacher's shutdown -------------------------------------------

def _prime_rl_run_folder(run_dir: Path) -> None:
    """The files prime-rl 559b447 leaves in a run folder, a few bytes each: under filesystem
    broadcast the last two broadcasts (each step's older one is removed two steps on,
    src/prime_rl/trainer/utils.py maybe_clean), each HF-named shards, their index and STABLE."""
    for name in ("rollouts/step_0/eval/all/traces.jsonl", "rollouts/step_20/eval/all/traces.jsonl",
                 "rollouts/step_3/train/all/traces.jsonl", "logs/attempt_1/trainer.log",
                 "logs/attempt_1/orchestrator.log", "configs/inference.toml",
                 "checkpoints/step_10/trainer/model.pt", "checkpoints/step_20/trainer/model.pt",
                 "checkpoints/step_20/orchestrator/progress.pt",
                 "broadcasts/step_19/model-00001-of-00001.safetensors", "broadcasts/step_19/STABLE",
                 "broadcasts/step_20/model-00001-of-00001.safetensors",
                 "broadcasts/step_20/model.safetensors.index.json", "broadcasts/step_20/STABLE"):
        (run_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (run_dir / name).write_text(name)
    os.symlink("attempt_1", run_dir / "logs" / "latest")


STUDENT = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"


def _hub_cache(root: Path, model: str = STUDENT) -> Path:
    """A hub cache laid out as huggingface_hub writes it: snapshot entries link to blobs."""
    repo = root / f"models--{model.replace('/', '--')}"
    (repo / "blobs").mkdir(parents=True)
    snapshot = repo / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    for i, name in enumerate(("config.json", "generation_config.json", "tokenizer.json",
                              "tokenizer_config.json", "model.safetensors")):
        (repo / "blobs" / f"blob{i}").write_text(f"{model} {name}")
        os.symlink(f"../../blobs/blob{i}", snapshot / name)
    return root


def test_keep_run_copies_evals_logs_configs_the_final_checkpoint_and_servable_weights(
        app, tmp_path):
    local, volume = tmp_path / "local" / "e2e-grpo", tmp_path / "runs" / "e2e-grpo"
    _prime_rl_run_folder(local / "fc-1")
    (local / "fc-1.logs").mkdir()
    (local / "fc-1.logs" / "rl.log").write_text("rl output")
    kept = app.keep_run(local, volume, "fc-1", model=STUDENT, hub_cache=_hub_cache(tmp_path / "hub"))
    copied = sorted(str(p.relative_to(volume)) for p in volume.rglob("*") if p.is_file())
    # the last complete broadcast, with the student's config and tokenizer (not its weights)
    final = ["fc-1/broadcasts/step_20/STABLE", "fc-1/broadcasts/step_20/config.json",
             "fc-1/broadcasts/step_20/generation_config.json",
             "fc-1/broadcasts/step_20/model-00001-of-00001.safetensors",
             "fc-1/broadcasts/step_20/model.safetensors.index.json",
             "fc-1/broadcasts/step_20/tokenizer.json",
             "fc-1/broadcasts/step_20/tokenizer_config.json"]
    assert copied == sorted(["fc-1.logs/rl.log", "fc-1/checkpoints/step_20/orchestrator/progress.pt",
                             "fc-1/checkpoints/step_20/trainer/model.pt",
                             "fc-1/configs/inference.toml", "fc-1/logs/attempt_1/orchestrator.log",
                             "fc-1/logs/attempt_1/trainer.log",
                             "fc-1/rollouts/step_0/eval/all/traces.jsonl",
                             "fc-1/rollouts/step_20/eval/all/traces.jsonl", *final])
    assert (volume / "fc-1/broadcasts/step_20/config.json").read_text() == f"{STUDENT} config.json"
    seconds = kept.pop("seconds")
    assert 0 <= seconds < 60
    assert kept == {"files": 15, "bytes": sum((volume / p).stat().st_size for p in copied),
                    "errors": [], "n_errors": 0, "final_checkpoint": "checkpoints/step_20",
                    "final_weights": "broadcasts/step_20",
                    "final_weights_are": f"full weights with {STUDENT}'s config and tokenizer "
                                         "beside them: vllm serve (or uv run inference "
                                         "--vllm.model) takes the folder; prime-rl's evals reads "
                                         "it as a broadcast"}
    assert app.eval_files(volume / "fc-1") == ["rollouts/step_0/eval/all/traces.jsonl",
                                               "rollouts/step_20/eval/all/traces.jsonl"]


def test_final_weights_are_the_last_complete_broadcast_and_say_what_they_are(app, tmp_path):
    run_dir = tmp_path / "run"
    (run_dir / "broadcasts" / "step_20").mkdir(parents=True)  # being written: no STABLE yet
    (run_dir / "broadcasts" / "step_19").mkdir()
    (run_dir / "broadcasts" / "step_19" / "STABLE").write_text("")
    weights, beside, what = app.final_weights(run_dir, STUDENT, None)
    assert weights.name == "step_19" and beside == [] and "no config.json" in what
    (run_dir / "broadcasts" / "step_19" / "adapter_config.json").write_text("{}")
    assert "LoRA adapter" in app.final_weights(run_dir, STUDENT, None)[2]
    assert app.final_weights(tmp_path / "nccl-run", STUDENT, None)[0] is None
    # a local checkpoint as the model: its own files, without weights
    local_model = tmp_path / "model"
    local_model.mkdir()
    for name in ("config.json", "tokenizer.json", "model.safetensors", "pytorch_model.bin"):
        (local_model / name).write_text(name)
    assert [p.name for p in app.base_model_files(str(local_model), None)] == [
        "config.json", "tokenizer.json"]


def test_a_teacher_folder_without_weights_is_named_before_any_server_starts(app, tmp_path):
    assert app.missing_weights("PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL") is None
    folder = tmp_path / "broadcasts" / "step_20"
    folder.mkdir(parents=True)
    assert "no config.json" in app.missing_weights(str(folder))
    (folder / "config.json").write_text("{}")
    assert app.missing_weights(str(folder)) is None


def test_keep_run_after_a_crash_keeps_the_logs_and_never_raises(app, tmp_path):
    local, volume = tmp_path / "local" / "e2e-opd", tmp_path / "runs" / "e2e-opd"
    (local / "fc-2.logs").mkdir(parents=True)
    (local / "fc-2.logs" / "teacher.log").write_text("CUDA out of memory")
    assert app.keep_run(local, volume, "fc-2")["final_checkpoint"] is None  # no run folder
    assert (volume / "fc-2.logs" / "teacher.log").read_text() == "CUDA out of memory"
    blocked = tmp_path / "runs" / "blocked"
    blocked.write_text("a file where the volume folder should be")
    kept = app.keep_run(local, blocked, "fc-2")
    assert kept["files"] == 0 and kept["n_errors"] == 1 and "teacher.log" in kept["errors"][0]


def test_a_teacher_that_ignores_sigterm_is_killed_and_the_record_survives(app):
    stubborn = subprocess.Popen([sys.executable, "-c",
                                 "import signal, time; signal.signal(signal.SIGTERM, "
                                 "signal.SIG_IGN); print('up', flush=True); time.sleep(600)"],
                                stdout=subprocess.PIPE)
    assert stubborn.stdout.readline() == b"up\n"  # SIGTERM is ignored from here on
    started = time.monotonic()
    said = app.stop_server(stubborn, timeout_s=1.0)
    assert said == "ignored SIGTERM for 1 s; killed" and stubborn.returncode == -9
    assert time.monotonic() - started < 30
    polite = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    assert app.stop_server(polite, timeout_s=10.0) == "stopped (status -15)"
    assert app.stop_server(polite) == "had exited with status -15"
