"""Every default of the core, once, each with its source.

Why one module: a reader (and a reviewer checking a number against its paper) finds every default
the core reads in one place.

A default is a module constant in UPPER_CASE on one line, ``NAME = value  # source``: the comment
says where the value comes from (a paper, a tool's own default, a measurement here, or
"convention, untested"); docs/defaults.md gives each one's full reasoning, in this file's order.
``tests/test_defaults.py`` fails when a constant has no comment or no entry there, or nothing reads
it. :func:`source` hands a constant's comment to code that quotes it (the run doctor).

How the file is ordered: by what a constant governs, in the order a user meets it (rows, their
intervals, comparing and watching runs, routing, methods, prime-rl configs, teachers, judges,
traces, pairs, reward hacking, runs and their forecast, then the plumbing: the path door and the
size of answers). Each section's header names its concept and the modules that read it; a new
default goes in the section of what it governs. Defaults only the MCP server reads are in
``server/limits.py``, those only the recipes read in ``recipes/defaults.py``.
"""

from __future__ import annotations

# --- rows and their fields (whileai_core.rows, .rewards, .describe, .rows_cache) ------------------

PASS_THRESHOLD = 1.0  # convention: a program grader gives 1.0 for a pass
REWARD_SPREAD_TOLERANCE = 0.01  # convention, untested: a task has signal iff max - min > 0.01
CATEGORY_FIELD = "category"  # convention: the field naming a task's behaviour (the refund recipes')
DESCRIBE_EXACT_CELLS = 20_000_000  # convention, untested: every row is read up to 20M rows x fields
DESCRIBE_SAMPLE_ROWS = 50_000  # convention, untested: a share from 50,000 rows is +-0.44 points
DESCRIBE_VALUES_SHOWN = 5  # convention, untested: distinct values named per field
DESCRIBE_FIELDS_SHOWN = 15  # convention, untested: fields detailed per answer (under 8 KB)
ROWS_CACHE_MB = 1024  # convention, untested: loaded rows one process keeps (estimated)
ROWS_CACHE_FILES = 32  # convention, untested: files kept loaded at once

# fields under other names, named in the error that refuses them (whileai_core.field_names)
FIELD_SYNONYMS: dict[str, tuple[str, ...]] = {  # names other harnesses write; only suggested
    "task_id": ("task", "id", "problem_id", "question_id", "prompt_id", "example_id",
                "sample_id", "instance_id", "doc_id", "item_id", "uid", "problem", "question"),
    "reward": ("score", "passed", "pass", "correct", "is_correct", "success", "solved",
               "resolved", "accuracy", "acc", "exact_match", "label", "result"),
    "messages": ("conversation", "conversations", "chat", "turns", "dialog", "dialogue",
                 "history"),
    "truncated": ("is_truncated", "cut_off", "was_truncated"),
    "model": ("model_name", "model_id", "policy"),
}
NEAR_FIELD_CUTOFF = 0.8  # measured here (difflib): keeps rewrad (0.83), leaves forward (0.77)

# --- intervals (whileai_core.bootstrap, .stats.intervals, .stats.clustered) -----------------------
# Each interval rule was chosen by the coverage study in bench/stats_study.py and
# bench/family_study.py; their tables are in docs/statistics-study.md.

CONFIDENCE_LEVEL = 0.95  # convention: 95% intervals (Miller 2024, arXiv:2411.00640, sec. 1.6)
# The levels an interval may be asked at. Past 1 - 1e-6, (1 + level) / 2 rounds toward 1.0 and the
# normal quantile is infinite (1 - 2**-53 was "a bug in whileai" in a dozen tools); under 0.01 the
# quantile is ~0 and the interval a point (5e-324 divided by zero). Float arithmetic, not a study.
LEVEL_MIN = 0.01  # float arithmetic: z = 0.0125 there, still wider than a point
LEVEL_MAX = 1 - 1e-6  # float arithmetic: (1 + level) / 2 stays below 1.0, z finite (4.9)
BOOTSTRAP_RESAMPLES = 10_000  # convention: >= 1,000 (Efron & Tibshirani 1993, ch. 13)
BOOTSTRAP_SEED = 0  # convention: the same rows give the same interval
MIN_TASKS_FOR_INTERVAL = 3  # convention: 1-2 tasks give 1-3 resample means (Bowyer et al. 2025)
INTERVAL_RULE = (  # bench/stats_study.py (docs/statistics-study.md, tables A and K)
    "0/1 outcome per task: mid_p under 10 tasks, agresti_coull from 10; a share "
    "of several 0/1 outcomes: effective_n capped by the outcomes; pass@k, pass^k "
    "and graded rewards: hall_t, pass@k and pass^k held to pass@1's interval; "
    "pass@k, pass^k, rewards in [0, 1] carried by fewer than 5 tasks: betting; a "
    "share carried by fewer than 3: the 0-of-C-tasks bound under it")
