"""verifiers ``vf-eval --save-results`` rows -> graded rows.

vf-eval saves one JSON object per rollout: ``example_id`` (the dataset row the prompt came
from: the task), ``prompt`` and ``completion`` (chat messages), ``answer``, ``task``, ``info``,
``reward`` (the rubric's weighted sum) and one column per reward function (verifiers' README,
"Evaluation"; ``GenerateOutputs``). Rows: each record as it is, with ``task_id`` =
``example_id``; the reward functions' columns stay, read as other scores.
"""

from __future__ import annotations

from typing import Any

from ..errors import RowsError, as_json
from ..records import read_records
from ..safepath import UserPath, as_user_path
from .foreign import ForeignRows

FORMAT = "verifiers"


def looks_like_result(record: Any) -> bool:
    """Whether a JSON record has the shape of one saved vf-eval rollout."""
    return (isinstance(record, dict) and "example_id" in record and "reward" in record
            and ("prompt" in record or "completion" in record) and "task_id" not in record)


def read_verifiers(path: str | UserPath) -> ForeignRows:
    path = as_user_path(path, None, argument="path", error=RowsError)
    recs = read_records(path, noun="rollout")
    rows = []
    for i, rec in enumerate(recs.items):
        if not looks_like_result(rec):
            raise RowsError("not a saved vf-eval rollout (it needs example_id, reward and a "
                            "prompt or completion)", **recs.where(i), field="example_id",
                            fix="import the results.jsonl vf-eval --save-results wrote")
        ex = rec["example_id"]
        if isinstance(ex, bool) or not isinstance(ex, (int, str)):
            raise RowsError(f"`example_id` is {as_json(ex)}, not an id", **recs.where(i),
                            field="example_id", fix="import the file vf-eval wrote")
        rows.append({"task_id": str(ex), **rec})
    return ForeignRows(FORMAT, str(path), [str(path)], rows, errored=0, kept_errored=False,
                       metric="reward", notes=["task_id is vf-eval's example_id"])
