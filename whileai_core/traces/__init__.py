"""From production traces to an SFT file, without leaking the test (the sft-from-traces skill).

A trace is one conversation: ``{"task_id", "messages": [{"role", "content"}, ...], "reward"
(optional), "model" (optional)}``. The steps, in the skill's order:

1. :func:`split_by_task`: a frozen held-out test, split by task (never by row), so no ask is on
   both sides. The split depends only on the task ids and the seed, not on row order.
2. :func:`failed_asks`: the asks (prompts) the agent failed on every try: seeds for new attempts.
3. :func:`rejection_sample`: 10-30 attempts per ask, each graded by a program.
4. :func:`select_sft`: the best passing attempt per ask.
5. :func:`decontaminate`: drop any training example whose task id is held out, whose prompt is a
   held-out prompt verbatim, whose prompt shares >= 80% of its 8-grams with held-out prompts, or
   that holds >= 80% of one held-out prompt's 8-grams (a held-out prompt embedded in it).
6. :func:`export_sft`: TRL's conversational JSONL, one ``{"messages": [...]}`` per line.

Scoring before/after on the frozen test is :func:`whileai_core.compare`; the noise floor is
:func:`whileai_core.noise_floor` on re-runs of the same held-out set.

Modules: :mod:`.read`, :mod:`.split` (1), :mod:`.select` (2-4), :mod:`.decontam` (5),
:mod:`.export` (6).
"""

from __future__ import annotations

from .decontam import Decontamination, Dropped, decontaminate, ngrams
from .export import TRAINS_ON, SFTExport, export_sft
from .read import ROLES, load_traces, prompt_messages, prompt_text
from .select import FailedAsks, SFTSelection, failed_asks, rejection_sample, select_sft
from .split import TaskSplit, split_by_task

__all__ = ["Decontamination", "Dropped", "FailedAsks", "ROLES", "SFTExport", "SFTSelection",
           "TRAINS_ON", "TaskSplit", "decontaminate", "export_sft", "failed_asks", "load_traces",
           "ngrams", "prompt_messages", "prompt_text", "rejection_sample", "select_sft",
           "split_by_task"]