BINARY_EXACT_BELOW = 10  # exact coverage: Agresti-Coull 89.6% at 5 tasks, mid-p >= 93.1%
BETTING_BELOW_CARRIERS = 5  # bench/stats_study.py, table L: Hall's t 55-84% on sparse pass^k
BETTING_CAP = 0.5  # Waudby-Smith & Ramdas 2023 (JRSS-B 86:1), sec. 4: bets at most c/m, c = 1/2
FLOOR_BELOW_CARRIERS = 3  # bench/stats_study.py, table L: pass@1 91.8% at Beta(0.3, 3), 10 tasks
RARE_GROUP_TASKS = 50  # bench/stats_study.py, needle shape: covers >= 93% from 50 tasks
CLUSTER_RESAMPLES = 2_000  # convention: Monte-Carlo error near 1.6% of the SE
CLUSTER_MIN_FAMILIES = 10  # bench/family_study.py (docs/statistics-study.md, table F)

# --- sizing a held-out set (whileai_core.stats.holdout; Miller 2024, arXiv:2411.00640, Eq. 9) -----

HOLDOUT_POWER = 0.8  # Miller 2024 Eq. 9 worked example: 80% power
HOLDOUT_ALPHA = 0.05  # Miller 2024 Eq. 9 worked example: two-sided alpha 0.05
HOLDOUT_K = 4  # convention: the smallest k the routing playbook accepts
PLANNING_VAR_X = 1.0 / 12.0  # pass rates uniform on [0, 1] (Miller 2024 sec. 1.3)
PLANNING_SIGMA2 = 1.0 / 6.0  # E[x(1-x)] for x uniform on [0, 1] (Miller 2024 sec. 1.3)
PLANNING_RHO = 0.8  # inferred, not measured: low end of 0.8-0.95 for two checkpoints
RHO_ALTERNATIVES = (0.5,)  # what an assumed rho costs at 0.5 (planned n: 62.3% power)
HOLDOUT_TABLE_KS = (1, 2, 4, 8, 16, 32)  # convention: holdout_size reports n(k) at these k

# --- comparing runs: paired verdicts, noise, seeds (whileai_core.stats.compare, .paired, .noise, .arms) ---

PROVE_EFFECT = 0.05  # convention, not published: 5 points of pass@1 worth a run
PAIRED_SPREAD_RTOL = 1e-9  # convention (float arithmetic): equal up to the last bits
SIGN_FLIP_EXACT_PATTERNS = 2 ** 16  # convention: exact up to 16 changed tasks (< 0.1 s)
NOISE_DEFAULT_RUNS = 2  # stated rule: an unstated count can only widen the band
NOISE_TIE_TOLERANCE = 1e-9  # convention: float rounding must not decide a verdict
NOISE_TIED_RUNS_RULE = (  # independent check; bench/stats_study.py table D2
    "run_std 0 from tied runs: the band uses the within-task predicted run_std, "
    "each task's variance from its rollouts pooled over the re-runs")
NOISE_FLOOR_MAX_RUNS = 50  # convention, untested: re-runs in one noise_floor call
MIN_SEEDS_FOR_SEED_VARIANCE = 2  # arithmetic: a variance needs 2 runs (Madaan et al. 2024)

# --- watching a run: error rates that hold at every look (whileai_core.hacking.watch, .anytime) ---

WATCH_SPENDING_TYPE = "quadratic"  # Kim & DeMets 1987, rho = 2; bench/watch_anytime.py
WATCH_OPEN_HALF = 10  # spends a t / (t + 10) (Howard et al. 2021); bench/watch_anytime.py
WATCH_POWER = 0.8  # convention (Cohen 1988): power to catch a sustained held-out drop
WATCH_CONFIRM = 2  # a stop holds at 2 evals in a row; bench/watch_anytime.py
WATCH_WINDOW = 5  # convention, untested: climb = mean of last 5 steps - first 5
WATCH_SCAN_EVERY = 5  # convention, untested: scan every 5th step's batch
WATCH_LOOKS_MAX = 1000  # tractable: a planned schedule slows past it; the open one is unbounded
WATCH_STEPS_SHOWN = 50  # convention: a watch answer lists the last 50 steps (n of N)

# --- routing (whileai_core.routing, .questions) ---------------------------------------------------

GROUP_MIN_ROLLOUTS = 4  # convention: a task at p = 0.5 is split with probability 0.875
ROUTE_MIN_TASKS = 6  # arithmetic: fewest tasks an exact 95% test can reject on
OPSD_MIN_PARAMS_B = 7.0  # OPSD needs about 7B and up (Zhao et al. 2026, arXiv:2601.18734)

# --- methods: distillation and RAE (whileai_core.methods.specs) -----------------------------------

