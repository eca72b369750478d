"""Modal app of the prime-rl recipe: prime-rl's published image, any ``rl`` config, 2 GPUs.

Imports without a Modal token (tests read the functions' GPU, image and volumes). Takes any
config on its own:

    modal run --detach recipes/prime-rl/modal_prime_rl.py --config configs/grpo.toml \\
        --run-name grpo-1
    modal run --detach recipes/prime-rl/modal_prime_rl.py --config configs/opd.toml \\
        --run-name opd-1 --teacher PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL

``train`` runs ``rl`` in each launch's own run folder on the container's disk (a launch is a
Modal call; its call id is the launch id) and, whatever its exit status, copies what is kept
(eval episodes, logs, configs, the final checkpoint, servable final weights) to
``/runs/<run-name>/<launch id>`` on the ``whileai-prime-rl-runs`` volume with its record, so a
re-run never mixes with an earlier one; a container killed outright copies nothing. It stops
before ``rl`` when the GPUs the config deploys are not visible, and for OPD first serves a
localhost teacher on GPU 0. ``validate`` runs prime-rl's own ``rl --dry-run`` on CPU. Nothing
here needs this repository inside the container; layout and reasons:
``recipes/prime-rl/README.md``. One module: Modal deploys this file as the app, so the functions,
their image and their volumes are read in one place.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
import tomllib
import uuid
from pathlib import Path

import modal

HERE = Path(__file__).resolve().parent
APP_NAME = "whileai-prime-rl"
GPU = "H100:2"
RUNS_VOLUME = "whileai-prime-rl-runs"
HF_CACHE_VOLUME = "whileai-hf-cache"
RUNS_PATH = "/runs"
# The run folder lives on the container's own disk: filesystem weight broadcast writes each
# step's full weights under it (prime-rl 559b447, src/prime_rl/utils/pathing.py), which a network
# volume would slow. What is kept is copied to RUNS_PATH at the end.
LOCAL_RUNS_PATH = "/tmp/whileai-runs"
# Kept from a run folder: the eval episodes, the logs of every attempt, the resolved configs;
# plus the last checkpoints/step_<N> (what resumes training) and the last complete
# broadcasts/step_<N> (what serves: see final_weights).
KEPT_GLOBS = ("rollouts/step_*/eval/**/*", "logs/**/*", "configs/**/*")
# A servable copy of a full-weight broadcast takes everything but the weights from its base
# model's hub snapshot (config, generation config, tokenizer files): the broadcast holds only
# the safetensors shards, their index and the STABLE marker.
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".h5", ".msgpack", ".gguf", ".onnx",
                   ".ckpt", ".index.json")
HF_CACHE_PATH = "/cache"
HF_HOME = f"{HF_CACHE_PATH}/hf"  # where the hub cache lives in the container (the image's env)
PRIME_RL_DIR = "/app"
TEACHER_MEMORY = 0.4
TEACHER_READY_TIMEOUT_S = 900
TEACHER_STOP_TIMEOUT_S = 60  # SIGTERM, then SIGKILL: the run's record must survive either way
# train()'s own return codes, beside rl's: stopped before rl started
STOPPED_BEFORE_RL = 3   # the GPUs the config deploys are not visible, or torch/vllm do not import
TEACHER_NOT_READY = 4   # the OPD teacher's server exited or never answered /v1/models
VENV_PYTHON = f"{PRIME_RL_DIR}/.venv/bin/python"
# prime-rl's image entrypoint (scripts/docker-entrypoint.sh at 559b447) raises the open-files
# limit to 32000 "to prevent API timeout issues"; Modal runs its own command, not that script.
PRIME_RL_NOFILE = 32000
# uv must run prime-rl's baked venv as it is: no re-sync, no interpreter change.
UV_RUN = ("uv", "run", "--no-sync")
# Where prime-rl 559b447 writes eval episodes (prime_rl/monitors/file.py); only `all` is read.
EVAL_TRACES_GLOB = "rollouts/step_*/eval/all/traces.jsonl"
PROBE = ("import sys, torch, vllm; print('python', sys.executable, sys.version.split()[0]); "
         "print('torch', torch.__version__, 'vllm', vllm.__version__); "
         "print('gpus', torch.cuda.device_count())")

app = modal.App(APP_NAME)
image = (modal.Image.from_dockerfile(HERE / "prime-rl.Dockerfile", add_python="3.12")
         .env({"HF_HOME": HF_HOME, "PYTHONUNBUFFERED": "1"}))
runs = modal.Volume.from_name(RUNS_VOLUME, create_if_missing=True)
hf_cache = modal.Volume.from_name(HF_CACHE_VOLUME, create_if_missing=True)


def local_teacher(config_text: str) -> tuple[str, int, float] | None:
    """(model, port, vLLM memory share) of a teacher the config expects on localhost, else None."""
    config = tomllib.loads(config_text)
    teacher = config.get("orchestrator", {}).get("algo", {}).get("teacher")
    if not isinstance(teacher, dict):
        return None
    url = str(teacher.get("base_url", ""))
    if "://localhost:" not in url and "://127.0.0.1:" not in url:
        return None
    port = int(url.split("://", 1)[1].split(":", 1)[1].split("/", 1)[0])
    memory = config.get("inference", {}).get("vllm", {}).get("gpu_memory_utilization",
                                                              TEACHER_MEMORY)
    return str(teacher["name"]), port, float(memory)


def missing_weights(model: str) -> str | None:
    """Why a teacher given as a folder (another arm's final weights) cannot be served, or None (a
    hub id, or a folder with a config.json)."""
    if not model.startswith("/"):
        return None
    if (Path(model) / "config.json").is_file():
        return None
    return (f"the teacher {model} is not a servable folder here (no config.json): the arm it "
            "comes from must have finished and kept its final weights on the "
            f"{RUNS_VOLUME} volume (its record's kept.final_weights)")


def _wait_for(url: str, process: subprocess.Popen, timeout_s: float) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the teacher server exited with status {process.returncode} "
                               f"before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=5) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        time.sleep(5)
    raise RuntimeError(f"the teacher server did not answer {url} within {timeout_s:.0f} s")


def eval_files(run_dir: Path) -> list[str]:
    """The run's eval episode files (``all`` subset), relative to the run folder."""
    return sorted(str(p.relative_to(run_dir)) for p in run_dir.glob(EVAL_TRACES_GLOB)
                  if p.is_file())


