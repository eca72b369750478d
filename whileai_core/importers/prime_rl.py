"""prime-rl / verifiers episodes -> graded rows.

What prime-rl 559b447 writes (``prime_rl/monitors/file.py``, ``FileMonitor.log_episodes``): one
JSON object per line, ``verifiers.v1.Episode.to_record()`` (verifiers a60a606), into
``<output_dir>/<run.name>/rollouts/step_<S>/<kind>/<subset>/traces.jsonl`` with ``kind`` in
``train``/``eval`` and ``subset`` in ``all``/``effective``. The orchestrator appends every
episode to ``all`` as it arrives, errored ones included; ``effective`` repeats the non-errored
traces of ``all`` when a batch is finalized, so only ``all`` is read (never an episode twice).

Per record (``to_record`` drops None values):

- ``task.data.idx`` (the taskset's index) or else ``task.key`` (``Task.key``) -> ``task_id``;
- ``run.work.step`` -> ``step`` (the training step whose eval dispatched it) and
  ``run.work.policy.start``/``end`` -> ``policy_version``/``policy_version_end``: the live policy
  versions that generated it (the eval at step S samples whatever weights the inference server
  holds then, never the final policy);
- one row per trace (one per agent): ``reward`` is ``Trace.reward`` (:func:`trace_reward`),
  ``truncated`` ``Trace.is_truncated`` (:func:`is_truncated`), ``errored`` prime-rl's
  ``has_error``: the episode or the trace is not ``ok`` (a boolean, else refused by line);
- an episode with no trace at all (it failed before one was made) is one errored row;
- ``model``: the first model a call of the trace requested, else ``agent.config.model``;
- budgets: :func:`trace_budget`.

Errored rows are counted and left out (a failed rollout is not a zero-reward answer) unless
``keep_errored``; then they carry ``errored: true`` and the reward verifiers would give them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..errors import RowsError, as_json
from ..safepath import UserPath, as_user_path
from ..records import read_records
from ..voice import arg
from .foreign import ForeignRows, StepRows

FORMAT = "prime-rl"
KINDS = ("eval", "train")
_STEP_DIR = re.compile(r"^step_(\d+)$")
# Trace.is_truncated at verifiers a60a606: these stop conditions are framework limits.
TRUNCATING_STOPS = frozenset({"max_turns", "max_input_tokens", "max_output_tokens",
                              "max_total_tokens", "context_length"})
LAYOUT = "<run dir>/rollouts/step_<S>/eval/all/traces.jsonl"


def looks_like_episode(record: Any) -> bool:
    """Whether a JSON record has the shape of ``Episode.to_record()``."""
    return (isinstance(record, dict) and isinstance(record.get("task"), dict)
            and "data" in record["task"] and "type" in record["task"]
            and isinstance(record.get("traces", []), list)
            and ("ok" in record or "traces" in record) and "task_id" not in record)


def is_run_tree(path: UserPath) -> bool:
    """A run folder, its ``rollouts`` folder, or one ``step_<S>`` folder."""
    return path.is_dir() and bool(_trace_files(path, "eval") or _trace_files(path, "train"))


def _trace_files(path: UserPath, kind: str) -> list[tuple[int | None, UserPath]]:
    # Listed without following links. A link where a step folder or a traces file belongs is
    # kept, so that reading it through the door refuses it by name: never a silent skip.
    if (path / "rollouts").kind() in ("dir", "link"):
        path = path / "rollouts"
    if _STEP_DIR.fullmatch(path.name):
        steps = [path]
    else:
        steps = [path.child(name) for name, what in path.list_dir(error=RowsError)
                 if what in ("dir", "link") and _STEP_DIR.fullmatch(name)]
    found = []
    for step_dir in steps:
        file = step_dir / kind / "all" / "traces.jsonl"
        if step_dir.kind() == "link" or file.exists():
            found.append((int(_STEP_DIR.fullmatch(step_dir.name).group(1)), file))
    return sorted(found, key=lambda item: item[0])


def files_for(path: UserPath, kind: str = "eval") -> list[UserPath]:
    """The ``all`` trace files of ``kind`` under ``path`` (a run, rollouts or step folder, or
    one traces.jsonl), in step order. Refuses an ``effective`` file and an empty folder."""
    if kind not in KINDS:
        raise RowsError(f"`kind` is {as_json(kind)}", field="kind",
                        fix="use 'eval' (held-out evals) or 'train' (training rollouts)")
    if path.is_dir():
        files = [f for _, f in _trace_files(path, kind)]
        for file in files:  # nested paths stay inside the folder that was given: no link
            if any(p.kind() == "link" for p in (file, file.parent, file.parent.parent,
                                                  file.parent.parent.parent)):
                raise RowsError("leads outside the run folder through a symlink",
                                source=str(file), fix="copy the run's files in instead of "
                                                      "linking them")
        if not files:
            other = "train" if kind == "eval" else "eval"
            hint = (f" (it has {other} rollouts: pass kind='{other}')"
                    if _trace_files(path, other) else "")
            raise RowsError(f"no {kind} episodes here{hint}", source=str(path),
                            fix=f"point at a prime-rl run folder laid out as {LAYOUT}")
        return files
    if path.parent.name == "effective" and path.name == "traces.jsonl":
        sibling = path.parent.parent / "all" / "traces.jsonl"
        raise RowsError("is prime-rl's `effective` subset: it repeats the non-errored episodes "
                        "of the `all` file, so errors would go uncounted", source=str(path),
                        fix=f"import {sibling} (or the run folder) instead")
    return [path]


def read_prime_rl(path: str | UserPath, *, kind: str = "eval", step: int | str | None = None,
                  keep_errored: bool = False, agent: str | None = None) -> ForeignRows:
    """Graded rows from prime-rl episode files (module docstring) under ``path``: a run folder,
    its ``rollouts`` folder, one ``step_<S>`` folder, or one ``traces.jsonl``. ``step``: keep one
    (an int, ``"first"`` or ``"last"``); ``agent``: keep one agent's traces (its ``agent.name``);
    an episode that failed before any trace counts against every agent.
    """
    root = as_user_path(path, None, argument="path", error=RowsError)
    files = files_for(root, kind)
    rows: list[dict] = []
    errored = 0
    counts: dict[int | None, list] = {}
    seen_agents: set[str] = set()
    for file in files:
        recs = read_records(file, noun="episode")
        for i, record in enumerate(recs.items):
            for row in episode_rows(record, recs.where(i)):
                if row["agent"] is not None:
                    seen_agents.add(str(row["agent"]))
                if agent is not None and row["agent"] not in (agent, None):
                    continue
                tally = counts.setdefault(row["step"], [0, 0, set(), []])
                tally[0] += 1
                # every live policy version the episode spanned (start..end)
                tally[2].update(v for v in (row["policy_version"], row["policy_version_end"])
                                if v is not None)
                if row["errored"]:
                    tally[1] += 1
                    errored += 1
                    if not keep_errored:
                        continue
                else:
                    tally[3].append(row)
                rows.append(row)
    if agent is not None and agent not in seen_agents:
        raise RowsError(f"has no agent {agent!r}; its agents are {sorted(seen_agents)}",
                        source=str(root), field="agent", fix="pass one of those names "
                        "(the trace's agent.name), or leave agent out")
    if step is not None:
        rows, errored, counts = _one_step(rows, counts, step, root)
    by_step = [StepRows(step=s, rows=c[0], errored=c[1], policy_versions=sorted(c[2]),
                        scored=c[3])
               for s, c in sorted(counts.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))]
    notes = []
    if len(counts) > 1 and step is None:
        notes.append(f"rows span {len(counts)} steps (each row has `step`); pass step=... "
                     "(CLI --step) before computing one pass rate")
    if kind == "eval" and len(counts) > 1:
        notes.append("an eval at step S samples the weights the inference server held then "
                     "(`policy_version`), never the final step's weights")
    agents = sorted(seen_agents) if agent is None else [agent]
    if len(agents) > 1:  # an episode with no trace has no agent: it is not one more agent
        notes.append(f"{len(agents)} agents per episode ({', '.join(agents)}): one row per "
                     "trace, each with `agent`; pass agent=NAME (CLI --agent) before computing "
                     "a pass rate, or one agent's rewards count as another's rollouts")
    envs = {r.get("env") for r in rows}
    if len(envs) > 1:
        notes.append(f"{len(envs)} envs: task ids are prefixed with the env name")
        for r in rows:
            r["task_id"] = f"{r.get('env')}/{r['task_id']}"
    return ForeignRows(FORMAT, str(root), [str(f) for f in files], rows, errored=errored,
                       kept_errored=keep_errored, steps=by_step, notes=notes)


def _one_step(rows, counts, step, root):
    known = sorted(s for s in counts if s is not None)
    if step == "first" and known:
        step = known[0]
    elif step == "last" and known:
        step = known[-1]
    if isinstance(step, bool) or not isinstance(step, int) or step not in counts:
        raise RowsError(f"`{arg('step')}` is {step!r}; the steps here are {known}",
                        source=str(root),
                        field="step", fix="pass one of those steps, 'first' or 'last'")
    tally = counts[step]
    return [r for r in rows if r["step"] == step], tally[1], {step: tally}


def episode_rows(record: dict, where: dict) -> list[dict]:
    """The graded rows of one ``Episode.to_record()`` (one per trace; one if it has none)."""

    def fail(problem: str, field: str, fix: str) -> RowsError:
        return RowsError(problem, **where, field=field, fix=fix)

    base = _episode_base(record, fail)
    episode_ok = record.get("ok") is True
    traces = record.get("traces") or []
    if not traces:
        last = (record.get("errors") or [{}])[-1]
        return [{**base, "reward": 0.0, "truncated": False, "model": None, "errored": True,
                 "agent": None, "trace_id": None,
                 "error": last.get("type") if isinstance(last, dict) else None}]
    rows = []
    for t, trace in enumerate(traces):
        if not isinstance(trace, dict):
            raise fail(f"`traces[{t}]` is a {type(trace).__name__}", f"traces[{t}]",
                       "each trace must be a Trace.to_record() object")
        reward = trace_reward(trace, lambda p, f, x: fail(p, f"traces[{t}].{f}", x))
        calls = [c for c in trace.get("calls") or [] if isinstance(c, dict)]
        errors = trace.get("errors") or []
        agent = trace.get("agent") if isinstance(trace.get("agent"), dict) else {}
        model = next((c["model"] for c in calls if isinstance(c.get("model"), str)),
                     (agent.get("config") or {}).get("model"))
        rows.append({**base, "reward": reward, "truncated": is_truncated(trace, calls),
                     "model": model, "errored": not episode_ok or trace.get("ok") is not True,
                     "agent": agent.get("name"), "trace_id": trace.get("id"),
                     "stop_condition": trace.get("stop_condition"),
                     "error": (errors[-1].get("type") if errors and isinstance(errors[-1], dict)
                               else None),
                     **trace_budget(trace, calls)})
    return rows


def _episode_base(record: Any, fail: Callable[[str, str, str], RowsError]) -> dict:
    """The episode's fields every row of it carries, each checked."""
    if isinstance(record, dict) and isinstance(record.get("task"), dict) \
            and not isinstance(record.get("traces", []), list):
        raise fail(f"`traces` is {as_json(record['traces'])}, not a list", "traces",
                   "each episode's traces must be a list of Trace.to_record() objects")
    if not looks_like_episode(record):
        keys = ", ".join(sorted(record)[:8])
        raise fail(f"not a verifiers episode record (keys: {keys})", "task",
                   f"import prime-rl's episode files ({LAYOUT}), written by "
                   "verifiers' Episode.to_record()")
    task = record["task"]
    data = task.get("data") if isinstance(task.get("data"), dict) else {}
    task_id = data.get("idx", task.get("key"))
    if task_id is None or isinstance(task_id, bool) or not isinstance(task_id, (int, str)):
        raise fail(f"`task.data.idx` and `task.key` are missing or not an id ({task_id!r})",
                   "task.data.idx", "keep the taskset's index (TaskData.idx) or Task.key in "
                   "the episode record")
    run = record.get("run") if isinstance(record.get("run"), dict) else {}
    work = run.get("work") if isinstance(run.get("work"), dict) else {}
    step = work.get("step")
    if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
        raise fail(f"`run.work.step` is {as_json(step)}", "run.work.step",
                   "the step must be an integer, as prime-rl stamps it")
    policy = work.get("policy") if work.get("policy") is not None else {}
    if not isinstance(policy, dict):
        raise fail(f"`run.work.policy` is {as_json(policy)}", "run.work.policy",
                   'the policy span must be {"start": int, "end": int}, as verifiers\' '
                   "PolicySpan writes it")
    for end in ("start", "end"):
        version = policy.get(end)
        if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
            raise fail(f"`run.work.policy.{end}` is {as_json(version)}", f"run.work.policy.{end}",
                       "policy versions must be integers, as prime-rl stamps them")
    for name, holder in (("ok", record),
                         *((f"traces[{t}].ok", tr) for t, tr in
                           enumerate(record.get("traces") or []) if isinstance(tr, dict))):
        value = holder.get("ok")
        if not isinstance(value, bool):
            said = as_json(value) if "ok" in holder else "missing"
            raise fail(f"`{name}` is {said}, not true or false", name,
                       "Episode.to_record() and Trace.to_record() always write `ok` as a "
                       "boolean; re-export the episodes with verifiers")
    return {
        "task_id": str(task_id),
        "step": step,
        "policy_version": policy.get("start"),
        "policy_version_end": policy.get("end"),
        "episode_id": record.get("id"),
        "group_id": (record.get("group") or {}).get("id"),
        "task_key": task.get("key"),
        "env": (record.get("env") or {}).get("name") or (record.get("env") or {}).get("id"),
        "run_id": run.get("id"),
        "run_name": run.get("name"),
    }