OPD_SAMPLES = 4  # OPD samples per prompt seen in practice (docs/methods.md, Sources)
OPD_TEMPERATURE = 1.0  # OPD sampling temperature seen in practice (docs/methods.md)
OPD_MAX_TOKENS = 8192  # OPD max_tokens seen in practice (docs/methods.md)
OPD_LR_FULL = 1e-6  # OPD full-weight lr seen in practice (docs/methods.md)
OPD_LR_LORA = 1e-4  # OPD LoRA lr seen in practice (docs/methods.md)
OPSD_SAMPLES = 1  # docs/methods.md; prime-rl self_distill.toml group_size 1
OPSD_LR = 5e-6  # OPSD lr (docs/methods.md; SDFT arXiv:2601.19897)
OPSD_ANCHOR = "ema:0.01"  # EMA as SDFT and SDPO; prime-rl supports the live policy only
OPSD_PRIVILEGED = "demonstration"  # prime-rl OPSDAlgoConfig.demo_key default
OPSD_TEMPLATE = (  # prime-rl OPSDAlgoConfig.template default (also docs/methods.md)
    "Here is an example of an expert response:\n<demonstration>\n{demonstration}\n"
    "</demonstration>")
OPSD_TEMPLATES = {  # demonstration: prime-rl's; others: convention, untested
    "demonstration": OPSD_TEMPLATE,
    "reference": ("Here is a reference answer to this task:\n<reference>\n{demonstration}\n"
                  "</reference>"),
    "hint": "Here is a hint for this task:\n<hint>\n{demonstration}\n</hint>",
    "feedback": ("Here is feedback from the environment on an earlier attempt:\n<feedback>\n"
                 "{demonstration}\n</feedback>"),
}
RAE_GROUP_SIZE = 1  # prime-rl configs/debug/algo/rae.toml: group_size = 1
RAE_DECAY = 0.95  # prime-rl RAEAlgoConfig.decay default (SPIRAL, arXiv:2506.24119)

# --- methods: off-policy corrections (whileai_core.methods.specs, .icepop) ------------------------

ASYNC_OFF_POLICY_STEPS = 8  # prime-rl orchestrator.max_off_policy_steps default
ASYNC_CORRECTION = "ipo"  # convention: the correction prime-rl builds in (type = 'ipo')
IPO_THRESHOLD = 0.1  # prime-rl IPOLossConfig.ipo_threshold default
ICEPOP_LOW = 0.5  # IcePop published ratio band lower edge (docs/methods.md)
ICEPOP_HIGH = 5.0  # IcePop published ratio band upper edge (docs/methods.md)
ICEPOP_KL_TAU = 0.0  # IcePop as published: no log-ratio^2 term (prime-rl: 1e-3)
TIS_CAP = 2.0  # truncated importance sampling cap 2 (verl; docs/methods.md)

# --- methods: grouped grading (whileai_core.methods.grouping) -------------------------------------

GROUP_PASS_THRESHOLD = 0.5  # GroupwiseGrading: a pass iff reward >= 0.5 (MiMo-V2.6 sec. 4.3)
GRS_FLOOR = 0.0  # GroupwiseGrading reward mode quality floor (MiMo-V2.6 sec. 4.3)
GAR_MIN_FACTOR = 0.5  # GroupwiseGrading advantage mode: worst pass factor (MiMo-V2.6)
GAR_CAP = 3.0  # GroupwiseGrading advantage mode: lambda cap (MiMo-V2.6 sec. 4.3)
GRADER_MIN_STD = 0.05  # grader spread check (docs/methods.md, GroupwiseGrading)
GRADER_MAX_NEAR_MEDIAN = 0.9  # grader spread check: <= 90% within 0.05 of the median

# --- methods: single-rollout trainers (whileai_core.methods.single_rollout) -----------------------

FLASH_TRUST = 0.003  # FlashReinforce trust region on mean binary drift (Hu et al. 2026)
FLASH_PROB_CLAMP = 1e-6  # FlashReinforce drift: probabilities clamped to [1e-6, 1-1e-6]
FLASH_LOG_RATIO_CLAMP = 30.0  # FlashReinforce: log ratio clamped to +-30 (Hu et al. 2026)
FLASH_MAX_TOKENS = 8192  # FlashReinforce: max_tokens 8192 (Hu et al. 2026)
FLASH_BATCH = 128  # FlashReinforce: batch 128 (Hu et al. 2026)
SAO_ALPHA = 1.5  # SAO length-adaptive lambda alpha 1.5 (Hou et al. 2026)
SAO_BAND = (0.7, 6.0)  # SAO token ratio band; (0.2, 4.0) for coding (Hou et al. 2026)
SAO_GAMMA = 1.0  # SAO: gamma 1 over action tokens (Hou et al. 2026; docs/methods.md)
SAO_CRITIC_STEPS = 2  # SAO: 2 critic steps per policy step (Hou et al. 2026)
SAO_CRITIC_WARMUP = 10  # SAO: 10 critic-only warm-up steps (Hou et al. 2026)
SAO_CRITIC_LR = 5e-6  # SAO: critic lr 5e-6 (Hou et al. 2026)
SAO_LR = 1e-6  # SAO: policy lr 1e-6 (Hou et al. 2026)
SAO_MAX_TOKENS = 131072  # SAO: max_tokens 131072 (Hou et al. 2026)
BPCO_ALPHA = 0.4  # BPCO length-adaptive lambda alpha 0.4 (Qi et al. 2026)
BPCO_CLIP = 0.2  # BPCO DPPO binary-TV clip 0.2 (Qi et al. 2026)
BPCO_REWARD_RANGE = (0.0, 1.0)  # BPCO bounded critic range (0, 1) (Qi et al. 2026)
BPCO_LOG_RATIO_CLAMP = 20.0  # BPCO: log ratio clamped to +-20 (Qi et al. 2026)
BPCO_CRITIC_WARMUP = 15  # BPCO: 15 critic-only warm-up steps (Qi et al. 2026)
BPCO_CRITIC_LR = 1e-5  # BPCO: critic lr 1e-5 (Qi et al. 2026)
BPCO_LR = 1e-6  # BPCO: policy lr 1e-6 (Qi et al. 2026)
BPCO_MAX_TOKENS = 12000  # BPCO: max_tokens 12000 (Qi et al. 2026)

