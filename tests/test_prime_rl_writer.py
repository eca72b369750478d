"""prime_rl_config: the keys it writes, its report, its refusals and warnings.

Expected keys come from prime-rl@559b447's schema (packages/prime-rl-configs/src/prime_rl/configs/ and the repo
examples in sec. 8), not from the writer's output.
"""

from __future__ import annotations

import importlib
import json
import tomllib

import pytest

from whileai_core.errors import ArgumentError, ConfigError, SpecError
from whileai_core.methods import (BPCO, OPD, OPSD, SAO, Async, Endpoint, FlashReinforce,
                                  GroupwiseGrading, ReinforceAda)
from whileai_core.prime_rl import prime_rl_config, reverse_text_arms
from whileai_core.prime_rl.mapping import ICEPOP_IMPORT_PATH

SFT = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"
RL = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL"
URL = "http://localhost:8001/v1"


def cfg(method="grpo", **kw):
    kw.setdefault("model", SFT)
    return prime_rl_config(kw.pop("taskset", "reverse-text"), method, **kw)


def test_reverse_text_arms_are_one_call_each():
    arms = {name: prime_rl_config(**kw) for name, kw in reverse_text_arms().items()}
    for name, r in arms.items():
        c = r.config
        assert c["max_steps"] == 20 and c["model"]["name"] == SFT, name
        assert c["trainer"]["optim"]["lr"] == 3e-6 and "model" not in c["trainer"], name  # full
        assert c["orchestrator"]["train"]["sampling"]["max_completion_tokens"] == 128
        src = c["orchestrator"]["train"]["source"][0]["env"]["taskset"]
        ev = c["orchestrator"]["eval"]["source"][0]["env"]["taskset"]
        assert src == {"id": "reverse-text", "dataset_split": "train[:872]"}
        assert ev == {"id": "reverse-text", "dataset_split": "train[872:]"}
        assert c["orchestrator"]["renderer"] == {"name": "prime-qwen3"}
        assert r.gpus.train_gpus == 1 and r.gpus.inference_gpus == 1
        assert c["deployment"]["num_train_gpus"] == 1 and c["deployment"]["num_infer_gpus"] == 1
    grpo, opsd, opd = arms["grpo"].config, arms["opsd"].config, arms["opd"].config
    assert grpo["orchestrator"]["algo"] == {"type": "grpo"}
    assert (grpo["orchestrator"]["batch_size"], grpo["orchestrator"]["group_size"]) == (128, 16)
    assert opsd["orchestrator"]["algo"]["type"] == "opsd"
    assert opsd["orchestrator"]["algo"]["demo_key"] == "answer"  # reverse-text's demonstration
    assert (opsd["orchestrator"]["batch_size"], opsd["orchestrator"]["group_size"]) == (32, 1)
    assert opd["orchestrator"]["algo"]["teacher"] == {"name": RL, "base_url": URL}
    assert arms["opd"].setup_commands[0].startswith("CUDA_VISIBLE_DEVICES=0 uv run inference "
                                                    f"--vllm.model {RL} --server.port 8001")
    assert opd["inference"] == {"vllm": {"gpu_memory_utilization": 0.4, "seed": 3}}
    # distinct engine seeds, the training temperature at eval, filesystem broadcast: each arm's
    # startup eval is a re-run of the others' (the noise floor), and no arm starts NCCL
    assert [c["inference"]["vllm"]["seed"] for c in (grpo, opsd, opd)] == [1, 2, 3]
    for c in (grpo, opsd, opd):
        assert c["orchestrator"]["eval"]["sampling"]["temperature"] == 1.0
        assert c["weight_broadcast"] == {"type": "filesystem"}
    assert arms["opsd"].ignored == {}  # the recipe passes anchor='live': what prime-rl runs


@pytest.mark.parametrize("method", ["grpo", "max_rl", "rae", "opsd",
                                    {"name": "opd", "teacher": f"{RL}@{URL}"},
                                    {"name": "async", "method": "grpo", "correction": "icepop"}])
