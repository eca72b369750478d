"""What an expert concludes from each shape of tests/shapes/make_shapes.py, written before the
route was run on it (the commit that added this file holds no change to the library).

Each reading is one call over MCP with the default tools, the expert's conclusion in words
(``reading``), and checks an answer must pass to agree with it (``checks``; runner.py evaluates
them). A check is a tuple:

* ``("ok",)``: a result, not a tool error; ``("error", [words])``: a tool error naming them;
* ``("eq"|"ne", path, value)``, ``("in"|"not_in", path, [values])``, ``("has", path, item)``
  and ``("lacks_item", path, item)`` on the structured answer (``path`` is dotted: ``a.b.0``);
* ``("approx", path, value, tol)``;
* ``("mentions", [words])`` / ``("never", [words])``: in the answer's text or data, any case;
* ``("callable_next",)``: the next step names a tool the default list serves and carries no
  placeholder value (a value with ``<`` in it);
* ``("any", [checks], [checks], ...)``: one of the groups holds whole.

Paths in ``args`` name shapes of make_shapes.build (``"@two_models"``; ``"@families.1"`` is the
second file of a pair), resolved under the server's root.
"""

from __future__ import annotations

MODEL = "Qwen/Qwen3-8B"

READINGS: list[dict] = [
    {"shape": "judge_likert", "system": "an LLM-judge pipeline",
     "call": ("route_rows", {"rows": "@judge_likert", "model": MODEL}),
     "reading": "The reward is an LLM judge's 1-10 rating (grader, judge_model, rubric). Audit the "
                "judge against blind human labels before any RL on its score (agreement, false "
                "passes, length bias), and say how many replies to label; an RL config on it "
                "must state the pass mark or rescale to [0, 1].",
     "checks": [("ok",), ("eq", "route", "audit_judge"), ("mentions", ["label", "judge_model"]),
                ("callable_next",)]},
    {"shape": "judge_verdicts", "system": "an LLM-judge pipeline",
     "call": ("route_rows", {"rows": "@judge_verdicts", "model": MODEL}),
     "reading": "Pass/fail verdicts of a model judge (judge_model, judge_reasoning): the passes "
                "are the judge's, so audit it before GRPO on them.",
     "checks": [("ok",), ("eq", "route", "audit_judge"), ("mentions", ["judge_model"]),
                ("callable_next",)]},
    {"shape": "program_percent", "system": "a team's unit-test grader",
     "call": ("route_rows", {"rows": "@program_percent", "model": MODEL}),
     "reading": "A program (grader unit-tests) scores 0-100: no judge to audit. Say the scale and "
                "that a pass mark must be given on it; the score spreads within tasks: GRPO.",
     "checks": [("ok",), ("eq", "route", "grpo"), ("mentions", ["0-100"]),
                ("ne", "route", "audit_judge")]},
    {"shape": "two_models", "system": "a team's concatenated eval",
     "call": ("route_rows", {"rows": "@two_models", "model": MODEL}),
     "reading": "Two writers in one file, 240 rows each. The 8B's own rows are on-policy and "
                "mixed: route those (k = 4, GRPO), or refuse with the counts; never read k = 8, "
                "never distil the 8B from the 1.7B.",
     "checks": [("any", [("error", ["Qwen/Qwen3-8B", "Qwen/Qwen3-1.7B", "240"])],
                 [("ok",), ("eq", "answers.1.evidence.k", 4), ("eq", "route", "grpo")]),
                ("never", ["from the model that wrote them"])]},
    {"shape": "two_models_rate", "system": "a team's concatenated eval",
     "call": ("rate", {"rows": "@two_models"}),
     "reading": "One pass rate over two models means nothing: refuse, naming both with their "
                "row counts and how to keep one model's rows.",
     "checks": [("error", ["Qwen/Qwen3-8B", "Qwen/Qwen3-1.7B", "240", "model_filter"])]},
    {"shape": "two_models_filtered", "system": "a team's concatenated eval",
     "call": ("rate", {"rows": "@two_models", "model_filter": "Qwen/Qwen3-1.7B"}),
     "reading": "Selecting the 1.7B's rows gives its own pass@1 on its 240 rows (0.279, counted "
                "by make_shapes).",
     "checks": [("ok",), ("eq", "rate.n_rows", 240), ("approx", "rate.value", 0.2792, 0.0005)]},
    {"shape": "two_other_models", "system": "a team's concatenated eval",
     "call": ("route_rows", {"rows": "@two_other_models", "model": "Qwen/Qwen3-4B"}),
     "reading": "Neither writer is the 4B to be trained, and the two are different models: "
                "refuse to read them as one set, with both writers' counts and the fix (re-grade "
                "the 4B, or keep one writer's rows).",
     "checks": [("error", ["Qwen/Qwen3-8B", "Qwen/Qwen3-32B", "160"])]},
    {"shape": "checkpoints", "system": "a team's checkpoint sweep",
     "call": ("rate", {"rows": "@checkpoints"}),
     "reading": "Three checkpoints (base, step-100, step-200) on the same tasks: no pass rate over "
                "all three; refuse naming the checkpoint field, its values and how to pick one.",
     "checks": [("error", ["checkpoint", "step-200", "model_filter"])]},
    {"shape": "smaller_teacher", "system": "a team's teacher candidate",
     "call": ("route_rows", {"rows": "@smaller_teacher.0", "model": MODEL,
                             "teacher_rows": "@smaller_teacher.1"}),
     "reading": "The candidate scores higher but is a 1.7B fine-tune, smaller than the 8B "
                "student: never propose distilling the 8B from it; the student's own split "
                "tasks give GRPO.",
     "checks": [("ok",), ("ne", "route", "opd"), ("never", ["distil it on-policy"])]},
    {"shape": "budget_teacher", "system": "a served teacher and student, same cap",
     "call": ("route_rows", {"rows": "@budget_teacher.0", "model": MODEL,
                             "teacher_rows": "@budget_teacher.1"}),
     "reading": "The 32B clears on the same 2048-token cap: OPD, and the config proposed takes "
                "its completion budget (2048) from the rows.",
     "checks": [("ok",), ("eq", "route", "opd"), ("eq", "next_step.arguments.max_tokens", 2048),
                ("callable_next",)]},
    {"shape": "nobudget_teacher", "system": "a served teacher and student, no budgets",
     "call": ("route_rows", {"rows": "@nobudget_teacher.0", "model": MODEL,
                             "teacher_rows": "@nobudget_teacher.1"}),
     "reading": "The 32B clears; the rows carry no token cap, so the OPD config's completion "
                "budget is a guess the answer must say is one (give max_tokens).",
     "checks": [("ok",), ("eq", "route", "opd"), ("mentions", ["max_tokens"]),
                ("callable_next",)]},
    {"shape": "families_compare", "system": "300 tasks from 10 repositories",
     "call": ("compare", {"before": "@families.0", "after": "@families.1"}),
     "reading": "The gain sits in 2 of 10 repos: by task it looks moved (+0.068), clustered by "
                "repo it is +0.068 [-0.034, +0.169] (CR1 by hand). Not a bare 'moved'; name "
                "`repo` and how to turn the clustering off.",
     "checks": [("ok",), ("ne", "verdict", "moved"), ("mentions", ["repo", "cluster"])]},
    {"shape": "families_rate", "system": "300 tasks from 10 repositories",
     "call": ("rate", {"rows": "@families.0"}),
     "reading": "pass@1 with the interval over repos beside the task one, naming `repo`.",
     "checks": [("ok",), ("mentions", ["repo", "families"])]},
    {"shape": "few_families", "system": "90 tasks from 3 datasets",
     "call": ("compare", {"before": "@few_families.0", "after": "@few_families.1"}),
     "reading": "Three datasets, the gain in one: three families are too few for a trustworthy "
                "family interval; say so, name `dataset`, and do not call it moved on the task "
                "interval alone.",
     "checks": [("ok",), ("ne", "verdict", "moved"), ("mentions", ["dataset", "families"])]},
    {"shape": "lm_eval_pair", "system": "lm-eval --log_samples, two folders",
     "call": ("compare", {"before": "@lm_eval_pair.0", "after": "@lm_eval_pair.1"}),
     "reading": "Read both folders as they are: 250 docs paired, +0.008 (6 fixed, 4 broken), "
                "not moved; name the metric read (exact_match).",
     "checks": [("ok",), ("eq", "n_paired", 250), ("ne", "verdict", "moved"),
                ("mentions", ["exact_match"])]},
    {"shape": "lm_eval_output_paths", "system": "lm-eval --log_samples, two --output_path folders",
     "call": ("compare", {"before": "@lm_eval_roots.0", "after": "@lm_eval_roots.1"}),
     "reading": "The folders lm-eval was given as --output_path (each holding one model's folder) "
                "read as they are too: 250 docs paired, not moved.",
     "checks": [("ok",), ("eq", "n_paired", 250), ("ne", "verdict", "moved")]},
    {"shape": "lm_eval_two_metrics", "system": "lm-eval --log_samples, multiple choice",
     "call": ("rate", {"rows": "@lm_eval_two_metrics"}),
     "reading": "Two metrics (acc, acc_norm) and none chosen: refuse, naming both and how to "
                "choose one.",
     "checks": [("error", ["acc_norm", "acc"])]},
    {"shape": "inspect_one_scorer", "system": "Inspect (inspect_ai's own eval)",
     "call": ("rate", {"rows": "@inspect_one_scorer"}),
     "reading": "An Inspect log with one scorer reads as it is: 30 samples x 4 epochs, the "
                "scorer named (match).",
     "checks": [("ok",), ("eq", "rate.n_tasks", 30), ("mentions", ["match"])]},
    {"shape": "inspect_two_scorers", "system": "Inspect (inspect_ai's own eval)",
     "call": ("rate", {"rows": "@inspect_two_scorers"}),
     "reading": "Two scorers (match, includes): refuse, naming both and how to choose.",
     "checks": [("error", ["match", "includes"])]},
    {"shape": "prime_rl_one_step", "system": "prime-rl run folder",
     "call": ("route_rows", {"rows": "@prime_rl_one_step",
                             "model": "PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT"}),
     "reading": "A run folder with one eval step reads as it is (LCS in [0, 1], spread in every "
                "prompt): GRPO on the reward, saying which step was read.",
     "checks": [("ok",), ("eq", "route", "grpo"), ("mentions", ["step 0"])]},
    {"shape": "prime_rl_two_steps", "system": "prime-rl run folder",
     "call": ("rate", {"rows": "@prime_rl_two_steps"}),
     "reading": "Eval episodes at steps 0 and 20 are two policies: refuse, naming the steps and "
                "how to read one.",
     "checks": [("error", ["step", "20"])]},
    {"shape": "paid_truncation", "system": "an overlap score that runs on",
     "call": ("route_rows", {"rows": "@paid_truncation", "model": MODEL}),
     "reading": "Cut-off replies score about twice what finished ones do, paired within task: a "
                "reward hole. fix_reward, whatever no reply reaching 1.0 says.",
     "checks": [("ok",), ("eq", "route", "fix_reward"), ("mentions", ["truncated"])]},
    {"shape": "honest_truncation", "system": "an overlap score that penalises cut-offs",
     "call": ("route_rows", {"rows": "@honest_truncation", "model": MODEL}),
     "reading": "Cut-off replies score less than finished ones: no hole; GRPO on the reward.",
     "checks": [("ok",), ("eq", "route", "grpo")]},
    {"shape": "pilot", "system": "a pilot of 120 tasks",
     "call": ("route_rows", {"rows": "@pilot", "model": MODEL}),
     "reading": "GRPO on the split tasks; the next call runs as given or names what it still "
                "needs (the taskset); a held-out test that detects 5 points needs more than the "
                "120 tasks the pilot has, and the answer says what the pool allows.",
     "checks": [("ok",), ("eq", "route", "grpo"), ("callable_next",),
                ("has", "next_step.needs", "taskset"), ("mentions", ["120 tasks"])]},
    {"shape": "threshold_above", "system": "0/1 rows, a pass mark of 5",
     "call": ("route_rows", {"rows": "@binary_48", "model": MODEL, "threshold": 5}),
     "reading": "No reward reaches 5 on 0/1 rows: an error naming the rewards' range, never a "
                "GRPO route.",
     "checks": [("error", ["threshold", "0", "1"])]},
    {"shape": "turns_zero", "system": "a team's export",
     "call": ("describe_rows", {"rows": "@turns_zero"}),
     "reading": "`turns` is 0 on every row: it cannot change the route and is not said to.",
     "checks": [("ok",), ("lacks_item", "route_fields", "turns")]},
    {"shape": "multi_turn", "system": "an agent's episodes",
     "call": ("describe_rows", {"rows": "@multi_turn"}),
     "reading": "`turns` varies (1-6) with tokens summed over turns: it changes the route.",
     "checks": [("ok",), ("has", "route_fields", "turns")]},
    {"shape": "production_log", "system": "a production log",
     "call": ("route_rows", {"rows": "@production_log", "model": MODEL}),
     "reading": "One reply per request, a user's thumbs-up as the reward: single_rollout; the "
                "fields it does not read (latency_ms, user_id...) are listed.",
     "checks": [("ok",), ("eq", "route", "single_rollout"), ("mentions", ["latency_ms"])]},
    {"shape": "trl_completions", "system": "TRL GRPOTrainer completions",
     "call": ("rate", {"rows": "@trl_completions"}),
     "reading": "Completions logged at steps 50 and 100 are two policies: refuse one rate over "
                "both, naming `step` and its values.",
     "checks": [("error", ["step", "50", "100"])]},
    {"shape": "verifiers_results", "system": "verifiers vf-eval results",
     "call": ("rate", {"rows": "@verifiers_results"}),
     "reading": "vf-eval's rows read as they are: example_id is the task (40 tasks x 3).",
     "checks": [("ok",), ("eq", "rate.n_tasks", 40)]},
    {"shape": "score_not_reward", "system": "a team's file",
     "call": ("rate", {"rows": "@score_not_reward"}),
     "reading": "No `reward`; `score` is the look-alike: refuse with the rename.",
     "checks": [("error", ["score", "reward"])]},
]