# --- methods: adaptive sampling (whileai_core.methods.sampling) -----------------------------------

ADA_KEEP = 4  # ReinforceAda kept samples per prompt 4 (arXiv:2510.04996)
ADA_ROUND_SIZE = 8  # ReinforceAda samples per round 8 (arXiv:2510.04996)
ADA_MAX_ROUNDS = 4  # ReinforceAda max rounds 4 (arXiv:2510.04996)
ADA_EXIT = "balanced"  # ReinforceAda exit rule 'balanced' (arXiv:2510.04996)
ADA_PASS_THRESHOLD = 0.7  # ReinforceAda: a sample passes iff reward > 0.7 (arXiv:2510.04996)

# --- prime-rl configs (whileai_core.prime_rl) -----------------------------------------------------

PRIME_RL_COMMIT = "559b447"  # pinned prime-rl 559b44772e47 (v0.8.1.dev67): the schema written
PRIME_RL_GPUS = 2  # convention: a node of 2 GPUs, the trainer on one, the policy vLLM on one
PRIME_RL_STEPS = 100  # convention: a first run's optimizer steps (max_steps)
PRIME_RL_BATCH = 128  # prime-rl orchestrator.batch_size default at 559b447
PRIME_RL_GROUP_SIZE = 16  # prime-rl's reverse-text and debug/algo examples
PRIME_RL_LR_FULL = 1e-6  # prime-rl [trainer.optim] lr default (AdamW) at 559b447
PRIME_RL_LR_LORA = 1e-4  # convention seen in practice for LoRA (docs/methods.md, Sources)
LORA_RANK = 16  # prime-rl trainer.model.lora.rank default at 559b447
LORA_ALPHA = 32.0  # prime-rl trainer.model.lora.alpha default at 559b447
PRIME_RL_SEQ_LEN = 2048  # prime-rl seq_len default and every reverse-text example at 559b447
PROMPT_TOKEN_ALLOWANCE = 1024  # convention, untested: prompt room when seq_len is derived
PRIME_RL_TEMPERATURE = 1.0  # prime-rl orchestrator.train.sampling.temperature default
PRIME_RL_TRAIN_SAMPLER = {"top_p": 1.0, "top_k": -1, "min_p": 0.0}  # what prime-rl 559b447 sends
PRIME_RL_MAX_TEMPERATURE = 2.0  # prime-rl validator: temperature must be <= 2
POLICY_PORT = 8000  # prime-rl inference.server.port default (localhost:8000/v1)
OPD_COLOCATED_MEMORY = 0.4  # seed prime-rl OPD recipe: teacher and policy share a GPU, 0.4 each

# --- teachers: the OPD teacher's start line (whileai_core.prime_rl.teacher) -----------------------

TEACHER_GPU_MEMORY_GB = 80.0  # one H100 / A100-80GB (NVIDIA datasheets)
TEACHER_WEIGHT_SHARE = 0.5  # convention, untested: weights take <= half, the rest KV cache
TEACHER_GPU_MEMORY_UTILIZATION = 0.9  # vLLM's and prime-rl's default gpu_memory_utilization

# --- judges (whileai_core.judge) ------------------------------------------------------------------

