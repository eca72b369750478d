"""The names and shapes that give a field its role (:mod:`whileai_core.roles` reads them).

A field's role comes first from its name, lower-cased (``judge_model`` is a grader's field,
``repo`` a family's), then word by word (``accuracy_reward`` is another score, ``repo_name`` a
family, ``request_id`` an id), then from its shape when the name says nothing: true/false is a
flag, nested values and long strings are text, a different string in most rows an id. The
patterns read a grader field's values (``llm-judge``, ``unit-tests``, ``human``).
"""

from __future__ import annotations

import re
from typing import Literal

from .defaults import CATEGORY_FIELD
from .records import TASK_ALIASES, TASK_FIELD

Role = Literal["task", "reward", "score", "model", "step", "grader", "family", "category",
               "budget", "turns", "text", "id", "flag", "unknown"]

# names, lower-cased, with their role; a name is also matched word by word (split on _ - . space)
NAMES: dict[str, Role] = {
    **{n: "task" for n in (TASK_FIELD, *TASK_ALIASES, "example_id", "prompt_id", "question_id",
                           "problem_id", "instance_id", "doc_id", "sample_id")},
    "reward": "reward",
    **{n: "model" for n in ("model", "model_id", "model_name", "policy", "sampler", "generator",
                            "student", "actor", "checkpoint", "ckpt", "revision", "adapter",
                            "lora", "run", "run_name", "run_id")},
    **{n: "step" for n in ("step", "global_step", "train_step", "training_step", "iteration",
                           "policy_version", "version", "epoch", "ckpt_step", "checkpoint_step")},
    **{n: "grader" for n in ("grader", "grader_type", "grader_model", "graded_by", "judge",
                             "judge_model", "judge_name", "judge_reasoning", "judge_prompt",
                             "rubric", "scorer", "evaluator", "annotator", "annotator_id",
                             "rater", "labeler", "label_source", "feedback_source",
                             "verifier", "grading")},
    **{n: "family" for n in ("family", "repo", "repository", "dataset", "source", "suite",
                             "benchmark", "subset", "project", "document", "template", "origin",
                             "collection", "corpus", "task_family", "env", "environment")},
    **{n: "category" for n in (CATEGORY_FIELD, "type", "kind", "difficulty", "level",
                               "behaviour", "behavior", "tag", "tags", "topic", "skill",
                               "subject", "task_type", "case", "bucket", "group")},
    **{n: "budget" for n in ("max_tokens", "completion_tokens", "finish_reason", "truncated",
                             "stop_reason", "prompt_tokens", "total_tokens", "num_tokens",
                             "output_tokens", "max_new_tokens", "max_completion_tokens",
                             "max_gen_toks", "usage", "length", "tokens")},
    **{n: "turns" for n in ("turns", "num_turns", "n_turns", "rounds", "n_messages")},
    **{n: "text" for n in ("prompt", "completion", "response", "answer", "question", "output",
                           "reply", "reasoning", "messages", "trajectory", "input", "target",
                           "text", "content", "chosen", "rejected", "doc", "info", "resps",
                           "filtered_resps", "arguments", "system_prompt")},
    **{n: "flag" for n in ("errored", "error", "thumbs_up", "well_formed", "correct")},
}
_SCORE_WORDS = ("reward", "score", "accuracy", "acc", "exact", "match", "f1", "bleu", "rouge",
                "lcs", "pass", "grade", "rating", "correct", "metric", "win")
_ID_WORDS = ("id", "uuid", "hash", "key")
# fields of these roles whose values, when several, split the rows into several policies
WRITER_STEPS = {"step", "global_step", "train_step", "training_step", "iteration", "ckpt_step",
                 "checkpoint_step"}

JUDGE = re.compile(r"llm|judge|gpt|claude|gemini|model|rubric|qwen|llama|mistral|deepseek|/")
HUMAN = re.compile(r"human|user|annotat|crowd|rater|label|thumb|feedback|expert|people|manual")
PROGRAM = re.compile(r"unit|test|regex|exact|program|verif|rule|code|script|match|exec|compil|"
                      r"lcs|string|parse|checker|symbolic|sympy")
RATING_TOPS = (5, 7, 10)


def words(name: str) -> list[str]:
    return [w for w in re.split(r"[\s_\-.]+", name.lower()) if w]


def by_name(name: str, kinds: set, n_values: int | None, n_tasks: int,
             within: str | None) -> tuple[Role, str]:
    low = name.lower()
    if low in NAMES:
        role = NAMES[low]
        if role == "task" and name not in (TASK_FIELD, *TASK_ALIASES) and n_values != n_tasks:
            return "id", "an id that is not one per task"
        if role == "flag" and not kinds <= {bool}:
            return ("score", "a score by its name") if kinds <= {int, float} else (
                "unknown", "not a yes/no")
        return role, "by its name"
    parts = words(name)
    numeric = bool(kinds) and kinds <= {int, float, bool}
    if numeric and any(w in _SCORE_WORDS for w in parts):
        return "score", "a score by its name"
    for w in parts:   # judge_score is a score (above); judge_id a grader; repo_name a family
        if w in ("judge", "grader", "rubric", "annotator", "rater", "scorer"):
            return "grader", "by its name"
    if parts and parts[-1] in _ID_WORDS:
        return "id", "by its name"
    if any(w in ("step", "version", "epoch") for w in parts):
        return "step", "by its name"
    for w in parts:
        role = NAMES.get(w)
        if role in ("family", "category", "budget", "turns", "text", "model"):
            return role, "by its name"
    return "unknown", ""


def by_shape(kinds: set, col: list, present: int, n_values: int | None,
              n_rows: int) -> tuple[Role, str]:
    if not present:
        return "unknown", "no row carries a value"
    if kinds <= {bool}:
        return "flag", "true/false"
    if kinds & {list, dict}:
        return "text", "nested values"
    if kinds == {str} and n_values is not None:
        sample = [v for v in col[:2000] if v is not None]
        long = sum(map(len, sample)) / max(1, len(sample)) > 40
        if long or n_values > 0.9 * present:
            return ("text", "long strings") if long else ("id", "a different value in most rows")
    return "unknown", ""
