"""GRPO vs OPSD vs OPD on prime-rl's reverse-text, from one config writer, on Modal.

    python recipes/prime-rl/run.py --dry-run             # write configs/{grpo,opsd,opd}.toml (no key)
    python recipes/prime-rl/run.py --validate            # prime-rl's own `rl --dry-run` on each (CPU)
    python recipes/prime-rl/run.py                       # deploy, spawn three runs (2 GPUs each)
    python recipes/prime-rl/run.py --collect             # results.json and the table
    python recipes/prime-rl/run.py --smoke --out DIR     # offline: configs and writer reports

Every config comes from ``whileai_core.prime_rl_config`` with the arms of
``whileai_core.prime_rl.reverse_text_arms``; nothing here writes TOML by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if __package__ in (None, ""):
    sys.path.insert(0, str(HERE.parents[1]))
    sys.path.insert(0, str(HERE))

from recipes.flags import run_name as run_name_type  # noqa: E402
from recipes.launch import guarded, write_results  # noqa: E402
from recipes.modal_auth import require_modal_token  # noqa: E402
from whileai_core.errors import ArgumentError, ConfigError  # noqa: E402
from whileai_core.io import write_atomic  # noqa: E402

ARMS = ("grpo", "opsd", "opd")
CONFIGS = HERE / "configs"
CALLS_FILE = "calls.json"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="recipes/prime-rl/run.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="write the three configs, nothing else")
    mode.add_argument("--validate", action="store_true",
                      help="write the configs and run prime-rl's `rl --dry-run` on each (CPU container)")
    mode.add_argument("--collect", action="store_true",
                      help="fetch the spawned runs' results: results.json and the table")
    mode.add_argument("--smoke", action="store_true",
                      help="offline: write the configs and the writer's reports into --out")
    parser.add_argument("--configs", type=Path, default=CONFIGS,
                        help="folder for the three TOMLs (default recipes/prime-rl/configs)")
    parser.add_argument("--out", type=Path, default=Path("results/prime-rl"),
                        help="folder for calls.json and results.json (default %(default)s)")
    parser.add_argument("--run-prefix", type=run_name_type, default="e2e",
                        help="run names are PREFIX-grpo, PREFIX-opsd, PREFIX-opd (default %(default)s)")
    parser.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS),
                        help="which arms (default: all three)")
    parser.add_argument("--force", action="store_true",
                        help="replace configs that differ, and an existing results.json")
    return parser


def write_configs(folder: Path, arms, *, force: bool) -> dict:
    """Each arm's config through the writer; an identical file on disk is left as it is."""
    from whileai_core.prime_rl import prime_rl_config, reverse_text_arms

    kwargs = reverse_text_arms()
    written = {}
    for arm in arms:
        path = folder / f"{arm}.toml"
        planned = prime_rl_config(**kwargs[arm])
        if path.exists() and path.read_text(encoding="utf-8") == planned.text:
            result, state = planned.model_copy(update={"path": str(path)}), "unchanged"
        else:
            if path.exists() and not force:
                raise ConfigError(f"{path} exists and differs from what the writer gives now. "
                                  "Fix: pass --force to replace it, or --configs DIR")
            result, state = prime_rl_config(**kwargs[arm], out=path, overwrite=True), "written"
        written[arm] = {"path": str(path), "state": state, "report": result}
    return written


def _teacher(report) -> str | None:
    teacher = report.config.get("orchestrator", {}).get("algo", {}).get("teacher")
    return teacher.get("name") if isinstance(teacher, dict) else None


def validate(configs: dict) -> int:
    import modal

    from modal_prime_rl import app, validate as validate_fn

    failed = 0
    with modal.enable_output(), app.run():
        for arm, info in configs.items():
            answer = validate_fn.remote(Path(info["path"]).read_text(encoding="utf-8"))
            ok = answer["returncode"] == 0
            failed += not ok
            print(f"{arm}: prime-rl rl --dry-run {'accepts' if ok else 'REFUSES'} {info['path']}")
            if not ok:
                print(answer["output_tail"])
    return 1 if failed else 0


def launch(configs: dict, args) -> dict:
    import modal

    from modal_prime_rl import APP_NAME, app

    calls_path = args.out / CALLS_FILE
    if calls_path.exists() and not args.force:
        raise ConfigError(f"{calls_path} exists: runs were spawned already. Fix: --collect them, "
                          "or pass --force (or another --out) to spawn new ones")
    with modal.enable_output():
        app.deploy()
    train = modal.Function.from_name(APP_NAME, "train")
    calls = {}
    for arm, info in configs.items():
        name = f"{args.run_prefix}-{arm}"
        call = train.spawn(Path(info["path"]).read_text(encoding="utf-8"), name,
                           _teacher(info["report"]))
        calls[arm] = {"call_id": call.object_id, "run_name": name, "config": info["path"]}
        print(f"{arm}: spawned {name}, call {call.object_id}")
    write_atomic(calls_path, json.dumps(calls, indent=2), overwrite=True)
    print(f"call ids: {calls_path}; when they finish: python recipes/prime-rl/run.py --collect")
    return calls


