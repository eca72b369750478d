"""The launch forecast: tokens, memory per GPU, wall clock and dollars, each labelled; a config that
cannot fit refused before launch; the forecast recorded, measured beside it, and its past error.

Every expected number is worked by hand in the comments from the run's own config, the stated
rules (bytes a parameter, activations, the KV cache), NVIDIA's datasheet figures and Modal's
prices as ``defaults`` holds them, never read back from the code under test.
"""

from __future__ import annotations

import math
import os
import sqlite3
from pathlib import Path

import pytest

from whileai_core import defaults as D
from whileai_core.errors import ConfigError
from whileai_core.models import architecture
from whileai_core.runs import Registry, collect_run, launch_run, list_runs
from whileai_core.runs._wrapper import EXIT_FILE, PID_FILE
from whileai_core.runs.forecast import Figure, prime_rl_fit, trl_fit
from whileai_core.runs.forecast_check import measure, past_error, recorded
from whileai_core.runs.registry import REGISTRY_FILE, SCHEMA_VERSION, RunRecord
from test_runs_support import make_recipes, wait_until_finished

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "recipes" / "prime-rl" / "configs"
KINDS = {"measured", "fitted", "derived", "assumption"}


@pytest.fixture(autouse=True)
def no_modal_token(monkeypatch):
    monkeypatch.delenv("MODAL_TOKEN_ID", raising=False)
    monkeypatch.delenv("MODAL_TOKEN_SECRET", raising=False)


def plan(target, tmp_path, **kwargs):
    return launch_run(str(target), state_dir=tmp_path / "state",
                      recipes_dir=REPO / "recipes", **kwargs).plan


def figures(forecast) -> list[Figure]:
    out = [*forecast.tokens, *forecast.time, forecast.wall_s, forecast.gpu_hours]
    out += [item for gpu in forecast.memory for item in gpu.items]
    return out + ([forecast.dollars] if forecast.dollars else [])


# --- what the project knows of a model's shape -------------------------------------------------

def test_architecture_facts_and_the_rules_built_on_them():
    arch = architecture("PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT")   # a fine-tune: its base
    assert arch.name == "Qwen3-0.6B"
    # K and V, 28 layers x 8 KV heads x 128 dims x 2 bytes: 2 * 28 * 8 * 128 * 2 = 114,688 B
    assert arch.kv_bytes_per_token() == 114_688
    # Qwen2.5-1.5B, rank 16 on q, k, v, o, gate, up, down, d_in + d_out each:
    # q (1536+1536) + k, v 2*(1536+256) + o (1536+1536) + gate, up 2*(1536+8960) + down
    # (8960+1536) = 3072 + 3584 + 3072 + 20992 + 10496 = 41216 a layer; x 16 x 28 = 18,464,768
    assert architecture("Qwen/Qwen2.5-1.5B-Instruct").lora_params(16) == 18_464_768
    assert architecture("Qwen/Qwen3-32B").name == "Qwen3-32B"
    assert architecture("Qwen/Qwen3-1.7B").name == "Qwen3-1.7B"     # not Qwen3-14B or -4B
    assert architecture("someone/Mystery-7B") is None


# --- the three prime-rl arms ------------------------------------------------------------------

def test_the_fit_to_the_seeds_two_arms_worked_by_hand():
    # Derived seconds of the two fitted runs (Qwen3-0.6B on H100s: 80 GB, 989 TFLOPS, 3350 GB/s):
    #   weights load: bf16 weights of trainer and inference, 2 x 1.2 GB at 1 GB/s = 2.4 s
    #   decode a step: the 128 (or 32) replies fit the KV cache at once (0.9*80 - 1.2 = 70.8 GB
    #     / 114,688 B = 617k tokens >> 128 * 256), so 128 token steps of 1.2e9 B / 3.35e12 B/s
    #     = 0.35821 ms: 0.045851 s
    #   opsd's live-teacher scoring: 2 * 0.6e9 * 32 * (128 + 128) / (989e12 * 0.3) = 0.033129 s
    # grpo: 884 = F + 2.4 + 20 * (128 b + 0.045851); opsd: 484 = F + 2.4 + 20 * (32 b + 0.078980)
    # subtracting: 400 = 20 * 96 b + 20 * (0.045851 - 0.078980) -> b = (400 + 0.66258) / 1920
    b = (400 + 20 * (0.078980 - 0.045851)) / 1920                       # 0.208678
    startup = 484 - 2.4 - 20 * (32 * b + 0.078980)                      # 346.466
    fitted_startup, fitted_b = prime_rl_fit()
    assert fitted_b == pytest.approx(b, abs=1e-5)
    assert fitted_startup == pytest.approx(startup, abs=0.01)


