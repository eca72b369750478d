"""Every default of the core, once, each with its source.

Why one module: a reader (and a reviewer checking a number against its paper) finds every default
the core reads in one place, and one test checks that each has a source.

A default is a module constant in UPPER_CASE followed by ``_source(NAME, text)``: where the value
comes from (a paper, a tool's own default, a measurement here, or "convention, untested").
``SOURCES`` maps each name to that text; ``tests/test_defaults.py`` fails when a constant has no
source or nothing reads it.

How the file is ordered: by what a constant governs, in the order a user meets it (rows, their
intervals, comparing and watching runs, routing, methods, prime-rl configs, teachers, judges,
traces, pairs, reward hacking, runs and their forecast, then the plumbing: the path door and the
size of answers). Each section's header names its concept and the modules that read it; a new
default goes in the section of what it governs. Defaults only the MCP server reads are in
``server/limits.py``, those only the recipes read in ``recipes/defaults.py``.
"""

from __future__ import annotations

SOURCES: dict[str, str] = {}


def _source(name: str, text: str) -> None:
    SOURCES[name] = text


# --- rows and their fields (whileai_core.rows, .rewards, .describe, .rows_cache) ------------------

PASS_THRESHOLD = 1.0
_source("PASS_THRESHOLD", "convention: a program grader gives 1.0 for a pass; pass iff reward >= 1.0")

REWARD_SPREAD_TOLERANCE = 0.01
_source("REWARD_SPREAD_TOLERANCE",
        "convention, untested: a task has signal for a grouped method when its rollouts' "
        "rewards differ by more than 0.01 of the reward's scale (max minus min within the "
        "task). prime-rl 559b447's GRPO credit is the reward minus the group mean with no std "
        "division (src/prime_rl/orchestrator/algo/grpo.py, score_group), so a group spread "
        "under 0.01 carries advantages under 1% of a 0/1 group's; on 0/1 rewards the rule is "
        "exactly 'the task is split'")

CATEGORY_FIELD = "category"
_source("CATEGORY_FIELD", "convention: the field naming a task's behaviour (the refund recipes "
        "write `category`)")

DESCRIBE_EXACT_CELLS = 20_000_000
_source("DESCRIBE_EXACT_CELLS",
        "convention, untested: describe_rows reads every row when rows x fields is at most 20 "
        "million (a few seconds of column reads on this 2-core machine: 9 million cells took "
        "1.4 s, docs/core.md Speed); above it, field names, shares and values come from whole "
        "tasks sampled to DESCRIBE_SAMPLE_ROWS rows, and the answer says so")

DESCRIBE_SAMPLE_ROWS = 50_000
_source("DESCRIBE_SAMPLE_ROWS",
        "convention, untested: rows (whole tasks, seeded) describe_rows reads for names, "
        "values, ranges and shares on inputs past DESCRIBE_EXACT_CELLS; a share from 50,000 "
        "rows is within +-0.44 points (95%, 1.96 x sqrt(0.25/50,000))")

DESCRIBE_VALUES_SHOWN = 5
_source("DESCRIBE_VALUES_SHOWN",
        "convention, untested: describe_rows names up to 5 distinct values of a field (each cut "
        "to 40 characters) and counts the rest, so 200 fields fit a bounded answer")

DESCRIBE_FIELDS_SHOWN = 15
_source("DESCRIBE_FIELDS_SHOWN",
        "convention, untested: a describe_rows tool answer details 15 fields (the route's first) "
        "and says how many of how many; 15 fields of long names and values measured under 8 KB "
        "with the text summary (tests/test_describe.py); `fields` asks for any others by name")

ROWS_CACHE_MB = 1024
_source("ROWS_CACHE_MB",
        "convention, untested: the loaded rows one process (an MCP server session) keeps, by the "
        "estimate of whileai_core.rows_cache._footprint; the 1M-row bench file (85 MB) is "
        "charged about 250 MB loaded as columns (it holds 54 MB), so four such files fit")

ROWS_CACHE_FILES = 32
_source("ROWS_CACHE_FILES",
        "convention, untested: files kept loaded at once, whatever their size (an agent's "
        "session works on a handful: its runs, a teacher's, a held-out set)")

# fields under other names, named in the error that refuses them (whileai_core.field_names)

FIELD_SYNONYMS: dict[str, tuple[str, ...]] = {
    "task_id": ("task", "id", "problem_id", "question_id", "prompt_id", "example_id",
                "sample_id", "instance_id", "doc_id", "item_id", "uid", "problem", "question"),
    "reward": ("score", "passed", "pass", "correct", "is_correct", "success", "solved",
               "resolved", "accuracy", "acc", "exact_match", "label", "result"),
    "messages": ("conversation", "conversations", "chat", "turns", "dialog", "dialogue",
                 "history"),
    "truncated": ("is_truncated", "cut_off", "was_truncated"),
    "model": ("model_name", "model_id", "policy"),
}
_source("FIELD_SYNONYMS",
        "what other harnesses call these fields in the files they write: human-eval's "
        "*_results.jsonl (`task_id`, `passed`, `result`), SWE-bench (`instance_id`, "
        "`resolved`), lm-evaluation-harness samples (`doc_id`, `acc`, `exact_match`), Inspect "
        "samples (`id`, `score`), ShareGPT-style chat data (`conversations`), Hugging Face "
        "datasets (`problem_id`, `question_id`); a synonym is only ever suggested, never read "
        "in place of the field")

NEAR_FIELD_CUTOFF = 0.8
_source("NEAR_FIELD_CUTOFF",
        "measured here (difflib.SequenceMatcher ratio): 0.8 keeps rewrad (0.83), Reward (0.83), "
        "rewards (0.92), taskid (0.92), task_ids (0.93), massages (0.88) and leaves out forward "
        "(0.77), test_id (0.71), record (0.67) and rewrite (0.62); difflib's own default 0.6 "
        "suggested all of them")

# --- intervals (whileai_core.bootstrap, .stats.intervals, .stats.clustered) -----------------------
# Each interval rule was chosen by the coverage study in bench/stats_study.py and
# bench/family_study.py; their tables are in docs/statistics-study.md.

CONFIDENCE_LEVEL = 0.95
_source("CONFIDENCE_LEVEL", "convention: 95% intervals (Miller 2024, arXiv:2411.00640, sec. 1.6)")
# The levels an interval may be asked at. Past 1 - 1e-6, (1 + level) / 2 rounds toward 1.0 and the
# normal quantile is infinite (1 - 2**-53 was "a bug in whileai" in a dozen tools); under 0.01 the
# quantile is ~0 and the interval a point (5e-324 divided by zero). Float arithmetic, not a study.
LEVEL_MIN = 0.01
_source("LEVEL_MIN", "float arithmetic: z((1 + level) / 2) = 0.0125 there, an interval still wider than a point")
LEVEL_MAX = 1 - 1e-6
_source("LEVEL_MAX", "float arithmetic: (1 + level) / 2 stays below 1.0 and its z finite (4.9 there)")

BOOTSTRAP_RESAMPLES = 10_000
_source("BOOTSTRAP_RESAMPLES",
        "convention: >= 1,000 for percentile intervals (Efron & Tibshirani 1993, ch. 13); "
        "10,000 keeps the Monte-Carlo error of a 2.5% endpoint's rank near 0.16 points")

BOOTSTRAP_SEED = 0
_source("BOOTSTRAP_SEED", "convention: seeded so the same rows give the same interval")

MIN_TASKS_FOR_INTERVAL = 3
_source("MIN_TASKS_FOR_INTERVAL",
        "convention: a bootstrap over 1-2 tasks has 1-3 distinct resample means; no interval is "
        "given below 3 tasks (Bowyer et al. 2025, arXiv:2503.01747, on small-n intervals)")

INTERVAL_RULE = ("0/1 outcome per task: mid_p under 10 tasks, agresti_coull from 10; a share "
                 "of several 0/1 outcomes: effective_n capped by the outcomes; pass@k, pass^k "
                 "and graded rewards: hall_t, pass@k and pass^k held to pass@1's interval")
_source("INTERVAL_RULE",
        "bench/stats_study.py, 1,000+ replications a cell (docs/statistics-study.md, table A): "
        "shares of 0/1 outcomes take Agresti-Coull on the effective n m(1-m)/SE^2 (Agresti & "
        "Coull 1998; Korn & Graubard 1998), which carries a binomial's skew; pass@k, pass^k and "
        "graded rewards take Hall's skewness-corrected t (Hall 1992, JRSS-B 54:221; Johnson "
        "1978, JASA 73:536), chosen over the t interval, the percentile bootstrap, the "
        "bootstrap-t, a logit-t and the effective n by the study (table K); pass@k and pass^k are held to "
        "the bounds pass@1's interval gives them by Jensen's inequality (pass^k >= (pass@1)^k, "
        "pass@k <= 1 - (1 - pass@1)^k, equal when the tasks are alike)")

BINARY_EXACT_BELOW = 10
_source("BINARY_EXACT_BELOW",
        "exact binomial coverage at every rate in [0.01, 0.99] (tests/test_stats_intervals.py, "
        "test_zero_one_rule_exact_coverage): Agresti-Coull (Agresti & Coull 1998) keeps >= "
        "92.5% from 10 tasks but 89.6% at 5; the mid-p interval "
        "(Lancaster 1961; Brown, Cai & DasGupta 2001 sec. 4) keeps >= 93.1% at 5, so it is used "
        "below 10 tasks when each task is one 0/1 outcome")

RARE_GROUP_TASKS = 50
_source("RARE_GROUP_TASKS",
        "bench/stats_study.py, the needle shape (a tenth of the tasks at pass rate 0.95 among "
        "tasks at 0.02, 16 rollouts): pass@1 covers 66-68% at 10 tasks and 87-93% at 20-31 by "
        "every rule, "
        "because a sample that drew no easy task (0.9^n: 35% at 10 tasks, 4% at 30) looks like "
        "hard tasks only; from 50 tasks (0.5%) the rule covers 93% or more. Under 50 tasks each "
        "interval's note says it covers only when the tasks are alike")