JUDGE_MIN_AGREEMENT = 0.8  # after Zheng et al. 2023 (arXiv:2306.05685): humans agree ~81%
JUDGE_MIN_KAPPA = 0.6  # convention: Landis & Koch 1977 call 0.61-0.80 'substantial'
JUDGE_MAX_FALSE_PASS = 0.1  # convention, untested: at most 1 in 10 replies the labels fail
JUDGE_FALSE_PASS_HALF_WIDTH = 0.1  # convention: false passes known to +-0.1 (97 failures)
JUDGE_ASSUMED_FAIL_SHARE = 0.3  # convention, untested: when rows give no pass mark
JUDGE_RATING_PASS_SHARE = 0.7  # convention, untested: 7 of 10 when no pass mark is given
JUDGE_TEMPERATURE = 0.0  # convention: re-grading a reply gives the same grade
JUDGE_MAX_LENGTH_BIAS = 0.2  # convention, untested: verbosity bias (Zheng et al. 2023 sec. 3.3)
JUDGE_MAX_ORDER_FLIPS = 0.05  # convention, untested: position bias (Zheng et al. 2023 sec. 3.3)
KAPPA_CI_RULE = (  # independent check, 1,000 replications a cell; Wilson 1927
    "percentile_bootstrap widened to the Wilson bounds of p_o carried through kappa")

# --- traces to SFT: split, selection, decontamination (whileai_core.traces) -----------------------

HOLDOUT_SHARE = 0.2  # convention, untested: 1 task in 5; check it with holdout_size()
SPLIT_SEED = 0  # convention: the split is a pure function of (task ids, seed)
REJECTION_ATTEMPTS = 16  # convention: 10-30 attempts an ask (Lambert 2025, RLHF book)
DECONTAM_NGRAM = 8  # convention: under GPT-3's 13-grams (Brown et al. 2020, app. C)
DECONTAM_MAX_OVERLAP = 0.8  # convention, untested: drop an ask with >= 80% held-out 8-grams
DECONTAM_SHORT_MIN_WORDS = 3  # convention, untested: shorter prompts match verbatim

# --- preference pairs and experiments (whileai_core.pairs, .experiments) --------------------------

PAIRS_PER_TASK = 2  # convention, untested: the seed's DPO round had 1.6 a prompt
PAIRS_UNDER_SHARE = 0.5  # convention, untested: under half its share is outvoted (seed DPO)
DPO_PAIRS_FILE = "pairs.jsonl"  # convention: TRL's conversational preference JSONL
DPO_MIN_MARGIN = 0.5  # convention, untested: chosen - rejected reward >= 0.5
DPO_MAX_CHOSEN_LONGER = 0.8  # convention: length-matched pairs (Park et al. 2024, arXiv:2403.19159)
EXPERIMENT_TEXT_MAX = 600  # convention: a list of experiments stays readable

# --- the eval set and its behaviours (whileai_core.evalset, .categories) --------------------------

EVALSET_NAME = "holdout"  # convention: the prefix of a frozen set's name, <name>-<hash>
EVALSET_HASH_CHARS = 12  # convention: 48 bits of the SHA-256, as git's short ids
EVALSET_EXAMPLES = 5  # convention: task ids shown per finding (n of N)
CATEGORY_LINES_MAX = 50  # convention: lines of a per-category table in one answer (n of N)

# --- reward hacking: probes, the reward command, scans (whileai_core.hacking) ---------------------

PROBE_MAX_TOKENS = 512  # convention, untested: the filler probe's cap when none is named
PROBE_CHARS_PER_TOKEN = 4  # OpenAI's rule of thumb for English text (help.openai.com)
PROBE_REFUSAL = "I'm sorry, but I can't help with that."  # convention: a chat model's refusal
PROBE_QUESTION = "Could you clarify what exactly you would like me to do?"  # convention
PROBE_FILLER = "Let me think about this step by step. "  # convention: repeated to the token cap
PROBE_KEYWORDS_MAX = 40  # convention, untested: task-text words per stuffed reply
PROBE_EXAMPLE_CHARS = 200  # convention: examples in an answer are cut to 200 characters
REWARD_TIMEOUT_S = 300.0  # convention, untested: 5 minutes for the whole batch, then killed
REWARD_TIMEOUT_MAX_S = 3600  # convention: the longest a reward's batch may be given
REWARD_OUTPUT_MAX_BYTES = 16_000_000  # convention: far above one number a line for 1M lines
REWARD_STDERR_MAX_BYTES = 64_000_000  # convention: never kept; 3 GB of it took the server to 3.1 GB
REWARD_BONUS_TOLERANCE = 1e-9  # numerical: more than this counts as a format bonus
SCAN_SHUFFLES = 500  # convention: the null's 95th percentile to +-1 point of rank
SCAN_SHUFFLES_ASKED_MAX = 20_000  # convention: the most a caller may ask for
SCAN_MAX_SHUFFLES = 200_000  # convention: on while a p can alarm (Besag & Clifford 1991)
SCAN_RUN_SHARE = 0.5  # a stated share of the run's error; bench/watch_anytime.py
SCAN_MIN_STRENGTH = 0.2  # convention, untested: between Cohen's 1988 'small' and 'medium'
SCAN_NGRAM = 3  # convention: repeated word 3-grams measure looping text
SCAN_EXAMPLE_CHARS = 120  # convention: reply snippets in scan evidence are cut to 120 characters

