"""Read the three prime-rl arms back: held-out rows first vs last eval, paired, with the noise floor.

The eval rows come from ``whileai_core.importers`` (errored episodes counted, never scored); each
prompt's first and last score are paired with ``compare``: the LCS ratio as a mean reward, an
exact reversal (1.0) as a pass rate. The noise floor is the arms' first evals of the same
untrained student, measured only when they are independent re-runs (:func:`noise_source`);
otherwise each delta carries only its paired interval. prime-rl 559b447 fires the last eval
before the trainer makes the final policy (v19 of a 20-step run at best), so every number is
printed with its policy version and each arm with its kept final weights
(``recipes/prime-rl/README.md`` says why).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from whileai_core.errors import RowsError

ARMS = ("grpo", "opsd", "opd")


def run_rows(run_dir: str | Path) -> list[dict]:
    """Graded eval rows of one prime-rl run folder (every step; errored rows flagged)."""
    from whileai_core.importers import import_rows

    return import_rows(run_dir, format="prime-rl", keep_errored=True).rows


def unusable(rows: Sequence[Mapping]) -> str | None:
    """Why an arm's eval rows cannot be reported, or None: none, one eval step only, or a first
    or last step whose every episode errored."""
    if not rows:
        return "wrote no eval rows. Fix: read its rl.log for why the evals did not run"
    steps = by_step(rows)
    if len(steps) < 2:
        return (f"its eval rows cover step {min(steps)} only: nothing to pair the first eval "
                "with. Fix: read its rl.log for why the last eval did not run")
    for step in (min(steps), max(steps)):
        try:
            scored(steps[step], step)
        except RowsError as exc:
            return str(exc)
    return None


def by_step(rows: Sequence[Mapping]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for row in rows:
        out.setdefault(int(row["step"]), []).append(dict(row))
    return dict(sorted(out.items()))


def scored(rows: Sequence[Mapping], step: int, arm: str | None = None) -> list[dict]:
    """The rows of one eval step that were scored; refuses a step whose every episode errored."""
    kept = [dict(r) for r in rows if not r.get("errored")]
    if not kept:
        raise RowsError(f"every eval episode at step {step} errored ({len(rows)} of "
                        f"{len(rows)}): nothing was scored to compare",
                        source=f"arm {arm}" if arm else "its eval rows",
                        fix="read that run's logs (rl.log beside its run folder) for why the "
                            "eval failed, then run that arm again")
    return kept


def arm_report(rows: Sequence[Mapping], *, run_std: float | None = None,
               arm: str | None = None) -> dict:
    """First vs last eval step of one arm: LCS and exact-reversal pass@1, truncation share."""
    from whileai_core import compare, field_share, mean_reward

    steps = by_step(rows)
    if len(steps) < 2:
        raise RowsError(f"eval rows cover steps {list(steps)}; pairing needs the first and the "
                        "last", source=f"arm {arm}" if arm else "eval rows",
                        fix="keep the startup eval and a later one")
    first, last = min(steps), max(steps)
    before = scored(steps[first], first, arm)
    after = scored(steps[last], last, arm)
    return {
        "first_step": first, "last_step": last,
        "policy_first": _versions(steps[first]), "policy_last": _versions(steps[last]),
        "errored_first": len(steps[first]) - len(before),
        "errored_last": len(steps[last]) - len(after),
        "lcs_before": mean_reward(before).to_dict(),
        "lcs_after": mean_reward(after).to_dict(),
        "lcs_delta": compare(before, after, run_std=run_std, metric="reward").to_dict(),
        # an exact reversal (LCS 1.0) as a pass rate, said outright: compare's "auto" metric
        # reads a continuous reward as its mean
        "exact_delta": compare(before, after, metric="pass", threshold=1.0).to_dict(),
        "truncated_before": field_share(before, "truncated").to_dict(),
        "truncated_after": field_share(after, "truncated").to_dict(),
    }


def _versions(rows: Sequence[Mapping]) -> list[int]:
    """Every live policy version the rows' episodes spanned (``run.work.policy`` start and end)."""
    return sorted({int(r[key]) for r in rows for key in ("policy_version", "policy_version_end")
                   if r.get(key) is not None})


def sampler(config_text: str | None) -> dict:
    """The eval sampler an arm's config asks prime-rl 559b447 for: ``[inference.vllm] seed`` (0
    when absent) and the eval temperature (None: the server's default); None for both without
    the config."""
    import tomllib

    if config_text is None:
        return {"seed": None, "eval_temperature": None}
    config = tomllib.loads(config_text)
    vllm = (config.get("inference") or {}).get("vllm") or {}
    sampling = ((config.get("orchestrator") or {}).get("eval") or {}).get("sampling") or {}
    return {"seed": int(vllm.get("seed", 0)), "eval_temperature": sampling.get("temperature")}