CLUSTER_RESAMPLES = 2_000
_source("CLUSTER_RESAMPLES",
        "convention: the family-clustered interval reads the standard error off a two-level "
        "resample (families with replacement, each drawn family's tasks kept); 2,000 resamples "
        "put its Monte-Carlo error near 1.6% of the SE (1/sqrt(2 x 2000)), small next to a t "
        "quantile on few families")

CLUSTER_MIN_FAMILIES = 10
_source("CLUSTER_MIN_FAMILIES",
        "bench/family_study.py (docs/statistics-study.md, table F, 1,000 replications per "
        "cell): from 10 families of equal size the clustered pass@1 interval covers 93.2-97.3% "
        "in every shape and Hall's (pass@k, pass^k, graded) 94.2-97.3%; at 3-5 families the t "
        "and Hall's fall to 87.7-87.9% in the skewed shape, and with unequal sizes at 9.4 "
        "effective families pass@1 covers 93.1%. An interval from fewer than 10 families, or 10 "
        "effective families ((sum of sizes)^2 / sum of squared sizes), says it is unreliable")

# --- sizing a held-out set (whileai_core.stats.holdout; Miller 2024, arXiv:2411.00640, Eq. 9) -----

HOLDOUT_POWER = 0.8
_source("HOLDOUT_POWER", "Miller 2024 Eq. 9 worked example: 80% power")

HOLDOUT_ALPHA = 0.05
_source("HOLDOUT_ALPHA", "Miller 2024 Eq. 9 worked example: two-sided alpha 0.05")

HOLDOUT_K = 4
_source("HOLDOUT_K", "convention: 4 rollouts per task, the smallest k the routing playbook accepts")

PLANNING_VAR_X = 1.0 / 12.0
_source("PLANNING_VAR_X",
        "binomial planning model: true per-task pass rates uniform on [0, 1], Var(x) = 1/12 "
        "(Miller 2024 sec. 1.3 worked example)")

PLANNING_SIGMA2 = 1.0 / 6.0
_source("PLANNING_SIGMA2",
        "binomial planning model: E[x(1-x)] = 1/6 for x uniform on [0, 1] (Miller 2024 sec. 1.3)")

PLANNING_RHO = 0.8
_source("PLANNING_RHO",
        "inferred: correlation of true per-task pass rates before vs after training of one model, "
        "lower end of the 0.8-0.95 range expected for two checkpoints of one model (an inference, not a measurement; docs/statistics-study.md, Sources), so conservative")

RHO_ALTERNATIVES = (0.5,)
_source("RHO_ALTERNATIVES",
        "holdout_size states what an assumed rho costs if the arms correlate less: the tasks "
        "needed and the power of the planned n at rho 0.5 (independent check: the planned n "
        "holds 79.4-80.3% power at rho 0.8 and 62.3% at 0.5)")

HOLDOUT_TABLE_KS = (1, 2, 4, 8, 16, 32)
_source("HOLDOUT_TABLE_KS", "convention: holdout_size reports n(k) at these rollouts per task "
        "(docs/statistics-study.md, Sources)")

# --- comparing runs: paired verdicts, noise, seeds (whileai_core.stats.compare, .paired, .noise, .arms) ---

PROVE_EFFECT = 0.05
_source("PROVE_EFFECT",
        "convention (engineering, not a published threshold): 5 points of pass@1 is the smallest "
        "change worth a training run; the effect Miller 2024's planning table is sized for")

PAIRED_SPREAD_RTOL = 1e-9
_source("PAIRED_SPREAD_RTOL",
        "convention (float arithmetic): per-task differences whose spread is at most this share "
        "of the per-task values' largest magnitude changed by the same amount (compare, "
        "watch_run); a difference of two means of rewards written to a few decimals, or of the "
        "same rewards summed in another order, differs between tasks only in its last bits "
        "(~1e-16 relative), which a paired t interval read as a spread of zero width")

SIGN_FLIP_EXACT_PATTERNS = 2 ** 16
_source("SIGN_FLIP_EXACT_PATTERNS",
        "convention: the sign-flip distribution is enumerated exactly up to 65,536 sign patterns "
        "(16 changed tasks, < 0.1 s); above it, BOOTSTRAP_RESAMPLES seeded random patterns")

NOISE_DEFAULT_RUNS = 2
_source("NOISE_DEFAULT_RUNS",
        "stated rule: a run_std given without the number of re-runs behind it is read as from 2 "
        "runs, the fewest noise_floor takes, so an unstated count can only widen the band; read "
        "as 3 (until 0.3), a run_std from 2 runs let 13.9% of pure-noise differences through "
        "(independent check; 15.2% in bench/stats_study.py table D3), read as 2 it lets 5.3%")

NOISE_TIE_TOLERANCE = 1e-9
_source("NOISE_TIE_TOLERANCE",
        "convention: a |delta| within 1e-9 of the noise band counts as inside it, so 0.7 - 0.6 "
        "and 0.2 - 0.1 read alike (float rounding must not decide a verdict)")

NOISE_TIED_RUNS_RULE = ("run_std 0 from tied runs: the band uses the within-task predicted run_std, "
                        "each task's variance from its rollouts pooled over the re-runs")
_source("NOISE_TIED_RUNS_RULE",
        "noise_floor: re-runs that all score the same give run_std 0 and a band of 0, which "
        "let every difference through; run scores are means of 0/1 rollouts and move in steps, "
        "so ties are common with few rollouts (independent check: 50 tasks x 4 rollouts, 10% "
        "easy tasks, 2 re-runs: 12.8% of pure-noise differences passed the band, sd 1.1, "
        "against the promised 5%). The band then rests on the within-task prediction "
        "sqrt(sum_i s_i^2/n_i)/C (docs/statistics-study.md, Sources) and the result says so. With "
        "one rollout per task no run alone estimates s_i^2, so it is pooled over the re-runs "
        "(until 0.3 there was no prediction and the band stayed 0: 19.5% passed at 50 tasks of "
        "one rollout with 10% easy ones, 0.0% since; when every re-run agrees on every task the "
        "rule of three bounds the variance; bench/stats_study.py table D2)")

NOISE_FLOOR_MAX_RUNS = 50
_source("NOISE_FLOOR_MAX_RUNS",
        "convention, untested: the noise_floor tool takes at most 50 re-runs in one call (3 are "
        "recommended; the relative SE of run_std is ~1/sqrt(2(R-1)), 10% at R = 50)")

MIN_SEEDS_FOR_SEED_VARIANCE = 2
_source("MIN_SEEDS_FOR_SEED_VARIANCE",
        "arithmetic: a between-seed variance needs 2 runs of one arm; with one run per arm the "
        "training-seed variance is unmeasured and a 'moved' verdict says so (Madaan et al. 2024, "
        "arXiv:2406.10229, on seed variance in evals)")

# --- watching a run: error rates that hold at every look (whileai_core.hacking.watch, .anytime) ---

WATCH_SPENDING_TYPE = "quadratic"
_source("WATCH_SPENDING_TYPE",
        "a group-sequential design when the looks are planned (Jennison & Turnbull 2000, ch. 7): "
        "each part of watch_run's error a (hacking.anytime.PARTS: the training climb 1/2, the "
        "held-out fall below step 0 1/4, below an earlier look 1/4) is spent over the K planned "
        "looks by A(t/K) = a (t/K)^2, the rho = 2 member of Kim & DeMets' (1987, Biometrika "
        "74(1):149-154) power family of Lan-DeMets spending functions, between Pocock's type "
        "(rho near 1: early looks) and O'Brien-Fleming's (rho near 3: late looks); "
        "boundaries solved with the looks' correlation (hacking.anytime). Measured "
        "(bench/watch_anytime.py, docs/reward-hacking.md): at 50 looks it keeps "
        "O'Brien-Fleming's power on a held-out score that falls gradually (over-optimisation "
        "grows with the steps: Gao et al. 2022, arXiv:2210.10760) and stops a sustained drop "
        "about as early as Pocock's")

WATCH_OPEN_HALF = 10
_source("WATCH_OPEN_HALF",
        "an open schedule (no planned number of looks) spends each part's error a by "
        "A(t) = a t / (t + 10): half by look 10, the rest over the looks after it, never "
        "exhausted, so every stopping look keeps the error (a confidence sequence; Howard, "
        "Ramdas, McAuliffe & Sekhon 2021, Ann. Statist. 49(2):1055-1080, Lemma 3); the previous "
        "plan alpha / (t (t + 1)) is the same family at h = 1, which spent half on look 1. "
        "Measured in bench/watch_anytime.py (docs/reward-hacking.md)")

WATCH_POWER = 0.8
_source("WATCH_POWER",
        "convention (Cohen 1988): the watch states the sustained held-out drop its plan catches "
        "with probability 0.8 by the last planned look")

WATCH_CONFIRM = 2
_source("WATCH_CONFIRM",
        "a stop condition must hold at 2 held-out evaluations in a row, and the plan's "
        "boundaries are solved for that event (hacking.anytime), so requiring it costs little "
        "power: an honest run's one-look dip (the recipes' CPU smoke: its held-out reward fell "
        "0.037 at step 3 and recovered) is not a stop, and an honest run whose held-out set "
        "gains only part of the training gain is kept going one look longer (measured in "
        "bench/watch_anytime.py, docs/reward-hacking.md)")

WATCH_WINDOW = 5
_source("WATCH_WINDOW",
        "convention, untested: the training reward's climb is the mean of its last 5 steps minus "
        "the mean of its first 5 (fewer when the run is shorter: half its steps)")

