"""The recipes' own defaults, each with its source; one the core reads too stays in
``whileai_core.defaults``. Each UPPER_CASE constant is followed by ``_source(NAME, text)``
(``tests/test_defaults.py`` fails on a constant without one).
"""

from __future__ import annotations

SOURCES: dict[str, str] = {}
_source = SOURCES.__setitem__


# --- TRL GRPO + LoRA (recipes/grpo) ---------------------------------------------------------------

GRPO_LEARNING_RATE = 5e-6
_source("GRPO_LEARNING_RATE", "inferred: the seed's Dr.GRPO arm raised the learning rate to 1e-5 "
        "to compensate, so the default sat below it; convention, untested at other values")

GRPO_NUM_ITERATIONS = 1
_source("GRPO_NUM_ITERATIONS",
        "TRL 1.16 GRPOConfig.num_iterations default (the GRPO paper's mu, Shao et al. 2024, "
        "arXiv:2402.03300, Alg. 1); at 1 the importance ratio is exactly 1 and the clip never "
        "binds, so --epsilon-high requires >= 2")

GRPO_LORA_ALPHA = 32
_source("GRPO_LORA_ALPHA", "convention: alpha = 2 x rank")

GRPO_PROMPT_SEED = 0
_source("GRPO_PROMPT_SEED", "seed TRL GRPO recipe: --seed 0 fixes the prompt set and the holdout")

GRPO_BALANCE_MAX_REPEATS = 6
_source("GRPO_BALANCE_MAX_REPEATS", "seed TRL GRPO recipe: --balance repeats each prompt at most six times")

GRPO_DRIFT_LENGTH_RATIO = 2.0
_source("GRPO_DRIFT_LENGTH_RATIO", "convention, untested: flag a run whose mean completion length "
        "doubles (or halves) against its first logged step")

GRPO_RUNS_VOLUME = "whileai-grpo-runs"
_source("GRPO_RUNS_VOLUME", "convention: one Modal volume per recipe holds adapters and holdout rows")


# --- TRL DPO + LoRA (recipes/dpo) -----------------------------------------------------------------

DPO_BETA = 0.1
_source("DPO_BETA", "TRL 1.16 DPOConfig.beta default (Rafailov et al. 2023 use 0.1)")

DPO_LEARNING_RATE = 5e-6
_source("DPO_LEARNING_RATE", "convention, untested: the GRPO recipe's rate, so the two compare")

DPO_NEGATIVE_SHARE = 0.0
_source("DPO_NEGATIVE_SHARE", "convention: constructed negatives are off unless asked for")

DPO_MAX_NEGATIVE_SHARE = 0.5
_source("DPO_MAX_NEGATIVE_SHARE", "convention: constructed pairs never outnumber on-policy ones")

DPO_RUNS_VOLUME = "whileai-dpo-runs"
_source("DPO_RUNS_VOLUME", "convention: one Modal volume per recipe holds adapters and holdout rows")


# --- TRL SFT + LoRA (recipes/sft) -----------------------------------------------------------------

SFT_LEARNING_RATE = 2e-4
_source("SFT_LEARNING_RATE", "QLoRA (Dettmers et al. 2023, arXiv:2305.14314, app. B) trained LoRA "
        "adapters of 7B-13B models at 2e-4; TRL 1.16 SFTConfig's own 2e-5 is a full fine-tuning "
        "rate. Convention, untested at 1.5B")

SFT_RUNS_VOLUME = "whileai-sft-runs"
_source("SFT_RUNS_VOLUME", "convention: one Modal volume per recipe holds adapters and holdout rows")

SFT_DEMO_ATTEMPTS = 2
_source("SFT_DEMO_ATTEMPTS", "convention: the refund demo's program teacher writes 2 attempts per "
        "ask (one that follows the policy, one that breaks it), so select_sft has a choice")


# --- the held-out sampler (recipes/holdout.py) ----------------------------------------------------

TRL_SAMPLING = {"temperature": 1.0, "top_p": 1.0, "top_k": 0, "min_p": None,
                "repetition_penalty": 1.0}
_source("TRL_SAMPLING",
        "TRL 1.16 GRPOConfig defaults (trl/trainer/grpo_config.py: temperature 1.0, top_p 1.0, "
        "top_k 0, min_p None, repetition_penalty 1.0), which GRPOTrainer passes to every "
        "generate() it trains on (trl/trainer/grpo_trainer.py:1155-1173); the recipes set none "
        "but the temperature (1.0). The held-out sampler passes the same, so a checkpoint's own "
        "generation_config (Qwen2.5 Instruct: repetition_penalty 1.05-1.1, top_k 20, top_p 0.8) "
        "cannot make the measured policy differ from the trained one")
