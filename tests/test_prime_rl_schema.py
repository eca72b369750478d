"""validate_config: every verbatim example TOML of prime-rl 559b447 passes; every rejected shape
of prime-rl@559b447 (packages/prime-rl-configs/src/prime_rl/configs/) and its renamed keys fails with a message naming the key.

The examples are copied below from prime-rl@559b447's own example TOMLs (configuration
data from prime-rl's repo: examples/basic/reverse-text/rl.toml and configs/debug/algo/*.toml).
"""

from __future__ import annotations

import pytest

from whileai_core.errors import ConfigError
from whileai_core.prime_rl import validate_config

_ENV = """
[[orchestrator.{part}.source]]
name = "reverse-text"

[orchestrator.{part}.source.env.taskset]
id = "reverse-text"

[orchestrator.{part}.source.env.agent.harness]
id = "null"

[orchestrator.{part}.source.env.agent.runtime]
type = "subprocess"
"""

REVERSE_TEXT_RL = """
max_steps = 20
seq_len = 2048

[model]
name = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"

[monitors.wandb]
project = "reverse-text"
name = "reverse-text"

[orchestrator]
batch_size = 128
group_size = 16

[orchestrator.train.sampling]
max_completion_tokens = 128
""" + _ENV.format(part="train") + """
[trainer.optim]
lr = 3e-6

[ckpt] # Checkpoint at the end of training

[inference]

# PrimeIntellect Qwen3 fine-tune - select its renderer explicitly (the -SFT
# suffix misses the MODEL_RENDERER_MAP exact match).
[orchestrator.renderer]
name = "prime-qwen3"
"""

_DEBUG_HEAD = """
max_steps = 20
seq_len = 2048

[model]
name = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"

[monitors.wandb]
project = "algorithms-debug"
name = "debug-{name}"

[orchestrator]
batch_size = {batch}
group_size = {group}
"""

_DEBUG_TAIL = """
[orchestrator.train.sampling]
max_completion_tokens = 128
""" + _ENV.format(part="train") + """
[orchestrator.eval]
interval = 1
num_examples = 128

[orchestrator.eval.sampling]
max_completion_tokens = 128
""" + _ENV.format(part="eval") + """
[trainer.optim]
lr = 3e-6

{ckpt}
[inference]

[inference.vllm]
gpu_memory_utilization = 0.5
"""

MAX_RL = (_DEBUG_HEAD.format(name="max-rl", batch=128, group=16) + """
[orchestrator.algo]
type = "max_rl"

[orchestrator.renderer]
name = "prime-qwen3"
""" + _DEBUG_TAIL.format(ckpt="[ckpt]"))

OPD = (_DEBUG_HEAD.format(name="opd", batch=128, group=16) + """
[orchestrator.algo]
type = "opd"

[orchestrator.algo.teacher]
name = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL"
base_url = "http://localhost:8001/v1"

# Teacher rolls out over plain chat-completions (no tokens); the renderer backfills them.
[orchestrator.renderer]
name = "prime-qwen3"
""" + _DEBUG_TAIL.format(ckpt="[ckpt]"))

SELF_DISTILL = (_DEBUG_HEAD.format(name="self-distill", batch=32, group=1) + """
# reverse-text's demo lives in the "answer" column.
[orchestrator.algo]
type = "opsd"
demo_key = "answer"

[orchestrator.renderer]
name = "prime-qwen3"
""" + _DEBUG_TAIL.format(ckpt=""))

_POKER_ENV = """
[[orchestrator.{part}.source]]
name = "kuhn-poker"

[orchestrator.{part}.source.env.taskset]
id = "kuhn-poker"

[orchestrator.{part}.source.env.player0.harness]
id = "null"

[orchestrator.{part}.source.env.player0.runtime]
type = "subprocess"

[orchestrator.{part}.source.env.player1.harness]
id = "null"

[orchestrator.{part}.source.env.player1.runtime]
type = "subprocess"
"""

