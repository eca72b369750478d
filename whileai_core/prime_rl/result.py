"""The result of writing a prime-rl config: the TOML, where every knob went, and how to launch it."""

from __future__ import annotations

from typing import Any

from .. import voice
from ..result import Result
from .teacher import TeacherPlan


class GPUSplit(Result):
    """The GPUs the config deploys: per node, and for the trainer and the policy's inference."""

    nodes: int
    gpus_per_node: int
    train_gpus: int
    inference_gpus: int
    train_nodes: int | None = None
    inference_nodes: int | None = None
    policy_served_by: str  # "rl" (prime-rl starts vLLM) or "you" (a server you start)

    @property
    def total(self) -> int:
        return self.nodes * self.gpus_per_node

    def render(self) -> str:
        if self.nodes > 1:
            return (f"{self.nodes} nodes x {self.gpus_per_node} GPUs ({self.inference_nodes} "
                    f"inference node(s), {self.train_nodes} trainer node(s))")
        who = "" if self.policy_served_by == "rl" else ", policy served by you"
        return (f"{self.total} GPUs ({self.inference_gpus} inference, {self.train_gpus} "
                f"trainer{who})")


class PrimeRLConfig(Result):
    """A prime-rl ``rl`` config and its report: ``reads`` (knob -> key it landed in),
    ``ignored`` (knob -> why prime-rl does not read it), ``warnings`` (what may sink the run),
    ``notes``, the launch ``command`` and the servers to start first (``setup_commands``)."""

    method: str
    method_spec: dict[str, Any]
    model: str
    taskset: str
    config: dict[str, Any]
    text: str
    path: str | None = None
    reads: dict[str, str]
    ignored: dict[str, str]
    warnings: list[str]
    notes: list[str]
    command: str
    setup_commands: list[str]
    gpus: GPUSplit
    steps: int
    batch: int
    group_size: int
    max_off_policy_steps: int
    prime_rl_commit: str
    teacher: TeacherPlan | None = None

    def render(self) -> str:
        lines = [f"prime-rl config: {self.path or '(not written)'}  (prime-rl {self.prime_rl_commit})",
                 f"method {self.method}, model {self.model}, taskset {self.taskset}, "
                 f"{self.gpus.render()}",
                 f"{self.steps} steps x {self.batch} rollouts ({self.batch // self.group_size} "
                 f"prompts x {self.group_size}), at most {self.max_off_policy_steps} steps "
                 "off-policy (orchestrator.max_off_policy_steps)"]
        if self.reads:
            lines.append("reads: " + "; ".join(f"{voice.argument('prime_rl_config', k)} -> {v}"
                                              for k, v in self.reads.items()))
        if self.ignored:
            lines.append("ignores: " + "; ".join(self.ignored.values()))
        lines += [f"warning: {w}" for w in self.warnings]
        lines += [f"note: {n}" for n in self.notes]
        lines += [f"first: {c}" for c in self.setup_commands]
        lines.append(f"run: {self.command}")
        return "\n".join(lines)
