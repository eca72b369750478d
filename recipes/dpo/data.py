"""The DPO recipe's data folder: pairs you built, the held-out asks, your grader.

What ``whileai_core.write_dpo_data`` writes and ``launch_run("dpo", data=...)`` trains on: the SFT
recipe's folder (``recipes/sft/data.py``) with ``pairs.jsonl`` in place of the SFT file, TRL's
conversational preference rows (``prompt``, ``chosen``, ``rejected``), with ``task_id``,
``category`` and ``source`` (``on_policy`` | ``constructed``) counted, not trained on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from recipes.sft.data import (GRADER_FILE, HOLDOUT_GLOB, SETTINGS_FILE, DataPayload, _settings,
                              holdout_file, read_grader, read_holdout)
from whileai_core.defaults import DPO_PAIRS_FILE
from whileai_core.errors import ConfigError

SOURCES = ("on_policy", "constructed")


@dataclass(frozen=True)
class DPOData(DataPayload):
    """What a run trains on (``pairs``) and scores (``holdout``: one ask per task), with the
    grader's text and where each came from."""

    pairs: list[dict]
    holdout: list[dict]
    grader_source: str
    grader_origin: str
    origin: str
    holdout_name: str | None = None
    settings: dict | None = None

    def counts(self) -> dict:
        by_source = {s: sum(p["source"] == s for p in self.pairs) for s in SOURCES}
        by_category: dict[str, int] = {}
        for p in self.pairs:
            by_category[p["category"]] = by_category.get(p["category"], 0) + 1
        return {"pairs": len(self.pairs), "by_source": by_source,
                "by_category": dict(sorted(by_category.items()))}


def _message(value, where: str, key: str) -> list[dict]:
    ok = (isinstance(value, list) and value and all(
        isinstance(m, dict) and isinstance(m.get("content"), str) and m.get("role") in
        ("system", "user", "assistant", "tool") for m in value))
    if not ok:
        raise ConfigError(f"{where}: `{key}` is {value!r:.60}", fix="a list of chat messages "
                          "({'role', 'content'}); write the file with write_dpo_data")
    return [{"role": m["role"], "content": m["content"]} for m in value]


def read_pairs(path: Path) -> list[dict]:
    """Every pair of ``pairs.jsonl`` checked, each kept with its task, category and source."""
    from whileai_core.rows import read_records

    recs = read_records(path, noun="pair")
    if not recs.items:
        raise ConfigError(f"{path}: no pairs", fix="build them with dpo_pairs")
    pairs = []
    for i, rec in enumerate(recs.items):
        where = f"{path}, line {recs.where(i).get('line', i + 1)}"
        prompt = _message(rec.get("prompt"), where, "prompt")
        chosen, rejected = (_message(rec.get(k), where, k) for k in ("chosen", "rejected"))
        if chosen[-1]["role"] != "assistant" or rejected[-1]["role"] != "assistant":
            raise ConfigError(f"{where}: chosen and rejected must each end with the assistant's "
                              "reply", fix="write the file with write_dpo_data")
        source = rec.get("source", "on_policy")
        if source not in SOURCES:
            raise ConfigError(f"{where}: `source` is {source!r}, not one of {SOURCES}",
                              fix="label a pair built from a constructed reply 'constructed'")
        pairs.append({"prompt": prompt, "chosen": chosen, "rejected": rejected,
                      "task_id": str(rec.get("task_id", f"pair-{i + 1}")),
                      "category": str(rec.get("category", "(all)")), "source": source})
    return pairs


def read_dpo_data(folder: str | Path) -> DPOData:
    """The folder's files, each checked; a problem names the file, the line and the fix."""
    from recipes.dpo.train import DPOSettings

    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"data folder {folder}: no such folder", fix="write it with "
                          f"write_dpo_data ({DPO_PAIRS_FILE}, the held-out asks, {GRADER_FILE})")
    for name in (DPO_PAIRS_FILE, GRADER_FILE):
        if not (folder / name).is_file():
            raise ConfigError(f"data folder {folder}: no {name} there", fix="write the folder with "
                              f"write_dpo_data ({DPO_PAIRS_FILE} from dpo_pairs, the held-out asks "
                              f"as {HOLDOUT_GLOB}, {GRADER_FILE} defining grade(ask, reply))")
    held = holdout_file(folder, "keep exactly one holdout*.jsonl (write_dpo_data freezes it)")
    asks, holdout_name = read_holdout(held)
    source, origin = read_grader(folder)
    return DPOData(pairs=read_pairs(folder / DPO_PAIRS_FILE), holdout=asks, grader_source=source,
                   grader_origin=origin, origin=str(folder), holdout_name=holdout_name,
                   settings=_settings(folder / SETTINGS_FILE, DPOSettings))
