"""Step 6: TRL's conversational JSONL, one {"messages": [...]} per line."""

from __future__ import annotations

import json
import os
from typing import Any

from ..errors import RowsError
from ..result import Result

from .read import _read_traces
from ..io import write_atomic


# --- 6. export -----------------------------------------------------------------------------

TRAINS_ON = ("TRL SFTTrainer on a conversational dataset computes the loss on every token of "
             "the rendered conversation (system and user turns included) unless "
             "TRL's `assistant_only_loss` is turned on in its SFTConfig, which needs a chat "
             "template with "
             "{% generation %} markers; this file carries no loss mask")


class SFTExport(Result):
    path: str
    n_records: int
    n_assistant_turns: int
    trains_on: str = TRAINS_ON

    def render(self) -> str:
        return (f"wrote {self.n_records} conversations ({self.n_assistant_turns} assistant "
                f"turns) to {self.path}\n{self.trains_on}")


def export_sft(records: Any, path: str | os.PathLike, *, overwrite: bool = False) -> SFTExport:
    """Write TRL's conversational JSONL: one ``{"messages": [{"role", "content"}, ...]}`` a line.

    Arguments (JSON-friendly): ``records``: traces (path or list of dicts with ``messages``;
    other fields are dropped); ``path``: where to write; ``overwrite``: replace an existing file
    (default False: refuse). Each conversation must end with an assistant turn, the thing SFT
    teaches. Written atomically.
    """
    recs = _read_traces(records)
    lines, turns = [], 0
    for i, t in enumerate(recs.items):
        msgs = [{"role": m["role"], "content": m["content"]} for m in t["messages"]]
        if msgs[-1]["role"] != "assistant":
            raise RowsError("the conversation does not end with an assistant turn",
                            **recs.where(i), field="messages",
                            fix="keep only attempts with a reply (select_sft output)")
        turns += sum(m["role"] == "assistant" for m in msgs)
        lines.append(json.dumps({"messages": msgs}, ensure_ascii=False))
    target = write_atomic(path, "\n".join(lines) + "\n", overwrite=overwrite)
    return SFTExport(path=str(target), n_records=len(lines), n_assistant_turns=turns)