def teacher_of(config_text: str | None) -> str | None:
    """The OPD teacher an arm's config names (``orchestrator.algo.teacher.name``), or None."""
    import tomllib

    if config_text is None:
        return None
    teacher = (((tomllib.loads(config_text).get("orchestrator") or {}).get("algo") or {})
               .get("teacher"))
    return str(teacher["name"]) if isinstance(teacher, dict) and teacher.get("name") else None


def noise_source(samplers: Mapping[str, Mapping]) -> tuple[bool, str]:
    """Whether the arms' first evals are independent re-runs of one eval (every engine a distinct
    seed, one explicit non-zero eval temperature), and what they are, or why not."""
    if len(samplers) < 2:
        return False, f"{len(samplers)} arm(s): a floor needs the first evals of 2 or more"
    seeds = {arm: s.get("seed") for arm, s in samplers.items()}
    temps = {arm: s.get("eval_temperature") for arm, s in samplers.items()}
    unknown = [arm for arm in samplers if seeds[arm] is None]
    if unknown:
        return False, (f"the configs of {', '.join(unknown)} are not at hand, so whether the "
                       "first evals were re-runs at distinct seeds is unknown")
    if len(set(seeds.values())) < len(seeds):
        shared = ", ".join(f"{arm} seed {seed}" for arm, seed in seeds.items())
        return False, (f"the arms' vLLM engines share a seed ({shared}) and prime-rl sends no "
                       "per-request seed: their first evals are not independent re-runs")
    if any(t is None for t in temps.values()) or len(set(temps.values())) > 1 \
            or 0 in temps.values():
        return False, (f"eval temperatures {temps}: the first evals are re-runs only at one "
                       "explicit, non-zero temperature")
    seeds_text = ", ".join(f"{arm} seed {seed}" for arm, seed in seeds.items())
    return True, (f"re-runs at distinct seeds: the first evals of the untrained student "
                  f"({seeds_text}; eval temperature {next(iter(temps.values())):g})")


def report(arms: Mapping[str, Mapping]) -> dict:
    """All arms: noise floor from the first-eval scores, per-arm deltas, each arm against GRPO.

    ``arms[name]`` holds ``rows`` (graded eval rows with ``step``), ``wall_clock_s``, ``sampler``
    (:func:`sampler`; without it the floor is not measured), and, where known, ``teacher`` and
    ``final_weights``. The published teacher's caveat applies to an OPD arm taught by it, or by
    a teacher not known.
    """
    from whileai_core import compare, mean_reward, noise_floor
    from whileai_core.prime_rl import REVERSE_TEXT_CAVEATS, REVERSE_TEXT_TEACHER

    first_scores = {}
    for name, arm in arms.items():
        steps = by_step(arm["rows"])
        if not steps:
            raise RowsError(f"arm {name} has no eval rows", source="eval rows",
                            fix="check that its run wrote rollouts/step_<S>/eval/all/traces.jsonl")
        first = scored(steps[min(steps)], min(steps), name)
        first_scores[name] = mean_reward(first).value
    measured, what = noise_source({name: arm.get("sampler") or {} for name, arm in arms.items()})
    noise = noise_floor(*first_scores.values()) if measured else None
    run_std = noise  # the NoiseFloor itself: compare reads run_std and the runs behind it
    out = {"noise_floor": {**noise.to_dict(), "what": what} if noise else None,
           "noise_floor_note": what if measured else (
               f"not measured: {what}; each delta carries only its paired interval"),
           "step1_lcs": first_scores,
           "arms": {}, "head_to_head": {},
           "caveats": {name: REVERSE_TEXT_CAVEATS[name] for name, arm in arms.items()
                       if name in REVERSE_TEXT_CAVEATS
                       and arm.get("teacher") in (None, REVERSE_TEXT_TEACHER)}}
    for name, arm in arms.items():
        out["arms"][name] = {**arm_report(arm["rows"], run_std=run_std, arm=name),
                             "wall_clock_s": arm.get("wall_clock_s"),
                             "teacher": arm.get("teacher"),
                             "final_weights": arm.get("final_weights"),
                             "time": arm.get("time")}
    if "grpo" in arms:
        grpo = by_step(arms["grpo"]["rows"])
        for name, arm in arms.items():
            if name == "grpo":
                continue
            mine = by_step(arm["rows"])
            out["head_to_head"][f"{name}_vs_grpo"] = compare(
                [r for r in grpo[max(grpo)] if not r.get("errored")],
                [r for r in mine[max(mine)] if not r.get("errored")],
                run_std=run_std, metric="reward").to_dict()
    return out