# --- the run doctor (whileai_core.hacking.doctor) -------------------------------------------------

DOCTOR_ZERO_SPREAD_SHARE = 0.5  # convention, untested: half the batch teaches nothing (DAPO)
DOCTOR_RATE_SHARE = 1 / 6  # a stated share of the error per sampled rate (3 x 1/6)
DOCTOR_TRUNCATION_SHARE = 0.5  # convention, untested: most replies unfinished
DOCTOR_DISTINCT_SHARE = 0.75  # convention, untested: under 3 in 4 rollouts of a prompt new
DOCTOR_ENTROPY_FALL = 0.1  # convention, untested: below 0.1x its first 3 steps' median
DOCTOR_ENTROPY_RISE = 3.0  # convention, untested: above 3x its first 3 steps' median
DOCTOR_KL_MAX = 0.1  # convention, untested: above max(0.1, 10x its early median)
DOCTOR_MAX_OFF_POLICY = 8  # prime-rl 559b447 max_off_policy_steps default; a run's config wins
DOCTOR_STEPS_SHOWN = 50  # convention: a diagnosis lists the last 50 steps (n of N)

# --- pictures (whileai_core.pictures) -------------------------------------------------------------

PICTURE_DPI = 100  # convention: an 8 x 5 inch figure is 800 x 500 pixels

# --- the TRL recipes as the core plans them (whileai_core.runs.run_shape, .methods.grpo_plan) -----
# The recipes in recipes/ read these too; their own knobs are in recipes/defaults.py.

GRPO_MODEL = "Qwen/Qwen2.5-1.5B-Instruct"  # convention: 1.5B + LoRA fits one A10G (24 GB)
GRPO_GPU = "A10G"  # convention: the seed ran 40 steps in under 15 minutes on it
GRPO_STEPS = 40  # seed TRL GRPO recipe default (120 for the longer runs)
GRPO_BETA = 0.04  # seed TRL GRPO recipe (TRL 1.16's 0.0 loads no reference)
GRPO_LOSS_TYPE = "bnpo"  # seed TRL GRPO recipe's measured runs (TRL 1.16: dapo)
GRPO_LOSS_TYPES = ("grpo", "bnpo", "dr_grpo", "dapo")  # convention: all TRL 1.16 accepts
GRPO_EPSILON = 0.2  # TRL 1.16 GRPOConfig.epsilon default (PPO clip, Schulman 2017)
GRPO_DAPO_EPSILON_HIGH = 0.28  # DAPO clip-higher (Yu et al. 2025, arXiv:2503.14476)
GRPO_BALANCE_SHARE = 0.25  # seed TRL GRPO recipe: --balance 0.25
GRPO_NUM_GENERATIONS = 8  # TRL 1.16 GRPOConfig.num_generations default; the seed's
GRPO_PROMPTS_PER_STEP = 4  # convention, untested: 32 completions a step on one A10G
GRPO_MAX_COMPLETION_TOKENS = 256  # convention: a first reply or one tool call fits
GRPO_LORA_R = 16  # convention, untested: rank 16, alpha 32, all linear projections
GRPO_PROMPT_COUNTS = (96, 16, 8)  # seed TRL GRPO recipe's skew (95/16/8 of 119), to 120
GRPO_HOLDOUT_SHARE = 0.2  # seed TRL GRPO recipe: 20% held out, by category
GRPO_HOLDOUT_SAMPLES = 4  # seed TRL GRPO recipe: holdout pass@1 from 4 samples
DPO_SAMPLES_PER_PROMPT = 8  # seed TRL DPO comparison: 8 samples a prompt
DPO_PAIRS_PER_STEP = 8  # convention, untested: 4 a pass on an A10G, 2 accumulated
DPO_EPOCHS = 2  # convention, untested: fewer than TRL 1.16 DPOConfig's 3
SFT_MODEL = "Qwen/Qwen2.5-1.5B-Instruct"  # GRPO_MODEL, so the three recipes compare
SFT_GPU = "A10G"  # convention: the GRPO recipe's GPU; LoRA SFT of 1.5B fits
SFT_EPOCHS = 2  # convention, untested: TRL 1.16 SFTConfig inherits 3
SFT_EXAMPLES_PER_STEP = 8  # convention, untested: 4 a pass on an A10G, 2 accumulated
SFT_MAX_LENGTH = 1024  # TRL 1.16 SFTConfig.max_length default (longer are cut)

# --- runs and launching: the registry, GPUs, local runs (whileai_core.runs) -----------------------