def test_toml_round_trips_and_result_is_json(method):
    r = cfg(method, train_split="train", eval_split="train")
    assert tomllib.loads(r.text) == r.config
    assert json.loads(json.dumps(r.to_dict()))["method"] == r.method
    assert r.command == "uv run rl @ <config.toml>"
    assert "reads:" in str(r) and r.prime_rl_commit == "559b447"


def test_lora_on_and_off():
    on, off = cfg(lora=True), cfg(lora=False)
    assert on.config["trainer"]["model"]["lora"] == {"rank": 16, "alpha": 32.0}
    assert on.config["trainer"]["optim"]["lr"] == 1e-4 and off.config["trainer"]["optim"]["lr"] == 1e-6
    assert "model" not in off.config["trainer"]
    # one node: filesystem broadcast written out either way. prime-rl 559b447 would resolve NCCL
    # for full weights with [inference] (configs/rl.py:449-460), which its own single-node CI
    # configs (configs/ci/integration/reverse-text/start.toml) override because NCCL init
    # crashes the trainer
    assert on.config["weight_broadcast"] == off.config["weight_broadcast"] == {"type": "filesystem"}
    assert "NCCL" in off.reads["weight_broadcast"]
    # several nodes: left to prime-rl (filesystem with LoRA, NCCL without)
    assert "weight_broadcast" not in cfg(gpus=8, nodes=2, lora=False).config


def test_eval_sampler_is_written_and_is_the_training_one():
    # prime-rl 559b447's EvalSamplingConfig leaves temperature, top_p, top_k and min_p None: the
    # server's defaults (the checkpoint's generation_config), not the training sampler's, which
    # sends top_p 1.0 (TrainSamplingConfig.to_sampling_args) and top_k -1, min_p 0.0
    # (OrchestratorConfig.resolve_env_config) whatever the config says
    default = cfg(eval_split="train[872:]")
    assert default.config["orchestrator"]["eval"]["sampling"]["temperature"] == 1.0
    hot = cfg(eval_split="train[872:]", temperature=0.7)
    assert hot.config["orchestrator"]["eval"]["sampling"] == {
        "temperature": 0.7, "top_p": 1.0, "top_k": -1, "min_p": 0.0}
    assert hot.config["orchestrator"]["train"]["sampling"]["temperature"] == 0.7
    assert "top_p" not in hot.config["orchestrator"]["train"]["sampling"]  # prime-rl's own


def test_seed_goes_to_the_policys_vllm_engine():
    r = cfg(seed=7)
    assert r.config["inference"]["vllm"]["seed"] == 7
    assert "seed" not in cfg().config["inference"].get("vllm", {})  # prime-rl's own 0
    served = cfg(seed=7, serve_policy=False)
    assert "inference" not in served.config and served.setup_commands[-1].endswith("--vllm.seed 7")
    with pytest.raises(ArgumentError, match="`seed` = -1: must be at least 0"):
        cfg(seed=-1)


def test_gpu_split_is_the_one_deployed():
    r = cfg(gpus=8, inference_gpus=3)
    assert r.config["deployment"] == {"type": "single_node", "gpus_per_node": 8,
                                      "num_train_gpus": 5, "num_infer_gpus": 3}
    assert (r.gpus.train_gpus, r.gpus.inference_gpus, r.gpus.total) == (5, 3, 8)
    two = cfg(gpus=8, nodes=2, lora=False)
    assert two.config["deployment"] == {"type": "multi_node", "gpus_per_node": 8,
                                        "num_train_nodes": 1, "num_infer_nodes": 1}
    assert "slurm" in two.config and "inference" in two.config
    assert (two.gpus.train_nodes, two.gpus.inference_nodes, two.gpus.total) == (1, 1, 16)
    lora = cfg(gpus=8, nodes=3)
    assert (lora.gpus.train_nodes, lora.gpus.inference_nodes) == (2, 1)
    assert any("shares" in n for n in lora.notes)  # filesystem broadcast across nodes
    opd = cfg(OPD(f"{RL}@{URL}"), gpus=8, nodes=2)
    assert any("localhost is the orchestrator's own node" in w for w in opd.warnings)


