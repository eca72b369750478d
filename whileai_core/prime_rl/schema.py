"""Our own check of a prime-rl ``rl`` TOML against the part of the 559b447 schema we know.

prime-rl forbids unknown keys everywhere but ``[inference.vllm]``, so a stale or misspelt key
fails only when the GPU job starts. :func:`validate_config` says it before: every table the
writer emits and the repo's examples use is modelled with its keys (extra keys forbidden), and
the cross-field rules of shared/reference/prime-rl-schema.md sec. 4 are checked. Deep tables
we do not model key by key (compile, activation checkpointing, routers, verifiers agent
internals...) are accepted as tables. A renamed key gets its new spelling in the message.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import (BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError,
                      model_validator)

from ..errors import ConfigError
from ..result import Result
from .targets import AUTO_RENDERER_MODELS, KNOWN_TASKSETS, RENDERER_NAMES

Table = dict[str, Any]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _union(default: str, variants: dict[str, type[BaseModel]]) -> Any:
    """A union on ``type`` where a missing ``type`` means ``default`` (prime-rl's semantics)."""
    def pick(value: Any) -> str:
        tag = value.get("type", default) if isinstance(value, dict) else getattr(value, "type", default)
        return tag if tag in variants else "__bad__"
    choices = tuple(Annotated[cls, Tag(tag)] for tag, cls in variants.items())
    return Annotated[Union[choices + (Annotated[_BadType, Tag("__bad__")],)], Discriminator(pick)]


class _BadType(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: Any = None

    @model_validator(mode="after")
    def _refuse(self) -> _BadType:
        hint = _TYPE_HINTS.get(str(self.type), "")
        raise ValueError(f"`type` {self.type!r} is not a variant prime-rl 559b447 has{hint}")


_TYPE_HINTS = {
    "self_distill": " (on-policy self-distillation is type = 'opsd')",
    "icepop": " (IcePop is not built in: type = 'custom' with import_path "
              "'whileai_core.methods.icepop.icepop_loss')",
    "tis": " (TIS is verl's; prime-rl's losses are default, ipo, custom)",
}

# ---- shared pieces ------------------------------------------------------------------------


class Client(Strict):
    wait_for_ready_timeout: int = 1800
    base_url: str = "http://localhost:8000/v1"
    api_key_var: str = "VLLM_API_KEY"
    headers: dict[str, str] = {}
    headers_from_env: dict[str, str] = {}
    extra_headers_from_state: dict[str, str] = {}
    skip_model_check: bool = False
    admin_base_url: list[str] | None = None


class Frozen(Client):
    name: str

    @model_validator(mode="before")
    @classmethod
    def _explicit_url(cls, data: Any) -> Any:
        if isinstance(data, dict) and "base_url" not in data:
            raise ValueError("a frozen model (teacher) needs an explicit `base_url`, e.g. "
                             "'http://localhost:8001/v1'")
        return data


class Sampling(Strict):
    source: Literal["policy"] | Frozen = "policy"


_RENDERER_OPTIONS = frozenset({
    "thinking_retention", "enable_thinking", "tool_parser", "reasoning_parser", "add_vision_id",
    "image_cache_max", "preserve_thinking", "reasoning_effort", "clear_thinking", "import_path",
    "kwargs"})


class Renderer(BaseModel):
    model_config = ConfigDict(extra="allow")  # per-renderer options, checked by name below
    name: str = "auto"

    @model_validator(mode="after")
    def _name(self) -> Renderer:
        if self.name not in RENDERER_NAMES:
            raise ValueError(f"renderer `name` {self.name!r} is not a prime-rl 559b447 renderer")
        unknown = sorted(set(self.model_extra or {}) - _RENDERER_OPTIONS)
        if unknown:
            raise ValueError(f"unknown renderer key `{unknown[0]}` (prime-rl 559b447 renderers "
                             f"take {', '.join(sorted(_RENDERER_OPTIONS))})")
        return self


class _Algo(Strict):
    sampling: Sampling = Sampling()
    loss_kind: Any = Field(None, exclude=True)

    @model_validator(mode="after")
    def _policy_sourced(self) -> _Algo:
        if self.sampling.source != "policy" and getattr(self, "type") != "sft":
            raise ValueError(f"algo {getattr(self, 'type')!r} samples from the live policy; a frozen "
                             "`sampling.source` is for 'sft' only")
        return self


class LengthPenalty(Strict):
    type: Literal["linear"] = "linear"
    num_output_tokens_weight: float = 0.25
    num_input_tokens_weight: float = 0.1
    num_turns_weight: float = 0.1


class GRPO(_Algo):
    type: Literal["grpo"] = "grpo"
    length_penalty: LengthPenalty | None = None


class Echo(GRPO):
    type: Literal["echo"] = "echo"  # type: ignore[assignment]
    roles: Table = {}
    filter: Table | None = None


class MaxRL(_Algo):
    type: Literal["max_rl"] = "max_rl"


class RAE(_Algo):
    type: Literal["rae"] = "rae"
    decay: float = Field(0.95, ge=0.0, lt=1.0)


class HierarchicalGRPO(_Algo):
    type: Literal["hierarchical_grpo"] = "hierarchical_grpo"
    episode_agents: list[str] = Field(min_length=1)


class OPDAlgo(_Algo):
    type: Literal["opd"] = "opd"
    teacher: Frozen


class OPSDAlgo(_Algo):
    type: Literal["opsd"] = "opsd"
    demo_key: str = "demonstration"
    template: str = ("Here is an example of an expert response:\n<demonstration>\n{demonstration}\n"
                     "</demonstration>")
    renderer: Renderer = Renderer()

    @model_validator(mode="after")
    def _placeholder(self) -> OPSDAlgo:
        if "{demonstration}" not in self.template:
            raise ValueError("opsd `template` must contain '{demonstration}'")
        return self


class SFTAlgo(_Algo):
    type: Literal["sft"] = "sft"

    @model_validator(mode="after")
    def _frozen(self) -> SFTAlgo:
        if self.sampling.source == "policy":
            raise ValueError("algo 'sft' needs a frozen `sampling.source` (name + base_url) to "
                             "sample from")
        return self


Algo = _union("grpo", {"grpo": GRPO, "echo": Echo, "max_rl": MaxRL, "rae": RAE,
                      "hierarchical_grpo": HierarchicalGRPO, "opd": OPDAlgo, "opsd": OPSDAlgo,
                      "sft": SFTAlgo})

# ---- orchestrator -------------------------------------------------------------------------


class TrainSampling(Strict):
    temperature: float = Field(1.0, ge=0.0, le=2.0)
    max_completion_tokens: int | None = Field(None, ge=1)
    extra_body: Table = {}


class EvalSampling(Strict):
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    max_completion_tokens: int | None = Field(None, ge=1)
    reasoning_effort: str | None = None
    extra_body: Table = {}


class TasksetBlock(BaseModel):
    model_config = ConfigDict(extra="allow")  # taskset-specific keys; known tasksets checked below
    id: str = ""

    @model_validator(mode="after")
    def _known_keys(self) -> TasksetBlock:
        extra = set(self.model_extra or {})
        if self.id == "reverse-text":
            unknown = extra - {"task", "system_prompt", "dataset_name", "dataset_split"}
            if unknown:
                key = sorted(unknown)[0]
                hint = " (reverse-text's key is `dataset_split`)" if key == "split" else ""
                raise ValueError(f"unknown key `taskset.{key}` for taskset 'reverse-text'{hint}")
        elif self.id in KNOWN_TASKSETS:
            unknown = extra - {"task", "system_prompt"}
            if unknown:
                raise ValueError(f"unknown key `taskset.{sorted(unknown)[0]}` for taskset {self.id!r}")
        return self


class EnvBlock(BaseModel):
    model_config = ConfigDict(extra="allow")  # agent / player0 / ... blocks, per taskset
    id: str = ""
    taskset: TasksetBlock = TasksetBlock()


class _Source(Strict):
    env: EnvBlock = EnvBlock()
    serve: Table = {}
    name: str | None = None
    ratio: float = Field(1.0, gt=0.0)

    @model_validator(mode="after")
    def _env(self) -> _Source:
        if not (self.env.taskset.id or self.env.id):
            raise ValueError('no env configured: set env.taskset.id (e.g. "reverse-text")')
        if (self.name or self.env.taskset.id) == "agg":
            raise ValueError('source name "agg" is reserved by prime-rl')
        return self


class TrainSource(_Source):
    sampling: Table = {}
    group_size: int | None = Field(None, ge=1)
    algo: Algo | None = None
    curriculum: Table | None = None


class EvalSource(_Source):
    sampling: EvalSampling | None = None
    num_examples: int | None = None
    group_size: int | None = Field(None, ge=1)
    interval: int | None = Field(None, ge=1)


class Train(Strict):
    source: list[TrainSource] = []
    sampling: TrainSampling = TrainSampling()
    filter_zero_advantages: bool = True


class Eval(Strict):
    source: list[EvalSource] = []
    sampling: EvalSampling = EvalSampling()
    num_examples: int = -1
    group_size: int = Field(1, ge=1)
    interval: int = Field(100, ge=1)
    skip_first_step: bool = False
    retrigger_on_resume: bool = False

    @model_validator(mode="after")
    def _sources(self) -> Eval:
        if not self.source:
            raise ValueError("[orchestrator.eval] needs at least one [[orchestrator.eval.source]] "
                             "(or drop the eval block)")
        return self


class OrchLoRA(Strict):
    name: str | None = None
    rank: int | None = None
    alpha: float | None = None


class OrchModel(Strict):
    name: str = "Qwen/Qwen3-0.6B"
    trust_remote_code: bool = False
    vlm: Table | None = None
    lora: OrchLoRA | None = None
    client: Client = Client()


class Tokenizer(Strict):
    name: str | None = None
    trust_remote_code: bool | None = None
    chat_template: str | None = None


class Concurrency(Strict):
    initial_inflight: int | None = None
    min_inflight: int = 1
    max_inflight: int | None = 1024


class Orchestrator(Strict):
    algo: Algo = GRPO()
    model: OrchModel = OrchModel()
    train: Train = Train()
    tokenizer: Tokenizer = Tokenizer()
    renderer: Renderer = Renderer()
    eval: Eval | None = None
    log: Table = {}
    env_vars: dict[str, str] = {}
    monitors: Table = {}
    collect_inference_metrics: bool = True
    inference_metrics_roles: list[str] | None = None
    ckpt: Table | None = None
    resume: Table | None = None
    weight_broadcast: Table | None = None
    rollout_transport: Table | None = None
    output_dir: str | None = None
    tasks_per_minute: int | None = None
    env_server_base_port: int = 5000
    batch_size: int | None = Field(None, ge=1)
    token_batch_size: int | None = Field(None, ge=1)
    concurrency: Concurrency = Concurrency()
    group_size: int = Field(1, ge=1)
    seq_len: int | None = None
    num_train_workers: int = 1
    pad_to_multiple_of: int = 1
    max_steps: int | None = None
    max_off_policy_steps: int = Field(8, ge=0)
    heartbeat: Table | None = None

    @model_validator(mode="after")
    def _batching(self) -> Orchestrator:
        if self.batch_size is not None and self.token_batch_size is not None:
            raise ValueError("set exactly one of `batch_size` and `token_batch_size`")
        batch = self.batch_size if self.token_batch_size is None else None
        batch = 128 if batch is None and self.token_batch_size is None else batch
        if batch is not None and batch % self.group_size:
            raise ValueError(f"`batch_size` {batch} is not divisible by `group_size` "
                             f"{self.group_size}")
        for name in ("max_inflight", "initial_inflight"):
            value = getattr(self.concurrency, name)
            if value is not None and value < self.group_size:
                raise ValueError(f"`concurrency.{name}` {value} is below `group_size` {self.group_size}")
        return self


# ---- trainer ------------------------------------------------------------------------------


class _Optim(Strict):
    lr: float = Field(1e-6, gt=0.0)
    weight_decay: float = 0.01
    max_norm: float = 1.0


class AdamW(_Optim):
    type: Literal["adamw"] = "adamw"
    betas1: float = 0.9
    betas2: float = 0.999


class SGD(_Optim):
    type: Literal["sgd"] = "sgd"
    nesterov: bool = True
    momentum: float = 0.9


class Muon(_Optim):
    type: Literal["muon"] = "muon"
    mu: float = 0.95
    betas1: float = 0.9
    betas2: float = 0.95


class SignSGD(_Optim):
    type: Literal["sign_sgd"] = "sign_sgd"


class Constant(Strict):
    type: Literal["constant"] = "constant"


class Linear(Strict):
    type: Literal["linear"] = "linear"
    warmup_steps: int = Field(10, ge=0)
    decay_steps: int = Field(10, ge=0)
    min_lr: float = 0.0


class Cosine(Strict):
    type: Literal["cosine"] = "cosine"
    warmup_steps: int = Field(10, ge=0)
    min_lr: float = 0.0


class DefaultLoss(Strict):
    type: Literal["default"] = "default"
    dppo_mask_low: float = 0.2
    dppo_mask_high: float = 0.2
    adv_tau: float = 1.0
    kl_tau: float = 1e-3


class IPOLoss(Strict):
    type: Literal["ipo"] = "ipo"
    ipo_threshold: float = 0.1
    adv_tau: float = 1.0
    kl_tau: float = 1e-3


class CustomLoss(Strict):
    type: Literal["custom"] = "custom"
    import_path: str
    kwargs: Table = {}


class LoRA(Strict):
    rank: int = Field(16, ge=1)
    alpha: float = 32.0
    dropout: float = 0.0
    target_modules: list[str] | None = None
    modules_to_save: list[str] = []


class TrainerModel(Strict):
    name: str | None = None
    trust_remote_code: bool = False
    vlm: Table | None = None
    conversion_dir: str | None = None
    seq_len: int | None = None
    attn: Literal["flash_attention_2", "flash_attention_3", "flash_attention_4", "auto"] = "auto"
    compile: Table | None = None
    ac: Table | None = None
    ac_offloading: Table | None = None
    fsdp_cpu_offload: bool = False
    optim_cpu_offload: bool = True
    full_offload: Table | None = None
    reshard_after_forward: bool = True
    dp_replicate: int = 1
    ep: int | Literal["auto"] = "auto"
    ep_comm_backend: Literal["torch", "deepep"] = "torch"
    deepep_num_sms: int = 20
    deepep_token_chunk_size: int | None = None
    cp: int = 1
    cp_style: Literal["ring", "ulysses"] = "ring"
    impl: Literal["hf", "custom", "auto"] = "auto"
    optimization_dtype: Literal["bfloat16", "float32"] = "float32"
    reduce_dtype: Literal["bfloat16", "float32"] = "float32"
    moe_router_dtype: Literal["bfloat16", "float32"] = "float32"
    moe_use_grouped_mm: bool = True
    moe_fused_kernel: bool = False
    quantization: Table | None = None
    index_cache: Table | None = None
    freeze_moe_router: bool = False
    lora: LoRA | None = None
    debug: Table | None = None
    fused_lm_head_token_chunk_size: int | Literal["disabled"] = 8192


Loss = _union("default", {"default": DefaultLoss, "ipo": IPOLoss, "custom": CustomLoss})
Optim = _union("adamw", {"adamw": AdamW, "sgd": SGD, "muon": Muon, "sign_sgd": SignSGD})
Scheduler = _union("constant", {"constant": Constant, "linear": Linear, "cosine": Cosine})


class Trainer(Strict):
    model: TrainerModel = TrainerModel()
    tokenizer: Tokenizer = Tokenizer()
    data: Table = {}
    loss: Loss = DefaultLoss()
    optim: Optim = AdamW()
    scheduler: Scheduler = Constant()
    ckpt: Table | None = None
    resume: Table | None = None
    weight_broadcast: Table | None = None
    rollout_transport: Table | None = None
    log: Table = {}
    monitors: Table = {}
    output_dir: str | None = None
    matmul_precision: Literal["highest", "high", "medium"] = "high"
    max_steps: int | None = None
    enable_router_replay: bool = False
    memory_profiler_path: str | None = None
    gc: Table | None = None
    trace_path: str | None = None
    dist_timeout_seconds: int = 3600
    heartbeat: Table | None = None
    metrics_server: Table | None = None
    enable_token_export: bool = False
    env_vars: dict[str, str] = {}


# ---- inference, deployment, shared --------------------------------------------------------


class Vllm(BaseModel):
    model_config = ConfigDict(extra="allow")  # prime-rl passes unknown keys to vLLM unchanged
    model: str | None = None
    gpu_memory_utilization: float = Field(0.9, gt=0.0, le=1.0)
    tensor_parallel_size: int = Field(1, ge=1)
    data_parallel_size: int = Field(1, ge=1)
    enable_lora: bool = False
    max_lora_rank: int | None = None


class Server(Strict):
    host: str | None = None
    port: int = 8000
    liveness_timeout_seconds: float = 30.0


class Inference(Strict):
    server: Server = Server()
    router: Table | None = None
    backend_port: int = 8100
    vllm: Vllm = Vllm()
    log: Table = {}
    env_vars: dict[str, str] = {}
    use_deep_gemm: bool = False
    weight_broadcast: Table | None = None
    kv_cache_offload: Table | None = None
    use_pd_kv_transfer: bool = False
    enable_fp32_lm_head: bool = True
    enable_fp32_router_logits: bool = True
    deployment: Table | None = None
    slurm: Table | None = None
    output_dir: str | None = None
    dry_run: bool = False


class SingleNode(Strict):
    type: Literal["single_node"] = "single_node"
    gpus_per_node: int = Field(8, ge=1)
    num_train_gpus: int = Field(1, ge=1)
    num_infer_gpus: int = Field(1, ge=0)

    @model_validator(mode="after")
    def _fits(self) -> SingleNode:
        total = self.num_train_gpus + self.num_infer_gpus
        if total > self.gpus_per_node:
            raise ValueError(f"{total} GPUs ({self.num_train_gpus} train + {self.num_infer_gpus} "
                             f"infer) exceed gpus_per_node {self.gpus_per_node}")
        return self


class MultiNode(Strict):
    type: Literal["multi_node"] = "multi_node"
    gpus_per_node: int = Field(8, ge=1)
    num_train_nodes: int = Field(ge=1)
    num_infer_nodes: int | None = Field(None, ge=0)
    num_infer_replicas: int = Field(1, ge=1)
    nodes_per_fsdp_group: int | None = None
    orchestrator_on_inference: bool = False


class FilesystemBroadcast(Strict):
    type: Literal["filesystem"] = "filesystem"


class NCCLBroadcast(Strict):
    type: Literal["nccl"] = "nccl"
    host: str = "localhost"
    port: int = 29501
    timeout: int = 1200
    quantize_in_weight_transfer: bool = False


class NIXLBroadcast(Strict):
    type: Literal["nixl"] = "nixl"
    host: str = "localhost"
    port: int = 8001
    timeout: int = 1200
    session_id: str = "default"


class FilesystemTransport(Strict):
    type: Literal["filesystem"] = "filesystem"


class ZMQTransport(Strict):
    type: Literal["zmq"] = "zmq"
    host: str = "localhost"
    port: int = 5555
    hwm: int = 10


class SharedCkpt(Strict):
    output_dir: str | None = None
    interval: int | None = Field(None, ge=1)
    keep_last: int | None = None
    keep_interval: int | None = None


class Wandb(Strict):
    project: str = "prime-rl"
    entity: str | None = None
    name: str | None = None
    group: str | None = None
    tags: list[str] | None = None
    offline: bool = False

    @model_validator(mode="after")
    def _online(self) -> Wandb:
        if self.offline:
            raise ValueError("`monitors.wandb.offline = true` is rejected by the rl entrypoint")
        return self


class Monitors(Strict):
    wandb: Wandb | None = None
    file: Table | None = None
    prime: Table | None = None


class SharedModel(Strict):
    name: str = "Qwen/Qwen3-0.6B"
    vlm: Table | None = None


class Slurm(Strict):
    job_name: str = "prime-rl"
    project_dir: str = "."
    template_path: str | None = None
    partition: str = "cluster"
    nodelist: str | None = None
    exclude: str | None = None
    account: str | None = None
    time: str | None = None
    pre_run_command: str | None = None
    cleanup_grace_period: int = Field(3600, ge=0)
    shared_fs: bool = True


class Run(Strict):
    name: str | None = None
    dir: str | None = None


class Resume(Strict):
    step: int | None = Field(None, ge=1)
    dir: str | None = None


class Log(Strict):
    level: str | None = None
    json_logging: bool = False


Broadcast = _union("filesystem", {"filesystem": FilesystemBroadcast, "nccl": NCCLBroadcast,
                                  "nixl": NIXLBroadcast})
Transport = _union("filesystem", {"filesystem": FilesystemTransport, "zmq": ZMQTransport})
Deployment = _union("single_node", {"single_node": SingleNode, "multi_node": MultiNode})


class RLConfig(Strict):
    trainer: Trainer
    orchestrator: Orchestrator
    inference: Inference | None = None
    env_vars: dict[str, str] = {}
    run: Run = Run()
    output_dir: str = "outputs"
    clean: bool = False
    log: Log = Log()
    ckpt: SharedCkpt | None = None
    resume: Resume | None = None
    monitors: Monitors = Monitors()
    model: SharedModel | None = None
    tokenizer: Tokenizer | None = None
    max_steps: int | None = Field(None, ge=1)
    seq_len: int | None = Field(None, ge=1)
    weight_broadcast: Broadcast | None = None
    rollout_transport: Transport | None = None
    deployment: Deployment = SingleNode()
    slurm: Slurm | None = None
    dry_run: bool = False


# ---- cross-field rules (prime-rl-schema.md sec. 1 and 4) ------------------------------------


def _cross_checks(cfg: RLConfig, raw: dict[str, Any]) -> list[str]:
    errors: list[str] = []
    orch, trainer = cfg.orchestrator, cfg.trainer
    model = cfg.model.name if cfg.model else (orch.model.name if "model" in raw.get(
        "orchestrator", {}) else "Qwen/Qwen3-0.6B")

    def conflict(shared: str, value: Any, subs: dict[str, Any]) -> None:
        for where, sub in subs.items():
            if value is not None and sub is not None and sub != value:
                errors.append(f"shared `{shared}` = {value!r} conflicts with `{where}` = {sub!r}; "
                              "set it in one place (the shared key)")

    raw_orch, raw_trainer = raw.get("orchestrator", {}), raw.get("trainer", {})
    conflict("max_steps", cfg.max_steps, {"trainer.max_steps": trainer.max_steps,
                                          "orchestrator.max_steps": orch.max_steps})
    conflict("seq_len", cfg.seq_len, {"trainer.model.seq_len": trainer.model.seq_len,
                                      "orchestrator.seq_len": orch.seq_len})
    if cfg.model is not None:
        conflict("model.name", cfg.model.name, {
            "trainer.model.name": trainer.model.name,
            "orchestrator.model.name": raw_orch.get("model", {}).get("name"),
            "inference.vllm.model": cfg.inference.vllm.model if cfg.inference else None})
    if cfg.max_steps is None and trainer.max_steps is not None and orch.max_steps is not None \
            and trainer.max_steps != orch.max_steps:
        errors.append(f"`trainer.max_steps` {trainer.max_steps} != `orchestrator.max_steps` "
                      f"{orch.max_steps}; set the shared `max_steps` once")
    t_seq = trainer.model.seq_len or cfg.seq_len or 2048
    o_seq = orch.seq_len or cfg.seq_len or 2048
    if t_seq < o_seq:
        errors.append(f"`trainer.model.seq_len` {t_seq} < `orchestrator.seq_len` {o_seq}")

    if orch.renderer.name == "auto":
        tokenizer = (cfg.tokenizer.name if cfg.tokenizer and cfg.tokenizer.name else None) \
            or orch.tokenizer.name or (cfg.model.name if cfg.model else orch.model.name)
        if tokenizer not in AUTO_RENDERER_MODELS:
            errors.append(f"`orchestrator.renderer.name` is 'auto' but {tokenizer!r} is not in "
                          "prime-rl's renderer map (renderers 0.1.11), so validation fails. Fix: "
                          "[orchestrator.renderer] name = 'default' (tokenizer chat template) or a "
                          "family renderer ('prime-qwen3' for PrimeIntellect Qwen3 fine-tunes)")

    lora = trainer.model.lora is not None
    broadcast = cfg.weight_broadcast.type if cfg.weight_broadcast is not None else (
        "filesystem" if lora or cfg.inference is None else "nccl")
    if lora and broadcast != "filesystem":
        errors.append(f"LoRA with `weight_broadcast.type` {broadcast!r}: prime-rl supports LoRA "
                      "with filesystem broadcast only")
    deploy = cfg.deployment
    if isinstance(deploy, SingleNode):
        if broadcast == "nccl" and deploy.num_train_gpus + deploy.num_infer_gpus < 2:
            errors.append("NCCL weight broadcast needs at least 2 GPUs in `deployment`")
    else:
        if cfg.slurm is None:
            errors.append("a multi_node deployment needs [slurm] (prime-rl launches it with sbatch)")
        infer_nodes = deploy.num_infer_nodes if deploy.num_infer_nodes is not None else (
            0 if cfg.inference is None else 1)
        if infer_nodes > 0 and cfg.inference is None:
            errors.append("multi_node with inference nodes needs [inference]")
        if infer_nodes == 0 and cfg.inference is not None:
            errors.append("[inference] with `deployment.num_infer_nodes` = 0")
        if cfg.inference is not None and "router" in raw.get("inference", {}) \
                and raw["inference"]["router"] is None:
            errors.append("multi_node deployments need `inference.router`")

    steps = cfg.max_steps or trainer.max_steps
    sched = trainer.scheduler
    if isinstance(sched, Cosine):
        if steps is None:
            errors.append("cosine scheduler needs `max_steps`")
        elif sched.warmup_steps >= steps:
            errors.append(f"cosine `warmup_steps` {sched.warmup_steps} >= max_steps {steps}")
    if isinstance(sched, Linear):
        if steps is None:
            errors.append("linear scheduler needs `max_steps`")
        elif sched.warmup_steps + sched.decay_steps > steps:
            errors.append(f"linear warmup_steps + decay_steps ({sched.warmup_steps} + "
                          f"{sched.decay_steps}) > max_steps {steps}")

    if cfg.ckpt is None and (trainer.ckpt is None) != (orch.ckpt is None):
        errors.append("checkpointing set on only one of trainer and orchestrator; use the shared "
                      "[ckpt]")
    if not orch.train.source:
        errors.append("no [[orchestrator.train.source]]: the orchestrator has nothing to sample")
    names = [s.name or s.env.taskset.id for s in orch.train.source]
    if len(set(names)) != len(names):
        errors.append(f"duplicate train source names {names}; give each a unique `name`")
    del raw_trainer
    return errors


# ---- the public check ---------------------------------------------------------------------

_RENAMED = {
    "orchestrator.rollouts_per_example": "removed in 0.7; use `orchestrator.group_size`",
    "orchestrator.async_level": "removed; use `orchestrator.max_off_policy_steps`",
    "orchestrator.max_async_level": "removed; use `orchestrator.max_off_policy_steps`",
    "orchestrator.max_tokens": "use `orchestrator.train.sampling.max_completion_tokens`",
    "orchestrator.sampling": "use `[orchestrator.train.sampling]`",
    "orchestrator.train.sampling.max_tokens": "use `max_completion_tokens`",
    "max_tokens": "use `orchestrator.train.sampling.max_completion_tokens`",
    "wandb": "moved to `[monitors.wandb]` after v0.8.0",
    "orchestrator.wandb": "moved to `[monitors.wandb]` (shared) after v0.8.0",
    "trainer.wandb": "moved to `[monitors.wandb]` (shared) after v0.8.0",
    "inference.gpu_memory_utilization": "moved to `[inference.vllm] gpu_memory_utilization`",
    "inference.model": "moved to `[inference.vllm]` (model comes from the shared [model])",
    "inference.parallel": "moved to `[inference.vllm] tensor_parallel_size / data_parallel_size`",
    "inference.vllm_extra": "put vLLM arguments in `[inference.vllm]` directly",
    "orchestrator.optim": "removed (multi-tenant); use `[trainer.optim] lr`",
    "orchestrator.max_inflight_episodes": "use `[orchestrator.concurrency] max_inflight`",
    "orchestrator.oversampling_factor": "use `[orchestrator.concurrency]`",
    "orchestrator.pre_batch_filters": "removed; use `orchestrator.train.filter_zero_advantages`",
    "orchestrator.post_batch_filters": "removed; use `orchestrator.train.filter_zero_advantages`",
    "orchestrator.training_mode": "removed in 0.7; use `[orchestrator.algo] type`",
    "orchestrator.teacher": "removed in 0.7; use `[orchestrator.algo] type = 'opd'` with "
                            "`[orchestrator.algo.teacher]`",
    "orchestrator.teacher_model": "removed in 0.7; use `[orchestrator.algo.teacher]`",
    "orchestrator.advantage": "removed in 0.7; use `[orchestrator.algo]`",
    "orchestrator.train.env": "renamed in 0.8 to `[[orchestrator.train.source]]`",
    "orchestrator.env": "use `[[orchestrator.train.source]]`",
    "clean_output_dir": "renamed to `clean`",
    "resume_step": "use `[resume] step`",
    "trainer.ckpt.resume_step": "use `[resume] step`",
    "orchestrator.ckpt.resume_step": "use `[resume] step`",
    "trainer.loss.token_mask_low": "IcePop-style masking was removed in 0.5; use `type = 'ipo'` "
                                   "or whileai's IcePop custom loss",
    "trainer.loss.token_mask_high": "IcePop-style masking was removed in 0.5; use `type = 'ipo'` "
                                    "or whileai's IcePop custom loss",
    "trainer.loss.ratio_type": "removed in 0.5",
    "trainer.loss.ipo_mask_low": "renamed in 0.6: `dppo_mask_low` (default loss)",
    "trainer.loss.ipo_mask_high": "renamed in 0.6: `dppo_mask_high` (default loss)",
    "bench": "removed after v0.8.0",
    "trainer.max_concurrent_runs": "removed after v0.8.0",
}


class ConfigCheck(Result):
    """The verdict of :func:`validate_config`: ``ok``, and each problem as one line."""

    ok: bool
    errors: list[str]
    source: str | None = None
    checked_against: str = "prime-rl 559b447 (the subset of its schema whileai models)"

    def render(self) -> str:
        where = self.source or "config"
        if self.ok:
            return f"OK: {where} passes whileai's check against {self.checked_against}"
        return "\n".join([f"REJECTED: {where} ({len(self.errors)} problem(s), checked against "
                          f"{self.checked_against})"] + [f"  - {e}" for e in self.errors])


def _none_strings(value: Any) -> Any:
    """TOML has no null: prime-rl reads the string "None" as None."""
    if isinstance(value, dict):
        return {k: _none_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_none_strings(v) for v in value]
    return None if value == "None" else value


def _key_path(loc: tuple, raw: dict[str, Any], keep_last: bool = True) -> str:
    """The TOML key path of a pydantic error location, without union-tag segments.

    A segment is kept when it indexes the raw data (a key of the table, an index of the list)
    or when it is the last one (the unknown or missing key itself); other segments are the
    names pydantic gives union variants.
    """
    parts: list[str] = []
    node: Any = raw
    for i, p in enumerate(loc):
        if isinstance(p, int) and isinstance(node, list):
            parts[-1:] = [f"{parts[-1]}[]"] if parts else ["[]"]
            node = node[p] if p < len(node) else {}
        elif isinstance(node, dict) and p in node:
            parts.append(str(p))
            node = node[p]
        elif keep_last and i == len(loc) - 1 and not isinstance(p, int) and p != "__bad__":
            parts.append(str(p))
    return ".".join(parts)


def validate_config(path_or_text: str | Path | dict[str, Any]) -> ConfigCheck:
    """Check a prime-rl ``rl`` config (a path, TOML text, or a parsed dict) before a GPU starts.

    Returns a :class:`ConfigCheck`; ``ok`` is False with one line per problem, e.g.
    "unknown key `orchestrator.rollouts_per_example` (removed in 0.7; use
    `orchestrator.group_size`)". Raises ConfigError only when a named file cannot be read.
    """
    source = None
    if isinstance(path_or_text, dict):
        raw = path_or_text
    else:
        text = path_or_text
        one_line = "\n" not in str(path_or_text)
        looks_like_path = isinstance(path_or_text, Path) or (one_line and (
            str(path_or_text).endswith(".toml") or Path(str(path_or_text)).is_file()
            or not any(c in str(path_or_text) for c in "=[")))
        if looks_like_path:
            source = str(path_or_text)
            try:
                text = Path(path_or_text).read_text(encoding="utf-8")
            except FileNotFoundError:
                raise ConfigError(f"{source} not found. Fix: give the path of a prime-rl TOML, or "
                                  "its text") from None
            except OSError as err:
                raise ConfigError(f"{source} cannot be read: {err}") from None
        try:
            raw = tomllib.loads(str(text))
        except tomllib.TOMLDecodeError as err:
            return ConfigCheck(ok=False, errors=[f"not valid TOML: {err}"], source=source)
    raw = _none_strings(raw)
    try:
        cfg = RLConfig.model_validate(raw)
    except ValidationError as err:
        return ConfigCheck(ok=False, errors=_messages(err, raw), source=source)
    errors = _cross_checks(cfg, raw)
    return ConfigCheck(ok=not errors, errors=errors, source=source)


def _messages(err: ValidationError, raw: dict[str, Any]) -> list[str]:
    out = []
    for item in err.errors():
        loc = _key_path(item["loc"], raw, keep_last=item["type"] in ("extra_forbidden", "missing"))
        msg = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            key = loc.replace("[]", "")
            hint = _RENAMED.get(key) or _RENAMED.get(key.rsplit(".", 1)[-1])
            line = f"unknown key `{loc}`" + (f" ({hint})" if hint else
                                            " (prime-rl 559b447 has no such key)")
        elif item["type"] == "missing":
            line = f"missing required key `{loc}`" + (
                " (a bare [trainer] table is enough)" if loc == "trainer" else "")
        else:
            line = f"`{loc}`: {msg}" if loc else msg
        if line not in out:
            out.append(line)
    return out