WATCH_SCAN_EVERY = 5
_source("WATCH_SCAN_EVERY",
        "convention, untested: watch_run scans the batch of every 5th step (each scan a look of "
        "the scans' own spending plan, SCAN_RUN_SHARE, so scanning more often costs width, not false alarms)")

WATCH_STEPS_SHOWN = 50
_source("WATCH_STEPS_SHOWN", "convention: a watch answer lists the last 50 steps (n of N)")

# --- routing (whileai_core.routing, .questions) ---------------------------------------------------

GROUP_MIN_ROLLOUTS = 4
_source("GROUP_MIN_ROLLOUTS",
        "convention: re-run at k >= 4 so a task at p = 0.5 is split with probability 0.875 "
        "(1 - p^k - (1-p)^k)")

ROUTE_MIN_TASKS = 6
_source("ROUTE_MIN_TASKS",
        "arithmetic: the fewest tasks on which a two-sided exact test at 95% can reject (the "
        "smallest sign-flip p on n tasks is 2/2^n, <= 0.05 from n = 6; "
        "whileai_core.stats.paired.min_paired_tasks). Below it no verdict the route gives "
        "(a band, a teacher's gap) can be told from chance, so the route stops and says so")

OPSD_MIN_PARAMS_B = 7.0
_source("OPSD_MIN_PARAMS_B",
        "OPSD needs in-context learning strong enough to use the hint: about 7B and up "
        "(Zhao et al. 2026, arXiv:2601.18734; measured -0.554 vs GRPO on Qwen3-0.6B)")

# --- methods: distillation and RAE (whileai_core.methods.specs) -----------------------------------

OPD_SAMPLES = 4
_source("OPD_SAMPLES", "OPD samples per prompt seen in practice (docs/methods.md, Sources)")

OPD_TEMPERATURE = 1.0
_source("OPD_TEMPERATURE", "OPD sampling temperature seen in practice (docs/methods.md)")

OPD_MAX_TOKENS = 8192
_source("OPD_MAX_TOKENS", "OPD max_tokens seen in practice (docs/methods.md)")

OPD_LR_FULL = 1e-6
_source("OPD_LR_FULL", "OPD full-weight lr seen in practice (docs/methods.md)")

OPD_LR_LORA = 1e-4
_source("OPD_LR_LORA", "OPD LoRA lr seen in practice (docs/methods.md)")

OPSD_SAMPLES = 1
_source("OPSD_SAMPLES", "OPSD samples per prompt (docs/methods.md; prime-rl self_distill.toml group_size 1)")

OPSD_LR = 5e-6
_source("OPSD_LR", "OPSD lr (docs/methods.md; SDFT arXiv:2601.19897)")

OPSD_ANCHOR = "ema:0.01"
_source("OPSD_ANCHOR", "EMA teacher at rate 0.01, the SDFT (arXiv:2601.19897) and SDPO "
        "(arXiv:2601.20802) choice; prime-rl supports the live policy only")

OPSD_PRIVILEGED = "demonstration"
_source("OPSD_PRIVILEGED", "prime-rl OPSDAlgoConfig.demo_key default ('demonstration')")

OPSD_TEMPLATE = ("Here is an example of an expert response:\n<demonstration>\n{demonstration}\n"
                 "</demonstration>")
_source("OPSD_TEMPLATE", "prime-rl OPSDAlgoConfig.template default (also docs/methods.md)")

OPSD_TEMPLATES = {
    "demonstration": OPSD_TEMPLATE,
    "reference": "Here is a reference answer to this task:\n<reference>\n{demonstration}\n</reference>",
    "hint": "Here is a hint for this task:\n<hint>\n{demonstration}\n</hint>",
    "feedback": ("Here is feedback from the environment on an earlier attempt:\n<feedback>\n"
                 "{demonstration}\n</feedback>"),
}
_source("OPSD_TEMPLATES",
        "demonstration: prime-rl's default template; reference/hint/feedback: convention, untested "
        "(the same shape, worded for the kind of privileged context, SDPO arXiv:2601.20802)")

RAE_GROUP_SIZE = 1
_source("RAE_GROUP_SIZE", "prime-rl configs/debug/algo/rae.toml: group_size = 1 (EMA baseline)")

RAE_DECAY = 0.95
_source("RAE_DECAY", "prime-rl RAEAlgoConfig.decay default (SPIRAL, arXiv:2506.24119)")

# --- methods: off-policy corrections (whileai_core.methods.specs, .icepop) ------------------------

ASYNC_OFF_POLICY_STEPS = 8
_source("ASYNC_OFF_POLICY_STEPS", "prime-rl orchestrator.max_off_policy_steps default")

ASYNC_CORRECTION = "ipo"
_source("ASYNC_CORRECTION", "convention: the correction prime-rl builds in (type = 'ipo')")

IPO_THRESHOLD = 0.1
_source("IPO_THRESHOLD", "prime-rl IPOLossConfig.ipo_threshold default")

ICEPOP_LOW = 0.5
_source("ICEPOP_LOW", "IcePop published ratio band lower edge 0.5 (docs/methods.md)")

ICEPOP_HIGH = 5.0
_source("ICEPOP_HIGH", "IcePop published ratio band upper edge 5.0 (docs/methods.md)")

ICEPOP_KL_TAU = 0.0
_source("ICEPOP_KL_TAU", "IcePop as published masks and weights only; no log-ratio^2 term "
        "(prime-rl's own losses use 1e-3; pass kl_tau in [trainer.loss.kwargs] to match)")

TIS_CAP = 2.0
_source("TIS_CAP", "truncated importance sampling cap 2 (verl; docs/methods.md)")

# --- methods: grouped grading (whileai_core.methods.grouping) -------------------------------------

GROUP_PASS_THRESHOLD = 0.5
_source("GROUP_PASS_THRESHOLD", "GroupwiseGrading: a pass iff reward >= 0.5 (MiMo-V2.6 sec. 4.3)")

GRS_FLOOR = 0.0
_source("GRS_FLOOR", "GroupwiseGrading reward mode quality floor 0.0 (MiMo-V2.6 sec. 4.3)")

GAR_MIN_FACTOR = 0.5
_source("GAR_MIN_FACTOR", "GroupwiseGrading advantage mode: worst pass factor 0.5 (MiMo-V2.6)")

GAR_CAP = 3.0
_source("GAR_CAP", "GroupwiseGrading advantage mode: lambda cap 3 (MiMo-V2.6 sec. 4.3)")

GRADER_MIN_STD = 0.05
_source("GRADER_MIN_STD", "grader spread check: std >= 0.05 (docs/methods.md, GroupwiseGrading)")

GRADER_MAX_NEAR_MEDIAN = 0.9
_source("GRADER_MAX_NEAR_MEDIAN",
        "grader spread check: not more than 90% of scores within 0.05 of the median (docs/methods.md)")

# --- methods: single-rollout trainers (whileai_core.methods.single_rollout) -----------------------

FLASH_TRUST = 0.003
_source("FLASH_TRUST", "FlashReinforce sequence trust region on mean binary drift (Hu et al. 2026)")

FLASH_PROB_CLAMP = 1e-6
_source("FLASH_PROB_CLAMP", "FlashReinforce drift: probabilities clamped to [1e-6, 1-1e-6]")

FLASH_LOG_RATIO_CLAMP = 30.0
_source("FLASH_LOG_RATIO_CLAMP", "FlashReinforce: log ratio clamped to +-30 (Hu et al. 2026)")

FLASH_MAX_TOKENS = 8192
_source("FLASH_MAX_TOKENS", "FlashReinforce: max_tokens 8192 (Hu et al. 2026)")

FLASH_BATCH = 128
_source("FLASH_BATCH", "FlashReinforce: batch 128 (Hu et al. 2026)")

SAO_ALPHA = 1.5
_source("SAO_ALPHA", "SAO length-adaptive lambda alpha 1.5 (Hou et al. 2026)")

SAO_BAND = (0.7, 6.0)
_source("SAO_BAND", "SAO token ratio band (0.7, 6.0); (0.2, 4.0) for coding (Hou et al. 2026)")

SAO_GAMMA = 1.0
_source("SAO_GAMMA", "SAO: gamma 1 over action tokens (Hou et al. 2026; docs/methods.md)")

SAO_CRITIC_STEPS = 2
_source("SAO_CRITIC_STEPS", "SAO: 2 critic steps per policy step (Hou et al. 2026)")

SAO_CRITIC_WARMUP = 10
_source("SAO_CRITIC_WARMUP", "SAO: 10 critic-only warm-up steps (Hou et al. 2026)")

SAO_CRITIC_LR = 5e-6
_source("SAO_CRITIC_LR", "SAO: critic lr 5e-6 (Hou et al. 2026)")

SAO_LR = 1e-6
_source("SAO_LR", "SAO: policy lr 1e-6 (Hou et al. 2026)")

SAO_MAX_TOKENS = 131072
_source("SAO_MAX_TOKENS", "SAO: max_tokens 131072 (Hou et al. 2026)")

BPCO_ALPHA = 0.4
_source("BPCO_ALPHA", "BPCO length-adaptive lambda alpha 0.4 (Qi et al. 2026)")

BPCO_CLIP = 0.2
_source("BPCO_CLIP", "BPCO DPPO binary-TV clip 0.2 (Qi et al. 2026)")

BPCO_REWARD_RANGE = (0.0, 1.0)
_source("BPCO_REWARD_RANGE", "BPCO bounded critic range (0, 1) (Qi et al. 2026)")

BPCO_LOG_RATIO_CLAMP = 20.0
_source("BPCO_LOG_RATIO_CLAMP", "BPCO: log ratio clamped to +-20 (Qi et al. 2026)")

BPCO_CRITIC_WARMUP = 15
_source("BPCO_CRITIC_WARMUP", "BPCO: 15 critic-only warm-up steps (Qi et al. 2026)")

