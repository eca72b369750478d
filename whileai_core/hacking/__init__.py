"""Is the model learning the task or gaming the reward? Before training and during it.

- :mod:`.probes` (``cheat_probes``): score degenerate answers with the user's own reward, against
  the model's pass rate; :mod:`.verifier` (``prove_reward``) adds the truncation and format-bonus
  checks; :mod:`.reward`: how a reward is called, in a child process with a timeout.
- :mod:`.scan` (``hack_scan``): which reply features track the reward within tasks.
- :mod:`.watch` (``watch_run``): per step, the training reward beside the held-out pass rate, by
  a plan over the looks (:mod:`.anytime`); its readers are :mod:`.watch_files`.
- :mod:`.doctor` (``diagnose_run``): from a run's own files, the signatures of a run that learns
  nothing or the wrong thing.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CheatProbes": "probes", "ProbeReport": "probes", "cheat_probes": "probes",
    "RewardError": "reward", "RewardRunner": "reward", "reward_runner": "reward",
    "FeatureEvidence": "scan", "HackScan": "scan", "hack_scan": "scan",
    "Watch": "watch", "WatchStep": "watch", "watch_records": "watch", "watch_run": "watch",
    "HoleCheck": "verifier", "RewardProof": "verifier", "prove_reward": "verifier",
    "Diagnosis": "doctor", "Finding": "doctor", "diagnose_run": "doctor",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:  # lazy: the reward child process imports only what it uses
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'whileai_core.hacking' has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
