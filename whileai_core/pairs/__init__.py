"""Preference pairs for DPO from the policy's own graded rollouts (the dpo-pairs skill).

- :func:`dpo_pairs` (:mod:`.build`): pairs only where a task has a pass and a fail; per category,
  where contrast is missing, why, and how to construct it (labelled ``constructed``);
- :func:`write_dpo_data` (:mod:`.folder`): the DPO recipe's data folder (``pairs.jsonl``, the
  frozen held-out asks, ``grader.py``), what ``launch_run("dpo", data=...)`` trains on.
"""

from __future__ import annotations

from .build import CategoryPairs, PairSet, dpo_pairs
from .folder import DPOData, write_dpo_data

__all__ = ["CategoryPairs", "DPOData", "PairSet", "dpo_pairs", "write_dpo_data"]
