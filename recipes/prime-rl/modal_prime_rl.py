"""Modal app of the prime-rl recipe: prime-rl's published image, any ``rl`` config, 2 GPUs.

Imports without a Modal token (tests read the functions' GPU, image and volumes). Takes any
config on its own:

    modal run recipes/prime-rl/modal_prime_rl.py --config configs/grpo.toml --run-name grpo-1
    modal run recipes/prime-rl/modal_prime_rl.py --config configs/opd.toml --run-name opd-1 \\
        --teacher PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL

``train`` runs ``uv run rl @ config.toml`` in ``/app``. For OPD (a config whose teacher is served
on localhost) it first starts ``uv run inference`` for the teacher on GPU 0 next to the policy's
own engine and waits until ``/v1/models`` answers. Outputs land on ``whileai-prime-rl-runs``
under ``<run-name>/``. ``validate`` runs prime-rl's own ``rl --dry-run`` on a config, on CPU.
Nothing here needs this repository inside the container: the functions use the standard library.
"""

from __future__ import annotations

import os
import subprocess
import time
import tomllib
from pathlib import Path

import modal

HERE = Path(__file__).resolve().parent
APP_NAME = "whileai-prime-rl"
GPU = "H100:2"
RUNS_VOLUME = "whileai-prime-rl-runs"
HF_CACHE_VOLUME = "whileai-hf-cache"
RUNS_PATH = "/runs"
HF_CACHE_PATH = "/cache"
PRIME_RL_DIR = "/app"
TEACHER_MEMORY = 0.4
TEACHER_READY_TIMEOUT_S = 900
# Per-rollout eval output (verifiers rollouts: example_id, reward, is_truncated, error); the
# exact layout at 559b447 is not verified against a live run, so several places are searched.
EVAL_ROW_GLOBS = ("**/eval*/**/*.jsonl", "**/eval*.jsonl", "**/rollouts/**/eval*.jsonl")

app = modal.App(APP_NAME)
image = (modal.Image.from_dockerfile(HERE / "prime-rl.Dockerfile", add_python="3.12")
         .env({"HF_HOME": f"{HF_CACHE_PATH}/hf", "PYTHONUNBUFFERED": "1"}))
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


def _eval_files(root: Path) -> list[str]:
    found = {str(p) for pattern in EVAL_ROW_GLOBS for p in root.glob(pattern) if p.is_file()}
    return sorted(found)


@app.function(image=image, gpu=GPU, volumes={RUNS_PATH: runs, HF_CACHE_PATH: hf_cache},
              timeout=6 * 3600)
def train(config_text: str, run_name: str, teacher: str | None = None) -> dict:
    """Run ``rl`` on one config; returns the run's record (status, wall clock, output files)."""
    out = Path(RUNS_PATH) / run_name
    out.mkdir(parents=True, exist_ok=True)
    config_path = out / "config.toml"
    config_path.write_text(config_text, encoding="utf-8")
    server = None
    served = local_teacher(config_text)
    record: dict = {"run_name": run_name, "config": str(config_path)}
    if served or teacher:
        model, port, memory = served or (teacher, 8001, TEACHER_MEMORY)
        model = teacher or model
        command = ["uv", "run", "inference", "--vllm.model", model, "--server.port", str(port),
                   "--vllm.gpu-memory-utilization", str(memory)]
        log = open(out / "teacher.log", "w")
        server = subprocess.Popen(command, cwd=PRIME_RL_DIR, stdout=log, stderr=subprocess.STDOUT,
                                  env={**os.environ, "CUDA_VISIBLE_DEVICES": "0"})
        started = time.monotonic()
        _wait_for(f"http://localhost:{port}/v1/models", server, TEACHER_READY_TIMEOUT_S)
        record["teacher"] = {"model": model, "port": port, "ready_after_s":
                             round(time.monotonic() - started, 1)}
    started = time.monotonic()
    try:
        with open(out / "rl.log", "w") as log:
            done = subprocess.run(["uv", "run", "rl", "@", str(config_path),
                                   "--output-dir", str(out / "outputs")],
                                  cwd=PRIME_RL_DIR, stdout=log, stderr=subprocess.STDOUT)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
    record.update(returncode=done.returncode, wall_clock_s=round(time.monotonic() - started, 1),
                  eval_files=_eval_files(out / "outputs"),
                  log_tail=(out / "rl.log").read_text(errors="replace")[-4000:])
    record["eval_rows"] = [line for path in record["eval_files"]
                           for line in Path(path).read_text(errors="replace").splitlines()
                           if line.strip()]
    runs.commit()
    return record


@app.function(image=image, timeout=20 * 60)
def validate(config_text: str) -> dict:
    """prime-rl's own loader on the config (``rl --dry-run``), on CPU: is it a config it runs?"""
    path = Path("/tmp/config.toml")
    path.write_text(config_text, encoding="utf-8")
    done = subprocess.run(["uv", "run", "rl", "@", str(path), "--dry-run"], cwd=PRIME_RL_DIR,
                          capture_output=True, text=True)
    return {"returncode": done.returncode, "output_tail": (done.stdout + done.stderr)[-4000:]}


@app.local_entrypoint()
def main(config: str, run_name: str, teacher: str = "") -> None:
    record = train.remote(Path(config).read_text(encoding="utf-8"), run_name, teacher or None)
    print({k: v for k, v in record.items() if k not in ("eval_rows", "log_tail")})


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
        require_modal_token()
        with modal.enable_output(), app.run():
            record = train.remote(args.config.read_text(encoding="utf-8"), args.run_name,
                                  args.teacher or None)
        print({k: v for k, v in record.items() if k not in ("eval_rows", "log_tail")})
        return 0 if record["returncode"] == 0 else 1

    return guarded(go)


if __name__ == "__main__":
    raise SystemExit(cli())