# what the recipe copies to its volume when rl ends, for the 0.6B arms (full weights, [ckpt]):
# the final broadcast in bf16, 2 B x 0.6e9 = 1.2 GB, and the trainer's checkpoint, fp32 weights
# 4 B + AdamW's two fp32 moments 8 B a parameter = 7.2 GB: 8.4 GB at the assumed 0.5 GB/s
COPY_S = (1.2 + 7.2) / 0.5                                              # 16.8 s
# opd's teacher, started before rl: the assumed 60 s of vLLM start + its 1.2 GB at 1 GB/s
TEACHER_S = 60 + 1.2                                                    # 61.2 s


@pytest.mark.parametrize("arm", ["grpo", "opsd", "opd"])
def test_reverse_text_arms_forecast_within_1_5x_of_the_seeds_measured_wall_clock(arm, tmp_path):
    forecast = plan(CONFIGS / f"{arm}.toml", tmp_path).forecast
    measured = D.PRIME_RL_MEASURED[arm][0]                             # 884, 484, 894 s
    if arm in D.PRIME_RL_FIT_ARMS:   # fitted to these very runs: reproduced to the second
        assert forecast.run_s == pytest.approx(measured, abs=0.5)
    else:                            # opd was left out of the fit: a check, not a calibration
        assert 1 / 1.5 <= forecast.run_s / measured <= 1.5
        # by hand: rl's own time is grpo's 884 s + 20 steps of teacher scoring
        # 2 * 0.6e9 * 128 * 256 / (989e12 * 0.3) = 0.13252 s -> 884 + 2.65 = 886.65 s (the
        # teacher's own load is in its start-up, before rl's clock starts)
        assert forecast.run_s == pytest.approx(886.65, abs=0.05)
    # billed: the assumed 60 s container start, opd's teacher start-up and the end-of-run copy
    # on top of rl; two H100s at $0.001097/s each
    outside = 60 + COPY_S + (TEACHER_S if arm == "opd" else 0)
    assert forecast.wall_s.value == pytest.approx(forecast.run_s + outside)
    parts = {t.name: t for t in forecast.time}
    assert parts["checkpoint copy"].value == pytest.approx(COPY_S)
    assert parts["checkpoint copy"].kind == "assumption"
    assert ("teacher start-up" in parts) == (arm == "opd")
    if arm == "opd":
        assert parts["teacher start-up"].value == pytest.approx(TEACHER_S)
    assert forecast.dollars.value == pytest.approx(forecast.wall_s.value * 2 * 0.001097)
    assert forecast.gpu_hours.value == pytest.approx(forecast.wall_s.value * 2 / 3600)


def test_the_forecast_says_what_is_fitted_held_out_and_measured(tmp_path):
    forecast = plan(CONFIGS / "opd.toml", tmp_path).forecast
    parts = {t.name: t.kind for t in forecast.time}
    # solved from the grpo and opsd runs: fitted, not measured
    assert parts["start-up and evals"] == parts["rollouts"] == "fitted"
    assert forecast.wall_s.kind == "fitted" and "measured" not in parts.values()
    runs = {r.run: r for r in forecast.calibration.runs}
    assert {r.role for r in runs.values()} == {"fitted", "held out"}
    for arm in ("grpo", "opsd"):                      # reproduced by construction
        assert runs[f"seed {arm}"].role == "fitted"
        assert runs[f"seed {arm}"].residual_s == pytest.approx(0.0, abs=0.05)
    held = runs["seed opd"]
    # by hand (above): 886.65 s forecast for the 894 s measured: residual -7.35 s
    assert held.role == "held out" and held.measured_s == 894.0
    assert held.residual_s == pytest.approx(886.65 - 894.0, abs=0.05)
    text = str(launch_run(str(CONFIGS / "opd.toml"), state_dir=tmp_path / "s",
                          recipes_dir=REPO / "recipes"))
    assert "held out: seed opd measured 894 s, forecast 886.6 s, residual -7.3 s (-0.8%)" in text
    assert "fitted to seed grpo (884 s) and seed opsd (484 s)" in text
    # the TRL fit has nothing held out, and says so
    assert "no run held out: the fit is unchecked" in str(plan("grpo", tmp_path))
    # a run of another model or GPU is told the check does not cover it
    other = plan(CONFIGS / "opd.toml", tmp_path, gpu="A100-80GB:2").forecast
    assert any("which no run here has checked" in note for note in other.notes)


