"""Importers: other systems' eval output -> graded rows every statistic here reads.

==========  ===================================================================================
format      reads
==========  ===================================================================================
prime-rl    prime-rl 559b447 episode files (verifiers a60a606 ``Episode.to_record()``):
            ``<run>/rollouts/step_<S>/eval/all/traces.jsonl`` (:mod:`.prime_rl`)
inspect     Inspect eval logs, ``.eval`` or ``.json`` (:mod:`.inspect_logs`)
lm-eval     lm-evaluation-harness ``--log_samples`` files, ``samples_<task>_<date>.jsonl``
            (:mod:`.lm_eval`)
verifiers   ``vf-eval --save-results`` rows (``example_id`` is the task) (:mod:`.verifiers`)
==========  ===================================================================================

:func:`import_rows` picks the format from the content (``format="auto"``) unless one is named;
a named format wins. Every row has ``task_id``, ``reward``, ``truncated``, ``model`` and
``errored``, plus the source's own ids (``step``/``policy_version``/``episode_id`` for prime-rl,
``epoch``/``sample_uuid`` for Inspect, ``doc_id``/``filter`` for lm-eval). Bad records raise
:class:`~whileai_core.errors.RowsError` naming the file, the line (or sample) and the fix.

Each format's module reads its files into :class:`~.foreign.ForeignRows`; :mod:`.detect` names
the format and dispatches; :mod:`.result` is the import itself, with the mean reward's interval.
"""

from __future__ import annotations

import importlib
from typing import Any

# Lazy: ``whileai_core.rows`` reads other systems' output through ``.detect`` (the data layer),
# while ``.result`` reads the statistics; importing nothing here keeps the rows loader below them.
_WHERE = {"FORMATS": "detect", "ROWS": "detect", "AmbiguousImport": "detect",
          "detect_format": "detect", "read_foreign": "detect",
          "rows_for_load": "on_the_fly", "read_as_rows": "on_the_fly",
          "ForeignRows": "foreign", "StepRows": "foreign",
          "Imported": "result", "StepCount": "result", "import_rows": "result"}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
