"""Is the model learning the task or gaming the reward? Before training and during it.

- :func:`~whileai_core.hacking.probes.cheat_probes`: score degenerate answers (empty, a refusal,
  a question back, the prompt echoed, filler to the token cap, the most common answer, the answer
  format alone (its tags around a wrong answer), keywords stuffed from the task text) with the user's own reward, against the model's pass rate.
- :func:`~whileai_core.hacking.scan.hack_scan`: within each task, which features of the reply
  (length, truncation, format markers, repeated n-grams, user-named fields) track the reward,
  against a within-task shuffle floor that moves each reply with its copies.
- :func:`~whileai_core.hacking.watch.watch_run`: per step, the training reward beside the held-out
  pass rate (paired against step 0 and every earlier look); ``stop`` when the held-out score
  falls, or stays flat while the training reward climbs beyond its own noise, by a plan over the
  looks that states its power; its readers are :mod:`~whileai_core.hacking.watch_files`.
- :func:`~whileai_core.hacking.verifier.prove_reward`: the probes, and whether the reward pays a
  reply that runs to the token cap (truncation) or the answer format around a wrong answer
  (format bonus), before any GPU.
- :func:`~whileai_core.hacking.doctor.diagnose_run`: from a run's own files, per step, the
  signatures of a run that learns nothing or the wrong thing (zero-advantage groups, truncation
  lock-in, staleness, verifier noise, diversity collapse, entropy or KL running away).
- :mod:`~whileai_core.hacking.anytime`: the plan that keeps watch_run's false-alarm rate at
  every look (group-sequential over planned looks, anytime-valid over open ones), and the
  repeated scans' spending.
- :mod:`~whileai_core.hacking.reward`: how a reward is called: a Python callable, a
  ``module:function`` inside the workspace, or a command, both in a child process with a timeout.
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
