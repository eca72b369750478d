"""GRPO vs OPSD vs OPD on prime-rl's reverse-text, from one config writer, on Modal.

    python recipes/prime-rl/run.py --dry-run             # write configs/{grpo,opsd,opd}.toml (no key)
    python recipes/prime-rl/run.py --validate            # prime-rl's own `rl --dry-run` on each (CPU)
    python recipes/prime-rl/run.py                       # deploy, spawn three runs (2 GPUs each)
    python recipes/prime-rl/run.py --collect             # results.json and the table
    python recipes/prime-rl/run.py --collect --runs-dir D   # the same from a local copy of the volume
    python recipes/prime-rl/run.py --smoke --out DIR     # offline: configs and writer reports
    python recipes/prime-rl/run.py --teacher-from DIR --out DIR2 --run-prefix clean
                                   # OPD taught by the grpo arm's final weights (DIR: its --out)

Every config comes from ``whileai_core.prime_rl_config`` with the arms of
``whileai_core.prime_rl.reverse_text_arms``; nothing here writes TOML by hand. One module: it is
the recipe's command line, each flag a few lines that call the core.
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
from whileai_core.errors import ArgumentError, ConfigError, RowsError  # noqa: E402
from whileai_core.io import write_atomic  # noqa: E402
from whileai_core.safepath import read_text  # noqa: E402

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
    parser.add_argument("--runs-dir", type=Path, default=None,
                        help="with --collect: read the runs from this local copy of the "
                             "whileai-prime-rl-runs volume (modal volume get whileai-prime-rl-runs "
                             "/ DIR) instead of from Modal; needs no token")
    parser.add_argument("--teacher-from", type=Path, default=None, metavar="DIR",
                        help="the opd arm alone, taught by the grpo arm's final weights: DIR is "
                             "the --out of the collected launch that trained it (its "
                             "results.json says where they are); configs go to --out/configs")
    parser.add_argument("--force", action="store_true",
                        help="replace configs that differ, and an existing results.json")
    return parser


def write_configs(folder: Path, arms, *, force: bool, opd_teacher=None) -> dict:
    """Each arm's config through the writer; an identical file on disk is left as it is.
    ``opd_teacher``: the opd arm's teacher instead of the published one."""
    from whileai_core.prime_rl import prime_rl_config, reverse_text_arms

    kwargs = reverse_text_arms(opd_teacher)
    written = {}
    for arm in arms:
        path = folder / f"{arm}.toml"
        planned = prime_rl_config(**kwargs[arm])
        if path.exists() and path.read_text(encoding="utf-8") == planned.text:
            result, state = planned.model_copy(update={"path": str(path)}), "unchanged"
        else:
            if path.exists() and not force:
                raise ConfigError(f"{path} exists and differs from what the writer gives now",
                                  fix="pass --force to replace it, or --configs DIR")
            result, state = prime_rl_config(**kwargs[arm], out=path, overwrite=True), "written"
        written[arm] = {"path": str(path), "state": state, "report": result}
    return written


def planned_final_weights(config_text: str) -> str:
    """Where a launch of this config will keep its final weights, said before it runs: under
    filesystem broadcast ``broadcasts/step_<max_steps>`` (prime-rl 559b447, trainer/rl/train.py);
    an NCCL broadcast writes no folder at all."""
    from whileai_core.runs.run_shape import prime_rl_shape

    shape = prime_rl_shape(config_text)
    if shape.broadcast != "filesystem":
        return (f"none servable: {shape.broadcast} weight broadcast writes no broadcasts/ folder "
                "(only the trainer's checkpoint, with [ckpt], is kept)")
    what = ("a LoRA adapter" if shape.training == "lora" else
            f"full weights, with {shape.model}'s config and tokenizer beside them")
    return (f"<run folder>/broadcasts/step_{shape.steps}, the policy after step {shape.steps} "
            f"({what}; servable by vLLM and prime-rl's evals)")


def grpo_teacher(folder: Path):
    """The grpo arm's final weights, from a collected launch's ``folder/results.json``, as an OPD
    teacher ``Endpoint`` where a train container sees them; and where they are. The grpo arm
    trained on ``train[:872]`` only, so unlike the published teacher it never saw the held out."""
    from collect import final_weights
    from modal_prime_rl import RUNS_PATH, RUNS_VOLUME

    from whileai_core.methods import Endpoint
    from whileai_core.models import architecture
    from whileai_core.prime_rl import REVERSE_TEXT_STUDENT, REVERSE_TEXT_TEACHER_URL

    path = folder / "results.json"
    try:
        results = json.loads(read_text(path, "rows", argument="--teacher-from",
                                       error=ConfigError))
    except ValueError as exc:
        raise ConfigError(f"--teacher-from {folder}: {path} is not JSON ({exc})", fix="collect "
                          f"it again: python recipes/prime-rl/run.py --collect --out {folder}")
    record = (results.get("runs") or {}).get("grpo") or {}
    why = (results.get("missing") or {}).get("grpo")
    final = final_weights(record, str(record.get("run_dir", "")), RUNS_VOLUME, RUNS_PATH)
    if why or record.get("returncode") not in (0, None) or final is None:
        raise ConfigError(f"--teacher-from {folder}: {path} names no final weights of a "
                          f"finished grpo arm ({why or 'its run record has no kept.final_weights'}"
                          ")", fix="--collect the grpo arm once it has finished (python "
                          f"recipes/prime-rl/run.py --collect --out {folder})")
    student = architecture(REVERSE_TEXT_STUDENT)
    return Endpoint(REVERSE_TEXT_TEACHER_URL, final["container"],
                    params_b=student.params_b if student else None), final


