"""End to end with a real recipe: recipes/grpo's CPU smoke (2 GRPO steps, LoRA, a tiny random
model) launched on the local backend, polled to succeeded, collected with its paired verdict.

Takes 8-40 s on 2 CPU cores (warm vs cold caches, measured 2026-11-29); skipped without
the train extras.
And every real recipe's Modal path: its ``modal_call`` hook, then Modal's real spawn up to the
authentication boundary.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from whileai_core.errors import ConfigError
from whileai_core.runs import Registry, collect_run, launch_run
from test_runs_support import wait_until_finished

RECIPES = Path(__file__).resolve().parents[1] / "recipes"



def expected_verdict(c) -> str:
    """compare's verdict from its own interval (no noise band given): README, "verdicts"."""
    if c.ci is None:
        return "insufficient_data"
    if c.ci[0] > 0 or c.ci[1] < 0:
        return "moved" if c.delta > 0 else "moved_the_wrong_way"
    # contains 0: flat only when the whole interval is inside +-effect (an equivalence)
    return "flat" if -c.effect <= c.ci[0] and c.ci[1] <= c.effect else "no_detectable_change"

def _pass_rates(rows: list[dict]) -> dict[str, float]:
    """Per-task pass rate by hand: a row passes when reward >= 1.0."""
    passes: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        passes[row["task_id"]].append(row["reward"] >= 1.0)
    return {task: sum(p) / len(p) for task, p in passes.items()}


@pytest.mark.slow
@pytest.mark.skipif(not (RECIPES / "grpo" / "run.py").is_file(), reason="no recipes/grpo")
def test_grpo_smoke_end_to_end_on_the_local_backend(tmp_path):
    pytest.importorskip("trl")
    state = tmp_path / "state"
    plan = launch_run("grpo", backend="local", state_dir=state, recipes_dir=RECIPES)
    assert plan.action == "planned" and "recipes/grpo/run.py --smoke --out" in plan.plan.command
    launched = launch_run("grpo", backend="local", confirm=True, state_dir=state,
                          recipes_dir=RECIPES)
    done = wait_until_finished(launched.run.id, state, limit_s=600)
    assert done.status == "succeeded", done.error

    collected = collect_run(done.id, state_dir=state)
    results = Registry(state).get(done.id).results  # the rows, as stored at completion
    before, after = _pass_rates(results["before_rows"]), _pass_rates(results["after_rows"])
    paired = sorted(set(before) & set(after))
    c = collected.comparison
    assert c.n_paired == len(paired) >= 3
    assert c.mean_before == pytest.approx(sum(before[t] for t in paired) / len(paired))
    assert c.mean_after == pytest.approx(sum(after[t] for t in paired) / len(paired))
    assert c.delta == pytest.approx(c.mean_after - c.mean_before)
    assert collected.verdict == expected_verdict(c)
    assert collected.metrics["smoke"] is True and "before_rows" not in collected.metrics
    again = launch_run("grpo", backend="local", confirm=True, state_dir=state,
                       recipes_dir=RECIPES)
    assert again.action == "existing" and again.run.id == launched.run.id

    # the run wrote the watch records: watch_run(run id) reads the steps it trained and the
    # held-out rows before (step 0) and after (the last step), paired as collect_run paired them
    from whileai_core.hacking import watch_run

    watched = watch_run(done.id, state_dir=state)
    assert watched.n_steps == results["train_steps"] + 1 and watched.n_evals == 2
    assert watched.held_out_delta == pytest.approx(c.delta)
    assert watched.decision in ("continue", "not_enough_data", "stop")