def collect(args) -> dict:
    import modal

    from collect import eval_rows, render, report, step_from_path

    calls_path = args.out / CALLS_FILE
    if not calls_path.exists():
        raise ConfigError(f"no {calls_path}: nothing was spawned into --out {args.out}. Fix: run "
                          "python recipes/prime-rl/run.py first, or point --out at its folder")
    calls = json.loads(calls_path.read_text(encoding="utf-8"))
    arms, records = {}, {}
    for arm, call in calls.items():
        try:
            record = modal.FunctionCall.from_id(call["call_id"]).get(timeout=0)
        except TimeoutError:
            raise ConfigError(f"{arm} ({call['run_name']}) is still running. Fix: --collect "
                              "again later") from None
        except Exception as exc:  # noqa: BLE001 - the remote raised it (teacher never ready, ...)
            raise ConfigError(f"{arm} ({call['run_name']}, call {call['call_id']}) failed on "
                              f"Modal: {exc}. Fix: read its logs on the whileai-prime-rl-runs "
                              f"volume under {call['run_name']}/") from None
        if record["returncode"] != 0:
            raise ConfigError(f"{arm} ({call['run_name']}) failed: rl exited "
                              f"{record['returncode']}. Log tail:\n{record['log_tail']}")
        step = step_from_path(" ".join(record.get("eval_files", [])))
        rows = eval_rows(record["eval_rows"], source=f"{call['run_name']} eval rows",
                         default_step=step)
        arms[arm] = {"rows": rows, "wall_clock_s": record.get("wall_clock_s")}
        records[arm] = {k: v for k, v in record.items() if k not in ("eval_rows",)}
    rep = report(arms)
    results = {"recipe": "prime-rl", "calls": calls, "runs": records, "report": rep,
               "rows": {arm: a["rows"] for arm, a in arms.items()}}
    print(render(rep))
    return results


# What modal_prime_rl.train starts itself: a teacher on localhost / 127.0.0.1, on GPU 0 beside the
# policy's vLLM (no tensor parallelism, no GPUs of its own).
TEACHER_HOSTS = ("localhost", "127.0.0.1")


def starts_teacher(config_text: str) -> tuple[bool, str]:
    """Whether ``train`` on Modal starts the OPD teacher this config expects on localhost:
    ``(True, why)`` for a teacher it can serve beside the policy, else ``(False, why)``."""
    import tomllib
    from urllib.parse import urlparse

    from whileai_core.prime_rl.teacher import plan_teacher

    config = tomllib.loads(config_text)
    teacher = (config.get("orchestrator") or {}).get("algo", {}).get("teacher")
    if not isinstance(teacher, dict):
        return True, "no teacher"
    url = str(teacher.get("base_url", ""))
    if (urlparse(url).hostname or "") not in TEACHER_HOSTS:
        return False, (f"train starts a teacher only at localhost or 127.0.0.1, not at {url}")
    deployment = config.get("deployment") or {}
    used = int(deployment.get("num_train_gpus", 1)) + int(deployment.get("num_infer_gpus", 1))
    plan = plan_teacher(str(teacher.get("name")), url, first_free_gpu=used)
    if plan.layout == "dedicated":
        return False, (f"train starts the teacher on GPU 0 beside the policy only; {plan.reason}")
    return True, f"train starts it on GPU 0 beside the policy ({plan.reason})"


def modal_call(run_name: str, config_path: str | None = None) -> dict:
    """What the run registry spawns for a prime-rl config: ``train(config_text, run_name)``
    in the deployed ``whileai-prime-rl`` app (``modal deploy recipes/prime-rl/modal_prime_rl.py``)."""
    if config_path is None:
        raise ArgumentError("the prime-rl recipe runs a config: pass one (a prime-rl TOML, e.g. "
                            "recipes/prime-rl/configs/grpo.toml)")
    return {"app": "whileai-prime-rl", "function": "train",
            "args": [Path(config_path).read_text(encoding="utf-8"), run_name], "kwargs": {}}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def go() -> int:
        if args.collect:
            require_modal_token()
            results = collect(args)
            print(f"results: {write_results(args.out, results, overwrite=args.force)}")
            return 0
        configs_dir = args.out / "configs" if args.smoke else args.configs
        configs = write_configs(configs_dir, args.arms, force=args.force)
        for arm, info in configs.items():
            print(f"{arm}: {info['state']} {info['path']}")
            if not args.smoke:
                print(info["report"].render())
        if args.smoke:
            results = {"recipe": "prime-rl", "smoke": True, "configs": {
                arm: {"path": info["path"], **info["report"].to_dict()}
                for arm, info in configs.items()}}
            print(f"results: {write_results(args.out, results, overwrite=args.force)}")
            return 0
        if args.dry_run:
            return 0
        require_modal_token()
        if args.validate:
            return validate(configs)
        launch(configs, args)
        return 0

    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