def _teacher(report) -> str | None:
    teacher = report.config.get("orchestrator", {}).get("algo", {}).get("teacher")
    return teacher.get("name") if isinstance(teacher, dict) else None


def validate(configs: dict) -> int:
    import modal

    from modal_prime_rl import app, validate as validate_fn

    failed = 0
    with modal.enable_output(), app.run():
        for arm, info in configs.items():
            answer = validate_fn.remote(read_text(info["path"], "config", error=ConfigError))
            ok = answer["returncode"] == 0
            failed += not ok
            print(f"{arm}: prime-rl rl --dry-run {'accepts' if ok else 'REFUSES'} {info['path']}")
            if not ok:
                print(answer["output_tail"])
        probe = answer["probe"]
        print(f"container: venv python -> {probe['venv_python']}; open files "
              f"{probe['nofile'][0]}; GPUs here {probe['gpus']} (CPU container; train stops "
              "before rl if it sees fewer than the config deploys)")
        print(probe["imports"])
        failed += probe["returncode"] != 0
    return 1 if failed else 0


def refuse_unshipped(configs: dict) -> None:
    """Refuse, before any launch, a config whose loss the image cannot import."""
    from whileai_core.prime_rl import refuse_unshipped_loss

    for info in configs.values():
        refuse_unshipped_loss(read_text(info["path"], "config", error=ConfigError), source=info["path"])


def launch(configs: dict, args) -> dict:
    import modal

    from modal_prime_rl import APP_NAME, RUNS_VOLUME, app

    calls_path = args.out / CALLS_FILE
    if calls_path.exists() and not args.force:
        raise ConfigError(f"{calls_path} exists: runs were spawned already", fix="--collect them, "
                          "or pass --force (or another --out) to spawn new ones")
    refuse_unshipped(configs)
    with modal.enable_output():
        app.deploy()
    train = modal.Function.from_name(APP_NAME, "train")
    calls = {}
    for arm, info in configs.items():
        name = f"{args.run_prefix}-{arm}"
        call = train.spawn(read_text(info["path"], "config", error=ConfigError), name,
                           _teacher(info["report"]))
        # train() names the launch's run folder after its own call id
        calls[arm] = {"call_id": call.object_id, "run_name": name, "config": info["path"],
                      "run_dir": f"{name}/{call.object_id}"}
        print(f"{arm}: spawned {name}, call {call.object_id}, run folder "
              f"{RUNS_VOLUME}:/{name}/{call.object_id}")
    write_atomic(calls_path, json.dumps(calls, indent=2), overwrite=True)
    print(f"call ids: {calls_path}; when they finish: python recipes/prime-rl/run.py --collect")
    return calls


def read_calls(out: Path) -> dict:
    calls_path = out / CALLS_FILE
    if not calls_path.exists():
        raise ConfigError(f"no {calls_path}: nothing was spawned into --out {out}", fix="run "
                          "python recipes/prime-rl/run.py first, or point --out at its folder")
    calls = json.loads(calls_path.read_text(encoding="utf-8"))
    for arm, call in calls.items():
        if "run_dir" not in call:
            raise ConfigError(f"{calls_path}: {arm} has no run_dir (spawned by an older recipe "
                              "that let re-runs share a folder)", fix="launch again")
    return calls


def launched_config(runs_dir: Path, call: dict) -> str | None:
    """The config text an arm ran: the copy ``train`` wrote beside its run folder, else the file
    ``calls.json`` names; None when neither is readable."""
    paths = [runs_dir / f"{call['run_dir']}.config.toml"]
    if call.get("config"):
        paths.append(Path(call["config"]))
    for path in paths:
        try:
            return read_text(path, "config", error=ConfigError)
        except (ConfigError, OSError):
            continue
    return None