def test_collect_reconciles_teacher_start_up_and_the_copy_and_bills_them(tmp_path):
    """A prime-rl record times rl, the teacher's start-up and the end-of-run copy; each is set
    beside its forecast and the measured dollars count all three (the seed's 894 s of rl, a
    95 s teacher start-up and a 20 s copy: made-up record values, forecast by hand above)."""
    forecast = plan(CONFIGS / "opd.toml", tmp_path).forecast
    kept = recorded(forecast)
    assert kept["parts"] == {"rl": pytest.approx(886.65, abs=0.1),
                             "teacher start-up": pytest.approx(TEACHER_S, abs=0.1),
                             "checkpoint copy": pytest.approx(COPY_S, abs=0.1)}
    record = RunRecord(id="run-000000000001", name="opd", target="opd.toml",
                       target_kind="config", recipe="prime-rl", sha256="x", backend="modal",
                       gpu="H100:2", status="succeeded", created_at="2026-12-02T10:00:00",
                       updated_at="2026-12-02T11:00:00", finished_at="2026-12-02T11:00:00",
                       forecast=kept, results={"returncode": 0, "wall_clock_s": 894.0,
                                               "teacher": {"ready_after_s": 95.0},
                                               "kept": {"seconds": 20.0}})
    measured = measure(record, tmp_path)
    assert measured["clock"] == "recipe" and measured["wall_s"] == 894.0
    assert measured["ratio"] == pytest.approx(kept["run_s"] / 894.0, abs=1e-4)
    assert measured["parts"]["teacher start-up"] == {
        "forecast_s": pytest.approx(TEACHER_S, abs=0.1), "measured_s": 95.0,
        "ratio": pytest.approx(TEACHER_S / 95.0, abs=1e-3)}
    assert measured["parts"]["checkpoint copy"]["measured_s"] == 20.0
    billed = 894.0 + 95.0 + 20.0                                        # 1,009 s
    assert measured["billed_s"] == billed
    assert measured["dollars"] == pytest.approx(billed * 2 * 0.001097, abs=1e-4)
    assert measured["gpu_hours"] == pytest.approx(billed * 2 / 3600, abs=1e-4)
    lines = record.model_copy(update={"measured": measured}).render()
    assert "by part: rl 14.9 min (forecast 14.8 min, 0.99x); teacher start-up 95 s (forecast " \
           "61 s, 0.64x); checkpoint copy 20 s (forecast 17 s, 0.84x)" in lines
    assert "billed: 16.8 min measured" in lines


def test_reverse_text_arms_tokens_memory_and_labels(tmp_path):
    grpo = plan(CONFIGS / "grpo.toml", tmp_path)
    opsd = plan(CONFIGS / "opsd.toml", tmp_path).forecast
    opd = plan(CONFIGS / "opd.toml", tmp_path).forecast
    f = grpo.forecast
    assert f.fits and grpo.est_gpu_hours == f.gpu_hours.value
    tokens = {t.name: t.value for t in f.tokens}
    assert tokens["generated in training"] == 20 * 128 * 128            # 327,680
    assert tokens["trained"] == 20 * 128 * (128 + 128)                  # 655,360 (128 prompt)
    assert {t.name: t.value for t in opsd.tokens}["generated in training"] == 20 * 32 * 128
    gpu0, gpu1 = f.memory
    # inference: vLLM takes 0.9 of 80 GB = 72 GB: 1.2 GB of bf16 weights, 70.8 GB of KV cache
    assert gpu0.role.startswith("inference") and gpu0.total_gb == pytest.approx(72.0)
    assert {i.name: i.value for i in gpu0.items}["policy weights"] == pytest.approx(1.2)
    # trainer: fp32 weights + fp32 grads (AdamW moments on the CPU) 8 B x 0.6e9 = 4.8 GB;
    # activations: 5 checkpointed layer inputs 5 * 2 * 2048 * 1024 + one layer
    # 34 * 2048 * 1024 = 20,971,520 + 71,303,168 B = 0.092275 GB; logits 4 B x 2048 x 151,936
    # = 1.244668 GB; reserve 1.5 GB: 4.8 + 0.092275 + 1.244668 + 1.5 = 7.636943 GB
    assert gpu1.role.startswith("trainer") and gpu1.total_gb == pytest.approx(7.636943, abs=1e-3)
    # OPD: the teacher beside the policy on GPU 0, each in a 0.4 share: 2 x 32 GB = 64 GB
    assert opd.memory[0].total_gb == pytest.approx(64.0)
    assert {i.name for i in opd.memory[0].items} >= {"teacher weights", "teacher KV cache"}
    for forecast in (f, opsd, opd):
        assert forecast.dollars is not None and forecast.wall_s.kind == "fitted"
        for fig in figures(forecast):
            assert fig.kind in KINDS and fig.basis.strip(), fig
    text = str(grpo)
    for words in ("tokens:", "memory: GPU 0", "memory: GPU 1", "time:", "cost:", "fitted:",
                  "derived:", "assumption:", "fit:"):
        assert words in text, words