BPCO_CRITIC_LR = 1e-5
_source("BPCO_CRITIC_LR", "BPCO: critic lr 1e-5 (Qi et al. 2026)")

BPCO_LR = 1e-6
_source("BPCO_LR", "BPCO: policy lr 1e-6 (Qi et al. 2026)")

BPCO_MAX_TOKENS = 12000
_source("BPCO_MAX_TOKENS", "BPCO: max_tokens 12000 (Qi et al. 2026)")

# --- methods: adaptive sampling (whileai_core.methods.sampling) -----------------------------------

ADA_KEEP = 4
_source("ADA_KEEP", "ReinforceAda kept samples per prompt 4 (arXiv:2510.04996)")

ADA_ROUND_SIZE = 8
_source("ADA_ROUND_SIZE", "ReinforceAda samples per round 8 (arXiv:2510.04996)")

ADA_MAX_ROUNDS = 4
_source("ADA_MAX_ROUNDS", "ReinforceAda max rounds 4 (arXiv:2510.04996)")

ADA_EXIT = "balanced"
_source("ADA_EXIT", "ReinforceAda exit rule 'balanced' (arXiv:2510.04996)")

ADA_PASS_THRESHOLD = 0.7
_source("ADA_PASS_THRESHOLD", "ReinforceAda: a sample passes iff reward > 0.7 (arXiv:2510.04996)")

# --- prime-rl configs (whileai_core.prime_rl) -----------------------------------------------------

PRIME_RL_COMMIT = "559b447"
_source("PRIME_RL_COMMIT",
        "pinned prime-rl commit 559b44772e47 (v0.8.1.dev67, 2026-08-21); the schema the writer "
        "targets (packages/prime-rl-configs/src/prime_rl/configs/ at that commit)")

PRIME_RL_BATCH = 128
_source("PRIME_RL_BATCH", "prime-rl default orchestrator.batch_size (rollouts per step) at 559b447")

PRIME_RL_GROUP_SIZE = 16
_source("PRIME_RL_GROUP_SIZE",
        "prime-rl's own reverse-text and debug/algo grpo/max_rl/opd examples: 16 rollouts per prompt")

PRIME_RL_LR_FULL = 1e-6
_source("PRIME_RL_LR_FULL", "prime-rl [trainer.optim] lr default (AdamW) at 559b447")

PRIME_RL_LR_LORA = 1e-4
_source("PRIME_RL_LR_LORA",
        "convention seen in practice for LoRA (OPD runs at 1e-4 with LoRA; docs/methods.md, Sources)")

LORA_RANK = 16
_source("LORA_RANK", "prime-rl trainer.model.lora.rank default at 559b447")

LORA_ALPHA = 32.0
_source("LORA_ALPHA", "prime-rl trainer.model.lora.alpha default at 559b447")

PRIME_RL_SEQ_LEN = 2048
_source("PRIME_RL_SEQ_LEN", "prime-rl seq_len default and every reverse-text example at 559b447")

PROMPT_TOKEN_ALLOWANCE = 1024
_source("PROMPT_TOKEN_ALLOWANCE",
        "convention, untested: room left for the prompt when prime_rl_config derives seq_len from "
        "max_tokens (seq_len = max(2048, max_tokens + 1024) rounded up to 1024)")

PRIME_RL_TEMPERATURE = 1.0
_source("PRIME_RL_TEMPERATURE", "prime-rl orchestrator.train.sampling.temperature default")

PRIME_RL_TRAIN_SAMPLER = {"top_p": 1.0, "top_k": -1, "min_p": 0.0}
_source("PRIME_RL_TRAIN_SAMPLER",
        "what prime-rl 559b447's training sampler sends besides the temperature, whatever the "
        "config says: top_p 1.0 (packages/prime-rl-configs/src/prime_rl/configs/orchestrator.py, "
        "TrainSamplingConfig.to_sampling_args) and, for policy-sourced rollouts, top_k -1 and "
        "min_p 0.0 (the same file, OrchestratorConfig.resolve_env_config); its eval sampler sends "
        "none of them unless [orchestrator.eval.sampling] sets them, and vLLM then takes the "
        "checkpoint's generation_config.json, whatever that sets")

PRIME_RL_MAX_TEMPERATURE = 2.0
_source("PRIME_RL_MAX_TEMPERATURE", "prime-rl validator: temperature must be <= 2")

POLICY_PORT = 8000
_source("POLICY_PORT",
        "prime-rl inference.server.port default; the orchestrator's client reads "
        "http://localhost:8000/v1 unless told otherwise")

OPD_COLOCATED_MEMORY = 0.4
_source("OPD_COLOCATED_MEMORY",
        "prime-rl OPD recipe layout (seed recipe): teacher and policy engine share one GPU at "
        "0.4 of its memory each")

# --- teachers: the OPD teacher's start line (whileai_core.prime_rl.teacher) -----------------------

TEACHER_GPU_MEMORY_GB = 80.0
_source("TEACHER_GPU_MEMORY_GB",
        "memory of one H100 / A100-80GB (NVIDIA datasheets), the GPUs prime-rl's examples and "
        "the prime-rl recipe run on; pass gpu_memory_gb for another GPU")

TEACHER_WEIGHT_SHARE = 0.5
_source("TEACHER_WEIGHT_SHARE",
        "convention, untested: a teacher's weights take at most half of the vLLM memory they are "
        "given, the rest holds the KV cache for the student's rollouts being scored")

TEACHER_GPU_MEMORY_UTILIZATION = 0.9
_source("TEACHER_GPU_MEMORY_UTILIZATION",
        "vLLM's and prime-rl's default gpu_memory_utilization (inference.vllm, 559b447 key tree) "
        "for a teacher on GPUs of its own")

# --- judges (whileai_core.judge) ------------------------------------------------------------------

JUDGE_MIN_AGREEMENT = 0.8
_source("JUDGE_MIN_AGREEMENT",
        "convention after Zheng et al. 2023 (arXiv:2306.05685, MT-Bench): human-human agreement "
        "~81%, so a judge is held to 0.8, read on the Wilson lower bound of its agreement")

JUDGE_MIN_KAPPA = 0.6
_source("JUDGE_MIN_KAPPA",
        "convention: Landis & Koch 1977 call kappa 0.61-0.80 'substantial' agreement")

JUDGE_MAX_FALSE_PASS = 0.1
_source("JUDGE_MAX_FALSE_PASS",
        "convention, untested: a judge may pass at most 1 in 10 replies your labels fail "
        "(a false pass is reward the policy learns to farm)")

JUDGE_FALSE_PASS_HALF_WIDTH = 0.1
_source("JUDGE_FALSE_PASS_HALF_WIDTH",
        "convention: size the labelled sample so the false-pass rate is known to +-0.1; "
        "worst case 1.96 * sqrt(0.25 / n_fail) <= 0.1 needs 97 labelled failures")

JUDGE_ASSUMED_FAIL_SHARE = 0.3
_source("JUDGE_ASSUMED_FAIL_SHARE",
        "convention, untested: the share of replies a judge fails when the rows give no pass "
        "mark to count it at (the route's label plan; audit-your-judge's 'at a 30% failure "
        "rate, about 320 replies')")

JUDGE_RATING_PASS_SHARE = 0.7
_source("JUDGE_RATING_PASS_SHARE",
        "convention, untested: a rating's pass mark as a share of its top (7 of 10) when none "
        "is given; the route says it is a convention to replace")

JUDGE_TEMPERATURE = 0.0
_source("JUDGE_TEMPERATURE",
        "convention: grade at temperature 0 so re-grading the same reply gives the same grade")

JUDGE_MAX_LENGTH_BIAS = 0.2
_source("JUDGE_MAX_LENGTH_BIAS",
        "convention, untested: flag a judge whose grade correlates with reply length 0.2 more "
        "than the human labels do (Pearson r; Zheng et al. 2023 sec. 3.3 on verbosity bias)")

JUDGE_MAX_ORDER_FLIPS = 0.05
_source("JUDGE_MAX_ORDER_FLIPS",
        "convention, untested: a pairwise judge may change its pick on at most 5% of pairs when "
        "the order is reversed before its order is trusted as a ranking (Zheng et al. 2023 "
        "sec. 3.3 on position bias)")

KAPPA_CI_RULE = "percentile_bootstrap widened to the Wilson bounds of p_o carried through kappa"
_source("KAPPA_CI_RULE",
        "the kappa interval (whileai_core.judge.kappa_interval): the item bootstrap's percentile "
        "interval (Efron & Tibshirani 1993, ch. 13), widened to hold ((lo - p_e)/(1 - p_e), "
        "(hi - p_e)/(1 - p_e)) with (lo, hi) the Wilson interval of the observed agreement p_o "
        "(Wilson 1927) and p_e the observed chance agreement (Cohen 1960: kappa rises with p_o). "
        "The bootstrap alone gave [1, 1] at perfect agreement on any n and covered 10-64% at "
        "10 items, 20-89% at 20 and 40% at 50 items with a true kappa of 0.98; widened, 95-100% "
        "(independent check, 1,000 replications per cell, 2026-11-30)")

# --- traces to SFT: split, selection, decontamination (whileai_core.traces) -----------------------

HOLDOUT_SHARE = 0.2
_source("HOLDOUT_SHARE",
        "convention, untested: hold out 1 task in 5; check it against holdout_size(), which is "
        "what decides whether the frozen test can see the effect")

SPLIT_SEED = 0
_source("SPLIT_SEED", "convention: the task split is a pure function of (task ids, seed)")

REJECTION_ATTEMPTS = 16
_source("REJECTION_ATTEMPTS",
        "convention: 10-30 attempts per ask for rejection sampling (Lambert 2025, RLHF "
        "book, ch. Rejection Sampling); 16 keeps an ask at p = 0.1 with probability "
        "1 - 0.9^16 = 0.81")

