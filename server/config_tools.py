"""Tools that write and check prime-rl configs: prime_rl_config, validate_config.

Defaults shown in the input schema are read from ``whileai_core.prime_rl.prime_rl_config``'s own
signature, so they exist once. Paths (``out``, ``path``) resolve inside the workspace root.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from pydantic import Field

from whileai_core.errors import ArgumentError
from whileai_core.prime_rl import ConfigCheck, PrimeRLConfig, prime_rl_config, validate_config

from whileai_core.defaults import PRIME_RL_MAX_TEMPERATURE

from .method_schema import MethodArg, plain
from .tooling import (MAX_COUNT, MAX_GPUS_PER_NODE, MAX_NODES, MAX_TOKENS, MAX_VOCAB,
                      READ_ONLY, WRITES_FILE, Env, ToolInput, ToolSpec)

_CORE = inspect.signature(prime_rl_config).parameters


def core_default(name: str) -> Any:
    """The default of ``prime_rl_config``'s argument ``name`` (one source of truth)."""
    return _CORE[name].default


# --- prime_rl_config -----------------------------------------------------------------------

class PrimeRLConfigInput(ToolInput):
    taskset: Annotated[str, Field(
        description="verifiers taskset/environment id to train on, e.g. 'reverse-text'.")]
    method: MethodArg = core_default("method")
    model: Annotated[str, Field(description="Hub id of the policy to train, e.g. 'Qwen/Qwen3-8B'.")]
    out: Annotated[str | None, Field(
        description="Where to write the TOML, relative to the workspace root (folders are "
                    "created). Omit to only preview the config without writing.")] = None
    overwrite: Annotated[bool, Field(
        description="Replace `out` if it exists. Leave false unless the user asked to replace "
                    "that file.")] = core_default("overwrite")
    gpus: Annotated[int, Field(ge=1, le=MAX_GPUS_PER_NODE, description="GPUs per node.")] = core_default("gpus")
    nodes: Annotated[int, Field(
        ge=1, le=MAX_NODES, description="Nodes; more than 1 writes a multi-node (SLURM) deployment.")] = core_default("nodes")
    steps: Annotated[int, Field(ge=1, le=MAX_COUNT, description="Optimizer steps (max_steps).")] = core_default("steps")
    batch: Annotated[int, Field(
        ge=1, le=MAX_COUNT, description="Rollouts per step; must divide by group_size.")] = core_default("batch")
    group_size: Annotated[int | None, Field(
        ge=1, le=MAX_COUNT, description="Rollouts per prompt; null: the method's default.")] = core_default("group_size")
    lora: Annotated[bool, Field(
        description="Train a LoRA adapter instead of full weights.")] = core_default("lora")
    lr: Annotated[float | None, Field(
        gt=0, lt=1, allow_inf_nan=False, description="Learning rate; null: the method's default.")] = core_default("lr")
    temperature: Annotated[float | None, Field(
        ge=0, le=PRIME_RL_MAX_TEMPERATURE, allow_inf_nan=False, description="Sampling temperature in [0, 2]; null: the method's default.")] = core_default("temperature")
    max_tokens: Annotated[int | None, Field(
        ge=1, le=MAX_TOKENS, description="Completion token cap per turn; null: the method's default.")] = core_default("max_tokens")
    seq_len: Annotated[int | None, Field(
        ge=1, le=MAX_TOKENS, description="Tokens per sample; null: 2048, raised to fit max_tokens.")] = core_default("seq_len")
    renderer: Annotated[str | None, Field(
        description="prime-rl chat renderer name; null: picked from the model id.")] = core_default("renderer")
    train_split: Annotated[str | None, Field(
        description="Dataset split to train on, e.g. 'train[:872]'.")] = core_default("train_split")
    eval_split: Annotated[str | None, Field(
        description="Dataset split to evaluate on; adds an eval section.")] = core_default("eval_split")
    eval_interval: Annotated[int | None, Field(
        ge=1, le=MAX_COUNT, description="Evaluate every N steps; null: at the start and the end.")] = core_default("eval_interval")
    eval_examples: Annotated[int | None, Field(
        ge=1, le=MAX_COUNT, description="Examples per eval; null: the whole split.")] = core_default("eval_examples")
    inference_gpus: Annotated[int | None, Field(
        ge=1, le=MAX_GPUS_PER_NODE, description="GPUs for the policy's vLLM on a node; null: half.")] = core_default("inference_gpus")
    serve_policy: Annotated[bool | str, Field(
        description="true: prime-rl starts vLLM for the policy; false or a base URL: you serve "
                    "it yourself.")] = core_default("serve_policy")
    vllm_memory: Annotated[float | None, Field(
        gt=0, le=1, allow_inf_nan=False, description="vLLM gpu_memory_utilization; null: the method's default.")] = core_default("vllm_memory")
    student_vocab: Annotated[int | None, Field(
        ge=1, le=MAX_VOCAB, description="The policy's vocabulary size, for the OPD teacher/student tokenizer "
                    "check.")] = None
    overrides: Annotated[dict[str, Any] | None, Field(
        description="{'dotted.key': value} applied last, e.g. {'trainer.optim.max_norm': 0.5}; "
                    "each is reported under `reads`.")] = core_default("overrides")
    wandb_project: Annotated[str | None, Field(
        description="Adds a Weights & Biases monitor for this project.")] = core_default("wandb_project")
    run_name: Annotated[str | None, Field(description="The run's name.")] = core_default("run_name")
    checkpoint: Annotated[bool, Field(
        description="Save a checkpoint at the end.")] = core_default("checkpoint")
    teacher_served: Annotated[bool, Field(
        description="OPD: true when the teacher already runs at its URL (you started it, or it "
                    "is a remote endpoint): the config then carries no line to start it. false: "
                    "the answer's `teacher` says how to start it, sized from its parameters and "
                    "dtype (GPUs, tensor parallelism).")] = core_default("teacher_served")
    gpu_memory_gb: Annotated[float, Field(
        ge=1, le=1024, allow_inf_nan=False,
        description="Memory of one GPU in GB, to size the OPD teacher (80: H100 or "
                    "A100-80GB; 141: H200).")] = core_default("gpu_memory_gb")