# --- the TRL recipes --------------------------------------------------------------------------

def test_trl_fit_worked_by_hand():
    # GRPO defaults on an A10G (24 GB, 125 TFLOPS, 600 GB/s), Qwen2.5-1.5B (1.54B):
    #   container 60 s + load 3.08 GB at 1 GB/s = 3.08 s
    #   training: (4N + 2N recompute + 2N reference) x 32 x (128 + 256) tokens a step =
    #     8 * 1.54e9 * 12,288 / (125e12 * 0.3) = 4.03702 s x 40 steps = 161.481 s
    #   generate() token steps: holdout 2 x 24 prompts x 4 samples = 192 replies in batches of
    #     32 -> 6 x 256 = 1,536; training 40 x 256 = 10,240; 11,776 steps at a roofline of
    #     3.08e9 / 600e9 = 5.1333 ms + o
    # 900 = 60 + 3.08 + 161.481 + 11,776 * (0.0051333 + o)  ->  o = 0.052223 s
    o = (900 - 60 - 3.08 - 40 * 8 * 1.54e9 * 12288 / (125e12 * 0.3)) / 11776 - 3.08e9 / 600e9
    assert trl_fit() == pytest.approx(o, abs=1e-6)


@pytest.mark.parametrize("recipe", ["grpo", "dpo", "sft"])
def test_trl_recipes_plan_tokens_memory_wall_clock_and_dollars(recipe, tmp_path):
    launched = plan(recipe, tmp_path)
    f = launched.forecast
    assert f.gpu == "A10G" and f.fits and f.dollars.value > 0
    assert f.dollars.value == pytest.approx(f.wall_s.value * 0.000306)
    assert f.tokens and f.memory and f.time
    for fig in figures(f):
        assert fig.kind in KINDS and fig.basis.strip(), fig
    (gpu,) = f.memory
    if recipe == "grpo":
        # the GRPO default reproduces the 900 s bound it was fitted to
        assert f.wall_s.value == pytest.approx(900.0, abs=0.01)
        # bf16 weights 2 x 1.54 = 3.08 GB; adapter 16 B x 18,464,768 = 0.295436 GB; working:
        # training 8 x 384 = 3,072 tokens: activations 28 * 2 * 3072 * 1536 + 34 * 3072 * 1536
        # = 0.424673 GB, logits 4 * 3072 * 151,936 = 1.866990 GB (2.291663 GB) against the KV
        # of 32 replies, 32 * 384 * 28,672 B = 0.352322 GB: the larger is 2.291663; + 1.5 GB
        assert gpu.total_gb == pytest.approx(3.08 + 0.295436 + 2.291663 + 1.5, abs=1e-3)
        gen = {t.name: t.value for t in f.tokens}
        assert gen["generated in training"] == 40 * 4 * 8 * 256          # 327,680
        assert gen["generated (held-out replies before and after)"] == 192 * 256


# --- refusing what cannot fit -------------------------------------------------------------------

QWEN3_32B = """max_steps = 20
seq_len = 2048

[model]
name = "Qwen/Qwen3-32B"

[orchestrator]
batch_size = 128
group_size = 16

[orchestrator.train.sampling]
max_completion_tokens = 128

[[orchestrator.train.source]]
name = "reverse-text"

[orchestrator.train.source.env.taskset]
id = "reverse-text"

[trainer]

[inference]
"""