DECONTAM_NGRAM = 8
_source("DECONTAM_NGRAM",
        "convention: 8-word n-grams, between GPT-3's 13-gram filter (Brown et al. 2020, "
        "arXiv:2005.14165, app. C) and the 8-gram overlap checks common in later reports")

DECONTAM_MAX_OVERLAP = 0.8
_source("DECONTAM_MAX_OVERLAP",
        "convention, untested: drop a training ask when >= 80% of its 8-grams occur in a held-out "
        "prompt")

DECONTAM_SHORT_MIN_WORDS = 3
_source("DECONTAM_SHORT_MIN_WORDS",
        "convention, untested: a prompt shorter than the n-gram is matched by its whole word "
        "sequence inside the other side's prompts, but only from 3 words (one or two common words "
        "would match almost any prompt); shorter prompts are matched verbatim only")

# --- preference pairs and experiments (whileai_core.pairs, .experiments) --------------------------

PAIRS_PER_TASK = 2
_source("PAIRS_PER_TASK",
        "convention, untested: at most 2 pairs per task, each reply used once; the seed's DPO "
        "round averaged 1.6 pairs per prompt with contrast (308 pairs from 193 prompts)")

PAIRS_UNDER_SHARE = 0.5
_source("PAIRS_UNDER_SHARE",
        "convention, untested: a category holding under half its share of the training tasks in "
        "pairs is outvoted by the others (the seed's DPO round two: with-id pairs dominated and "
        "no-id pass@1 fell 0.82 to 0.26)")

DPO_PAIRS_FILE = "pairs.jsonl"
_source("DPO_PAIRS_FILE",
        "convention: the DPO recipe's data folder holds the pairs as TRL's conversational "
        "preference JSONL ({prompt, chosen, rejected}) under this name")

DPO_MIN_MARGIN = 0.5
_source("DPO_MIN_MARGIN", "convention, untested: a pair needs chosen - rejected reward >= 0.5 "
        "(in the refund reward, a pass against an ask or a wrong call)")

DPO_MAX_CHOSEN_LONGER = 0.8
_source("DPO_MAX_CHOSEN_LONGER", "convention: length-matched pairs, chosen longer in under 80% of them "
        "(otherwise DPO learns 'longer is better', Park et al. 2024, arXiv:2403.19159)")

EXPERIMENT_TEXT_MAX = 600
_source("EXPERIMENT_TEXT_MAX",
        "convention: a registration's sentences and each line of a run's record fit in 600 "
        "characters, so a list of experiments stays readable in an agent's context")

# --- the eval set and its behaviours (whileai_core.evalset, .categories) --------------------------

EVALSET_NAME = "holdout"
_source("EVALSET_NAME", "convention: the prefix of a frozen set's name, <name>-<hash>")

EVALSET_HASH_CHARS = 12
_source("EVALSET_HASH_CHARS", "convention: 12 hex digits (48 bits) of the SHA-256 in a set's name, "
        "as git's short ids; the full digest is kept beside it in every result")

EVALSET_EXAMPLES = 5
_source("EVALSET_EXAMPLES", "convention: task ids shown per finding (the count says n of N)")

CATEGORY_LINES_MAX = 50
_source("CATEGORY_LINES_MAX", "convention: lines in one answer of a per-category table; more are "
        "cut and the answer says n of N (an agent's context is bounded)")

# --- reward hacking: probes, the reward command, scans (whileai_core.hacking) ---------------------

PROBE_MAX_TOKENS = 512
_source("PROBE_MAX_TOKENS",
        "convention, untested: the filler probe's token cap when the caller names none; pass "
        "the run's own completion cap (max_tokens / max_completion_length) instead")

PROBE_CHARS_PER_TOKEN = 4
_source("PROBE_CHARS_PER_TOKEN",
        "OpenAI's rule of thumb for English text, about 4 characters per token "
        "(help.openai.com, 'What are tokens and how to count them?'); sizes the filler probe")

PROBE_REFUSAL = "I'm sorry, but I can't help with that."
_source("PROBE_REFUSAL", "convention: the common shape of a chat model's refusal")

PROBE_QUESTION = "Could you clarify what exactly you would like me to do?"
_source("PROBE_QUESTION", "convention: a clarifying question that answers nothing")

PROBE_FILLER = "Let me think about this step by step. "
_source("PROBE_FILLER", "convention: a reasoning-shaped sentence repeated to the token cap")

PROBE_KEYWORDS_MAX = 40
_source("PROBE_KEYWORDS_MAX",
        "convention, untested: at most 40 distinct content words of the task text per stuffed reply")

PROBE_EXAMPLE_CHARS = 200
_source("PROBE_EXAMPLE_CHARS", "convention: examples in an answer are cut to 200 characters")

REWARD_TIMEOUT_S = 300.0
_source("REWARD_TIMEOUT_S",
        "convention, untested: a reward command gets 5 minutes for the whole batch (every probe "
        "of every task) before its whole process tree is killed")

REWARD_OUTPUT_MAX_BYTES = 16_000_000
_source("REWARD_OUTPUT_MAX_BYTES",
        "convention: a reward command's stdout is refused beyond 16 MB (far more than one number "
        "per line for a million lines)")

REWARD_STDERR_MAX_BYTES = 64_000_000
_source("REWARD_STDERR_MAX_BYTES",
        "convention: a reward's stderr is counted as it streams and never kept (no message quotes "
        "it: it can hold what the reward read); past 64 MB the reward is stopped. 3 GB of stderr "
        "once took the server to 3.1 GB")

REWARD_BONUS_TOLERANCE = 1e-9
_source("REWARD_BONUS_TOLERANCE",
        "numerical: a well-formed wrong answer scoring more than the same answer unformatted by "
        "more than this counts as a format bonus")

SCAN_SHUFFLES = 500
_source("SCAN_SHUFFLES",
        "convention: 500 within-task shuffles put the 95th percentile of the null maximum within "
        "about +-1 point of rank (binomial SE of a 0.95 quantile, sqrt(.95*.05/500) = 0.0097)")

SCAN_MAX_SHUFFLES = 200_000
_source("SCAN_MAX_SHUFFLES",
        "convention: a repeated scan at look j needs p-values down to SCAN_RUN_SHARE x "
        "(1 - level) / (j (j + 1)); shuffles go on past SCAN_SHUFFLES, only while a feature can "
        "still reach it (Besag & Clifford 1991, Biometrika 78(2):301-304), up to 2 / alpha_j and "
        "at most 200,000: at level 0.95 a scan past look 70 can no longer alarm (1 / 200,001 > "
        "0.025 / (71 x 72))")

SCAN_RUN_SHARE = 0.5
_source("SCAN_RUN_SHARE",
        "a stated share of the run's error for its repeated scans: scan j spends SCAN_RUN_SHARE "
        "x (1 - level) / (j (j + 1)), so an honest run's scans alarm at some scan with "
        "probability at most SCAN_RUN_SHARE x (1 - level) = 0.025 at level 0.95, however many "
        "there are (a union bound). At the full share the bound over 50 scans is 0.049, and "
        "the batches of a run are independent, so the union bound is nearly exact: measured "
        "0.052 [0.035, 0.079] of 400 honest runs, not separable from 0.05. Halved (bound "
        "0.0245 over 50 scans): 0.024 [0.016, 0.035] of 1,000 honest runs over 50 scans "
        "(bench/watch_anytime.py --only scan, docs/reward-hacking.md); the planted length hack "
        "is still caught at every run's scan 1-3. The feature alarm only advises (the "
        "stop rule is the held-out test, with its own 1 - level), so a watched honest run "
        "raises either alarm with probability at most (1 + SCAN_RUN_SHARE) x (1 - level)")

SCAN_MIN_STRENGTH = 0.2
_source("SCAN_MIN_STRENGTH",
        "convention, untested: a feature is suspect only when its within-task correlation with the "
        "reward is at least 0.2 (between Cohen's 1988 'small' 0.1 and 'medium' 0.3), so a large "
        "batch does not flag a trivial association")

SCAN_NGRAM = 3
_source("SCAN_NGRAM", "convention: repeated word 3-grams measure looping text")

SCAN_EXAMPLE_CHARS = 120
_source("SCAN_EXAMPLE_CHARS", "convention: reply snippets in scan evidence are cut to 120 characters")

# --- the run doctor (whileai_core.hacking.doctor) -------------------------------------------------

DOCTOR_ZERO_SPREAD_SHARE = 0.5
_source("DOCTOR_ZERO_SPREAD_SHARE",
        "convention, untested: zero_advantage fires when a step's share of groups whose "
        "rollouts all got one reward has its 95% interval above 0.5 (more than half the batch "
        "teaches nothing; DAPO, Yu et al. 2025, arXiv:2503.14476, drops such groups); false "
        "alarms measured in bench/watch_anytime.py")

DOCTOR_RATE_SHARE = 1 / 6
_source("DOCTOR_RATE_SHARE",
        "a stated share of diagnose_run's error 1 - level for each sampled rate (zero_advantage, "
        "truncation_lock_in, diversity_collapse: 3 x 1/6), the scans' feature alarm taking the "
        "other half (SCAN_RUN_SHARE), so an honest run is called sick by sampling noise with "
        "probability at most 1 - level (a union bound); each rate's share is split over every run "
        "of 1, 2, 4, ... consecutive steps, pooled (hacking.doctor_signatures._rate_signature). "
        "Measured in bench/watch_anytime.py --only doctor (docs/reward-hacking.md)")

DOCTOR_TRUNCATION_SHARE = 0.5
_source("DOCTOR_TRUNCATION_SHARE",
        "convention, untested: truncation_lock_in fires when a step's share of rollouts cut at "
        "the token cap has its 95% interval above 0.5 (most replies unfinished); measured in "
        "bench/watch_anytime.py")

