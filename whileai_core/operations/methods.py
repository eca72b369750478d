"""Operations on the update math of methods that run in your own trainer: rollout_update
(FlashReinforce, SAO, BPCO on one batch of single rollouts) and shape_group (GroupwiseGrading on
one group). prime-rl cannot run them; these let an agent check what the update does before
writing it into a trainer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ..defaults import GAR_CAP, GAR_MIN_FACTOR, GROUP_PASS_THRESHOLD, GRS_FLOOR
from ..errors import SpecError
from . import READS, operation
from .args import Records, Score

SINGLE_ROLLOUT = ("flash_reinforce", "sao", "bpco")
GROUP_MAX = 64  # a group of rollouts of one prompt; keeps the answer a few KB


@operation(
    toolset="methods", effect=READS,
    title="One single-rollout update (FlashReinforce, SAO, BPCO)",
    description=(
        "The update of a single-rollout method on one batch (one rollout per prompt, where "
        "GRPO's group advantage is zero): per trajectory whether it was admitted, advantages and "
        "per-token coefficients for your loss (-sum coef x logprob), critic targets, stats and "
        "notes. For your own trainer: prime-rl cannot run these methods."),
    result="whileai_core.methods.rollout_batch:RolloutUpdate",
    doing="computing a single-rollout update", serves=("FlashReinforce", "SAO", "BPCO"))
def rollout_update(
        method: Annotated[Literal["flash_reinforce", "sao", "bpco"] | dict[str, Any], Field(
            description=(
                "'flash_reinforce', 'sao' or 'bpco', or an object with a name and knobs, e.g. "
                "{\"name\": \"sao\", \"band\": [0.2, 4.0]} (knob names and ranges as in the "
                "library's FlashReinforce, SAO and BPCO; a bad knob is named with its range)."),
            examples=["flash_reinforce", {"name": "flash_reinforce", "trust": 0.05}])],
        batch: Annotated[Records, Field(description=(
            "One batch of trajectories, one rollout per prompt. Each: {\"reward\": number, "
            "\"logprobs\": [learner log-prob per generated token, <= 0], \"behavior_logprobs\": "
            "[sampler's, optional], \"values\": [critic per token; SAO and BPCO], "
            "\"action_mask\": [false on tokens the environment wrote, optional]}."),
            examples=[[{"reward": 1.0, "logprobs": [-0.5, -1.2, -0.3]},
                       {"reward": 0.0, "logprobs": [-0.7, -0.4]}]])], *,
        step: Annotated[int | None, Field(ge=0, le=10**9, description=(
            "SAO/BPCO: the training step (their critic warms up first); null: after the "
            "warm-up."))] = None):
    from ..methods import method_spec  # lazy: the method specs load with the call
    from ..rows import read_records  # lazy: loads with the call

    spec = method_spec(method)
    if spec.name not in SINGLE_ROLLOUT:
        raise SpecError(f"rollout_update runs {', '.join(SINGLE_ROLLOUT)}, not {spec.name!r}. "
                        "Fix: grouped methods (grpo, max_rl, rae, opd, opsd) train in prime-rl: "
                        "write their config with prime_rl_config")
    trajectories = read_records(batch, noun="trajectory").items
    if spec.name == "flash_reinforce":
        return spec.update(trajectories)
    return spec.update(trajectories, step=step)


@operation(
    toolset="methods", effect=READS,
    title="Rank a group's passes with a grader (GroupwiseGrading)",
    description=(
        "Shape one group with your grader's scores: mode 'reward' scales each pass's reward "
        "(GRS), mode 'advantage' reorders a mixed group's credit among its passes (GAR), with "
        "the pass mass before and after. Notes say when the scores barely spread (a constant "
        "multiplier that group normalisation erases)."),
    result="whileai_core.methods.grouping:GroupShaping", doing="shaping a group",
    serves=("GroupwiseGrading",))
def shape_group(
        rewards: Annotated[list[Score], Field(min_length=1, max_length=GROUP_MAX, description=(
            "One group's rewards (the rollouts of one prompt), in order."),
            examples=[[1.0, 1.0, 0.0, 1.0]])],
        scores: Annotated[list[list[Score]] | list[Score], Field(
            min_length=1, max_length=GROUP_MAX, description=(
                "Your grader's scores, one per rollout (a fail's entry is ignored): mode "
                "'reward', [solution, behaviour] pairs in [0, 1]; mode 'advantage', one quality "
                "number each, higher is better."),
            examples=[[[0.9, 1.0], [0.4, 0.8], [0.0, 0.0], [0.7, 0.5]]])], *,
        mode: Annotated[Literal["reward", "advantage"], Field(description=(
            "'reward' (GRS: scale each pass by its scores) or 'advantage' (GAR: reorder a mixed "
            "group's credit among its passes by rank)."))] = "reward",
        hacked: Annotated[list[bool] | None, Field(max_length=GROUP_MAX, description=(
            "Optional: rollouts flagged as reward hacks (reward set to 0)."))] = None,
        floor: Annotated[float, Field(ge=0.0, le=1.0, description=(
            "GRS: lowest factor a score can give, in [0, 1]."))] = GRS_FLOOR,
        min_factor: Annotated[float, Field(gt=0.0, le=1.0, description=(
            "GAR: factor of the worst pass, in (0, 1]."))] = GAR_MIN_FACTOR,
        cap: Annotated[float | None, Field(ge=1.0, le=1e6, description=(
            "GAR: cap on lambda (>= 1), null: uncapped."))] = GAR_CAP,
        pass_threshold: Annotated[float, Field(ge=-1e12, le=1e12, description=(
            "A rollout passes when reward >= this."))] = GROUP_PASS_THRESHOLD):
    from ..methods import GroupwiseGrading  # lazy: the method specs load with the call

    method = GroupwiseGrading(mode=mode, floor=floor, min_factor=min_factor, cap=cap,
                              pass_threshold=pass_threshold)
    return method.shape(rewards, scores, hacked=hacked)
