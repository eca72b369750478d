"""Pass rates with intervals over tasks, paired comparisons, noise floors, holdout sizing.

The unit of analysis is the task: rollouts are reduced to per-task values first, then every
interval is over tasks. Modules, by concept:

* :mod:`.intervals`: the one interval rule for a mean over tasks (which interval at which n);
* :mod:`.rates`: ``pass_at``, ``pass_rate``, ``mean_reward``, ``field_share``;
* :mod:`.report`: ``rate`` (one of them with its per-task table: the ``rate`` operation);
* :mod:`.paired`: the paired difference (sign-flip test and t interval) and the unpaired
  fallback;
* :mod:`.compare`: ``compare`` (before vs after, training seeds, verdicts);
* :mod:`.many`: ``compare_many`` (per category or checkpoint, Benjamini-Hochberg and Holm);
* :mod:`.noise`: ``noise_floor`` and the noise band;
* :mod:`.holdout`: ``holdout_size`` (Miller 2024 Eq. 9).

**One number per question.** A rate's interval depends only on its per-task values, the level
and the seed (:func:`.intervals.task_intervals`), so the same rows give the same interval in
``pass_at``, ``compare`` (each arm), ``route`` and ``teacher_clears``, in the library, the CLI and
the MCP tools.
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