def test_a_qwen3_32b_full_fine_tune_on_one_a10g_is_refused_with_the_numbers(tmp_path):
    config = tmp_path / "qwen3-32b.toml"
    config.write_text(QWEN3_32B)
    planned = plan(config, tmp_path, gpu="A10G")
    f = planned.forecast
    assert not planned.ready and not f.fits
    # inference: 2 B x 32.8B = 65.6 GB of weights against vLLM's 0.9 x 24 = 21.6 GB
    # trainer: 8 B x 32.8B = 262.4 GB of fp32 weights and grads, + activations 5 * 2 * 2048 *
    # 5120 + 34 * 2048 * 5120 = 0.461373 GB: 262.861 GB before the assumed items, > 24 GB
    assert "65.6 GB exceed vLLM's share 21.6 GB" in f.refusal
    assert "262.9 GB without the assumed items > 24 GB" in f.refusal
    assert "needs 2 GPUs" in f.refusal                  # 1 inference + 1 trainer; gpu gives 1
    assert f.fixes and all("fits" in fix for fix in f.fixes[:2])
    assert any("lora fine-tuning fits" in fix for fix in f.fixes)
    assert any("does not fit in memory" in n for n in planned.notes)
    with pytest.raises(ConfigError, match="nothing was launched or recorded.*65.6 GB"):
        launch_run(str(config), gpu="A10G", confirm=True, state_dir=tmp_path / "state",
                   recipes_dir=REPO / "recipes")
    assert list_runs(state_dir=tmp_path / "state").runs == []


def test_a_refused_launch_writes_nothing_not_even_the_registry(tmp_path, monkeypatch):
    """confirm=true refused before it spends (it does not fit; no Modal token) leaves the disk as
    a plan does: no registry file, no state folder (found by trying it from outside: the refusal
    said "nothing was launched or recorded" and left runs.sqlite3 behind)."""
    for name in ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.modal.toml either
    config = tmp_path / "qwen3-32b.toml"
    config.write_text(QWEN3_32B)
    state = tmp_path / "state"
    with pytest.raises(ConfigError, match="nothing was launched or recorded.*65.6 GB"):
        launch_run(str(config), gpu="A10G", confirm=True, state_dir=state,
                   recipes_dir=REPO / "recipes")
    assert not state.exists()
    with pytest.raises(ConfigError, match="nothing was launched or recorded.*MODAL_TOKEN_ID"):
        launch_run(str(CONFIGS / "grpo.toml"), confirm=True, state_dir=state,
                   recipes_dir=REPO / "recipes")
    assert not state.exists()


def test_the_layout_gpu_fix_is_written_as_the_reader_writes_it(tmp_path):
    """The fix "give the layout its GPUs" names the argument as the reader types it: --gpu at
    the shell, gpu= in Python (found from outside: the CLI printed gpu='A10G:2')."""
    from whileai_core.voice import CLI, PYTHON, speaking

    config = tmp_path / "grpo.toml"
    config.write_text((CONFIGS / "grpo.toml").read_text())
    # the 0.6B policy fits one A10G for inference and one for training: 2 GPUs, the launch gives 1
    with speaking(CLI):
        cli = plan(config, tmp_path, gpu="A10G").forecast.fixes
    with speaking(PYTHON):
        python = plan(config, tmp_path, gpu="A10G").forecast.fixes
    assert "--gpu A10G:2: the layout's 2 GPUs" in cli
    assert "gpu='A10G:2': the layout's 2 GPUs" in python


def test_the_cheapest_full_fine_tune_that_fits_is_found_and_rechecked(tmp_path):
    # By hand on A100-80GB ($0.000694/s): the trainer's 262.4 GB over 4 FSDP shards is 65.6 GB
    # + 0.46 activations + 1.24 logits + 1.5 = 68.8 GB <= 80; inference holds 65.6 GB of weights
    # in 0.9 x 80 = 72 GB, leaving 6.4 GB of KV: a 40,960-token max_model_len needs 40,960 x
    # 262,144 B = 10.7 GB, a 2,048-token one 0.54 GB. So 5 x A100-80GB with max_model_len 2048
    # at 5 x 0.000694 x 3600 = $12.49 an hour; 3 x H200 would be 3 x 0.001261 x 3600 = $13.62.
    config = tmp_path / "qwen3-32b.toml"
    config.write_text(QWEN3_32B)
    fixes = plan(config, tmp_path, gpu="H100:2").forecast.fixes
    assert ("full fine-tuning fits 5 x A100-80GB: inference tensor_parallel_size 1, FSDP over 4 "
            "trainer GPU(s), [inference.vllm] max_model_len = 2048") in fixes[0]
    assert "$12.49 an hour" in fixes[0]