@pytest.mark.slow
@pytest.mark.skipif(not (RECIPES / "sft" / "run.py").is_file(), reason="no recipes/sft")
def test_sft_end_to_end_on_the_local_backend_and_a_data_folder_is_its_identity(tmp_path):
    """launch_run("sft", backend="local", confirm=True) trains two real steps on CPU (the
    recipe's smoke on the refund demo) and collect_run pairs the held-out rows by task into a
    verdict. A data folder (what sft-from-traces writes; check.py and the MCP-form test train on
    one) goes into the command and the run's id, byte for byte."""
    pytest.importorskip("trl")
    from recipes.sft.data import build_refund_demo

    state = tmp_path / "state"
    launched = launch_run("sft", backend="local", confirm=True, state_dir=state,
                          recipes_dir=RECIPES)
    done = wait_until_finished(launched.run.id, state, limit_s=600)
    assert done.status == "succeeded", done.error
    collected = collect_run(done.id, state_dir=state)
    results = Registry(state).get(done.id).results
    assert results["train_steps"] == 2 and results["loss_mask"]["n_wrong_mask"] == 0
    assert results["data"]["origin"].startswith("refund demo (seed 0)")
    before, after = _pass_rates(results["before_rows"]), _pass_rates(results["after_rows"])
    c = collected.comparison
    assert c.n_paired == len(before) == 24  # 120 prompts, 20% of the tasks held out, by task
    assert c.mean_before == pytest.approx(sum(before.values()) / 24)
    assert c.mean_after == pytest.approx(sum(after.values()) / 24)
    assert collected.verdict == expected_verdict(c)

    data = tmp_path / "sft"
    build_refund_demo(data, seed=0, share=0.2)
    plan = launch_run("sft", backend="local", data=str(data), state_dir=state,
                      recipes_dir=RECIPES)
    assert plan.plan.command.endswith(f"--data {data}")
    assert f"data={str(data)!r}" in plan.next_step
    assert plan.plan.run_id != launched.run.id
    with open(data / "grader.py", "a") as fh:  # one changed byte, another run
        fh.write("\n")
    again = launch_run("sft", backend="local", data=str(data), state_dir=state,
                       recipes_dir=RECIPES)
    assert again.plan.run_id not in (plan.plan.run_id, launched.run.id)


def test_a_recipe_without_a_data_hook_refuses_data(tmp_path):
    from whileai_core.errors import ArgumentError

    with pytest.raises(ArgumentError, match="grpo takes no data folder"):
        launch_run("grpo", backend="local", data=str(tmp_path), state_dir=tmp_path / "s",
                   recipes_dir=RECIPES)
    with pytest.raises(ArgumentError, match="is not a folder"):
        launch_run("sft", backend="local", data=str(tmp_path / "nope"),
                   state_dir=tmp_path / "s", recipes_dir=RECIPES)



@pytest.mark.parametrize("recipe, app, function", [
    ("grpo", "whileai-grpo", "train_grpo"),
    ("dpo", "whileai-dpo", "train_dpo"),
    ("sft", "whileai-sft", "train_sft"),
    ("prime-rl", "whileai-prime-rl", "train"),
])
def test_each_recipe_spawns_through_modals_real_client(tmp_path, monkeypatch, recipe, app,
                                                       function):
    """The recipe's own modal_call, then modal.Function.from_name(...).spawn(...) for real, up to
    Modal's authentication (no token here): the error names the variables to set."""
    modal = pytest.importorskip("modal")
    if not (RECIPES / recipe / "run.py").is_file():
        pytest.skip(f"no recipes/{recipe}")
    for name in ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET", "MODAL_OAUTH_REFRESH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(modal.config, "_user_config", {})
    from whileai_core.prime_rl import prime_rl_config
    from whileai_core.runs.modal_backend import ModalBackend, recipe_call
    from whileai_core.runs.targets import resolve_target

    if recipe == "prime-rl":
        config = tmp_path / "rl.toml"
        prime_rl_config("reverse-text", "grpo", model="Qwen/Qwen3-0.6B", out=config)
        target = resolve_target(str(config), recipes_dir=RECIPES)
    else:
        target = resolve_target(recipe, recipes_dir=RECIPES)
    call = recipe_call(target, "run-name")
    assert (call.app, call.function) == (app, function)
    if recipe == "sft":  # the refund demo's contents travel as the second argument
        assert len(call.args[1]["conversations"]) == 96 and len(call.args[1]["holdout"]) == 24

    registry = Registry(tmp_path / "state")
    record, _ = registry.claim(dict(id="run-0000000000aa", name="run-name", target=target.label,
                                    target_kind=target.kind, recipe=target.recipe,
                                    sha256=target.sha256, backend="modal", gpu="A10G"))
    with pytest.raises(ConfigError) as caught:
        ModalBackend().launch(record, target, registry.run_dir(record.id), lock_fd=-1)
    assert "MODAL_TOKEN_ID" in str(caught.value) and "MODAL_TOKEN_SECRET" in str(caught.value)
    assert isinstance(caught.value.__context__, modal.exception.AuthError)
