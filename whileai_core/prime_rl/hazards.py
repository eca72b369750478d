"""What a valid prime-rl config can still do harm with where it runs, refused by whileai before
prime-rl sees it (``schema.validate_config`` adds these errors; the writer never writes such a
config). Every rule is an allow-list, because a list of bad names cannot be complete:

- ``env_vars`` (every table) set only the exact names in :data:`ENV_ALLOWED`: the ones prime-rl
  559b447's own configs, examples and docs set, and a few vetted ones;
- an ``*import_path`` (a custom loss, an echo filter, a custom renderer) names only a function
  in :data:`IMPORT_PATHS` (prime-rl imports and calls it);
- ``api_key_var`` / ``headers_from_env`` (prime-rl sends that variable's value to the table's
  ``base_url`` and ``admin_base_url``) only where every such URL is loopback;
- every path-typed field (``output_dir``, ``[ckpt] output_dir``, ``[resume] dir``, ``[monitors.file]
  path``, ``trace_path``, ``memory_profiler_path``, ``conversion_dir``, ``run.dir``/``run.name``,
  a ``system_prompt`` file, any ``*_dir`` / ``*_path`` / ``*_file`` key, a path-valued env var)
  is a plain relative path below the run's folder, the rule ``clean = true`` already needed.

- ``[inference.vllm]`` passes unknown keys to vLLM's engine; the ones that name Python code for
  vLLM to import (``worker_cls``, ``worker_extension_cls``, ``logits_processors``,
  ``scheduler_cls``, a ``distributed_executor_backend`` class) take only vLLM's built-in values
  (:data:`VLLM_CODE_KEYS`).

Each refusal is built by :func:`refusal`: the TOML ``table.key``, what is wrong, and the fix.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any
from urllib.parse import urlsplit
from ..seal import SECRET_NAME

PREFIX = "refused by whileai (prime-rl would run it)"

# What `env_vars` may set, by exact name: name -> (kind, why it is allowed). kind "path": the
# value is a folder, which must be a plain relative path below the run's folder (or the one
# node-local folder prime-rl's own examples give it, in ENV_REFERENCE_PATHS).
ENV_ALLOWED: dict[str, tuple[str, str]] = {
    # prime-rl 559b447's own configs and examples (configs/debug/concurrency.toml,
    # examples/advanced/glm-4.5-air/*.toml, glm-5.2/*, nemotron-3-super/swe.toml)
    "TRITON_CACHE_DIR": ("path", "prime-rl's examples: Triton's kernel cache on local disk"),
    "VLLM_CACHE_ROOT": ("path", "prime-rl's examples: vLLM's cache on local disk"),
    "FLASHINFER_WORKSPACE_BASE": ("path", "prime-rl's examples: FlashInfer's workspace"),
    "VLLM_DEEP_GEMM_WARMUP": ("value", "prime-rl's glm-5.2 examples: a warm-up switch"),
    "VLLM_ENABLE_MOE_DP_CHUNK": ("value", "prime-rl's glm-5.2 examples: a MoE chunking switch"),
    "UCX_RCACHE_MAX_UNRELEASED": ("value", "prime-rl's glm-5.2 examples: a UCX cache size"),
    "PYTORCH_CUDA_ALLOC_CONF": ("value", "prime-rl's examples and launcher: allocator options"),
    # prime-rl 559b447's docs/configuration.md, "Environment Variables"
    "HF_HUB_OFFLINE": ("value", "prime-rl's docs: no Hub downloads"),
    "TOKENIZERS_PARALLELISM": ("value", "prime-rl's docs: a thread switch (no token)"),
    "NCCL_DEBUG": ("value", "prime-rl's docs: NCCL's log level, to stderr"),
    "VLLM_USE_DEEP_GEMM": ("value", "prime-rl's docs: a kernel choice"),
    "PRIME_LOG_LEVEL": ("value", "prime-rl's docs: its log level"),
    # vetted: prime-rl's launcher sets these itself (src/prime_rl/utils/process.py), so a
    # config changes only that setting's value
    "OMP_NUM_THREADS": ("value", "set by prime-rl's launcher: a thread count"),
    "CUDA_DEVICE_ORDER": ("value", "set by prime-rl's launcher: GPU numbering"),
    "VLLM_WORKER_MULTIPROC_METHOD": ("value", "set by prime-rl's launcher: fork or spawn"),
    "VLLM_ENGINE_READY_TIMEOUT_S": ("value", "set by prime-rl's launcher: a timeout"),
    "UCX_TLS": ("value", "set by prime-rl's launcher: UCX's transports"),
    # vetted: debugging switches that load nothing and write only to the process's stderr
    "CUDA_LAUNCH_BLOCKING": ("value", "vetted: synchronous CUDA calls, for debugging"),
    "NCCL_DEBUG_SUBSYS": ("value", "vetted: which NCCL subsystems NCCL_DEBUG logs"),
    "NCCL_P2P_DISABLE": ("value", "vetted: a transport switch for broken peer-to-peer"),
    "NCCL_IB_DISABLE": ("value", "vetted: a transport switch for broken InfiniBand"),
}
# The node-local folders prime-rl 559b447's own examples give the cache variables (the only
# absolute values allowed: the same folder every example uses, on the node's own /tmp).
ENV_REFERENCE_PATHS = {"TRITON_CACHE_DIR": "/tmp/.triton-cache",
                       "VLLM_CACHE_ROOT": "/tmp/.vllm-cache",
                       "FLASHINFER_WORKSPACE_BASE": "/tmp/.flashinfer-cache"}
# Kept for the more specific reason when a refused name looks like one of these.
_LOADS_CODE = re.compile(r"PLUGIN|LIB|PATH|PRELOAD|MODULE|EXEC|COMMAND|CMD|HOOK|SCRIPT|"
                         r"ENTRYPOINT|URL|ENDPOINT|HOME|INDEX|CACHE|_DIR$|TRUST|REMOTE|"
                         r"INSECURE|SERIALIZ|MANAGER|BACKEND", re.IGNORECASE)

# What an `*import_path` may name: prime-rl imports the dotted path and calls it
# (src/prime_rl/utils/utils.py import_object: trainer/rl/loss.py, orchestrator/algo/echo.py).
# prime-rl 559b447 ships no function for these hooks (its docs point them at `my_module.*`, its
# test at tests.unit...), and a prefix rule on `prime_rl.` would admit what its modules import
# (`prime_rl.entrypoints.rl.Popen` is subprocess.Popen). So: exact paths, each vetted.
IMPORT_PATHS: dict[str, str] = {
    "whileai_core.methods.icepop.icepop_loss": "whileai's IcePop loss (correction='icepop'), "
                                               "which prime_rl_config writes",
}

_PATH_KEY = re.compile(r"(^|_)(dir|path|file)$")
_MAX_SHOWN = 80


def refusal(key: str, what: str, fix: str) -> str:
    """The one way a hazard is worded: the TOML ``table.key``, what is wrong, and the fix."""
    return f"{PREFIX}: `{key}` {what}. Fix: {fix}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN - 3] + "...'"


def outside_run(value: Any) -> bool:
    """True unless ``value`` is a plain relative path below the run's folder (relative, no '~'
    or '..', not '.' or empty)."""
    if not isinstance(value, str):
        return True
    text = value.strip().replace("\\", "/")
    parts = [p for p in text.split("/") if p]
    return (not text or text.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", text) is not None
            or ".." in parts or all(p == "." for p in parts) or "\x00" in text)


_BELOW = "a plain relative path below the run's folder (not absolute, no '~' or '..', not '.')"


def env_var_refusal(name: str, value: Any = None) -> str | None:
    """What is wrong with ``env_vars`` setting ``name`` (to ``value``), or None (see
    :data:`ENV_ALLOWED`)."""

    allowed = ENV_ALLOWED.get(str(name))
    if allowed is None:
        upper = str(name).upper()
        if SECRET_NAME.search(upper):
            return ("looks like a secret, and env_vars are written into the config file; give it "
                    "to the run as a Modal secret instead")
        why = ("points at code to load or fetch (a plugin, a library, a path, a cache, a "
               "command, a URL) and " if _LOADS_CODE.search(upper) else "")
        return (f"{why}is not one of the settings whileai lets a config set (exactly: "
                + ", ".join(sorted(ENV_ALLOWED)) + "); others make git, ssh, pip, a shell, "
                "python, torch, triton or vLLM run other code, or write outside the run")
    if allowed[0] == "path" and value is not None and outside_run(value) \
            and value != ENV_REFERENCE_PATHS.get(str(name)):
        return (f"= {_shown(value)} is a folder outside the run: it must be {_BELOW}, or "
                f"{ENV_REFERENCE_PATHS[str(name)]!r} (prime-rl's own examples)")
    return None


# vLLM engine arguments that name code to import, with the built-in values each may keep
VLLM_CODE_KEYS: dict[str, frozenset] = {
    "worker_cls": frozenset({"auto"}),
    "worker_extension_cls": frozenset({""}),
    "logits_processors": frozenset(),
    "scheduler_cls": frozenset(),
    "distributed_executor_backend": frozenset({"mp", "ray", "uni", "external_launcher"}),
}


def _vllm_code_refusal(path: str, key: str, value: Any) -> str | None:
    allowed = VLLM_CODE_KEYS[key]
    values = value if isinstance(value, list) else [value]
    if all(isinstance(v, str) and v in allowed for v in values):
        return None
    keep = (" or ".join(repr(v) for v in sorted(allowed)) + " (vLLM's own)") if allowed \
        else "nothing"
    return refusal(path, f"= {_shown(value)} names code for vLLM to import and run in the "
                         f"inference server; whileai allows {keep} here",
                   "remove the key (vLLM's default is its own)")


def _import_refusal(key: str, value: Any) -> str | None:
    if isinstance(value, str) and value in IMPORT_PATHS:
        return None
    return refusal(key, f"= {_shown(value)} names code for prime-rl to import and call, and "
                        "whileai allows only " + ", ".join(sorted(IMPORT_PATHS))
                   + " (prime-rl 559b447 ships no function for this hook)",
                   "use a built-in choice instead (for the loss: type = 'default' or 'ipo'; "
                   "IcePop: correction='icepop'; a renderer by its name), or remove the table")


def _loopback(url: Any) -> bool:
    if not isinstance(url, str):
        return False
    try:
        host = urlsplit(url.strip()).hostname or ""
    except ValueError:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _key_refusals(where: str, table: dict[str, Any]) -> list[str]:
    """``api_key_var`` / ``headers_from_env`` in a client table whose URLs are not loopback:
    prime-rl sends that variable's value to ``base_url`` (and each ``admin_base_url``)."""
    sends = [k for k in ("api_key_var", "headers_from_env")
             if k in table and (k != "headers_from_env" or table[k])]
    if not sends:
        return []
    admin = table.get("admin_base_url")
    urls = [("base_url", table.get("base_url", "http://localhost:8000/v1"))]
    urls += [(f"admin_base_url[{i}]", u) for i, u in
             enumerate(admin if isinstance(admin, list) else [])]
    far = [(k, u) for k, u in urls if not _loopback(u)]
    if not far:
        return []
    to = ", ".join(f"{k} = {_shown(u)}" for k, u in far)
    return [refusal(f"{where}.{k}" if where else k,
                    f"sends an environment variable's value (a key) to {to}, which is not "
                    "loopback", "remove it (the server then gets no key of yours), or reach "
                    "the server through loopback, e.g. an SSH tunnel and base_url = "
                    "'http://localhost:8001/v1'") for k in sends]


