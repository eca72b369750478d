"""Operations that write and check prime-rl configs: prime_rl_config, validate_config.

Defaults are ``whileai_core.prime_rl.prime_rl_config``'s own (``whileai_core.defaults``); every
knob of the writer is an argument here, at the shell and over MCP alike.

The method is a name or a small object (``{"name": "opd", "teacher": ...}``), checked by the
core's ``method_spec``, whose messages name a bad knob, its range and the fix. The detailed
schema of every method's object form is the resource ``whileai://methods/schema.json`` (and
docs/methods.md); the tool's own input schema stays small.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from .. import defaults as D
from ..errors import ArgumentError
from . import READS, VERDICT, WRITES, operation
from .args import (MAX_COUNT, MAX_GPUS_PER_NODE, MAX_NODES, MAX_TOKENS, MAX_VOCAB, OUT, PATH,
                   Arg, Overwrite, Seed)
from .surface import HERE, Context

METHOD_SCHEMA_URI = "whileai://methods/schema.json"


def _method_doc() -> str:
    return ("The method: a name or an object of its name and knobs, e.g. {\"name\": \"opd\", "
            "\"teacher\": \"Qwen/Qwen3-32B@http://host:8001/v1\"} ('opd' needs its teacher). "
            f"Every knob: the resource {METHOD_SCHEMA_URI}; route_rows's next_step gives the "
            "exact value.")


def _method_schema() -> dict[str, Any]:
    from ..methods.specs import method_names  # lazy: the specs' models load with a call

    return {"anyOf": [{"type": "string", "enum": list(method_names())},
                      {"type": "object", "required": ["name"]}]}


def _int(low: int, high: int, text: str) -> Any:
    return Annotated[int | None, Field(ge=low, le=high, description=text)]


# the optional counts (null: the method's default)
GroupSize = _int(1, MAX_COUNT, "Rollouts per prompt.")
MaxTokens = _int(1, MAX_TOKENS, "Completion token cap per turn.")
SeqLen = _int(1, MAX_TOKENS, "Tokens per sample (null: 2048, raised to fit max_tokens).")
EvalInterval = _int(1, MAX_COUNT, "Evaluate every N steps (null: at the start and the end).")
EvalExamples = _int(1, MAX_COUNT, "Examples per eval (null: the whole split).")
InferenceGpus = _int(1, MAX_GPUS_PER_NODE, "GPUs for the policy's vLLM on a node (null: half).")
StudentVocab = _int(1, MAX_VOCAB, "The policy's vocabulary size, for the OPD tokenizer check.")


@operation(
    cli="config", toolset="core", effect=WRITES, title="Write a prime-rl config",
    description=(
        "Write a prime-rl (commit 559b447) `rl` TOML for a taskset, a method and a model, "
        "checked against prime-rl's schema first. Returns the TOML, where each knob landed, "
        "what prime-rl ignores and why, warnings, the launch command and, for OPD, how the "
        "teacher is served (`teacher`). Writes `out` atomically, never over a file unless "
        "overwrite=true. Knobs left null take the method's default."),
    result="whileai_core.prime_rl:PrimeRLConfig", doing="writing a prime-rl config",
    serves=("method_spec", "RLMethod", "OPD", "OPSD", "Async", "Endpoint"))
def prime_rl_config(
        taskset: Annotated[str, Field(min_length=1, max_length=500, description=(
            "verifiers taskset/environment id to train on, e.g. 'reverse-text'.")),
            Arg(positional=True)],
        method: Annotated[str | dict[str, Any], Field(examples=[
            "grpo", {"name": "opsd", "privileged": "reference"}]),
            Arg(describe=_method_doc, schema=_method_schema)] = "grpo", *,
        model: Annotated[str, Field(min_length=1, max_length=500, description=(
            "Hub id of the policy to train, e.g. 'Qwen/Qwen3-8B'."))],
        out: Annotated[str | None, Field(max_length=4096, description=(
            "Where to write the TOML (folders are created); null: only preview it.")),
            Arg(OUT, metavar="FILE", writes="toml")] = None,
        overwrite: Overwrite = False,
        gpus: Annotated[int, Field(ge=1, le=MAX_GPUS_PER_NODE, description="GPUs per node.")] = 2,
        nodes: Annotated[int, Field(ge=1, le=MAX_NODES, description=(
            "Nodes; more than 1 writes a multi-node (SLURM) deployment."))] = 1,
        steps: Annotated[int, Field(ge=1, le=MAX_COUNT, description=(
            "Optimizer steps (max_steps)."))] = 100,
        batch: Annotated[int, Field(ge=1, le=MAX_COUNT, description=(
            "Rollouts per step; divisible by group_size."))] = D.PRIME_RL_BATCH,
        group_size: GroupSize = None,
        lora: Annotated[bool, Field(description=(
            "Train a LoRA adapter (false: full weights)."))] = True,
        lr: Annotated[float | None, Field(gt=0, lt=1, allow_inf_nan=False,
                                          description="Learning rate.")] = None,
        temperature: Annotated[float | None, Field(
            ge=0, le=D.PRIME_RL_MAX_TEMPERATURE, allow_inf_nan=False,
            description="Sampling temperature, in [0, 2].")] = None,
        max_tokens: MaxTokens = None,
        seq_len: SeqLen = None,
        renderer: Annotated[str | None, Field(max_length=200, description=(
            "prime-rl chat renderer (null: from the model id)."))] = None,
        train_split: Annotated[str | None, Field(max_length=200, description=(
            "Split to train on, e.g. 'train[:872]'."))] = None,
        eval_split: Annotated[str | None, Field(max_length=200, description=(
            "Split to evaluate on (adds an eval section)."))] = None,
        eval_interval: EvalInterval = None,
        eval_examples: EvalExamples = None,
        inference_gpus: InferenceGpus = None,
        serve_policy: Annotated[bool | Annotated[str, Field(max_length=2000)], Field(description=(
            "true: prime-rl starts vLLM for the policy; false or a base URL: you serve it."))
        ] = True,
        vllm_memory: Annotated[float | None, Field(gt=0, le=1, allow_inf_nan=False, description=(
            "vLLM gpu_memory_utilization."))] = None,
        student_vocab: StudentVocab = None,
        seed: Annotated[Seed, Field(description=(
            "The policy's vLLM seed ([inference.vllm]; null: 0). Re-runs for a noise floor need "
            "distinct seeds: two engines with one seed sample alike."))] = None,
        overrides: Annotated[dict[str, Any] | None, Field(max_length=200, description=(
            "Dotted prime-rl keys set last, each to its value (e.g. trainer.optim.max_norm to "
            "0.5); each is reported under `reads`.")), Arg(metavar="KEY=VALUE")] = None,
        wandb_project: Annotated[str | None, Field(max_length=200, description=(
            "Adds a Weights & Biases monitor for this project."))] = None,
        run_name: Annotated[str | None, Field(max_length=200,
                                              description="The run's name.")] = None,
        checkpoint: Annotated[bool, Field(description="Save a checkpoint at the end.")] = True,
        teacher_served: Annotated[bool, Field(description=(
            "OPD: true when the teacher already runs at its URL; false: `teacher` says how to "
            "start it."))
        ] = False,
        gpu_memory_gb: Annotated[float, Field(ge=1, le=1024, allow_inf_nan=False, description=(
            "Memory of one GPU in GB, to size the OPD teacher (80: H100; 141: H200)."))
        ] = D.TEACHER_GPU_MEMORY_GB,
        ctx: Context = HERE):
    from ..prime_rl import prime_rl_config as write  # lazy: the writer loads on the call

    # tokenizer paths nested in `method` (teacher.vocab, student_vocab) open under the root too
    return write(taskset, method, model=model, out=out, overwrite=overwrite, gpus=gpus,
                 nodes=nodes, steps=steps, batch=batch, group_size=group_size, lora=lora, lr=lr,
                 temperature=temperature, max_tokens=max_tokens, seq_len=seq_len,
                 renderer=renderer, train_split=train_split, eval_split=eval_split,
                 eval_interval=eval_interval, eval_examples=eval_examples,
                 inference_gpus=inference_gpus, serve_policy=serve_policy,
                 vllm_memory=vllm_memory, student_vocab=student_vocab, seed=seed,
                 overrides=overrides,
                 wandb_project=wandb_project, run_name=run_name, checkpoint=checkpoint,
                 teacher_served=teacher_served, gpu_memory_gb=gpu_memory_gb, root=ctx.root)


@operation(
    cli="validate", toolset="core", effect=READS, title="Check a prime-rl config",
    description=(
        "Check a prime-rl `rl` TOML (a file, or its text) before a GPU starts: ok, or one line "
        "per problem (unknown or renamed keys, values prime-rl refuses) with the fix. At the "
        "shell the exit code is 1 when it is refused."),
    result="whileai_core.prime_rl:ConfigCheck",
    exit_code=VERDICT, doing="checking a prime-rl config")
def validate_config(
        path: Annotated[str | None, Field(max_length=4096, description=(
            "A prime-rl rl TOML file. Give this or `text`.")),
            Arg(PATH, positional=True, metavar="FILE")] = None, *,
        text: Annotated[str | None, Field(max_length=1_000_000, description=(
            "The TOML itself (for a config not on disk). Give this or `path`."))] = None):
    from ..prime_rl import validate_config as check  # lazy: the schema loads on the call

    if (path is None) == (text is None):
        raise ArgumentError("give exactly one of `path` (a TOML file) or `text` (the TOML "
                            "itself). Fix: pass one, not " + ("both" if path is not None
                                                              else "neither"))
    if path is not None:
        return check(path)
    # The core reads a one-line string without '=' as a path; a trailing newline keeps text
    # text (TOML ignores it), so `text` can never open a file.
    return check(text + "\n")