def trace_budget(trace: dict, calls: list[dict]) -> dict:
    """What a trace records about its token budget, as verifiers a60a606 writes it
    (``verifiers/v1/trace.py``, ``ModelCall``): ``completion_tokens`` is ``Trace.usage``'s, the
    sum of ``usage.completion_tokens`` over the calls that report usage; ``max_tokens`` the
    largest ``sampling.max_tokens`` of its calls (the per-reply cap); ``finish_reason`` that of
    the last call without an error (the one ``Trace.is_truncated`` reads); ``turns`` the sampled
    nodes (``Trace.num_turns``). A field the trace does not record is left out."""
    out: dict = {}
    used = [c["usage"].get("completion_tokens") for c in calls if isinstance(c.get("usage"), dict)]
    used = [u for u in used if isinstance(u, int) and not isinstance(u, bool)]
    if used:
        out["completion_tokens"] = sum(used)
    caps = [(c.get("sampling") or {}).get("max_tokens") for c in calls
            if isinstance(c.get("sampling"), dict)]
    caps = [m for m in caps if isinstance(m, int) and not isinstance(m, bool) and m > 0]
    if caps:
        out["max_tokens"] = max(caps)
    last = next((c for c in reversed(calls) if c.get("error") is None), None)
    if last is not None and isinstance(last.get("finish_reason"), str):
        out["finish_reason"] = last["finish_reason"]
    nodes = trace.get("nodes")
    if isinstance(nodes, list):
        out["turns"] = sum(1 for n in nodes if isinstance(n, dict) and n.get("sampled") is True)
    return out