RAE = """
max_steps = 20
seq_len = 4096

[model]
name = "Qwen/Qwen3-0.6B"

[monitors.wandb]
project = "algorithms-debug"
name = "debug-rae"

[orchestrator]
batch_size = 32
group_size = 1

[orchestrator.algo]
type = "rae"

[orchestrator.renderer]
name = "prime-qwen3"

[orchestrator.train.sampling]
max_completion_tokens = 512
""" + _POKER_ENV.format(part="train") + """
[orchestrator.eval]
interval = 1
num_examples = 16

[orchestrator.eval.sampling]
max_completion_tokens = 512
""" + _POKER_ENV.format(part="eval") + """
[trainer.optim]
lr = 3e-6

[ckpt]

[inference]

[inference.vllm]
gpu_memory_utilization = 0.5
"""

EXAMPLES = {"reverse-text/rl": REVERSE_TEXT_RL, "max_rl": MAX_RL, "opd": OPD,
            "self_distill": SELF_DISTILL, "rae": RAE,
            "grpo": MAX_RL.replace('type = "max_rl"', 'type = "grpo"').replace("debug-max-rl",
                                                                                "debug-rl")}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_prime_rl_examples_pass(name):
    check = validate_config(EXAMPLES[name])
    assert check.ok, check.errors
    assert str(check).startswith("OK")


def _edit(old, new, base=REVERSE_TEXT_RL):
    assert old in base
    return base.replace(old, new, 1)