def final_weights(record: Mapping | None, run_dir: str, volume: str, mount: str) -> dict | None:
    """Where an arm's final weights are, from its run record's ``kept``: on the ``volume``, at
    ``mount`` inside a train container (what an OPD config names as its teacher), the step, and
    what they are; None when the record names none."""
    kept = (record or {}).get("kept") or {}
    where = kept.get("final_weights")
    if not where:
        return None
    step = where.rsplit("step_", 1)[-1]
    return {"volume": f"{volume}:/{run_dir}/{where}", "container": f"{mount}/{run_dir}/{where}",
            "step": int(step) if step.isdigit() else None, "are": kept.get("final_weights_are")}


def _delta_text(d: Mapping) -> str:
    if d.get("delta") is None:
        return f"n/a ({d['verdict']})"
    ci = d.get("ci")
    inner = f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else " [no interval]"
    return f"{d['delta']:+.3f}{inner} {d['verdict']} (n={d.get('n_paired')} paired)"


def _v(versions: Sequence[int]) -> str:
    """'v19', or 'v18-v19' when the episodes spanned several live policy versions."""
    if not versions:
        return "v?"
    low, high = min(versions), max(versions)
    return f"v{low}" if low == high else f"v{low}-v{high}"


def _rate_text(rate: Mapping, step: int, versions: Sequence[int]) -> str:
    """The rate as ``fmt_rate`` writes it, with the step and policy version sampled."""
    from whileai_core.result import fmt_rate

    text = fmt_rate(rate["value"], rate.get("ci"), rate.get("n_tasks"))
    return text.replace(" tasks)", f" tasks, step {step}, {_v(versions)})")


def _share_text(share: Mapping) -> str:
    ci = share.get("ci")
    return f"{share['value']:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else " [no interval]")


def render(rep: Mapping) -> str:
    from whileai_core.runs.forecast_check import part_text

    lines = ["arm    | held-out LCS first [95%] (n, step, policy)     | "
             "last [95%] (n, step, policy)                  | delta [95%] verdict (n paired) | "
             "truncated first -> last [95%]   | errored | wall clock"]
    caveats = rep.get("caveats") or {}
    for name, arm in rep["arms"].items():
        wall = arm.get("wall_clock_s")
        first = _rate_text(arm["lcs_before"], arm["first_step"], arm.get("policy_first", []))
        last = _rate_text(arm["lcs_after"], arm["last_step"], arm.get("policy_last", []))
        truncated = (f"{_share_text(arm['truncated_before'])} -> "
                     f"{_share_text(arm['truncated_after'])}")
        lines.append(
            f"{name + ('*' if name in caveats else ''):<6} | {first:<46} | {last:<45} | "
            f"{_delta_text(arm['lcs_delta']):<30} | {truncated:<31} | "
            f"{arm['errored_first']} -> {arm['errored_last']}{'':<2} | "
            f"{'n/a' if wall is None else f'{wall:.0f} s'}")
    noise = rep.get("noise_floor")
    if noise:
        scores = ", ".join(f"{s:.3f}" for s in noise["run_scores"])
        lines.append(f"noise floor ({noise['what']}): first-eval LCS {scores}; run_std "
                     f"{noise['run_std']:.3f}, a delta under {noise['band']:.3f} is noise")
    elif rep.get("noise_floor_note"):
        lines.append(f"noise floor: {rep['noise_floor_note']}")
    for name, d in rep["head_to_head"].items():
        lines.append(f"{name} at the last eval: {_delta_text(d)}")
    lines.append("policy: each eval samples the weights the inference server held then; the "
                 "last eval fires as the last batch ships, before the trainer makes the final "
                 "policy from it, so it measures the policy before the final weights")
    for name, arm in rep["arms"].items():
        final = arm.get("final_weights")
        if final:
            lines.append(f"{name} final weights (v{final.get('step')}): {final['volume']}; "
                         f"{final.get('are') or ''}".rstrip("; "))
        elif "final_weights" in arm:
            lines.append(f"{name} final weights: not named by its run record (collect it "
                         "through Modal, or copy <run dir>.record.json with the run folder)")
        if arm.get("teacher") and name not in caveats:
            lines.append(f"{name} teacher: {arm['teacher']}")
        if arm.get("time"):
            lines.append(f"{name} time: " + "; ".join(part_text(part, seconds) for part, seconds
                                                      in arm["time"].items()))
    lines += [f"* {name}: {text}" for name, text in caveats.items()]
    return "\n".join(lines)
