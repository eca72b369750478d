"""The route's next steps: the call each decision leads to, written to run as given.

A step is a tool with its arguments, or an action in words (:class:`NextStep`). A call names in
``needs`` what only the caller can fill (the taskset), never a placeholder value; a config takes
the token budget the rows were graded on when they carry one, and says it is a guess when they
do not (:func:`rows_budget`). Distilling from a writer or a teacher smaller than the model you
will train is never proposed (:func:`smaller`, :func:`other_model`). A GRPO step sizes its
held-out test from the rows, within the tasks there are (:func:`held_out`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from .defaults import GROUP_MIN_ROLLOUTS, OPSD_MIN_PARAMS_B, PRIME_RL_GROUP_SIZE, PROVE_EFFECT
from .errors import WhileaiError
from .models import model_size_b
from .questions import Band, OnPolicy
from .result import Result
from .rows import Rows
from .stats import holdout_size
from .voice import arg, choose
from .voice import name as op_name

if TYPE_CHECKING:  # the route's result; routing imports this module
    from .routing import Route


class NextStep(Result):
    """The concrete next call: a tool with its arguments (``needs``: the arguments still to
    fill, never a placeholder), or an action in words."""

    say: str
    tool: str | None = None
    arguments: dict[str, Any] | None = None
    needs: list[str] = Field(default_factory=list, description="arguments of the call only you "
                                                               "can fill (e.g. taskset)")


def config_step(say: str, taskset: str | None, method: Any, model: str,
                 budget: tuple[int | None, str] = (None, ""), **extra: Any) -> NextStep:
    """A prime_rl_config call: ``taskset`` in it when known (else ``needs`` names it), the
    token budget the rows carry (``budget``: the cap and what it says)."""
    cap, said = budget
    arguments = {**({"taskset": taskset} if taskset else {}), "method": method, "model": model,
                 **({"max_tokens": cap} if cap is not None else {}), **extra}
    return NextStep(say=f"{say} {said}".strip(), tool="prime_rl_config", arguments=arguments,
                    needs=[] if taskset else ["taskset"])


def rows_budget(data: Rows) -> tuple[int | None, str]:
    """(the completion budget the rows were sampled under, a sentence saying where it came
    from): the one ``max_tokens`` every row carries, else None and that the config's is a
    guess."""
    b = data.budget
    caps = None if b is None else b.max_tokens[b.max_tokens == b.max_tokens]
    if caps is not None and caps.shape[0] == data.n_rows and float(caps.min()) == float(caps.max()):
        return int(caps[0]), (f"max_tokens {int(caps[0])} is the rows' own cap, so training "
                              "samples on the budget these rows were graded on.")
    if caps is not None and caps.shape[0]:
        return int(caps.max()), (f"The rows' caps differ ({int(caps.min())} to "
                                 f"{int(caps.max())}): max_tokens is their largest; give "
                                 f"{arg('max_tokens')} to choose.")
    return None, (f"The rows carry no max_tokens, so the config's completion budget would be "
                  f"{op_name('prime_rl_config')}'s default, a guess: give {arg('max_tokens')} "
                  "(the budget the model is graded on).")


def smaller(teacher: str | None, model: str) -> str | None:
    """Why a writer or teacher is no one to distil ``model`` from: it is smaller (both sizes
    read from the ids), else None."""
    t, s = (model_size_b(teacher) if teacher else None), model_size_b(model)
    if t is not None and s is not None and t < s:
        return (f"{teacher} ({t:g}B) is smaller than {model} ({s:g}B): a smaller model is not "
                "proposed as a teacher; train on the student's own signal")
    return None


def other_model(done, op: OnPolicy, model: str) -> Route:
    """Question 5 decided: another model wrote the rows. Distilling from it is proposed only
    when it is larger than the model you will train (sizes read from the ids)."""
    writer = next((m for m in op.models if m != "<none>" and m != model), None)
    w, s = (model_size_b(writer) if writer else None), model_size_b(model)
    regrade = (f"Grade {model} itself on these tasks and route its own rows: its band, not "
               "another model's, decides GRPO, OPSD or SFT.")
    if w is not None and s is not None and w < s:
        return done("off_policy", f"re-grade {model}: the rows' writer is smaller", 5, NextStep(
            say=f"A smaller model ({writer}, {w:g}B) wrote these rows: neither SFT on them nor "
                f"OPD from it can teach {model} ({s:g}B). {regrade}"))
    if w is not None and s is not None:
        hint = (f"{writer} ({w:g}B) is larger: SFT on its passing rows (sft-from-traces), or "
                "score it as a teacher on the same tasks (" + choose(
                    python="`teacher_clears`", cli="`whileai-skills route ROWS --model ID "
                    "--teacher-rows TEACHER_ROWS`", mcp="route_rows with teacher_rows") +
                ") and use OPD if it clears.")
        method = "SFT on these rows, or OPD from their larger writer once it clears"
    else:
        hint = ("If that model is larger and stronger than yours, score it as a teacher on the "
                "same tasks and use OPD only if it clears; otherwise it has nothing to teach.")
        method = f"re-grade {model}; distil from the writer only if it is larger and clears"
    return done("off_policy", method, 5, NextStep(
        say=f"Another model wrote these rows: GRPO on them is an off-policy update with no "
            f"correction. {hint} {regrade}"))


def held_out(data: Rows) -> str:
    """The held-out test the rows allow, sized from them (their variances: a one-arm pilot),
    within the tasks available, and what the split costs."""
    try:
        size = holdout_size(PROVE_EFFECT, before=data, cluster=None)
    except WhileaiError:
        return f"Size the held-out test with {op_name('holdout_size')} on a pilot."
    return (f"Held-out test ({op_name('holdout_size')}), sized from these rows' variances: "
            f"{size.split}.")


def single_rollout_step(ts: str | None, model: str, budget) -> NextStep:
    return config_step(
        f"Re-sample every prompt at k >= {GROUP_MIN_ROLLOUTS} and route again: one rollout per "
        "task estimates the mean but not which tasks split, and that band decides between GRPO, "
        "OPSD and SFT (usually the cheaper fix). Training does not need groups in these rows: "
        "prime-rl samples its own group of `group_size` rollouts per prompt at every step "
        f"({PRIME_RL_GROUP_SIZE} in its reverse-text examples; [orchestrator] group_size), so "
        "GRPO there needs only prompts that will split. If you can only ever sample once per "
        "prompt (production traces), train FlashReinforce, SAO or BPCO in your own trainer, or "
        "prime-rl's rae (a baseline from an EMA of past rewards, group_size 1).", ts, "rae",
        model, budget, group_size=1)


def floor_route(done, bd: Band, model: str, ts: str | None, budget) -> Route:
    size = model_size_b(model)
    continuous = bd.reward_kind != "binary"
    why = ("No task's rewards differ within it (if every rollout of a task gets the same "
           "nonzero reward, check the sampling temperature: identical replies give identical "
           "rewards), so a grouped method gets no gradient and more rollouts of the same "
           "sampler add none." if continuous else
           "No task splits: every task fails always" + (
               f" or passes always ({bd.n_always_pass} do)" if bd.n_always_pass else "")
           + ", and more rollouts cannot help a task at p = 0 (a draw keeps a pass with "
             "probability 0).")
    if size is not None and size < OPSD_MIN_PARAMS_B:
        return done("floor", f"SFT on a stronger model's completions (OPSD needs ~"
                    f"{OPSD_MIN_PARAMS_B:g}B+, this is {size:g}B)", 3, NextStep(
                        say=f"{why} The model is too small for OPSD: collect passing completions "
                            "from a stronger model and run the sft-from-traces skill ("
                            + ", ".join(op_name(o) for o in ("select_sft", "decontaminate",
                                                              "export_sft")) + ")."))
    caveat = "" if size is not None else " (model size unknown: OPSD needs ~7B+)"
    return done("floor", "OPSD: the same model shown privileged context" + caveat, 3,
                config_step(f"{why} Give the model privileged context with OPSD.", ts,
                             {"name": "opsd", "privileged": "reference"}, model, budget))