REJECTED = {
    "renamed group size": (_edit("group_size = 16", "group_size = 16\nrollouts_per_example = 16"),
                           "unknown key `orchestrator.rollouts_per_example` (removed in 0.7; use "
                           "`orchestrator.group_size`)"),
    "async level": (_edit("group_size = 16", "group_size = 16\nasync_level = 2"),
                    "`orchestrator.async_level` (removed; use `orchestrator.max_off_policy_steps`)"),
    "max_tokens": (_edit("group_size = 16", "group_size = 16\nmax_tokens = 128"),
                   "`orchestrator.max_tokens` (use `orchestrator.train.sampling.max_completion_tokens`)"),
    "top-level wandb": (REVERSE_TEXT_RL + '\n[wandb]\nproject = "x"\n',
                        "unknown key `wandb` (moved to `[monitors.wandb]`"),
    "v0.8.0 vllm memory": (_edit("[inference]\n", "[inference]\ngpu_memory_utilization = 0.5\n"),
                           "`inference.gpu_memory_utilization` (moved to `[inference.vllm]"),
    "orchestrator lr": (REVERSE_TEXT_RL + "\n[orchestrator.optim]\nlr = 1e-4\n",
                        "`orchestrator.optim` (removed (multi-tenant); use `[trainer.optim] lr`)"),
    "indivisible batch": (_edit("batch_size = 128", "batch_size = 100"),
                          "`batch_size` 100 is not divisible by `group_size` 16"),
    "two batch sizes": (_edit("batch_size = 128", "batch_size = 128\ntoken_batch_size = 4096"),
                        "exactly one of `batch_size` and `token_batch_size`"),
    "inflight below group": (REVERSE_TEXT_RL + "\n[orchestrator.concurrency]\nmax_inflight = 8\n",
                             "`concurrency.max_inflight` 8 is below `group_size` 16"),
    "self_distill type": (REVERSE_TEXT_RL + '\n[orchestrator.algo]\ntype = "self_distill"\n',
                          "type = 'opsd'"),
    "opd without teacher": (REVERSE_TEXT_RL + '\n[orchestrator.algo]\ntype = "opd"\n',
                            "missing required key `orchestrator.algo.teacher`"),
    "teacher without url": (REVERSE_TEXT_RL + '\n[orchestrator.algo]\ntype = "opd"\n'
                            '[orchestrator.algo.teacher]\nname = "m"\n', "explicit `base_url`"),
    "teacher is policy": (REVERSE_TEXT_RL + '\n[orchestrator.algo]\ntype = "opd"\n'
                          'teacher = "policy"\n', "orchestrator.algo.teacher"),
    "frozen source for grpo": (REVERSE_TEXT_RL + '\n[orchestrator.algo.sampling.source]\n'
                               'name = "m"\nbase_url = "http://h:1/v1"\n',
                               "a frozen `sampling.source` is for 'sft' only"),
    "sft without frozen source": (REVERSE_TEXT_RL + '\n[orchestrator.algo]\ntype = "sft"\n',
                                  "needs a frozen `sampling.source`"),
    "rae decay": (REVERSE_TEXT_RL + '\n[orchestrator.algo]\ntype = "rae"\ndecay = 1.0\n',
                  "`orchestrator.algo.decay`: Input should be less than 1"),
    "hot temperature": (_edit("max_completion_tokens = 128", "max_completion_tokens = 128\n"
                              "temperature = 2.5"), "temperature`: Input should be less than or equal to 2"),
    "auto renderer": (_edit('[orchestrator.renderer]\nname = "prime-qwen3"', ""),
                      "is not in prime-rl's renderer map"),
    "shared conflict": (_edit("[trainer.optim]", "[trainer]\nmax_steps = 30\n\n[trainer.optim]"),
                        "shared `max_steps` = 20 conflicts with `trainer.max_steps` = 30"),
    "seq_len conflict": (_edit("batch_size = 128", "batch_size = 128\nseq_len = 4096"),
                         "shared `seq_len` = 2048 conflicts with `orchestrator.seq_len` = 4096"),
    "scheduler too long": (REVERSE_TEXT_RL + '\n[trainer.scheduler]\ntype = "linear"\n'
                           "warmup_steps = 15\ndecay_steps = 10\n", "> max_steps 20"),
    "cosine without steps": (_edit("max_steps = 20\n", "") + '\n[trainer.scheduler]\n'
                             'type = "cosine"\n', "cosine scheduler needs `max_steps`"),
    "lora with nccl": (REVERSE_TEXT_RL + '\n[weight_broadcast]\ntype = "nccl"\n\n'
                       "[trainer.model.lora]\nrank = 8\n", "LoRA with `weight_broadcast.type` 'nccl'"),
    "split key": (_edit('id = "reverse-text"', 'id = "reverse-text"\nsplit = "train"'),
                  "reverse-text's key is `dataset_split`"),
    "icepop loss type": (REVERSE_TEXT_RL + '\n[trainer.loss]\ntype = "icepop"\n',
                         "IcePop is not built in"),
    "old icepop keys": (REVERSE_TEXT_RL + "\n[trainer.loss]\ntoken_mask_low = 0.125\n",
                        "`trainer.loss.token_mask_low` (IcePop-style masking was removed in 0.5"),
    "no trainer": ("\n".join(line for line in REVERSE_TEXT_RL.splitlines()
                             if not line.startswith(("[trainer", "lr ="))),
                   "missing required key `trainer`"),
    "no env": (_edit('id = "reverse-text"\n', 'id = ""\n'), "no env configured"),
    "multi-node without slurm": (REVERSE_TEXT_RL + '\n[deployment]\ntype = "multi_node"\n'
                                 "num_train_nodes = 1\nnum_infer_nodes = 1\n", "needs [slurm]"),
    "too many gpus": (REVERSE_TEXT_RL + "\n[deployment]\ngpus_per_node = 2\nnum_train_gpus = 2\n",
                      "exceed gpus_per_node 2"),
    "eval without source": (REVERSE_TEXT_RL + "\n[orchestrator.eval]\ninterval = 5\n",
                            "at least one [[orchestrator.eval.source]]"),
    "bad toml": ("[model\n", "not valid TOML"),
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_rejected_shapes_fail_with_the_key_named(name):
    text, message = REJECTED[name]
    check = validate_config(text)
    assert not check.ok
    assert any(message in e for e in check.errors), check.errors
    assert str(check).startswith("REJECTED")


def test_vllm_table_passes_unknown_keys_through_like_prime_rl():
    assert validate_config(REVERSE_TEXT_RL + "\n[inference.vllm]\nenforce_eager = true\n").ok


def test_none_string_means_none():
    assert validate_config(_edit("seq_len = 2048", 'seq_len = "None"')).ok


def test_paths_and_dicts(tmp_path):
    path = tmp_path / "rl.toml"
    path.write_text(REVERSE_TEXT_RL)
    check = validate_config(path)
    assert check.ok and check.source == str(path)
    assert validate_config(str(path)).ok
    with pytest.raises(ConfigError, match="not found"):
        validate_config(tmp_path / "missing.toml")
    assert not validate_config({"orchestrator": {}}).ok
    # one-line TOML text is text, not a path
    assert validate_config("[trainer]").errors == ["missing required key `orchestrator`"]
