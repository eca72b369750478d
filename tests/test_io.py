"""Atomic writes: no clobber unless asked, the mode a plain open() would give, no temp left."""

from __future__ import annotations

import os
import stat

import pytest

from whileai_core.errors import ConfigError
from whileai_core.io import write_atomic


def test_write_refuse_overwrite_and_mode(tmp_path):
    target = tmp_path / "sub" / "out.toml"
    write_atomic(target, "a = 1\n")
    assert target.read_text() == "a = 1\n"
    with pytest.raises(ConfigError, match="already exists; not overwriting it. Fix"):
        write_atomic(target, "a = 2\n")
    assert target.read_text() == "a = 1\n"
    write_atomic(target, "a = 2\n", overwrite=True)
    assert target.read_text() == "a = 2\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert [p.name for p in target.parent.iterdir()] == ["out.toml"]   # no temp file left