def test_self_served_policy_says_where_to_listen():
    r = cfg(serve_policy=False)
    assert "inference" not in r.config
    assert r.setup_commands == [f"CUDA_VISIBLE_DEVICES=1 uv run inference --vllm.model {SFT} "
                                "--server.port 8000 --vllm.enable-lora --vllm.max-lora-rank 16"]
    assert any("http://localhost:8000/v1" in n for n in r.notes) and r.gpus.policy_served_by == "you"
    url = cfg(serve_policy="http://10.0.0.5:9000/v1")
    assert url.config["orchestrator"]["model"]["client"]["base_url"] == "http://10.0.0.5:9000/v1"
    assert "--server.port 9000" in url.setup_commands[0]


def test_corrections_map_to_the_loss_union():
    ipo = cfg(Async("grpo", correction="ipo", ipo_threshold=0.05, off_policy_steps=2))
    assert ipo.config["trainer"]["loss"] == {"type": "ipo", "ipo_threshold": 0.05}
    assert ipo.config["orchestrator"]["max_off_policy_steps"] == 2
    ice = cfg(Async("max_rl", correction="icepop"))
    assert ice.config["trainer"]["loss"] == {"type": "custom", "import_path": ICEPOP_IMPORT_PATH,
                                             "kwargs": {"low": 0.5, "high": 5.0}}
    module, _, fn = ICEPOP_IMPORT_PATH.rpartition(".")
    assert callable(getattr(importlib.import_module(module), fn))  # the trainer can import it
    opd = cfg(Async(OPD(f"{RL}@{URL}"), correction="icepop"))
    assert "loss" not in opd.config["trainer"] and "ref_kl" in opd.ignored["correction"]


@pytest.mark.parametrize("method, match", [
    (FlashReinforce(), "cannot run FlashReinforce.*method='rae'"),
    (SAO(), "cannot run SAO: it trains a value critic.*rae"),
    (BPCO(), "cannot run BPCO.*rae"),
    (Async("grpo", correction="tis"), "verl's"),
    (GroupwiseGrading(), "your own trainer"),
    (ReinforceAda(), "sampler"),
    (OPD(f"{RL}@{URL}", divergence="forward_kl"), "reverse KL only"),
])
def test_refusals_say_why_and_what_instead(method, match):
    with pytest.raises(ConfigError, match=match):
        cfg(method)


@pytest.mark.parametrize("method", ["grpo", "max_rl", Async("grpo")])
def test_group_of_one_is_refused_for_group_baselines(method):
    with pytest.raises(ConfigError, match="group_size 1: every advantage is zero.*rae"):
        cfg(method, group_size=1, batch=32)


def test_rae_runs_with_one_rollout_and_warns_about_its_ema():
    r = cfg("rae", batch=32)
    assert r.config["orchestrator"]["group_size"] == 1
    assert any("EMA" in w and "20 traces" in w for w in r.warnings)  # 1/(1-0.95)


def test_argument_refusals():
    with pytest.raises(ConfigError, match="not divisible by group_size 16.*batch = 128 or 144"):
        cfg(batch=130)
    with pytest.raises(ArgumentError, match="at least 2"):
        cfg(gpus=1)
    with pytest.raises(ArgumentError, match="inference_gpus"):
        cfg(gpus=2, inference_gpus=2)
    with pytest.raises(ArgumentError, match="renderer"):
        cfg(renderer="qwen4")
    with pytest.raises(ConfigError, match="does not fit `seq_len`"):
        cfg(max_tokens=4096, seq_len=2048)
    with pytest.raises(ConfigError, match="no dataset-split key"):
        cfg(taskset="my-env", train_split="train")
    with pytest.raises(ArgumentError, match="need `eval_split`"):
        cfg(eval_interval=5)
    with pytest.raises(SpecError, match="needs a teacher"):
        cfg("opd")


def test_opsd_size_warning_reads_the_model_id():
    small = cfg(OPSD(anchor="live"))
    assert any("0.6B" in w and "7B" in w for w in small.warnings)
    big = cfg(OPSD(anchor="live"), model="Qwen/Qwen3-8B")
    assert not any("7B" in w for w in big.warnings)
    unknown = cfg(OPSD(anchor="live"), model="acme/house-model")
    assert not unknown.warnings and any("size unknown" in n for n in unknown.notes)