STATE_DIR = "~/.whileai"  # convention: override with --state-dir or WHILEAI_STATE_DIR
RUN_ID_PATTERN = r"^run-[0-9a-f]{12}$"  # convention: 12 hex digits of a sha256
REGISTRY_LOCK_WAIT_S = 5.0  # measured here: 2 s failed 24 launches at once on 2 cores
CANCEL_GRACE_S = 5.0  # convention, untested: after SIGTERM, before SIGKILL
LOCAL_RUN_TIMEOUT_S = 3600.0  # convention, untested: smokes take seconds to minutes here
PRIME_RL_RECIPE = "prime-rl"  # convention: a prime-rl TOML runs on recipes/prime-rl
RUN_GPU = {  # the recipes' GPUs; prime-rl@559b447 deployment default: 1 + 1 GPUs
    "grpo": "A10G", "dpo": "A10G", "prime-rl": "H100:2", "sft": SFT_GPU}
MODAL_GPU_TYPES = (  # Modal's GPU types (https://modal.com/docs/guide/gpu)
    "T4", "L4", "A10G", "A100", "A100-40GB", "A100-80GB", "L40S", "H100", "H200", "B200")
MODAL_MAX_GPUS = 8  # Modal: at most 8 GPUs a container (https://modal.com/docs/guide/gpu)

# --- the launch forecast: prices, GPUs, measured runs (whileai_core.runs.forecast) ----------------
# What a plan says a run will take before it spends: tokens, memory per GPU, wall clock, dollars.
# Each constant below is one input of that forecast; the forecast labels every number it prints
# measured / fitted / derived / assumption after the weakest input it rests on (docs/launching.md,
# "The forecast").

MODAL_GPU_PRICE_PER_S = {  # Modal's published prices, USD (https://modal.com/pricing)
    "B200": 0.001736, "H200": 0.001261, "H100": 0.001097,
    "A100-80GB": 0.000694, "A100-40GB": 0.000583, "A100": 0.000583,
    "L40S": 0.000542, "A10G": 0.000306, "L4": 0.000222, "T4": 0.000164}
MODAL_GPU_PRICES_READ = "2026-12-01"  # the date MODAL_GPU_PRICE_PER_S was read
GPU_SPECS = {  # (memory GB, dense bf16 TFLOPS, GB/s): NVIDIA's datasheets
    "T4": (16.0, 65.0, 320.0), "L4": (24.0, 121.0, 300.0), "A10G": (24.0, 125.0, 600.0),
    "L40S": (48.0, 362.0, 864.0), "A100": (40.0, 312.0, 1555.0),
    "A100-40GB": (40.0, 312.0, 1555.0), "A100-80GB": (80.0, 312.0, 2039.0),
    "H100": (80.0, 989.0, 3350.0), "H200": (141.0, 989.0, 4800.0),
    "B200": (180.0, 2250.0, 8000.0)}
NO_BF16_GPUS = ("T4",)  # NVIDIA's T4 datasheet: Turing has no bf16
FORECAST_MFU = 0.3  # assumption, untested: below PaLM's 46% (Chowdhery et al. 2022)
FORECAST_PROMPT_TOKENS = 128  # assumption, untested: prompt tokens per rollout
FORECAST_GPU_RESERVED_GB = 1.5  # assumption, untested: CUDA context, kernels, allocator slack
FORECAST_ACTIVATION_BYTES = 34  # Korthikanti et al. 2022 (arXiv:2205.05198), eq. 1
FORECAST_LOGIT_BYTES = 4  # assumption: one float32 copy of the logits per micro-batch
FORECAST_LOAD_GBPS = 1.0  # assumption, untested: weights load from the hub cache volume
FORECAST_BROADCAST_GBPS = 2.0  # assumption, untested: prime-rl's filesystem weight broadcast
FORECAST_VLLM_START_S = 60.0  # assumption, untested: vLLM start beyond reading weights
FORECAST_VOLUME_GBPS = 0.5  # assumption, untested: a run's kept files to a Modal volume
MODAL_CONTAINER_START_S = 60.0  # assumption, untested: a Modal GPU container, image cached
PRIME_RL_MEASURED = {  # measured: the seed's reverse-text arms, run e2e1, 2026-09-20, H100:2
    "grpo": (884.0, 128, "grpo"), "opsd": (484.0, 32, "opsd"), "opd": (894.0, 128, "opd")}
PRIME_RL_MEASURED_SETUP = {  # what the PRIME_RL_MEASURED runs shared (recipes/prime-rl/README.md)
    "model": "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT", "gpu": "H100",
    "steps": 20, "max_tokens": 128, "seq_len": 2048,
    "teacher": "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL"}
PRIME_RL_FIT_ARMS = ("grpo", "opsd")  # the measured arms that differ in rollouts a step
TRL_GRPO_MEASURED_S = 900.0  # measured upper bound: the seed's 40 steps on one A10G
LOCAL_SMOKE_S = {"grpo": (6.0, 39.0), "dpo": (24.0, 76.0), "sft": (11.0, 48.0)}  # measured here
LOCAL_SMOKE_ASSUMED_S = 30.0  # assumption, untested: a smoke never timed here
DPO_PAIRS_PER_PROMPT = 308 / 548  # measured elsewhere: the seed DPO round's pairs / prompts
FORECAST_STEPS_IF_UNSET = 100  # assumption: a config without max_steps; says so
FORECAST_UNKNOWN_RECIPE_H = 1.0  # assumption, untested: a recipe of unknown shape
FORECAST_ERROR_RUNS = 5  # convention: error over the last 5 collected runs