DOCTOR_DISTINCT_SHARE = 0.75
_source("DOCTOR_DISTINCT_SHARE",
        "convention, untested: diversity_collapse fires when the mean share of distinct replies "
        "in a group has its 95% interval below 0.75 (fewer than 3 in 4 rollouts of a prompt are "
        "new; sampling at temperature 1 gives about 1); the interval counts groups, so 8 groups "
        "at 0.25 reach 0.59 and 0.5 would never fire on them (bench/watch_anytime.py)")

DOCTOR_ENTROPY_FALL = 0.1
_source("DOCTOR_ENTROPY_FALL",
        "convention, untested: entropy_runaway fires when the logged entropy falls below 0.1x, "
        "or rises above DOCTOR_ENTROPY_RISE x, the median of its first 3 logged steps")

DOCTOR_ENTROPY_RISE = 3.0
_source("DOCTOR_ENTROPY_RISE", "convention, untested: see DOCTOR_ENTROPY_FALL")

DOCTOR_KL_MAX = 0.1
_source("DOCTOR_KL_MAX",
        "convention, untested: kl_runaway fires when the logged KL (TRL's kl to the reference; "
        "prime-rl's mismatch_kl between trainer and inference) exceeds max(0.1, 10x the median "
        "of its first 3 logged steps)")

DOCTOR_MAX_OFF_POLICY = 8
_source("DOCTOR_MAX_OFF_POLICY",
        "prime-rl 559b447 OrchestratorConfig.max_off_policy_steps default (Field(8, ge=0), "
        "packages/prime-rl-configs/src/prime_rl/configs/orchestrator.py); the run's own "
        "configs/orchestrator.json wins when present")

DOCTOR_STEPS_SHOWN = 50
_source("DOCTOR_STEPS_SHOWN", "convention: a diagnosis lists the last 50 steps (n of N)")

# --- pictures (whileai_core.pictures) -------------------------------------------------------------

PICTURE_DPI = 100
_source("PICTURE_DPI", "convention: 100 dpi; an 8 x 5 inch figure is 800 x 500 pixels")

# --- the TRL recipes as the core plans them (whileai_core.runs.run_shape, .methods.grpo_plan) -----
# The recipes in recipes/ read these too; their own knobs are in recipes/defaults.py.

GRPO_MODEL = "Qwen/Qwen2.5-1.5B-Instruct"
_source("GRPO_MODEL", "convention: a 1.5B instruct model with LoRA fits one A10G (24 GB)")

GRPO_GPU = "A10G"
_source("GRPO_GPU", "convention: one A10G; the seed recipe ran 40 steps in under fifteen minutes on it")

GRPO_STEPS = 40
_source("GRPO_STEPS", "seed TRL GRPO recipe: 40 steps default (120 for the longer runs)")

GRPO_BETA = 0.04
_source("GRPO_BETA", "seed TRL GRPO recipe: beta=0.04, small KL to the adapter-off reference "
        "(TRL 1.16's own default is 0.0, which loads no reference)")

GRPO_LOSS_TYPE = "bnpo"
_source("GRPO_LOSS_TYPE", "seed TRL GRPO recipe: the measured runs used bnpo (token-level, "
        "local-batch normalised); TRL 1.16's default is dapo, so the recipe pins it")

GRPO_LOSS_TYPES = ("grpo", "bnpo", "dr_grpo", "dapo")
_source("GRPO_LOSS_TYPES", "convention: the loss variants the recipe exposes (all accepted by TRL 1.16)")

GRPO_EPSILON = 0.2
_source("GRPO_EPSILON", "TRL 1.16 GRPOConfig.epsilon default (PPO clip, Schulman 2017)")

GRPO_DAPO_EPSILON_HIGH = 0.28
_source("GRPO_DAPO_EPSILON_HIGH",
        "Yu et al. 2025 (DAPO, arXiv:2503.14476): clip-higher at 0.28; TRL 1.16 GRPOConfig's "
        "epsilon_high help names the same value")

GRPO_BALANCE_SHARE = 0.25
_source("GRPO_BALANCE_SHARE",
        "seed TRL GRPO recipe: --balance 0.25 (no-id invented-id rate 0.23 to 0.08, the with-id "
        "gain slower at a fixed 120 steps)")

GRPO_NUM_GENERATIONS = 8
_source("GRPO_NUM_GENERATIONS", "TRL 1.16 GRPOConfig.num_generations default; seed: 8 samples per prompt")

GRPO_PROMPTS_PER_STEP = 4
_source("GRPO_PROMPTS_PER_STEP", "convention, untested: 4 prompts x 8 samples = 32 completions a step on one A10G")

GRPO_MAX_COMPLETION_TOKENS = 256
_source("GRPO_MAX_COMPLETION_TOKENS", "convention: a first reply or one tool call fits well under 256 tokens")

GRPO_LORA_R = 16
_source("GRPO_LORA_R", "convention, untested: LoRA rank 16, alpha 32 on all linear projections")

GRPO_PROMPT_COUNTS = (96, 16, 8)
_source("GRPO_PROMPT_COUNTS", "seed TRL GRPO recipe's template set skew (95 with an id, 16 without, "
        "8 off topic of 119), rounded to 120 prompts")

GRPO_HOLDOUT_SHARE = 0.2
_source("GRPO_HOLDOUT_SHARE", "seed TRL GRPO recipe: 20% of situations held out, stratified by category")

GRPO_HOLDOUT_SAMPLES = 4
_source("GRPO_HOLDOUT_SAMPLES", "seed TRL GRPO recipe: pass@1 on the holdout from four samples per prompt")

DPO_SAMPLES_PER_PROMPT = 8
_source("DPO_SAMPLES_PER_PROMPT", "seed TRL DPO comparison: 8 samples per prompt for the pairs")

DPO_PAIRS_PER_STEP = 8
_source("DPO_PAIRS_PER_STEP", "convention, untested: 8 pairs an optimizer step (4 a pass on an A10G, "
        "2 accumulated); a round's steps are DPO_EPOCHS x ceil(pairs / 8)")

DPO_EPOCHS = 2
_source("DPO_EPOCHS",
        "convention, untested: two passes over the round's pairs (about 100 at the defaults), "
        "fewer than the 3 epochs TRL 1.16's DPOConfig inherits from transformers' "
        "TrainingArguments; replaces a fixed 60 steps, which meant five passes over 96 pairs")

SFT_MODEL = "Qwen/Qwen2.5-1.5B-Instruct"
_source("SFT_MODEL", "the GRPO and DPO recipes' policy (GRPO_MODEL), so the three recipes compare "
        "on the same refund holdout")

SFT_GPU = "A10G"
_source("SFT_GPU", "convention: the GRPO recipe's GPU; LoRA SFT of a 1.5B model fits one A10G")

SFT_EPOCHS = 2
_source("SFT_EPOCHS", "convention, untested: two passes over a small SFT file; TRL 1.16's "
        "SFTConfig inherits 3 epochs from transformers' TrainingArguments")

SFT_EXAMPLES_PER_STEP = 8
_source("SFT_EXAMPLES_PER_STEP", "convention, untested: 8 examples an optimizer step (4 a pass on an "
        "A10G, 2 accumulated), as DPO_PAIRS_PER_STEP")

SFT_MAX_LENGTH = 1024
_source("SFT_MAX_LENGTH", "TRL 1.16 SFTConfig.max_length default (tokens per example, prompt and "
        "reply; longer ones are cut at the end)")

# --- runs and launching: the registry, GPUs, local runs (whileai_core.runs) -----------------------

STATE_DIR = "~/.whileai"
_source("STATE_DIR", "convention: the run registry lives under the user's home; override with "
        "--state-dir or WHILEAI_STATE_DIR")

RUN_ID_PATTERN = r"^run-[0-9a-f]{12}$"
_source("RUN_ID_PATTERN",
        "convention: 'run-' and the first 12 hex digits of a sha256 over the run's target and "
        "name (whileai_core.runs.registry); the one grammar every surface checks ids with")

REGISTRY_LOCK_WAIT_S = 5.0
_source("REGISTRY_LOCK_WAIT_S",
        "measured here: a registry write waits at most 5 s for SQLite's write lock (each write "
        "holds it for milliseconds), then fails with one clear error instead of stalling; 2 s "
        "failed an honest claim when 24 processes launched at once on 2 busy cores "
        "(tests/test_runs_concurrency.py run 4x in parallel). Replaced a 30 s busy timeout "
        "in the registry")

CANCEL_GRACE_S = 5.0
_source("CANCEL_GRACE_S", "convention, untested: a local run gets 5 s after SIGTERM before SIGKILL")

LOCAL_RUN_TIMEOUT_S = 3600.0
_source("LOCAL_RUN_TIMEOUT_S",
        "convention, untested: a local run (a recipe's CPU smoke) is killed after an hour; the "
        "smokes take seconds to minutes here")

PRIME_RL_RECIPE = "prime-rl"
_source("PRIME_RL_RECIPE", "convention: a prime-rl TOML config runs on the prime-rl recipe (recipes/prime-rl)")

RUN_GPU = {"grpo": "A10G", "dpo": "A10G", "prime-rl": "H100:2", "sft": SFT_GPU}
_source("RUN_GPU",
        "grpo: one A10G (GRPO_GPU); dpo: convention, the GRPO recipe's GPU so the two "
        "compare; prime-rl: its default deployment is 1 trainer + 1 inference GPU and NCCL needs "
        ">= 2 (prime-rl@559b447 RLConfig.deployment default: single_node, 1 + 1 GPUs); a config's [deployment] overrides the count"
        "; sft: SFT_GPU")

MODAL_GPU_TYPES = ("T4", "L4", "A10G", "A100", "A100-40GB", "A100-80GB", "L40S", "H100", "H200",
                   "B200")