def reconciled(config_text: str | None, record: dict) -> dict | None:
    """Each billed part an arm's record timed beside what the launch forecast for its config on
    this app's GPUs; None without the config or a record."""
    from modal_prime_rl import GPU

    from whileai_core.errors import WhileaiError
    from whileai_core.runs.forecast import config_forecast
    from whileai_core.runs.forecast_check import forecast_parts, reconcile

    if not config_text or not record:
        return None
    try:
        return reconcile(forecast_parts(config_forecast(config_text, GPU)), record)
    except WhileaiError:  # a config the forecast cannot read: the times stand alone
        return reconcile(None, record)


def volume_record(runs_dir: Path, call: dict) -> dict:
    """The record ``train`` wrote beside the run folder, from a copy of the volume; {} if none."""
    from modal_prime_rl import RECORD_SUFFIX

    try:
        return json.loads((runs_dir / f"{call['run_dir']}{RECORD_SUFFIX}")
                          .read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def collect_local(runs_dir: Path, calls: dict, records: dict | None = None,
                  missing: dict | None = None) -> dict:
    """The report from run folders on disk (each call's own ``run_dir`` only). An arm whose
    folder is not there, or whose eval rows cannot be paired, is left out and named in
    ``missing``; none left is an error."""
    from collect import final_weights, render, report, run_rows, sampler, teacher_of, unusable
    from modal_prime_rl import RUNS_PATH, RUNS_VOLUME

    arms, missing = {}, dict(missing or {})
    for arm, call in calls.items():
        run_dir = runs_dir / call["run_dir"]
        if not run_dir.is_dir():
            missing[arm] = (f"no run folder {run_dir}. Fix: copy the volume first (modal volume "
                            f"get whileai-prime-rl-runs {call['run_dir']} "
                            f"{runs_dir / call['run_name']}) or check --runs-dir")
            continue
        try:
            rows = run_rows(run_dir)
        except RowsError as exc:  # no episodes there, or a file the importer cannot read
            missing[arm] = f"wrote no eval rows that could be read: {exc}"
            continue
        why = unusable(rows)
        if why is not None:
            missing[arm] = why
            continue
        record = (records or {}).get(arm) or volume_record(runs_dir, call)
        if record:
            records = {**(records or {}), arm: {k: v for k, v in record.items()
                                                if k != "log_tail"}}
        if record.get("returncode") not in (None, 0):  # read from the volume's own record
            missing[arm] = failed(call, record)
            continue
        config = launched_config(runs_dir, call)
        arms[arm] = {"rows": rows, "wall_clock_s": record.get("wall_clock_s"),
                     "sampler": sampler(config), "teacher": teacher_of(config),
                     "final_weights": final_weights(record, call["run_dir"], RUNS_VOLUME,
                                                    RUNS_PATH),
                     "time": reconciled(config, record)}
    if not arms:
        raise ConfigError("no arm to report: " + "; ".join(f"{arm}: {why}"
                                                          for arm, why in missing.items()))
    rep = report(arms)
    print(render(rep))
    for arm, why in missing.items():
        print(f"{arm}: not in this report: {why}")
    return {"recipe": "prime-rl", "complete": not missing, "missing": missing, "calls": calls,
            "runs": records or {}, "report": rep,
            "rows": {arm: a["rows"] for arm, a in arms.items()}}


FAILED_TAIL_LINES = 15  # of a failed arm's log, printed by --collect


def failed(call: dict, record: dict) -> str:
    """Why a finished arm is left out: its non-zero return code, its logs, their end."""
    from modal_prime_rl import RUNS_VOLUME

    tail = "\n".join(str(record.get("log_tail", "")).splitlines()[-FAILED_TAIL_LINES:])
    return (f"failed: return code {record['returncode']} (its logs: {RUNS_VOLUME}:/"
            f"{call['run_name']}/{record.get('launch_id')}.logs/). Log tail:\n{tail}")


def collect(args) -> dict:
    """Each call's record from Modal, its eval files from the volume into --out, the report. An
    arm still running or failed is named with its reason and left out; none finished is an
    error."""
    import modal

    from modal_prime_rl import RUNS_VOLUME

    calls = read_calls(args.out)
    volume = modal.Volume.from_name(RUNS_VOLUME)
    local = args.out / "runs"
    records, missing = {}, {}
    for arm, call in calls.items():
        try:
            record = modal.FunctionCall.from_id(call["call_id"]).get(timeout=0)
        except TimeoutError:
            missing[arm] = "still running. Fix: --collect again later"
            continue
        except Exception as exc:  # noqa: BLE001 - the remote raised it
            missing[arm] = (f"failed on Modal (call {call['call_id']}): {exc}. Fix: read its "
                            f"logs on the {RUNS_VOLUME} volume under {call['run_name']}/")
            continue
        if record.get("run_dir") != call["run_dir"]:
            missing[arm] = (f"the call wrote {record.get('run_dir')}, calls.json says "
                            f"{call['run_dir']}. Fix: launch it again with this recipe")
            continue
        records[arm] = {k: v for k, v in record.items() if k != "log_tail"}
        if record["returncode"] != 0:
            missing[arm] = failed(call, record)
            continue
        if not record.get("eval_files"):
            missing[arm] = ("wrote no eval rows: rl exited 0 and no rollouts/step_<S>/eval/all/"
                            f"traces.jsonl was kept (its logs: {RUNS_VOLUME}:/{call['run_name']}/"
                            f"{record.get('launch_id')}.logs/)")
            continue
        copies = [(f"{call['run_dir']}/{name}", local / call["run_dir"] / name)
                  for name in record["eval_files"]]
        # the config as launched, beside the run folder (launched_config reads it)
        copies.append((f"{call['run_dir']}.config.toml", local / f"{call['run_dir']}.config.toml"))
        for remote, target in copies:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, b"".join(volume.read_file(remote)), overwrite=True)
    done = {arm: calls[arm] for arm in calls if arm in records and arm not in missing}
    if not done:
        raise ConfigError("no arm finished: " + "; ".join(f"{arm}: {why.splitlines()[0]}"
                                                          for arm, why in missing.items()))
    return collect_local(local, done, records, missing)


