"""Step 6: TRL's conversational JSONL, one {"messages": [...]} per line."""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import Field

from ..errors import RowsError
from ..io import write_atomic
from ..operations import WRITES, operation
from ..operations.args import OutFile, Overwrite, Records
from ..result import Result
from .read import TRACE_FORM, _read_traces

TRAINS_ON = ("TRL SFTTrainer on a conversational dataset computes the loss on every token of "
             "the rendered conversation (system and user turns included) unless "
             "TRL's `assistant_only_loss` is turned on in its SFTConfig, which needs a chat "
             "template with {% generation %} markers; this file carries no loss mask")


class SFTExport(Result):
    path: str
    n_records: int
    n_assistant_turns: int
    trains_on: str = TRAINS_ON

    def render(self) -> str:
        return (f"wrote {self.n_records} conversations ({self.n_assistant_turns} assistant "
                f"turns) to {self.path}\n{self.trains_on}")


@operation(
    toolset="sft", effect=WRITES, title="Write the SFT file (TRL conversational JSONL)",
    description=(
        "Write traces as TRL's conversational JSONL ({\"messages\": [...]} per line), "
        "atomically; never replaces an existing file unless overwrite=true. Says which tokens "
        "TRL will train on."),
    doing="exporting an SFT file")
def export_sft(
        records: Annotated[Records, Field(description=(
            f"The traces to train on (select_sft / decontaminate output). {TRACE_FORM}; each "
            "must end with an assistant turn."))],
        out: Annotated[OutFile, Field(description="Where to write TRL's conversational JSONL.")],
        *, overwrite: Overwrite = False) -> SFTExport:
    """Write TRL's conversational JSONL: one ``{"messages": [{"role", "content"}, ...]}`` a line
    (other fields dropped), each ending with an assistant turn, the thing SFT teaches."""
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
    target = write_atomic(out, "\n".join(lines) + "\n", overwrite=overwrite)
    return SFTExport(path=str(target), n_records=len(lines), n_assistant_turns=turns)