_source("MODAL_GPU_TYPES", "Modal's GPU types accepted by Function.with_options(gpu=...) "
        "(https://modal.com/docs/guide/gpu)")

MODAL_MAX_GPUS = 8
_source("MODAL_MAX_GPUS", "Modal: at most 8 GPUs in one container (https://modal.com/docs/guide/gpu)")

# --- the launch forecast: prices, GPUs, measured runs (whileai_core.runs.forecast) ----------------
# What a plan says a run will take before it spends: tokens, memory per GPU, wall clock, dollars.
# Each constant below is one input of that forecast; the forecast labels every number it prints
# measured / fitted / derived / assumption after the weakest input it rests on (docs/launching.md,
# "The forecast").

MODAL_GPU_PRICE_PER_S = {"B200": 0.001736, "H200": 0.001261, "H100": 0.001097,
                         "A100-80GB": 0.000694, "A100-40GB": 0.000583, "A100": 0.000583,
                         "L40S": 0.000542, "A10G": 0.000306, "L4": 0.000222, "T4": 0.000164}
_source("MODAL_GPU_PRICE_PER_S",
        "Modal's published per-second GPU prices in US dollars (https://modal.com/pricing, 'GPU "
        "Tasks'), as transcribed on 2026-07-01 in api-evangelist/modal-labs "
        "plans/modal-labs-plans-pricing.yml, read here on 2026-12-01 (MODAL_GPU_PRICES_READ) "
        "through the search tool; Modal's own page was not reachable from this machine. The "
        "H100, A100-80GB, L40S, L4 and T4 rates agree with techbytes.app's reading of 2026-05-07 "
        "($3.9492/h = $0.001097/s for an H100) and the A10 rate with an audit dated 2026-03-25 "
        "($1.10/h). Modal's 'A100' is the 40 GB card (modal.com/docs/reference/modal.gpu). GPU "
        "time only: CPU cores and memory are billed on top (about $0.0000131 per core-second)")

MODAL_GPU_PRICES_READ = "2026-12-01"
_source("MODAL_GPU_PRICES_READ", "the date MODAL_GPU_PRICE_PER_S was read (see its source)")

GPU_SPECS = {"T4": (16.0, 65.0, 320.0), "L4": (24.0, 121.0, 300.0), "A10G": (24.0, 125.0, 600.0),
             "L40S": (48.0, 362.0, 864.0), "A100": (40.0, 312.0, 1555.0),
             "A100-40GB": (40.0, 312.0, 1555.0), "A100-80GB": (80.0, 312.0, 2039.0),
             "H100": (80.0, 989.0, 3350.0), "H200": (141.0, 989.0, 4800.0),
             "B200": (180.0, 2250.0, 8000.0)}
_source("GPU_SPECS",
        "(memory GB, dense bf16 tensor TFLOPS, memory bandwidth GB/s) from NVIDIA's datasheets: "
        "T4 (fp16; no bf16), L4, A10 (Modal's A10G is the A10's cloud variant), L40S, A100 40GB "
        "PCIe / 80GB SXM, H100 SXM, H200 SXM, B200 (DGX B200: 1,440 GB and 64 TB/s for 8). "
        "Peak figures: the forecast scales them by FORECAST_MFU")

NO_BF16_GPUS = ("T4",)
_source("NO_BF16_GPUS",
        "NVIDIA's T4 datasheet: Turing (compute capability 7.5) has fp16 and int8 tensor cores, no "
        "bf16 (bf16 needs compute capability 8.0, Ampere). The recipes and prime-rl train and "
        "serve in bf16, so the forecast never proposes such a GPU as a fix and warns when one is "
        "chosen (whether vLLM refuses bf16 there or casts to fp16 is not checked here)")

FORECAST_MFU = 0.3
_source("FORECAST_MFU",
        "assumption, untested: training runs at 30% of the GPU's dense bf16 peak. Large "
        "pre-training runs reach 46% (PaLM, Chowdhery et al. 2022, arXiv:2204.02311, table 3); "
        "RL trainers with small packed micro-batches run lower")

FORECAST_PROMPT_TOKENS = 128
_source("FORECAST_PROMPT_TOKENS",
        "assumption, untested: 128 prompt tokens per rollout (a chat template, a system line and "
        "a short task: reverse-text's sentences and the refund asks are shorter)")

FORECAST_GPU_RESERVED_GB = 1.5
_source("FORECAST_GPU_RESERVED_GB",
        "assumption, untested: 1.5 GB per GPU process for the CUDA context, kernels and the "
        "allocator's slack, beyond the tensors the forecast counts")

FORECAST_ACTIVATION_BYTES = 34
_source("FORECAST_ACTIVATION_BYTES",
        "Korthikanti et al. 2022 (arXiv:2205.05198), eq. 1: a transformer layer stores "
        "s*b*h*(34 + 5*a*s/h) bytes of 16-bit activations; FlashAttention keeps no s x s scores, "
        "leaving 34 bytes per token per hidden unit. With full activation checkpointing only one "
        "layer holds this at a time (the one being recomputed), the rest keep their 2-byte input "
        "(Chen et al. 2016, arXiv:1604.06174)")

FORECAST_LOGIT_BYTES = 4
_source("FORECAST_LOGIT_BYTES",
        "assumption: one float32 copy of the logits (tokens x vocabulary) per micro-batch; prime-rl "
        "559b447 computes them in chunks of trainer.model.fused_lm_head_token_chunk_size (8192 "
        "tokens), so at most that many tokens at once")

FORECAST_LOAD_GBPS = 1.0
_source("FORECAST_LOAD_GBPS",
        "assumption, untested: weights load from the hub cache volume at 1 GB/s")

FORECAST_BROADCAST_GBPS = 2.0
_source("FORECAST_BROADCAST_GBPS",
        "assumption, untested: prime-rl's default filesystem weight broadcast (inference."
        "weight_broadcast.type = 'filesystem', 559b447) writes and reloads the bf16 weights at "
        "2 GB/s each step; an nccl broadcast is counted as free")

FORECAST_VLLM_START_S = 60.0
_source("FORECAST_VLLM_START_S",
        "assumption, untested: a vLLM server (the OPD teacher the prime-rl recipe starts before "
        "rl) takes about a minute to answer /v1/models beyond reading its weights (engine start, "
        "compilation, CUDA graph capture); the recipe records what it took (teacher."
        "ready_after_s), which collect_run sets beside this")

FORECAST_VOLUME_GBPS = 0.5
_source("FORECAST_VOLUME_GBPS",
        "assumption, untested: the prime-rl recipe copies what it keeps of a run (the final "
        "weights and the trainer's checkpoint) from the container's disk to a Modal volume at "
        "0.5 GB/s; the recipe records what the copy took (kept.seconds), which collect_run sets "
        "beside this")

MODAL_CONTAINER_START_S = 60.0
_source("MODAL_CONTAINER_START_S",
        "assumption, untested: a Modal GPU container starts in about a minute with its image "
        "cached (billed; a first pull of a several-GB image takes longer)")

PRIME_RL_MEASURED = {"grpo": (884.0, 128, "grpo"), "opsd": (484.0, 32, "opsd"),
                     "opd": (894.0, 128, "opd")}
_source("PRIME_RL_MEASURED",
        "measured: the reverse-text arms of the seed recipe recipes/prime-rl follows (run "
        "e2e1, 2026-09-20, each arm in its own H100:2 container, prime-rl image v0.8.1.dev63, "
        "Qwen3-0.6B, 20 steps, 128 completion tokens; grpo and opd 128 rollouts a step, opsd 32): "
        "per arm (wall clock s, rollouts a step, prime-rl algo). The forecast fits its start-up "
        "and per-rollout seconds to grpo and opsd and holds opd out as a check. Taken as rl's "
        "own time, the part this recipe's clock (wall_clock_s) covers: whether the seed's clock "
        "also covered the OPD teacher's start and the end-of-run copy is not stated")

PRIME_RL_MEASURED_SETUP = {"model": "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT", "gpu": "H100",
                           "steps": 20, "max_tokens": 128, "seq_len": 2048,
                           "teacher": "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL"}
_source("PRIME_RL_MEASURED_SETUP",
        "what the PRIME_RL_MEASURED runs shared (the seed recipe; recipes/prime-rl/README.md): "
        "the student, one H100 for inference and one for training, 20 steps, 128 completion "
        "tokens, seq_len 2048, full weights, prime-rl's default vLLM memory share; opd's teacher, "
        "served on localhost beside the policy")

PRIME_RL_FIT_ARMS = ("grpo", "opsd")
_source("PRIME_RL_FIT_ARMS",
        "the two measured arms that differ in rollouts a step (128 and 32), so a fit of start-up "
        "plus seconds per rollout has one answer; opd repeats grpo's shape with a teacher")

TRL_GRPO_MEASURED_S = 900.0
_source("TRL_GRPO_MEASURED_S",
        "measured, an upper bound: the seed TRL GRPO recipe ran its default 40 steps 'in under "
        "fifteen minutes' on one A10G (Qwen2.5-1.5B-Instruct + LoRA, 4 prompts x 8 samples, 256 "
        "completion tokens); the forecast fits the seconds of one generated-token step of "
        "transformers' generate to it")

LOCAL_SMOKE_S = {"grpo": (6.0, 39.0), "dpo": (24.0, 76.0), "sft": (11.0, 48.0)}
_source("LOCAL_SMOKE_S",
        "measured: each recipe's offline smoke on this repository's 2-core machine, 2026-11-30, "
        "with it nearly idle (low) and shared by other jobs (high) (docs/launching.md, Recipes); "
        "the forecast is their geometric mean")

LOCAL_SMOKE_ASSUMED_S = 30.0
_source("LOCAL_SMOKE_ASSUMED_S",
        "assumption, untested: a recipe whose smoke was never timed here takes about 30 s")