# --- init: wiring a project to the pack (whileai_core.init) ---------------------------------------

INIT_SERVER_NAME = "whileai"  # convention: the MCP server's name in every host's config
AGENTS_SECTION_BEGIN = "<!-- whileai-skills:begin -->"  # convention: a re-run replaces the section
AGENTS_SECTION_END = "<!-- whileai-skills:end -->"  # convention: the matching end marker

# --- the path door and reading limits (whileai_core.safepath, .safejson, .admission) --------------

MAX_ROWS_FILE_MB = 1024  # convention, untested: 1M graded rows are 89 MB (bench/bench_core.py)
MAX_TOKENIZER_FILE_MB = 128  # convention, untested: tokenizer.json files are 2-35 MB
MAX_CONFIG_FILE_MB = 4  # convention, untested: prime-rl rl TOMLs are a few KB
MAX_ARCHIVE_MB = 64  # measured here: Inspect's reader holds ~51x what a log unpacks to
READ_TIMEOUT_S = 60.0  # convention, untested: stops a stalled network mount
ROWS_MEMORY_FACTOR = 26  # measured here: peak 5.9x on graded rows, 25x on empty objects
ARCHIVE_MEMORY_FACTOR = 55  # measured here: inspect_ai 0.3.285's reader peaked at 51x
HEAVY_READ_BYTES = 8 << 20  # convention: parsing holds ~11x its size (measured)
HEAVY_READS_AT_ONCE = 2  # convention: 9 calls on 100 MB at once ran out of memory
HEAVY_WAIT_S = 60.0  # convention, untested: a 100 MB file parses in ~10 s here
JSON_STEP_CHARS = 1 << 20  # measured here: json.loads holds the GIL a whole document
JSON_MAX_DEPTH = 128  # serde_json's default recursion limit

# --- children we start: a reward command, a local run (whileai_core.hacking.reward, .failures) ----

CHILD_MEMORY_MB = 8192  # convention, untested: RLIMIT_AS; WHILEAI_CHILD_MEMORY_MB
CHILD_PROCESSES = 256  # convention, untested: RLIMIT_NPROC; WHILEAI_CHILD_PROCESSES
CHILD_STOP_GRACE_S = 5.0  # convention, untested: past the reward's own time limit
CHILD_ENV_NAMES = (  # convention: all a child keeps, with every LC_* and CHILD_ENV_PREFIXES
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ",
    "TMPDIR", "TEMP", "TMP", "TERM")
CHILD_ENV_PREFIXES = (  # convention: thread, locale and device variables; secrets dropped
    "LC_", "OMP_", "MKL_", "OPENBLAS_", "CUDA_", "XDG_")

# --- answers' size bounds (whileai_core.result, .tables; the server's tools) ----------------------

MCP_ANSWER_MAX_BYTES = 8192  # convention, untested: 'a few KB' (bench/bench_responses.py)
MCP_INLINE_ROWS_MAX = 1000  # convention, untested: about 60k tokens of JSON rows
TEXT_SHOWN_CHARS = (2000, 400, 120, 40)  # convention: the first cut that fits the bound
MESSAGE_WORD_CHARS = 200  # convention: a longer run without a space is cut
MESSAGE_MAX_CHARS = 4000  # convention: an error message, its head and fix kept
LIST_SHOWN_MAX = 20  # convention, untested: items of any list in an answer (n of N)
TASK_EXTREMES = 5  # convention, untested: lowest and highest tasks a summary names
TASK_PAGE_MAX = 200  # convention, untested: about 12 KB of JSON a page
TASK_PAGE_DEFAULT = 50  # convention, untested: 50 tasks per page by default (~3 KB)

# --- following a run (whileai_core.runs.follow) -------------------------------------------------

RUN_TASK_POLL_S = 2.0  # convention, untested: a followed run's status every 2 s


def source(name: str) -> str:
    """The comment on default ``name``'s line in this file ("" when there is none)."""
    return _comments().get(name, "")


_comments_read: dict[str, str] = {}


def _comments() -> dict[str, str]:
    # read once, from this file: the comment is the one place a source is written
    if not _comments_read:
        import tokenize
        try:
            with tokenize.open(__file__) as f:
                tokens = list(tokenize.generate_tokens(f.readline))
        except (OSError, SyntaxError):
            return _comments_read
        row, name = 0, ""
        for tok in tokens:
            if tok.type == tokenize.NAME and tok.start[1] == 0:
                row, name = tok.start[0], tok.string
            elif tok.type == tokenize.COMMENT and tok.start[0] == row and name.isupper():
                _comments_read.setdefault(name, tok.string.lstrip("#").strip())
    return _comments_read
