"""Fields that look like the one a reader expects: `score` for `reward`, `Task_ID` for `task_id`.

The readers never read a look-alike in the field's place (a `label` is not always a reward); they
name it in the error with the rename that fixes the file. A look-alike, tried in order: the same
name written differently (`Reward`, `task-id`, `taskId`), a name other harnesses use for it
(``defaults.FIELD_SYNONYMS``), or a close spelling (``difflib`` at ``NEAR_FIELD_CUTOFF``).
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Iterable

from .defaults import FIELD_SYNONYMS, NEAR_FIELD_CUTOFF
from . import voice
from .errors import plural
from .io import new_name

_SHOWN = 3  # look-alikes named in one message


def _plain(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name).lower()


def look_alikes(expected: str, fields: Iterable[str]) -> list[tuple[str, str]]:
    """``(field, why)`` for each of ``fields`` that looks like ``expected`` (module docstring),
    best first, at most three."""
    fields = [f for f in dict.fromkeys(fields) if isinstance(f, str) and f != expected]
    found: dict[str, str] = {}
    plain = _plain(expected)
    for f in fields:
        if _plain(f) == plain:
            found.setdefault(f, "the same name written differently")
    synonyms = FIELD_SYNONYMS.get(expected, ())
    for f in fields:
        if f.lower() in synonyms:
            found.setdefault(f, f"a name other tools use for `{expected}`")
    lowered = {f.lower(): f for f in fields}
    for near in difflib.get_close_matches(expected, list(lowered), n=_SHOWN,
                                          cutoff=NEAR_FIELD_CUTOFF):
        found.setdefault(lowered[near], "a close spelling")
    return list(found.items())[:_SHOWN]


def missing(expected: str, fields: Iterable[str], noun: str = "row") -> tuple[str, str | None]:
    """``(problem, rename)`` for a record without ``expected``: the problem names the
    look-alikes the records carry; ``rename`` is the fix that renames the best one (None when
    there is none)."""
    alikes = look_alikes(expected, fields)
    if not alikes:
        return f"{noun} has no `{expected}`", None
    shown = "; ".join(f"`{f}` ({why})" for f, why in alikes)
    return (f"{noun} has no `{expected}`; a field the {plural(noun)} carry looks like it: {shown}",
            alikes[0][0])


def rename_fix(renames: dict[str, str], source: str, *, rows: bool = False) -> str:
    """The fix for fields under other names (``{found: expected}``): rename them, with a
    command that does so on a JSONL file; for graded rows (``rows``), the product's import,
    which also reads a JSON array and makes a true/false reward 1.0/0.0."""
    pairs = " and ".join(f"`{a}` to `{b}`" for a, b in renames.items())
    script = ("import json,sys; R={%s}; rs=({R.get(k, k): v for k, v in json.loads(l).items()} "
              "for l in open(sys.argv[1], encoding=\"utf-8-sig\") if l.strip())"
              % ", ".join(f"{_q(a)}: {_q(b)}" for a, b in renames.items()))
    same = "it is the same thing" if len(renames) == 1 else "they are the same things"
    if source.startswith("<"):  # records given as a list: no file to run a command on
        return f"rename {pairs} if {same}"
    if rows:  # graded rows: the product's own import renames them (importers.table)
        return (f"rename {pairs} if {same}: "
                f"{voice.call('import_rows', path=source, out=new_name(source))}")
    return f"rename {pairs} if {same}, e.g. {jsonl_command(script, source)}"


def jsonl_command(script: str, source: str) -> str:
    """``python3 -c SCRIPT SOURCE NEW``: ``script`` (reading ``sys.argv[1]``) leaves the records
    in ``rs``; they go one JSON line each into ``NEW``, a name derived from ``source`` that is
    free now (``whileai_core.io.new_name``), opened with ``"x"``, which refuses a file that
    exists: following the fix never replaces a file."""
    full = script + "; o=open(sys.argv[2], \"x\"); [o.write(json.dumps(r) + \"\\n\") for r in rs]"
    return f"python3 -c {shlex.quote(full)} {_file_arg(source)} {shlex.quote(new_name(source))}"


def _q(text: str) -> str:
    """``text`` as a Python string literal in double quotes (the command is in single quotes)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _file_arg(source: str) -> str:
    return "rows.jsonl" if source.startswith("<") else shlex.quote(source)