def test_opsd_privileged_field_must_exist_on_a_known_taskset():
    r = cfg(OPSD("hint", anchor="live"), model="Qwen/Qwen3-8B")
    assert any("`hint`" in w and "answer" in w for w in r.warnings)
    assert not cfg(OPSD("answer", anchor="live"), model="Qwen/Qwen3-8B").warnings


def test_opsd_ema_anchor_is_reported_as_ignored():
    r = cfg(OPSD())  # default anchor ema:0.01
    assert "live policy" in r.ignored["anchor"] and any("anchor" in w for w in r.warnings)


def test_opd_top_k_is_ignored_with_the_reason():
    r = cfg(OPD(f"{RL}@{URL}", top_k=32))
    assert r.ignored["top_k"].startswith("top_k=32: prime-rl scores the teacher's full-vocabulary")


def _tokenizer(path, vocab):
    path.write_text(json.dumps({"model": {"vocab": vocab}, "added_tokens": [
        {"id": len(vocab), "content": "<|end|>"}]}))
    return str(path)


def test_opd_tokenizer_check(tmp_path):
    differ = cfg(OPD(Endpoint(URL, RL, vocab=151936)), student_vocab=128256)
    assert any("tokenizers differ" in w and "151936" in w for w in differ.warnings)
    same = _tokenizer(tmp_path / "a.json", {"a": 0, "b": 1})
    other = _tokenizer(tmp_path / "b.json", {"a": 0, "c": 1})
    ok = cfg(OPD(Endpoint(URL, RL, vocab=same), student_vocab=same))
    assert not any("tokenizers" in w for w in ok.warnings)
    bad = cfg(OPD(Endpoint(URL, RL, vocab=same)), student_vocab=other)
    assert any("1 teacher tokens have another id" in w for w in bad.warnings)
    unknown = cfg(OPD(f"{RL}@{URL}"))
    assert any("tokenizers not compared" in n for n in unknown.notes)
    with pytest.raises(ConfigError, match=r"missing \(`method.teacher.vocab`\): no such file"):
        cfg(OPD(Endpoint(URL, RL, vocab=str(tmp_path / "missing"))), student_vocab=3)


def test_overrides_land_and_are_validated():
    r = cfg(overrides={"trainer.optim.weight_decay": 0.0,
                       "orchestrator.train.source.0.env.taskset.dataset_name": "me/data",
                       "ckpt": None})
    assert r.config["trainer"]["optim"]["weight_decay"] == 0.0
    assert r.config["orchestrator"]["train"]["source"][0]["env"]["taskset"]["dataset_name"] == "me/data"
    assert "ckpt" not in r.config and "override ckpt" in r.reads
    with pytest.raises(ConfigError, match="unknown key `orchestrator.rollouts_per_example`"):
        cfg(overrides={"orchestrator.rollouts_per_example": 8})


def test_writes_atomically_and_refuses_to_overwrite(tmp_path):
    out = tmp_path / "configs" / "rl.toml"
    r = cfg(out=out)
    assert r.path == str(out) and out.read_text() == r.text
    assert r.command == f"uv run rl @ {out}"
    with pytest.raises(ConfigError, match="already exists"):
        cfg(out=out, steps=5)
    assert cfg(out=out, steps=5, overwrite=True).config["max_steps"] == 5
    assert tomllib.loads(out.read_text())["max_steps"] == 5


def test_seq_len_grows_to_hold_the_completion():
    r = cfg(OPD(f"{RL}@{URL}"))  # OPD's 8192 completion tokens + 1024 for the prompt
    assert r.config["seq_len"] == 9216
    assert r.config["orchestrator"]["train"]["sampling"]["max_completion_tokens"] == 8192


def test_a_batch_of_partial_groups_names_the_whole_ones_near_it():
    with pytest.raises(ConfigError, match=r"Fix: batch = 96 or 112$"):
        cfg(batch=100, group_size=16)
    with pytest.raises(ConfigError, match=r"Fix: batch = 16$"):  # below one group: one group
        cfg(batch=1, group_size=16)
