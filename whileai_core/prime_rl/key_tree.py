"""The dotted keys of the pinned prime-rl schema as modelled here (``trainer.optim.max_norm``),
for naming the key a misspelt one most likely meant."""

from __future__ import annotations

import functools
import typing
from typing import Any

from pydantic import BaseModel

from ..errors import did_you_mean
from .keys_top import RLConfig


def key_tree(model: type[BaseModel] = RLConfig, prefix: str = "") -> set[str]:
    """Every dotted key of the schema as modelled (``trainer.optim.max_norm``; a list's items and
    a union's variants contribute their keys under the same path)."""
    keys: set[str] = set()
    for name, info in model.model_fields.items():
        key = f"{prefix}{info.alias or name}"
        keys.add(key)
        for inner in _models_in(info.annotation):
            keys |= key_tree(inner, f"{key}.")
    return keys


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def near_key(key: str) -> str:
    """"did you mean `trainer.optim.max_norm`?" for a misspelt dotted key: a key of the same
    table first, else any key of the schema; "" when none is close."""
    keys = _keys()
    parent, _, last = key.rpartition(".")
    siblings = {k.rpartition(".")[2]: k for k in keys if k.rpartition(".")[0] == parent}
    close = did_you_mean(last, siblings, spell=lambda c: f"`{siblings[c]}`")
    return close or did_you_mean(key, keys)


@functools.cache
def _keys() -> frozenset[str]:
    return frozenset(key_tree())
