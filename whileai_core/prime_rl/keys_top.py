"""prime-rl 559b447 key tree, part 4: [inference], [deployment], the shared top-level keys and
the whole ``rl`` config (RLConfig)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .keys_common import Strict, Table, Tokenizer, _union
from .keys_orchestrator import Orchestrator
from .keys_trainer import Trainer


class Vllm(BaseModel):
    model_config = ConfigDict(extra="allow")  # prime-rl passes unknown keys to vLLM unchanged
    model: str | None = None
    gpu_memory_utilization: float = Field(0.9, gt=0.0, le=1.0)
    tensor_parallel_size: int = Field(1, ge=1)
    data_parallel_size: int = Field(1, ge=1)
    enable_lora: bool = False
    max_lora_rank: int | None = None
    seed: int = Field(0, ge=0)


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
