"""The method catalogue: validated, immutable specs and the per-token math of the methods the
skills route to: prime-rl's (:class:`RLMethod`, :class:`OPD`, :class:`OPSD`, :class:`Async`) and
your own trainer's (:class:`GroupwiseGrading`, :class:`FlashReinforce`, :class:`SAO`,
:class:`BPCO`, :class:`ReinforceAda`). :func:`method_spec` parses any of them.
"""

from __future__ import annotations

import importlib
from typing import Any

_NAMES = {
    "Endpoint": "specs", "RLMethod": "specs", "OPD": "specs", "OPSD": "specs", "Async": "specs",
    "method_spec": "specs", "method_names": "specs", "BASE_METHODS": "specs",
    "rollout_update": "specs",
    "GroupwiseGrading": "grouping", "GroupShaping": "grouping", "shape_group": "grouping",
    "FlashReinforce": "single_rollout", "SAO": "single_rollout", "BPCO": "single_rollout",
    "RolloutUpdate": "rollout_batch",
    "ReinforceAda": "sampling", "AdaSample": "sampling",
    "icepop_loss": "icepop",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'whileai_core.methods' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
