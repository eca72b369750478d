"""prime-rl 559b447 key tree, part 2: [orchestrator] with its train and eval sources."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .keys_common import GRPO, Algo, Client, Renderer, Strict, Table, Tokenizer
from .targets import KNOWN_TASKSETS


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