def _path_key(path: str, key: str) -> bool:
    """Is ``key`` (at ``path``) a path-typed field of prime-rl 559b447 (or of vLLM's extra
    engine args)?"""
    if key == "import_path":
        return False
    parent = path.rsplit(".", 2)[-2] if path.count(".") >= 1 else ""
    return bool(_PATH_KEY.search(key)) or key == "system_prompt" or (
        parent in ("run", "resume") and key in ("dir", "name")) or (
        parent == "file" and key == "path")


def hazards(raw: dict[str, Any]) -> list[str]:
    """Keys a valid config can carry that do harm where it runs (see the module docstring).

    ``clean = true`` makes prime-rl 559b447 delete, before the run, the run's folder
    ``output_dir / run.dir`` (run.dir defaults to run.name) and the shared ``[ckpt] output_dir``
    (src/prime_rl/utils/pathing.py, validate_run_dir: ``shutil.rmtree`` of each; called from
    entrypoints/rl.py with ``config.ckpt.output_dir``). So with clean, ``run.dir`` /
    ``run.name`` must be one plain folder name (``'.'`` would make the run's folder
    ``output_dir`` itself, every run in it deleted)."""
    clean = raw.get("clean") is True
    errors = _clean_run_refusals(raw) if clean else []
    stack: list[tuple[str, Any]] = [("", raw)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        errors += _key_refusals(where, node)
        for key, value in node.items():
            key = str(key)
            path = f"{where}.{key}" if where else key
            if key.endswith("env_vars") and isinstance(value, dict):
                for name, setting in value.items():
                    why = env_var_refusal(name, setting)
                    if why:
                        fix = (f"{name} = '.cache/{str(name).lower()}' (below the run's "
                               "folder), or remove it" if str(name) in ENV_ALLOWED
                               else "remove it from the config")
                        errors.append(refusal(f"{path}.{name}", why, fix))
            elif key.endswith("import_path"):
                why = _import_refusal(path, value)
                if why:
                    errors.append(why)
            elif where == "inference.vllm" and key in VLLM_CODE_KEYS:
                why = _vllm_code_refusal(path, key, value)
                if why:
                    errors.append(why)
            elif isinstance(value, (dict, list)):
                stack.append((path, value))
            elif path in ("run.dir", "run.name") and clean:
                continue  # the stricter rule above
            elif isinstance(value, str) and _path_key(path, key) and outside_run(value):
                if clean and path in ("output_dir", "ckpt.output_dir"):
                    errors.append(refusal(
                        path, f"= {_shown(value)}: `clean = true` deletes `{path}` before the "
                        f"run, so with clean it must be {_BELOW}",
                        f"e.g. {path} = 'outputs/<run>', or clean = false"))
                else:
                    errors.append(refusal(
                        path, f"= {_shown(value)} is a path outside the run's folder (prime-rl "
                        f"reads or writes there): it must be {_BELOW}",
                        f"e.g. {path} = {_example(key)!r}, or remove it"))
    return errors


def _clean_run_refusals(raw: dict[str, Any]) -> list[str]:
    """With ``clean = true``: ``run.dir`` (else ``run.name``) that is not one plain folder name."""
    errors = []
    run = raw.get("run") if isinstance(raw.get("run"), dict) else {}
    for key in ("dir", "name"):
        value = run.get(key)
        if key == "name" and "dir" in run:
            continue  # the folder is run.dir
        if value is not None and (not isinstance(value, str) or value.strip() in ("", ".")
                                  or "/" in value or "\\" in value or value == ".."):
            errors.append(refusal(
                f"run.{key}", f"= {_shown(value)}: `clean = true` deletes the run's folder "
                f"output_dir/run.{key}, so with clean run.{key} must be one plain folder "
                "name (no '/', not '.' or '..'), else the folder deleted is output_dir "
                "itself or another", f"e.g. run.{key} = 'grpo-1', or clean = false"))
    return errors


def _example(key: str) -> str:
    return {"output_dir": "outputs", "path": "metrics.jsonl", "name": "grpo-1",
            "dir": "outputs/grpo-1"}.get(key, f"outputs/{key}")
