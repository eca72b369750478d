"""Every declared numeric bound, called at its edge: does the operation take what it declares?

    .venv/bin/python bench/check_declared_edges.py [--slow-s 20]

For each operation that only reads or writes files, each number its CLI offers is set to each
edge of its declared range (``ge``/``le`` themselves, the nearest value inside a ``gt``/``lt``)
in the good call of ``tests/tool_calls.py``, and the call runs as the shell runs it (validated by
the input model, then ``operations.surface.invoke``). Printed: each edge refused, and each call
slower than ``--slow-s``. A refusal about a relation between arguments (``group_size`` not
dividing ``batch``, a threshold above every reward) is expected; one that restates a range
narrower than the declared one is a drift to fix: the declaration is the one range every
caller meets (``whileai_core.operations.checks``). So is a slow edge: a declared maximum is a
promise that the call finishes.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import tempfile
import time
import typing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from tool_calls import CALLS, build  # noqa: E402

from whileai_core.errors import WhileaiError  # noqa: E402
from whileai_core.operations import HERE, READS, WRITES, WRITES_NEW, operations  # noqa: E402
from whileai_core.operations.surface import input_model, invoke, validate  # noqa: E402


class _Slow(Exception):
    pass


def _alarm(*_: object) -> None:
    raise _Slow


def edges(info, whole: bool) -> list[float]:
    """The two ends of a field's declared range (every bound on it at once), each inside it."""
    low = high = None
    for item in info.metadata:
        for name, inside in (("ge", 0), ("gt", 1)):
            if (v := getattr(item, name, None)) is not None:
                v = (v + 1 if whole else math.nextafter(v, math.inf)) if inside else v
                low = v if low is None else max(low, v)
        for name, inside in (("le", 0), ("lt", 1)):
            if (v := getattr(item, name, None)) is not None:
                v = (v - 1 if whole else math.nextafter(v, -math.inf)) if inside else v
                high = v if high is None else min(high, v)
    return [v for v in (low, high) if v is not None]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--slow-s", type=int, default=20)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="whileai-edges-"))
    os.environ["WHILEAI_STATE_DIR"] = str(work / "state")
    os.chdir(build(work / "ws"))
    signal.signal(signal.SIGALRM, _alarm)
    ops, n_calls, flagged = operations(), 0, 0
    for name, call in CALLS.items():
        op = ops[name]
        if op.effect not in (READS, WRITES, WRITES_NEW) or "cli" not in op.surfaces:
            continue
        for param, info in input_model(op, "cli").model_fields.items():
            kinds = set(typing.get_args(info.annotation)) or {info.annotation}
            if not kinds & {int, float}:
                continue
            for edge in edges(info, int in kinds and float not in kinds):
                n_calls += 1
                start = time.perf_counter()
                signal.alarm(args.slow_s)
                try:
                    invoke(op, validate(op, {**call, param: edge}, "cli"), HERE)
                    said = None
                except _Slow:
                    said = f"slower than {args.slow_s} s"
                except WhileaiError as exc:
                    said = f"refused: {str(exc)[:160]}"
                finally:
                    signal.alarm(0)
                if said is not None:
                    flagged += 1
                    print(f"{name} {param}={edge!r} ({time.perf_counter() - start:.1f} s): {said}")
    print(f"{n_calls} edges called, {flagged} refused or slow (read each: relation or drift?)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
