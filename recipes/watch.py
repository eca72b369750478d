"""The TRL side of ``watch_run``: a callback that writes one step record per optimizer step and
can stop the trainer when :func:`whileai_core.hacking.watch_records` says ``stop``.

Each record holds GRPOTrainer's logged training reward, the step's batch (caught by wrapping the
reward function with :meth:`WatchCallback.tap`; TRL 1.16 passes it ``completion_ids``) and, every
``every`` steps and at step 0, the frozen held-out set sampled from the policy and graded by
``grade(reply, record) -> float``. ``out`` (``watch.jsonl``) is rewritten atomically each step, so
a reader never sees half a line; the step-0 record carries the schedule (``eval_every``,
``max_steps``), from which the watch plans its looks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path

from whileai_core.io import write_jsonl

from recipes.grpo.reward import completion_text
from recipes.holdout import sample_replies


def _held_out_row(row: dict) -> dict:
    """A graded row (``recipes.holdout.graded_rows``) as a watch record's held-out row."""
    return {"task_id": row["task_id"], "reward": float(row["reward"]),
            "truncated": bool(row.get("truncated", False)),
            "completion": row.get("completion", row.get("reply", ""))}


def _batch_rows(completions, rewards, columns: dict, cap: int | None) -> list[dict]:
    """One row per completion of a reward call; a reply as long as the cap was cut there."""
    ids = columns.get("task_id") or [None] * len(completions)
    tokens = columns.get("completion_ids") or [None] * len(completions)
    return [{"task_id": str(t), "reward": float(r), "completion": completion_text(c),
             **({} if k is None else {"completion_tokens": len(k),
                                      "truncated": bool(cap and len(k) >= cap)})}
            for t, c, r, k in zip(ids, completions, rewards, tokens)]


def _sample_held_out(model, tokenizer, holdout: Sequence[dict], grade, *, samples: int,
                     max_new_tokens: int, seed: int) -> list[dict]:
    import torch

    device = next(model.parameters()).device
    # sample_replies seeds torch's global generator; forked, the training's own random stream
    # continues as if no evaluation had run, so watching does not change the run it watches
    with torch.random.fork_rng(devices=[device.index or 0] if device.type == "cuda" else []):
        replies = sample_replies(model, tokenizer, [r["prompt"] for r in holdout],
                                 samples=samples, max_new_tokens=max_new_tokens, seed=seed)
    return [{"task_id": rec["task_id"], "reward": float(grade(text, rec)),
             "truncated": bool(cut), "completion": text}
            for rec, group in zip(holdout, replies) for text, cut in group]


def _step_record(step: int, logs: dict, batch: list[dict]) -> dict:
    return {"step": step, "train_reward": float(logs["reward"]),
            "train_reward_std": logs.get("reward_std"), "n_completions": len(batch) or None,
            "mean_length": logs.get("completions/mean_length"),
            "truncated_share": logs.get("completions/clipped_ratio"), "batch": batch or None}


def watch_callback(tokenizer, holdout: Sequence[dict], grade: Callable[[str, dict], float], *,
                   out: str | Path, every: int = 0, samples: int = 2, max_new_tokens: int = 64,
                   stop: bool = False, metric: str = "pass", threshold: float | None = None,
                   seed: int = 0, confirm: int | None = None,
                   start_rows: Sequence[dict] | None = None, sample_at_end: bool = True):
    """A ``TrainerCallback``; pass it to the trainer and wrap the reward with ``.tap(reward)``.

    ``holdout``: prompt records (``task_id``, ``prompt`` as chat messages, and what ``grade``
    reads). ``every``: evaluate the held-out set every N steps (0: only at step 0 and at the end).
    ``stop``: set ``control.should_training_stop`` when the decision is ``stop``.
    ``start_rows``: held-out rows the caller already sampled before training (recorded at step 0
    instead of sampling again); ``sample_at_end=False`` leaves the last held-out record to the
    caller's own after-training sample, given to ``.finish(rows, step)``.
    """
    from transformers import TrainerCallback

    from whileai_core.defaults import WATCH_CONFIRM
    from whileai_core.hacking.watch import watch_records

    class WatchCallback(TrainerCallback):
        def __init__(self) -> None:
            self.records: list[dict] = []
            self.decisions: list[dict] = []
            self.path = Path(out)
            self._batch: list[dict] = []
            self._model = None
            self._cap = None

        def tap(self, reward_fn):
            """``reward_fn`` unchanged, except that each call's batch is kept for the record."""
            @functools.wraps(reward_fn)
            def tapped(prompts, completions, **columns):
                rewards = reward_fn(prompts, completions, **columns)
                self._batch.extend(_batch_rows(completions, rewards, columns, self._cap))
                return rewards
            return tapped

        def held_out(self, model) -> list[dict]:
            return _sample_held_out(model, tokenizer, holdout, grade, samples=samples,
                                    max_new_tokens=max_new_tokens, seed=seed)

        def _write(self) -> None:
            write_jsonl(self.path, self.records, overwrite=True)

        def on_train_begin(self, args, state, control, model=None, **kwargs):
            self._model = model
            self._cap = getattr(args, "max_completion_length", None)
            rows = ([_held_out_row(r) for r in start_rows] if start_rows is not None
                    else self.held_out(model))
            record = {"step": int(state.global_step), "held_out": rows}
            if state.max_steps and state.max_steps > 0:  # the schedule: watch_run plans its looks
                record.update(eval_every=every or int(state.max_steps),
                              max_steps=int(state.max_steps))
            self.records.append(record)
            self._write()

        def on_log(self, args, state, control, logs=None, model=None, **kwargs):
            if not logs or "reward" not in logs:
                return
            step = int(state.global_step)
            rec = _step_record(step, logs, self._batch)
            self._batch = []
            last = step >= state.max_steps and sample_at_end
            if (every and step % every == 0) or last:
                rec["held_out"] = self.held_out(model if model is not None else self._model)
            self.records.append(rec)
            self._write()
            if rec.get("held_out") is not None:
                watch = watch_records(self.records, metric=metric, threshold=threshold,
                                      seed=seed, confirm=confirm or WATCH_CONFIRM, scan=False,
                                      source=str(self.path))
                self.decisions.append({"step": step, "decision": watch.decision,
                                       "reason": watch.reason})
                if stop and watch.decision == "stop":
                    control.should_training_stop = True

        def finish(self, rows: Sequence[dict], step: int) -> None:
            """Record the caller's after-training held-out rows as the last step's evaluation."""
            held = [_held_out_row(r) for r in rows]
            if self.records and self.records[-1]["step"] == step:
                self.records[-1]["held_out"] = held
            else:
                self.records.append({"step": int(step), "held_out": held})
            self._write()

        def report(self) -> dict:
            return {"path": str(self.path), "decisions": self.decisions,
                    "stopped_at": next((d["step"] for d in self.decisions
                                        if d["decision"] == "stop"), None) if stop else None}

    return WatchCallback()
