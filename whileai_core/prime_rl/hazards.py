"""What a valid prime-rl config can still do harm with where it runs, refused by whileai before
prime-rl sees it (``schema.validate_config`` adds these errors; the writer never writes such a
config): folders ``clean = true`` deletes that lie outside the run's folder, and ``env_vars``
that make a process of the run load or run other code (an allow-list of the training stack's
own settings, pinned to prime-rl 559b447's own configs).
"""

from __future__ import annotations

import re
from typing import Any

# What `env_vars` may set: the training stack's own settings, the families prime-rl 559b447's
# configs and examples set (configs/debug/concurrency.toml, examples/advanced/glm-4.5-air/*.toml,
# examples/advanced/glm-5.2/infer/pd-llmd.toml: TRITON_CACHE_DIR, VLLM_CACHE_ROOT,
# FLASHINFER_WORKSPACE_BASE, VLLM_*, UCX_*, PYTORCH_CUDA_ALLOC_CONF, NCCL_DEBUG, HF_HUB_OFFLINE,
# TOKENIZERS_PARALLELISM, PRIME_LOG_LEVEL) and their kin. Anything else (GIT_SSH_COMMAND,
# LD_PRELOAD, PYTHONPATH, PIP_INDEX_URL, BASH_ENV...) is refused: a list of bad names cannot
# be complete, and these make git, ssh, pip, a shell or python run other code where the run
# starts. Even inside a family, a name that points at code to load or fetch (a plugin, a
# library, a path, a hook, a command, a URL) is refused, and so is a secret (it would be written
# into the config file).
ENV_FAMILIES = ("VLLM_", "NCCL_", "TRITON_", "FLASHINFER_", "UCX_", "PYTORCH_", "TORCH_",
                "TORCHINDUCTOR_", "CUDA_", "NVTE_", "HF_", "WANDB_", "PRIME_", "OMP_", "MKL_")
ENV_NAMES = frozenset({"TOKENIZERS_PARALLELISM"})
_LOADS_CODE = re.compile(r"PLUGIN|LIB|PATH|PRELOAD|MODULE|EXEC|COMMAND|CMD|HOOK|SCRIPT|"
                         r"ENTRYPOINT|URL|ENDPOINT|HOME_DIR|INDEX", re.IGNORECASE)


def env_var_refusal(name: str) -> str | None:
    """Why a config's ``env_vars`` may not set ``name``, or None (see ``ENV_FAMILIES``)."""
    from ..seal import SECRET_NAME  # lazy: the one pattern of secret-looking names

    upper = str(name).upper()
    if upper in ENV_NAMES:  # named one by one (TOKENIZERS_PARALLELISM is no token)
        return None
    if not upper.startswith(ENV_FAMILIES):
        return ("is not a setting of the training stack whileai lets a config set (only "
                + ", ".join(f"{f}*" for f in ENV_FAMILIES) + ", " + ", ".join(sorted(ENV_NAMES))
                + "): variables like it make git, ssh, pip, a shell or python run other code "
                  "where the run starts")
    if SECRET_NAME.search(upper):
        return ("looks like a secret, and env_vars are written into the config file; give it "
                "to the run as a Modal secret instead")
    if _LOADS_CODE.search(upper):
        return "points at code to load or fetch (a plugin, a library, a path, a command, a URL)"
    return None


def _deleted_folder(key: str, value: Any) -> str | None:
    """Why ``value`` may not be the folder ``clean = true`` deletes, or None: it must be a folder
    below the run's working directory (relative, no '~' or '..', not '.')."""
    parts = str(value).replace("\\", "/").split("/")
    if (not isinstance(value, str) or not value.strip() or value.startswith(("/", "~"))
            or ".." in parts or value.strip() in (".", "./")):
        return (f"refused by whileai (prime-rl would run it): `clean = true` deletes `{key}` "
                f"({value!r}) before the run, so with clean it must be a folder below the run's "
                "directory (not absolute, no '~' or '..', not '.'); use e.g. "
                f"{key} = 'outputs/<run>', or clean = false")
    return None


def hazards(raw: dict[str, Any]) -> list[str]:
    """Keys a valid config can carry that do harm where it runs.

    ``clean = true`` makes prime-rl 559b447 delete, before the run, the run's folder
    ``output_dir / run.dir`` (run.dir defaults to run.name) and the shared ``[ckpt] output_dir``
    (src/prime_rl/utils/pathing.py, validate_run_dir: ``shutil.rmtree`` of each; called from
    entrypoints/rl.py with ``config.ckpt.output_dir``). So with clean both folders must lie
    below the run's working directory, and ``run.dir`` / ``run.name`` must be one plain folder
    name (``'.'`` would make the run's folder ``output_dir`` itself, every run in it deleted).
    Every ``env_vars`` table (top level, per component, ``*_env_vars`` of a deployment) sets only
    the allowed settings (:func:`env_var_refusal`)."""
    errors: list[str] = []
    if raw.get("clean") is True:
        ckpt = raw.get("ckpt") if isinstance(raw.get("ckpt"), dict) else {}
        folders = {"output_dir": raw.get("output_dir", "outputs")}
        if "output_dir" in ckpt:
            folders["ckpt.output_dir"] = ckpt["output_dir"]
        errors += [e for e in (_deleted_folder(k, v) for k, v in folders.items()) if e]
        run = raw.get("run") if isinstance(raw.get("run"), dict) else {}
        for key in ("dir", "name"):
            value = run.get(key)
            if key == "name" and "dir" in run:
                continue  # the folder is run.dir
            if value is not None and (not isinstance(value, str) or value.strip() in ("", ".")
                                      or "/" in value or "\\" in value or value == ".."):
                errors.append(f"refused by whileai (prime-rl would run it): `clean = true` "
                              f"deletes the run's folder output_dir/run.{key} ({value!r}); "
                              f"with clean, run.{key} must be one plain folder name (no '/', "
                              "not '.' or '..'), else the folder deleted is output_dir itself "
                              "or another. Fix: e.g. run.name = 'grpo-1', or clean = false")
    stack: list[tuple[str, Any]] = [("", raw)]
    while stack:
        where, node = stack.pop()
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            path = f"{where}.{key}" if where else str(key)
            if str(key).endswith("env_vars") and isinstance(value, dict):
                for name in value:
                    why = env_var_refusal(name)
                    if why:
                        errors.append(f"refused by whileai (prime-rl would run it): "
                                      f"`{path}.{name}` {why}. Fix: remove it from the config")
            elif isinstance(value, dict):
                stack.append((path, value))
    return errors
