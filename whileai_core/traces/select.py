"""Steps 2-4: the asks the agent failed, rejection sampling, the best passing attempt per ask."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from pydantic import Field

from .. import defaults as D
from ..errors import ArgumentError
from ..operations import WRITES, operation
from ..operations.args import OptionalOut, Overwrite, Records, Threshold
from ..result import Result, fmt_rate
from ..stats import pass_at
from .read import TRACE_FORM, _kept, load_traces, prompt_messages

PassThreshold = Annotated[Threshold, Field(description=(
    "A trace passes when reward >= threshold; null: 1.0."))]


def _threshold(value: float | None) -> float:
    return D.PASS_THRESHOLD if value is None else value


# --- 2. the asks the agent failed ----------------------------------------------------------

class FailedAsks(Result):
    """The asks no trace passed: what the agent cannot yet do (seeds for new attempts)."""

    asks: list[dict] = Field(description='one {"task_id", "messages"} per failed ask')
    n_asks: int
    n_traces: int
    path: str | None = Field(None, description="where the asks were written as JSONL, if asked")
    shown: str | None = Field(None, description="which lists were cut, as 'n of N shown'")
    cut_lists = ("asks",)

    def render(self) -> str:
        where = f"; written to {self.path}" if self.path else ""
        return (f"{self.n_asks} asks no trace passed (of {self.n_traces} traces){where}"
                + (f" ({self.shown})" if self.shown else ""))


@operation(
    toolset="sft", effect=WRITES, title="The asks the agent never passed",
    description=(
        "One ask (task_id and prompt messages) per task where no trace passed: the seeds for "
        "new attempts (rejection sampling with your model and your grader). `out` writes them "
        "as JSONL instead of returning them."),
    doing="finding failed asks")
def failed_asks(
        traces: Annotated[Records, Field(description=(
            f"Graded traces (training side only: the training file split_by_task writes). "
            f"{TRACE_FORM} plus \"reward\": number."), examples=["train.jsonl"])], *,
        threshold: PassThreshold = D.PASS_THRESHOLD, out: OptionalOut = None,
        overwrite: Overwrite = False) -> FailedAsks:
    """One ask ``{"task_id", "messages"}`` per task where no trace passed: the seeds for new
    attempts."""
    threshold = _threshold(threshold)
    records = load_traces(traces, need_reward=True)
    passed = {str(r["task_id"]) for r in records if r["reward"] >= threshold}
    asks: dict[str, dict] = {}
    for r in records:
        tid = str(r["task_id"])
        if tid not in passed and tid not in asks:
            asks[tid] = {"task_id": tid, "messages": prompt_messages(r)}
    result = FailedAsks(asks=list(asks.values()), n_asks=len(asks), n_traces=len(records))
    return _kept(result, out, overwrite, "asks")


# --- 3. rejection sampling -----------------------------------------------------------------

def rejection_sample(asks: Any, attempt: Callable[[list[dict], int], str],
                     grade: Callable[[Mapping, str], float], *,
                     attempts: int = D.REJECTION_ATTEMPTS) -> list[dict]:
    """Make ``attempts`` replies per ask and grade each with a program.

    ``attempt(messages, i)`` returns the assistant's reply text for attempt ``i``;
    ``grade(ask, reply)`` returns a finite reward (a pass is >= 1.0). Returns graded traces
    ``{"task_id", "messages": ask + reply, "reward", "attempt"}``: the input of :func:`select_sft`
    and, as rows, of :func:`whileai_core.pass_at`.
    """
    if isinstance(attempts, bool) or not isinstance(attempts, int) or not 1 <= attempts <= 1000:
        raise ArgumentError(f"attempts must be an int in [1, 1000], got {attempts!r}",
                            fix=f"10-30 per ask; default {D.REJECTION_ATTEMPTS}")
    out = []
    for ask in load_traces(asks):
        prompt = prompt_messages(ask)
        for i in range(attempts):
            reply = attempt(prompt, i)
            if not isinstance(reply, str):
                raise ArgumentError(f"attempt() returned a {type(reply).__name__} for task "
                                    f"{ask['task_id']!r}", fix="return the reply text")
            reward = grade(ask, reply)
            if isinstance(reward, bool):
                reward = float(reward)
            if not isinstance(reward, (int, float)) or not math.isfinite(reward):
                raise ArgumentError(f"grade() returned {reward!r} for task {ask['task_id']!r}",
                                    fix="return a finite number (1.0 pass, 0.0 fail)")
            out.append({"task_id": str(ask["task_id"]),
                        "messages": prompt + [{"role": "assistant", "content": reply}],
                        "reward": float(reward), "attempt": i})
    return out


# --- 4. keep the best passing attempt per ask ----------------------------------------------

class SFTSelection(Result):
    """The best passing attempt per ask, and how often attempts passed."""

    records: list[dict] = Field(description="one trace per kept ask")
    n_asks: int
    n_attempts: int
    n_kept: int
    asks_without_pass: list[str]
    attempt_pass_at_1: float
    attempt_pass_at_1_ci: tuple[float, float] | None
    note: str
    path: str | None = Field(None, description="where the kept records were written as JSONL "
                                               "(then `records` is empty), if asked")
    shown: str | None = Field(None, description="which lists were cut, as 'n of N shown'")
    cut_lists = ("records", "asks_without_pass")

    def render(self) -> str:
        return (f"kept {self.n_kept} of {self.n_asks} asks from {self.n_attempts} attempts; "
                f"attempt pass@1 {fmt_rate(self.attempt_pass_at_1, self.attempt_pass_at_1_ci, self.n_asks)}"
                f"\n{self.n_asks - self.n_kept} asks had no passing attempt\n{self.note}"
                + (f"\nwrote the {self.n_kept} kept traces to {self.path}" if self.path else "")
                + (f"\n({self.shown})" if self.shown else ""))


def _reply_length(trace: Mapping) -> int:
    return sum(len(m["content"]) for m in trace["messages"] if m["role"] == "assistant")


@operation(
    toolset="sft", effect=WRITES, title="Pick the best passing attempt per ask",
    description=(
        "From graded attempts, keep per ask the best passing one (highest reward, then the "
        "shortest reply); list the asks with no pass; attempt pass@1 with its interval. Give "
        "`out` to write the kept traces to a file instead of returning them."),
    doing="selecting SFT traces", serves=("load_traces",))
def select_sft(
        attempts: Annotated[Records, Field(description=(
            f"Graded attempts (several per ask allowed). {TRACE_FORM} plus \"reward\": "
            "number."))], *,
        threshold: PassThreshold = D.PASS_THRESHOLD, out: OptionalOut = None,
        overwrite: Overwrite = False) -> SFTSelection:
    """Keep, for each ask, the best passing attempt: highest reward, then the shortest reply (so
    the file does not teach padding), then the earliest. Asks with no pass are listed, not kept.
    """
    threshold = _threshold(threshold)
    records = load_traces(attempts, need_reward=True)
    best: dict[str, dict] = {}
    order: dict[str, None] = {}
    for r in records:
        tid = str(r["task_id"])
        order[tid] = None
        if r["reward"] < threshold:
            continue
        cur = best.get(tid)
        if cur is None or (r["reward"], -_reply_length(r)) > (cur["reward"], -_reply_length(cur)):
            best[tid] = r
    rates = pass_at([{"task_id": str(r["task_id"]), "reward": r["reward"]} for r in records],
                    threshold=threshold, k=1)
    missing = [t for t in order if t not in best]
    note = ("asks with no pass stay unsolved: more attempts will not help at p = 0 "
            "(1 - (1-p)^k = 0); give them a stronger model or a hint") if missing else \
        "every ask has a passing attempt"
    return _kept(SFTSelection(
        records=[best[t] for t in order if t in best], n_asks=len(order),
        n_attempts=len(records), n_kept=len(best), asks_without_pass=missing,
        attempt_pass_at_1=rates.pass_at_1, attempt_pass_at_1_ci=rates.ci, note=note),
        out, overwrite)
