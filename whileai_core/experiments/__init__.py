"""Experiments with their decisions registered before the run (the manage-experiments skill).

- :mod:`.rule`: the decision rule as data, a small typed grammar (``ship_if`` clauses);
- :mod:`.store`: :func:`register_experiment` (before the first launch), :func:`record_run` (each
  run's five-line record), :func:`list_experiments`, :func:`archive_experiment` (never delete);
- :mod:`.decide`: the verdict ``collect_run`` gives a run by its experiment's registered rule,
  every deviation (another metric, held-out set or rule) flagged;
- :mod:`.export`: :func:`export_experiments`, the whole record as Markdown.
"""

from __future__ import annotations

import importlib
from typing import Any

# Lazy: ``whileai_core.runs`` reads ``.rule`` (the decision a collected run carries) and
# ``.decide``/``.store`` read ``whileai_core.runs``; importing nothing here keeps that one-way.
_WHERE = {"ClauseOutcome": "rule", "DecisionRule": "rule", "DeltaAbove": "rule",
          "ExperimentDecision": "rule", "NoCategoryDrop": "rule", "parse_rule": "rule",
          "decide": "decide", "ExperimentExport": "export", "export_experiments": "export",
          "Experiment": "store", "ExperimentList": "store", "Registration": "store",
          "RunNote": "store", "archive_experiment": "store", "get_experiment": "store",
          "list_experiments": "store", "record_run": "store", "register_experiment": "store"}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