def rl_command(config_path: str, run_name: str, launch_id: str, *,
               runs_path: str = RUNS_PATH) -> list[str]:
    """``rl`` for one launch: its own run folder ``<runs>/<run name>/<launch id>``."""
    return [*UV_RUN, "rl", "@", config_path, "--output-dir", f"{runs_path}/{run_name}",
            "--run.name", launch_id, "--clean"]


def raise_nofile() -> tuple[int, int]:
    """The open-files limit prime-rl's entrypoint sets, inherited by every child process."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = PRIME_RL_NOFILE if hard == resource.RLIM_INFINITY else min(PRIME_RL_NOFILE, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def deployed_gpus(config_text: str) -> int:
    """GPUs ``rl`` asks this machine for, counted as prime-rl 559b447's ``entrypoints/rl.py``
    does: single-node, ``num_infer_gpus`` (with ``[inference]``) plus ``num_train_gpus``, 1 and 1
    by default; multi-node, ``gpus_per_node`` (default 8)."""
    config = tomllib.loads(config_text)
    deployment = config.get("deployment", {})
    if deployment.get("type", "single_node") != "single_node":
        return int(deployment.get("gpus_per_node", 8))
    infer = int(deployment.get("num_infer_gpus", 1)) if "inference" in config else 0
    return infer + int(deployment.get("num_train_gpus", 1))


def _last_step(folder: Path, complete: str | None = None) -> Path | None:
    """The ``step_<N>`` folder of ``folder`` with the highest N (holding the file ``complete``,
    when given: a broadcast is whole once its ``STABLE`` marker is written)."""
    steps = [p for p in folder.glob("step_*") if p.is_dir() and
             p.name.removeprefix("step_").isdigit() and (complete is None or
                                                         (p / complete).is_file())]
    return max(steps, key=lambda p: int(p.name.removeprefix("step_")), default=None)


def base_model_files(model: str | None, hub_cache: Path | None) -> list[Path]:
    """The non-weight files of ``model`` (config, generation config, tokenizer): from the local
    checkpoint folder, else from its newest hub-cache snapshot; [] when neither is there."""
    if not model:
        return []
    folder = Path(model)
    if not folder.is_dir():
        snapshots = [] if hub_cache is None else [
            p for p in (hub_cache / f"models--{model.replace('/', '--')}" / "snapshots").glob("*")
            if (p / "config.json").is_file()]
        if not snapshots:
            return []
        folder = max(snapshots, key=lambda p: p.stat().st_mtime)
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.endswith(
        WEIGHT_SUFFIXES) and p.name != "STABLE")


def final_weights(run_dir: Path, model: str | None, hub_cache: Path | None
                  ) -> tuple[Path | None, list[Path], str]:
    """The run's final weights in a form vLLM and prime-rl's ``evals`` serve: its last complete
    broadcast (``broadcasts/step_<N>`` with ``STABLE``; the trainer writes one after every step,
    src/prime_rl/trainer/rl/train.py) and, for full weights, the base model's config and
    tokenizer files to put beside its shards. Returns (the folder or None, the files to add,
    what it is in words)."""
    last = _last_step(run_dir / "broadcasts", complete="STABLE")
    if last is None:
        return None, [], ("no complete broadcasts/step_<N> (an NCCL broadcast writes none; a "
                          "run that stopped before its first step)")
    if (last / "adapter_config.json").is_file():
        return last, [], f"a LoRA adapter of {model}: serve it on that model with --enable-lora"
    extra = [p for p in base_model_files(model, hub_cache) if not (last / p.name).exists()]
    if not any(p.name == "config.json" for p in extra) and not (last / "config.json").is_file():
        return last, extra, (f"full weights, but no config.json of {model} was found to put "
                             "beside them: copy the base model's config and tokenizer files in "
                             "before serving")
    return last, extra, (f"full weights with {model}'s config and tokenizer beside them: "
                         "vllm serve (or uv run inference --vllm.model) takes the folder; "
                         "prime-rl's evals reads it as a broadcast")


def keep_run(local_base: Path, volume_base: Path, launch_id: str, *, model: str | None = None,
             hub_cache: Path | None = None) -> dict:
    """Copy what is kept of a launch from the container's disk to the volume: ``KEPT_GLOBS``, the
    last ``checkpoints/step_<N>``, the :func:`final_weights` and our own ``<launch id>.logs``.
    Never raises: a copy that fails is named in ``errors``. Symbolic links in the run folder
    (prime-rl's ``logs/latest``) are not followed; the hub cache's (to its blobs) are."""
    import shutil

    started = time.monotonic()
    run_dir, target = local_base / launch_id, volume_base / launch_id
    wanted: list[Path] = []
    for pattern in KEPT_GLOBS:
        wanted += [p for p in run_dir.glob(pattern) if p.is_file() and not p.is_symlink()]
    final = _last_step(run_dir / "checkpoints")
    if final is not None:
        wanted += [p for p in final.rglob("*") if p.is_file() and not p.is_symlink()]
    weights, beside, what = final_weights(run_dir, model, hub_cache)
    if weights is not None:
        wanted += [p for p in weights.rglob("*") if p.is_file() and not p.is_symlink()]
    ours = local_base / f"{launch_id}.logs"
    pairs = [(p, target / p.relative_to(run_dir)) for p in wanted]
    if weights is not None:
        pairs += [(p, target / weights.relative_to(run_dir) / p.name) for p in beside]
    pairs += [(p, volume_base / ours.name / p.name) for p in sorted(ours.glob("*"))
              if p.is_file()]
    copied, size, errors = 0, 0, []
    for source, dest in pairs:
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest)
            copied, size = copied + 1, size + source.stat().st_size
        except OSError as exc:
            errors.append(f"{source}: {exc}")
    return {"files": copied, "bytes": size, "errors": errors[:10], "n_errors": len(errors),
            "final_checkpoint": str(final.relative_to(run_dir)) if final else None,
            "final_weights": str(weights.relative_to(run_dir)) if weights else None,
            "final_weights_are": what, "seconds": round(time.monotonic() - started, 1)}


def hub_cache_dir() -> Path:
    """The hub cache the models were downloaded to (``HF_HUB_CACHE``, else ``HF_HOME/hub``)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    return Path(os.environ.get("HF_HOME", HF_HOME)) / "hub"


def policy_model(config_text: str) -> str:
    """The model the config trains (``[model] name``, else the trainer's; prime-rl 559b447's
    default ``Qwen/Qwen3-0.6B``)."""
    config = tomllib.loads(config_text)
    return str((config.get("model") or {}).get("name")
               or ((config.get("trainer") or {}).get("model") or {}).get("name")
               or "Qwen/Qwen3-0.6B")


RECORD_SUFFIX = ".record.json"  # the launch's record, beside its run folder on the volume


def write_record(volume_base: Path, launch_id: str, record: dict) -> None:
    """The record ``train`` returns, also on the volume beside the run folder, readable from a
    copy of the volume with no Modal call. Never raises."""
    import json

    try:
        (volume_base / f"{launch_id}{RECORD_SUFFIX}").write_text(
            json.dumps(record, indent=1, default=str), encoding="utf-8")
    except OSError as exc:
        record.setdefault("kept", {}).setdefault("errors", []).append(f"record: {exc}")


def stop_server(process: subprocess.Popen, timeout_s: float = TEACHER_STOP_TIMEOUT_S) -> str:
    """Stop the teacher's server: SIGTERM, then SIGKILL after ``timeout_s``. Never raises."""
    if process.poll() is not None:
        return f"had exited with status {process.returncode}"
    process.terminate()
    try:
        process.wait(timeout=timeout_s)
        return f"stopped (status {process.returncode})"
    except subprocess.TimeoutExpired:
        process.kill()
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return f"ignored SIGTERM for {timeout_s:.0f} s and was still there after SIGKILL"
        return f"ignored SIGTERM for {timeout_s:.0f} s; killed"


def _tail(path: Path, chars: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError as exc:
        return f"(no log: {exc})"


def probe() -> dict:
    """What the container runs: the venv's real interpreter, torch/vllm, the GPU count."""
    python = subprocess.run(["readlink", "-f", VENV_PYTHON], capture_output=True, text=True)
    done = subprocess.run([*UV_RUN, "python", "-c", PROBE], cwd=PRIME_RL_DIR,
                          capture_output=True, text=True)
    gpus = next((int(line.split()[1]) for line in done.stdout.splitlines()
                 if line.startswith("gpus ")), None)
    return {"venv_python": python.stdout.strip(), "returncode": done.returncode,
            "imports": (done.stdout + done.stderr).strip()[-2000:], "gpus": gpus,
            "nofile": list(resource.getrlimit(resource.RLIMIT_NOFILE))}


@app.function(image=image, gpu=GPU, volumes={RUNS_PATH: runs, HF_CACHE_PATH: hf_cache},
              timeout=6 * 3600)
def train(config_text: str, run_name: str, teacher: str | None = None) -> dict:
    """Run ``rl`` on one config in this launch's own run folder, copy what is kept to the volume;
    returns the run's record (``returncode`` 0 when ``rl`` succeeded)."""
    launch_id = modal.current_function_call_id() or f"local-{uuid.uuid4().hex[:12]}"
    base = Path(RUNS_PATH) / run_name
    local = Path(LOCAL_RUNS_PATH) / run_name
    base.mkdir(parents=True, exist_ok=True)
    config_path = base / f"{launch_id}.config.toml"
    config_path.write_text(config_text, encoding="utf-8")
    record: dict = {"run_name": run_name, "launch_id": launch_id,
                    "run_dir": f"{run_name}/{launch_id}", "config": str(config_path),
                    "local_run_dir": str(local / launch_id), "nofile": list(raise_nofile())}
    record["probe"] = checked = probe()
    if checked["returncode"] != 0 or (checked["gpus"] or 0) < deployed_gpus(config_text):
        record.update(returncode=STOPPED_BEFORE_RL, wall_clock_s=0.0, eval_files=[],
                      log_tail=f"stopped before rl: the container sees {checked['gpus']} GPUs "
                               f"(the config deploys {deployed_gpus(config_text)}) or cannot "
                               f"import torch/vllm:\n{checked['imports']}")
        write_record(base, launch_id, record)
        runs.commit()
        return record
    logs = local / f"{launch_id}.logs"
    logs.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    server = None
    try:
        served = local_teacher(config_text)
        if served or teacher:
            model, port, memory = served or (teacher, 8001, TEACHER_MEMORY)
            model = teacher or model
            record["teacher"] = {"model": model, "port": port}
            missing = missing_weights(model)
            if missing:
                record.update(returncode=TEACHER_NOT_READY, wall_clock_s=0.0, log_tail=missing)
                return record
            command = [*UV_RUN, "inference", "--vllm.model", model, "--server.port", str(port),
                       "--vllm.gpu-memory-utilization", str(memory)]
            with open(logs / "teacher.log", "w") as log:
                server = subprocess.Popen(command, cwd=PRIME_RL_DIR, stdout=log,
                                          stderr=subprocess.STDOUT,
                                          env={**os.environ, "CUDA_VISIBLE_DEVICES": "0"})
            try:
                _wait_for(f"http://localhost:{port}/v1/models", server, TEACHER_READY_TIMEOUT_S)
            except RuntimeError as exc:
                record["teacher"]["waited_s"] = round(time.monotonic() - started, 1)
                record.update(returncode=TEACHER_NOT_READY, wall_clock_s=0.0,
                              log_tail=f"{exc}; teacher.log:\n" + _tail(logs / "teacher.log"))
                return record
            record["teacher"]["ready_after_s"] = round(time.monotonic() - started, 1)
            started = time.monotonic()
        with open(logs / "rl.log", "w") as log:
            done = subprocess.run(rl_command(str(config_path), run_name, launch_id,
                                             runs_path=LOCAL_RUNS_PATH),
                                  cwd=PRIME_RL_DIR, stdout=log, stderr=subprocess.STDOUT)
        record.update(returncode=done.returncode, log_tail=_tail(logs / "rl.log"))
    finally:
        record.setdefault("wall_clock_s", round(time.monotonic() - started, 1))
        if server is not None:
            record["teacher"]["shutdown"] = stop_server(server)
        record["kept"] = keep_run(local, base, launch_id, model=policy_model(config_text),
                                  hub_cache=hub_cache_dir())
        record["eval_files"] = eval_files(base / launch_id)
        write_record(base, launch_id, record)
        runs.commit()
    return record


@app.function(image=image, timeout=20 * 60)
def validate(config_text: str) -> dict:
    """prime-rl's own loader on the config (``rl --dry-run``), on CPU, and :func:`probe`."""
    raise_nofile()
    path = Path("/tmp/config.toml")
    path.write_text(config_text, encoding="utf-8")
    done = subprocess.run(rl_command(str(path), "validate", "dry-run", runs_path="/tmp/runs")
                          + ["--dry-run"], cwd=PRIME_RL_DIR, capture_output=True, text=True)
    return {"returncode": done.returncode, "output_tail": (done.stdout + done.stderr)[-4000:],
            "probe": probe()}


@app.local_entrypoint()
def main(config: str, run_name: str, teacher: str = "") -> None:
    record = train.remote(Path(config).read_text(encoding="utf-8"), run_name, teacher or None)
    print({k: v for k, v in record.items() if k != "log_tail"})


def cli(argv: list[str] | None = None) -> int:
    """``python modal_prime_rl.py --config C --run-name N [--teacher T]``: one run, checked first."""
    import argparse
    import sys

    sys.path.insert(0, str(HERE.parents[1]))
    from recipes.flags import existing_file, run_name
    from recipes.launch import guarded
    from recipes.modal_auth import require_modal_token

    parser = argparse.ArgumentParser(prog="recipes/prime-rl/modal_prime_rl.py",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=existing_file, required=True, help="a prime-rl rl TOML")
    parser.add_argument("--run-name", type=run_name, required=True,
                        help=f"folder on the {RUNS_VOLUME} volume")
    parser.add_argument("--teacher", default="",
                        help="teacher to serve on localhost (default: the config's own)")
    args = parser.parse_args(argv)

    def go() -> int:
        from whileai_core.errors import ConfigError
        from whileai_core.prime_rl import refuse_unshipped_loss
        from whileai_core.safepath import read_text

        # read once, through the path door: the text checked is the text sent
        text = read_text(args.config, "config", argument="--config", error=ConfigError)
        refuse_unshipped_loss(text, source=str(args.config))
        require_modal_token()
        # detached (modal 1.6.4 App.run(detach=True)): the run goes on when this client stops
        with modal.enable_output(), app.run(detach=True):
            record = train.remote(text, args.run_name, args.teacher or None)
        print({k: v for k, v in record.items() if k != "log_tail"})
        return 0 if record["returncode"] == 0 else 1

    return guarded(go)


if __name__ == "__main__":
    raise SystemExit(cli())