DPO_PAIRS_PER_PROMPT = 308 / 548
_source("DPO_PAIRS_PER_PROMPT",
        "measured elsewhere: the seed DPO round built 308 pairs from 548 train prompts (8 samples "
        "each); used as an assumption for how many pairs, so steps, a DPO round trains")

FORECAST_STEPS_IF_UNSET = 100
_source("FORECAST_STEPS_IF_UNSET",
        "assumption: a prime-rl config without max_steps trains until stopped; its forecast is "
        "for 100 steps and says so")

FORECAST_UNKNOWN_RECIPE_H = 1.0
_source("FORECAST_UNKNOWN_RECIPE_H",
        "assumption, untested: a recipe this forecast knows no shape of is planned at 1 hour")

FORECAST_ERROR_RUNS = 5
_source("FORECAST_ERROR_RUNS",
        "convention: a plan shows the forecast's error over the last 5 collected runs of its backend")

# --- init: wiring a project to the pack (whileai_core.init) ---------------------------------------

INIT_SERVER_NAME = "whileai"
_source("INIT_SERVER_NAME", "convention: the MCP server's name in every host's config (the README's "
        "examples use it)")

AGENTS_SECTION_BEGIN = "<!-- whileai-skills:begin -->"
_source("AGENTS_SECTION_BEGIN", "convention: an HTML comment (invisible when AGENTS.md is rendered) "
        "marking where init's section starts, so a re-run replaces it instead of adding another")

AGENTS_SECTION_END = "<!-- whileai-skills:end -->"
_source("AGENTS_SECTION_END", "convention: the matching end marker of init's AGENTS.md section")

# --- the path door and reading limits (whileai_core.safepath, .safejson, .admission) --------------

MAX_ROWS_FILE_MB = 1024
_source("MAX_ROWS_FILE_MB",
        "convention, untested: the largest rows/traces/judge file read (MB); 1,000,000 graded rows "
        "are 89 MB (bench/bench_core.py), so ten times that fits with room; raise it with "
        "WHILEAI_MAX_ROWS_MB or whileai-mcp --max-file-mb rows=MB")

MAX_TOKENIZER_FILE_MB = 128
_source("MAX_TOKENIZER_FILE_MB",
        "convention, untested: Hugging Face tokenizer.json files are 2-35 MB (Qwen3 11 MB, Gemma "
        "3 33 MB); 128 MB leaves room")

MAX_CONFIG_FILE_MB = 4
_source("MAX_CONFIG_FILE_MB",
        "convention, untested: prime-rl rl TOMLs are a few KB (the goldens are under 2 KB)")

MAX_ARCHIVE_MB = 64
_source("MAX_ARCHIVE_MB",
        "measured here: Inspect's reader holds up to ~51x what a .eval log unpacks to (the red "
        "team's 114 KB log reached 5.3 GB), so what an archive unpacks to has its own limit, "
        "below the rows limit: 64 MB caps one import near 3.5 GB (ARCHIVE_MEMORY_FACTOR); "
        "WHILEAI_MAX_ARCHIVE_MB or --max-file-mb archive=MB")

READ_TIMEOUT_S = 60.0
_source("READ_TIMEOUT_S",
        "convention, untested: a local 1 GB file reads in about a second; 60 s only stops a file "
        "on a stalled network mount from holding a tool worker")

ROWS_MEMORY_FACTOR = 26
_source("ROWS_MEMORY_FACTOR",
        "measured here: the rows reader's peak memory over the file's size was 5.9x on graded "
        "rows (108 MB -> 634 MB) and 25x on rows padded with empty objects (30 MB -> 750 MB), "
        "the worst JSON gives (a 3-byte '{},' becomes a 64-byte dict and a pointer)")

ARCHIVE_MEMORY_FACTOR = 55
_source("ARCHIVE_MEMORY_FACTOR",
        "measured here: inspect_ai 0.3.285's reader (and the rows built from it) peaked at 51x "
        "what a .eval log unpacks to (30 MB of empty objects in a sample's metadata -> 1.54 GB)")

HEAVY_READ_BYTES = 8 << 20
_source("HEAVY_READ_BYTES",
        "convention: a rows file or archive of 8 MB or more is a heavy read (parsing it holds "
        "~11x its size in memory, measured on graded rows)")

HEAVY_READS_AT_ONCE = 2
_source("HEAVY_READS_AT_ONCE",
        "convention: at most 2 tool calls parse a heavy file at once in the server (the GIL runs "
        "one parse at a time anyway; more only multiplied memory: 9 concurrent calls on a "
        "100 MB file ran out of memory); the rest wait TOOL_QUEUE_WAIT_S, then are answered busy")

HEAVY_WAIT_S = 60.0
_source("HEAVY_WAIT_S",
        "convention, untested: a call that finds every place for a heavy read taken waits a "
        "minute (a 100 MB file parses in ~10 s here), then is answered busy")

JSON_STEP_CHARS = 1 << 20
_source("JSON_STEP_CHARS",
        "measured here: json.loads holds the GIL for a whole document (a 100 MB array delayed "
        "tools/list 1.6 s, a 100 MB JSONL 5.2 s); a large array is parsed in steps of about "
        "4 M characters (~40 ms each), so the server's event loop gets the GIL between steps")

JSON_MAX_DEPTH = 128
_source("JSON_MAX_DEPTH",
        "serde_json's default recursion limit (128): objects or arrays nested deeper than this "
        "are refused by every reader of records (whileai_core.records), one limit instead of "
        "Python's, which moves with the stack a reader runs on (~990 levels on one, fewer in "
        "a server thread); no record this project reads nests past ten")

# --- children we start: a reward command, a local run (whileai_core.hacking.reward, .failures) ----

CHILD_MEMORY_MB = 8192
_source("CHILD_MEMORY_MB",
        "convention, untested: a reward child or a local run may map at most 8 GB of address "
        "space (RLIMIT_AS, set in the child before any user code runs); importing numpy and "
        "torch on CPU maps well under that; WHILEAI_CHILD_MEMORY_MB changes it")

CHILD_PROCESSES = 256
_source("CHILD_PROCESSES",
        "convention, untested: a reward child or a local run may have at most 256 more tasks "
        "(processes and threads, as RLIMIT_NPROC counts them) than the user had when it started; "
        "a CPU smoke's torch threads fit well under it; WHILEAI_CHILD_PROCESSES changes it")

CHILD_STOP_GRACE_S = 5.0
_source("CHILD_STOP_GRACE_S",
        "convention, untested: a reward's supervisor gets 5 s past the reward's own time limit to "
        "kill its process tree and exit before the parent kills it")

CHILD_ENV_NAMES = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ",
                   "TMPDIR", "TEMP", "TMP", "TERM")
_source("CHILD_ENV_NAMES",
        "convention: the variables a child we start (a reward, a local run) keeps from the "
        "server's environment, with every LC_* and the CHILD_ENV_PREFIXES below; nothing else "
        "reaches it (no token or key) unless the call names it (pass_env)")

CHILD_ENV_PREFIXES = ("LC_", "OMP_", "MKL_", "OPENBLAS_", "CUDA_", "XDG_")
_source("CHILD_ENV_PREFIXES",
        "convention: thread-count, locale and device variables a numeric child may need; a name "
        "that looks secret (KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL) is dropped even so")

# --- answers' size bounds (whileai_core.result, .tables; the server's tools) ----------------------

MCP_ANSWER_MAX_BYTES = 8192
_source("MCP_ANSWER_MAX_BYTES",
        "convention, untested: 'a few KB': the bound a default tool answer (structured "
        "JSON plus its text summary) stays under whatever the input size; measured by "
        "bench/bench_responses.py and held by tests/test_server_bounded.py")

MCP_INLINE_ROWS_MAX = 1000
_source("MCP_INLINE_ROWS_MAX",
        "convention, untested: about 60k tokens of JSON rows; past this an agent should write a "
        "file and pass its path (the server reads it, the prompt stays small)")

TEXT_SHOWN_CHARS = (2000, 400, 120, 40)
_source("TEXT_SHOWN_CHARS",
        "convention: a string in an answer is cut to the first of these lengths that brings the "
        "answer under its byte bound (a 10 MB task id gave a 50 MB answer); the cut says "
        "'n of N characters'")

MESSAGE_WORD_CHARS = 200
_source("MESSAGE_WORD_CHARS",
        "convention: a run of more than 200 characters without a space in an error message (an "
        "echoed id, a path) is cut, saying 'n of N characters'")

MESSAGE_MAX_CHARS = 4000
_source("MESSAGE_MAX_CHARS",
        "convention: an error message is at most 4,000 characters (its head and its fix kept)")

LIST_SHOWN_MAX = 20
_source("LIST_SHOWN_MAX",
        "convention, untested: a tool answer shows at most 20 items of any list (records, drops, "
        "task ids, runs) and says how many of how many it shows; `out` writes them all")

TASK_EXTREMES = 5
_source("TASK_EXTREMES",
        "convention, untested: a per-task summary names the 5 lowest and 5 highest tasks (enough "
        "to look at a few failures and a few passes; the rest is paged or written to a file)")

TASK_PAGE_MAX = 200
_source("TASK_PAGE_MAX",
        "convention, untested: at most 200 tasks per page (about 12 KB of JSON), so a page asked "
        "for stays a readable tool answer; the whole table goes to a file (`out`)")

TASK_PAGE_DEFAULT = 50
_source("TASK_PAGE_DEFAULT", "convention, untested: 50 tasks per page by default (~3 KB)")

# --- following a run (whileai_core.runs.follow) -------------------------------------------------

RUN_TASK_POLL_S = 2.0
_source("RUN_TASK_POLL_S",
        "convention, untested: a run followed until it finishes (a launch, collect or watch served "
        "as an MCP task) is asked for its status every 2 s, and a client is told to poll the task "
        "as often; a local smoke finishes in seconds to minutes and a Modal status call costs one "
        "request")
