"""prime-rl 559b447 key tree, part 3: [trainer] (optimizer, scheduler, loss, model, LoRA)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .keys_common import Strict, Table, Tokenizer, _union


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