def trace_reward(trace: dict, fail) -> float:
    """``Trace.reward``: the sum of ``score * weight`` over named rewards that are not None."""
    rewards = trace.get("rewards") or {}
    if not isinstance(rewards, dict):
        raise fail(f"`rewards` is {as_json(rewards)}", "rewards",
                   'rewards must map names to {"score": number, "weight": number} or null')
    total = 0.0
    for name, value in rewards.items():
        if value is None:
            continue
        score = value.get("score") if isinstance(value, dict) else None
        weight = value.get("weight", 1.0) if isinstance(value, dict) else None
        for what, number in (("score", score), ("weight", weight)):
            if isinstance(number, bool) or not isinstance(number, (int, float)) \
                    or number != number or number in (float("inf"), float("-inf")):
                raise fail(f"`rewards.{name}.{what}` is {as_json(number)}", f"rewards.{name}.{what}",
                           "each named reward needs a finite numeric score and weight")
        total += score * weight
    return float(total)


def is_truncated(trace: dict, calls: list[dict]) -> bool:
    """``Trace.is_truncated``: a framework-limit stop, or a length-finished last good call."""
    if trace.get("stop_condition") in TRUNCATING_STOPS:
        return True
    last = next((c for c in reversed(calls) if c.get("error") is None), None)
    return bool(last and last.get("finish_reason") == "length")