def test_a_config_the_forecast_cannot_read_is_one_clear_error(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text('[orchestrator]\nbatch_size = "x"\n')
    planned = plan(config, tmp_path)
    assert planned.forecast is None and not planned.ready
    assert any("`orchestrator.batch_size` = 'x' must be an integer >= 1" in n
               for n in planned.notes)
    # the schema gate refuses it before the forecast is asked: one message names the field
    with pytest.raises(ConfigError, match="(?s)batch_size.*Nothing was launched or recorded"):
        launch_run(str(config), confirm=True, state_dir=tmp_path / "state",
                   recipes_dir=REPO / "recipes")


def test_an_unknown_model_shape_is_an_assumption_and_says_so(tmp_path):
    config = tmp_path / "mystery.toml"
    config.write_text(QWEN3_32B.replace("Qwen/Qwen3-32B", "someone/Mystery-7B"))
    f = plan(config, tmp_path).forecast
    assert any("shape is not known here" in n and "Qwen2.5-7B" in n for n in f.notes)
    trainer = f.memory[1]
    kinds = {i.name: i.kind for i in trainer.items}
    assert kinds["weights+grads+optimizer"] == "derived"   # from the id's 7B: 8 B x 7 = 56 GB
    assert kinds["activations"] == "assumption"            # the shape is borrowed
    assert {i.name: i.value for i in trainer.items}["weights+grads+optimizer"] == 56.0


# --- the registry: recorded, measured, and the error shown next time -----------------------------

def test_a_version_1_registry_gains_the_forecast_columns(tmp_path):
    db = sqlite3.connect(tmp_path / REGISTRY_FILE)
    db.executescript("""
        CREATE TABLE runs (id TEXT PRIMARY KEY, name TEXT NOT NULL, target TEXT NOT NULL,
            target_kind TEXT NOT NULL, recipe TEXT NOT NULL, sha256 TEXT NOT NULL,
            backend TEXT NOT NULL, gpu TEXT, status TEXT NOT NULL, handle TEXT, error TEXT,
            results TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, launched_at TEXT,
            finished_at TEXT, UNIQUE (sha256, name, backend));
        INSERT INTO runs VALUES ('run-000000000001', 'old', 'grpo', 'recipe', 'grpo', 'abc',
            'local', NULL, 'succeeded', NULL, NULL, NULL, '2026-01-01T00:00:00+00:00',
            '2026-01-01T00:00:00+00:00', NULL, '2026-01-01T00:01:00+00:00');
        PRAGMA user_version = 1;
    """)
    db.close()
    registry = Registry(tmp_path, create=False)
    old = registry.get("run-000000000001")
    assert old.name == "old" and old.forecast is None and old.measured is None
    with sqlite3.connect(tmp_path / REGISTRY_FILE) as db:
        columns = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
        assert {"forecast", "measured"} <= columns
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    Registry(tmp_path)    # opening again changes nothing


def test_a_local_run_is_measured_beside_its_forecast_and_the_next_plan_shows_the_error(tmp_path):
    recipes, state = make_recipes(tmp_path), tmp_path / "state"
    where = dict(state_dir=state, recipes_dir=recipes, backend="local")
    first = launch_run("tiny", **where)
    # a recipe never timed here: the assumed 30 s, labelled so
    assert first.plan.forecast.wall_s.value == 30.0
    assert first.plan.forecast.wall_s.kind == "assumption" and first.plan.past_error is None
    ratios = []
    for name in ("tiny", "tiny-2"):
        launched = launch_run("tiny", name=name, confirm=True, **where)
        assert launched.run.forecast["wall_s"] == 30.0
        done = wait_until_finished(launched.run.id, state)
        assert done.status == "succeeded", done.error
        collected = collect_run(done.id, state_dir=state)
        # measured independently: the wrapper's pid file (written at start) and exit-code file
        # (written at the end), read here with os.stat
        run_dir = state / "runs" / done.id
        took = (os.stat(run_dir / EXIT_FILE).st_mtime - os.stat(run_dir / PID_FILE).st_mtime)
        measured = collected.run.measured
        assert measured["exact"] and measured["wall_s"] == pytest.approx(took, abs=1e-3)
        assert measured["ratio"] == pytest.approx(30.0 / took, rel=1e-3)
        assert measured["gpu_hours"] == 0
        assert "forecast was" in str(collected)
        again = collect_run(done.id, state_dir=state)          # recorded once, not re-measured
        assert again.run.measured == measured
        ratios.insert(0, measured["ratio"])
    shown = launch_run("tiny", name="tiny-3", **where).plan.past_error
    assert shown.n == 2 and shown.backend == "local"
    assert shown.ratios == pytest.approx(ratios)               # most recent first
    assert (shown.low, shown.high) == pytest.approx((min(ratios), max(ratios)))
    text = str(launch_run("tiny", name="tiny-3", **where))
    assert f"last 2 forecasts on local were {min(ratios):.2f}-{max(ratios):.2f}x" in text


def _record(id_: str, backend: str, ratio: float | None, exact: bool, finished: str) -> RunRecord:
    measured = None if ratio is None else {"wall_s": 10.0, "exact": exact, "ratio": ratio}
    return RunRecord(id=id_, name=id_, target="grpo", target_kind="recipe", recipe="grpo",
                     sha256="x", backend=backend, gpu=None, status="succeeded",
                     created_at=finished, updated_at=finished, finished_at=finished,
                     forecast={"wall_s": 10.0}, measured=measured)


def test_past_error_keeps_the_last_five_exact_measurements_of_the_backend():
    records = [_record(f"run-{i:012d}", "modal", 0.5 + i / 10, True, f"2026-01-0{i + 1}")
               for i in range(7)]                                 # ratios 0.5 ... 1.1
    records += [_record("run-bound", "modal", 9.0, False, "2026-02-01"),   # an upper bound
                _record("run-local", "local", 3.0, True, "2026-02-02"),    # another backend
                _record("run-none", "modal", None, True, "2026-02-03")]    # nothing measured
    shown = past_error(records, "modal")
    # the five most recent exact ones: i = 6, 5, 4, 3, 2 -> 1.1, 1.0, 0.9, 0.8, 0.7
    assert shown.ratios == pytest.approx([1.1, 1.0, 0.9, 0.8, 0.7])
    assert (shown.n, shown.low, shown.high) == (5, pytest.approx(0.7), pytest.approx(1.1))
    assert past_error(records, "nowhere") is None
    assert math.isclose(past_error(records, "local").low, 3.0)


def test_a_card_without_bf16_is_never_a_fix_and_is_warned_about(tmp_path):
    """T4 (Turing, compute capability 7.5) has no bf16 and the run trains and serves in bf16:
    at $0.000164/s it would be the cheapest 2-GPU layout for the 0.6B policy (found from
    outside: 'full fine-tuning fits 2 x T4'); L4 ($0.000222/s, 24 GB, bf16) is the next."""
    config = tmp_path / "grpo.toml"
    config.write_text((CONFIGS / "grpo.toml").read_text())
    fixes = plan(config, tmp_path, gpu="A10G").forecast.fixes
    assert not any("T4" in fix for fix in fixes)
    assert any(fix.startswith("full fine-tuning fits 2 x L4") for fix in fixes)
    on_t4 = plan(config, tmp_path, gpu="T4:2").forecast
    assert any("T4 has no bf16" in note for note in on_t4.notes)


def test_a_trl_recipe_on_more_gpus_than_it_uses_says_they_idle_and_bill(tmp_path):
    # the recipe trains on one GPU; 3 are asked for, so GPU hours are wall x 3 (found from
    # outside: the plan billed 3 GPUs and showed 1 in use without a word)
    forecast = plan("grpo", tmp_path, gpu="H100:3").forecast
    assert forecast.gpus_needed == 1 and forecast.gpu_count == 3
    assert forecast.gpu_hours.value == pytest.approx(forecast.wall_s.value * 3 / 3600)
    assert any("2 of the 3 asked for would sit idle and still be billed" in note
               for note in forecast.notes)