def partial(out: Path) -> bool:
    """Whether ``out/results.json`` is a partial collect (``complete`` false)."""
    try:
        return json.loads((out / "results.json").read_text(encoding="utf-8")).get(
            "complete") is False
    except (OSError, ValueError, AttributeError):
        return False


# modal_prime_rl.train starts a teacher only here, on GPU 0 beside the policy's vLLM
TEACHER_HOSTS = ("localhost", "127.0.0.1")


def starts_teacher(config_text: str) -> tuple[bool, str]:
    """Whether ``train`` on Modal starts the OPD teacher this config expects: ``(ok, why)``."""
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
    """What the run registry spawns for a prime-rl config: ``train(config_text, run_name)`` in
    the deployed ``whileai-prime-rl`` app."""
    if config_path is None:
        raise ArgumentError("the prime-rl recipe runs a config: pass one (a prime-rl TOML, e.g. "
                            "recipes/prime-rl/configs/grpo.toml)")
    from whileai_core.prime_rl import refuse_unshipped_loss

    text = read_text(config_path, "config", argument="config_path", error=ConfigError)
    refuse_unshipped_loss(text, source=str(config_path))
    return {"app": "whileai-prime-rl", "function": "train", "args": [text, run_name],
            "kwargs": {}}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def go() -> int:
        if args.collect and args.teacher_from is not None:
            raise ArgumentError("--teacher-from writes and launches the opd arm; --collect reads "
                                "a launch", fix="drop one (collect the clean arm with --collect "
                                "--out DIR alone)")
        if args.collect:
            if args.runs_dir is not None:
                results = collect_local(args.runs_dir, read_calls(args.out))
            else:
                require_modal_token()
                results = collect(args)
            # a partial results.json is replaced by the next --collect without --force
            path = write_results(args.out, results, overwrite=args.force or partial(args.out))
            print(f"results: {path}")
            if not results["complete"]:
                print(f"partial: {', '.join(results['missing'])} not in it; --collect again "
                      "when they finish (it replaces this file)")
            return 0
        teacher, arms = None, args.arms
        if args.teacher_from is not None:
            if set(arms) != {"opd"} and list(arms) != list(ARMS):
                raise ArgumentError("--teacher-from trains the opd arm alone", fix="drop --arms, "
                                    "or pass --arms opd")
            arms = ["opd"]
            teacher, final = grpo_teacher(args.teacher_from)
            print(f"opd teacher: the grpo arm's final weights {final['volume']} (served from "
                  f"{final['container']}; trained on train[:872] only)")
        own_folder = args.smoke or (args.teacher_from is not None and args.configs == CONFIGS)
        configs_dir = args.out / "configs" if own_folder else args.configs
        configs = write_configs(configs_dir, arms, force=args.force, opd_teacher=teacher)
        for arm, info in configs.items():
            info["final_weights"] = planned_final_weights(info["report"].text)
            print(f"{arm}: {info['state']} {info['path']}")
            print(f"{arm}: final weights -> {info['final_weights']}")
            if not args.smoke:
                print(info["report"].render())
        if args.smoke:
            results = {"recipe": "prime-rl", "smoke": True, "configs": {
                arm: {"path": info["path"], "final_weights": info["final_weights"],
                      **info["report"].to_dict()}
                for arm, info in configs.items()}}
            print(f"results: {write_results(args.out, results, overwrite=args.force)}")
            return 0
        if args.dry_run:
            return 0
        refuse_unshipped(configs)
        require_modal_token()
        if args.validate:
            return validate(configs)
        launch(configs, args)
        return 0

    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
