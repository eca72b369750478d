"""Pass rates with intervals over tasks, paired comparisons, noise floors, holdout sizing.

The unit of analysis is the task: rollouts are reduced to per-task values first, then every
interval is over tasks. A rate's interval depends only on its per-task values, the level and the
seed (:func:`.intervals.task_intervals`), so the same rows give the same interval in every tool
(``pass_at``, each arm of ``compare``, ``route``, ``teacher_clears``) and every surface.
"""

from __future__ import annotations

from .arms import pair_tasks
from .compare import Comparison, Verdict, compare
from .holdout import HoldoutSize, holdout_size
from .intervals import Interval, task_interval, task_intervals
from .many import Behaviour, ManyComparisons, adjust_bh, adjust_holm, compare_many
from .noise import NoiseFloor, noise_band, noise_floor
from .paired import min_paired_tasks, paired_interval
from .rates import (PassAt, Rate, TaskRate, check_metric, field_share, field_shares, mean_reward,
                    pass_at, pass_at_k_per_task, pass_pow_k_per_task, pass_rate)
from .report import rate

__all__ = ["Behaviour", "Comparison", "HoldoutSize", "Interval", "ManyComparisons", "NoiseFloor",
           "PassAt", "Rate", "TaskRate", "Verdict", "adjust_bh", "adjust_holm", "check_metric", "compare",
           "compare_many", "field_share", "field_shares", "holdout_size", "mean_reward", "min_paired_tasks",
           "noise_band", "noise_floor", "pair_tasks", "paired_interval", "pass_at",
           "pass_at_k_per_task", "pass_pow_k_per_task", "pass_rate", "rate", "task_interval",
           "task_intervals"]