def prime_rl_config_tool(args: PrimeRLConfigInput, env: Env) -> PrimeRLConfig:
    knobs = {name: getattr(args, name) for name in PrimeRLConfigInput.model_fields}
    taskset, method = knobs.pop("taskset"), plain(knobs.pop("method"))
    if args.out is not None:
        knobs["out"] = env.workspace.resolve(args.out, argument="out")
    # tokenizer paths nested in `method` (teacher.vocab, student_vocab) open under the root too
    return prime_rl_config(taskset, method, root=env.workspace.door, **knobs)


# --- validate_config -----------------------------------------------------------------------

class ValidateConfigInput(ToolInput):
    path: Annotated[str | None, Field(
        description="A prime-rl rl TOML file, relative to the workspace root. Give this or "
                    "`text`.")] = None
    text: Annotated[str | None, Field(
        description="The TOML itself (for a config not on disk). Give this or `path`.")] = None


def validate_config_tool(args: ValidateConfigInput, env: Env) -> ConfigCheck:
    if (args.path is None) == (args.text is None):
        raise ArgumentError("give exactly one of `path` (a TOML file under the workspace root) "
                            "or `text` (the TOML itself). Fix: pass one, not "
                            + ("both" if args.path is not None else "neither"))
    if args.path is not None:
        return validate_config(env.workspace.resolve(args.path, argument="path"))
    # The core reads a one-line string without '=' as a path; a trailing newline keeps text
    # text (TOML ignores it), so `text` can never open a file outside the root.
    return validate_config(args.text + "\n")


TOOLS = [
    ToolSpec(
        name="prime_rl_config", title="Write a prime-rl config",
        description=(
            "Write a prime-rl (commit 559b447) `rl` TOML for a taskset, a method and a model, "
            "checked against prime-rl's schema before it is written. Returns the TOML, where "
            "each knob landed, what prime-rl ignores and why, warnings, the launch command and, "
            "for OPD, how the teacher is served (`teacher`: its `layout`, GPUs, tensor "
            "parallelism and start line). "
            "Writes `out` atomically; never replaces an existing file unless overwrite=true."),
        input=PrimeRLConfigInput, output=PrimeRLConfig, run=prime_rl_config_tool,
        annotations=WRITES_FILE, doing="writing a prime-rl config",
        core=("prime_rl_config", "method_spec", "RLMethod", "OPD", "OPSD", "Async", "Endpoint")),
    ToolSpec(
        name="validate_config", title="Check a prime-rl config",
        description=(
            "Check a prime-rl `rl` TOML (a file under the root, or its text) before a GPU "
            "starts: ok, or one line per problem (unknown or renamed keys, values prime-rl "
            "refuses) with the fix."),
        input=ValidateConfigInput, output=ConfigCheck, run=validate_config_tool,
        annotations=READ_ONLY, doing="checking a prime-rl config", core=("validate_config",)),
]
