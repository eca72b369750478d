"""Run every ```python block of every skills/*/SKILL.md offline; print a verdict per skill.

The blocks are read from the SKILL.md files themselves (no copies that could drift) and run in
order, in one namespace per skill, inside a fresh temporary folder. Each skill's
``skills/<name>/fixtures.py`` prepares that folder and namespace (``prepare(workdir) -> dict``:
graded rows, traces, judges, a teacher endpoint that is never called) and lists one check per
block (``CHECKS``): after block i runs, ``CHECKS[i](namespace)`` asserts what it must have
produced. A skill whose number of blocks differs from its number of checks fails, so a block
added without a check is caught. The network is closed while blocks run, and the run registry
(``launch_run``) lives in the skill's temporary folder (``WHILEAI_STATE_DIR``), so a skill that
launches a run (sft-from-traces trains the SFT recipe's CPU smoke) leaves nothing behind.

Each skill folder is first checked with the Agent Skills reference validator (``skills-ref``,
installed by the ``test`` extra). The blocks train (the SFT recipe's CPU smoke) and draw, so
check.py needs the ``test`` and ``train`` extras; without them it says so in one line with the
command that installs them, and runs nothing (a skill it cannot run is not reported as passing).

Usage: ``python check.py [SKILL ...] [-v]``: SKILL is a folder name under skills/ or a path to
a skill folder; ``-v`` prints each block's output.
Exit status: 0 when every skill passes, 1 otherwise, 2 when it cannot run (an extra missing, an
unknown skill).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import re
import socket
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SKILLS = ROOT / "skills"
STATE_ENV = "WHILEAI_STATE_DIR"  # whileai_core.runs.registry.STATE_DIR_ENV (not imported: lazy)
_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass
class Block:
    index: int
    line: int      # 1-based line of the block's first code line in SKILL.md
    code: str


def python_blocks(text: str) -> list[Block]:
    """The ```python blocks of a Markdown text, in order, with their line numbers."""
    return [Block(i, text.count("\n", 0, m.start(1)) + 1, m.group(1))
            for i, m in enumerate(_FENCE.finditer(text))]


# --- the MCP form of a step --------------------------------------------------------------------
# Each ```python block that calls the library is followed directly (blank lines apart) by an
# ```mcp block: the same step as MCP tool calls, one JSON object per line, either
#   {"tool": "<tool name>", "arguments": {...}}    a call of the server's tool, or
#   {"agent": "<what the agent does itself>"}     a step the server cannot do for it (sampling
#                                                 with its own model, grading with its judge).
# tests/test_skill_parity.py holds every skill to it.

_ANY_FENCE = re.compile(r"^```([A-Za-z0-9_-]*)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass
class McpLine:
    line: int      # 1-based line in SKILL.md
    data: object   # the parsed JSON (or None when it did not parse)
    error: str | None


@dataclass
class Step:
    """A ```python block and the ```mcp block right after it (None when there is none)."""

    python: Block
    mcp_line: int | None
    mcp: list[McpLine]


def steps(text: str) -> list[Step]:
    """Every ```python block of a Markdown text with its ```mcp form, in order."""
    fences = list(_ANY_FENCE.finditer(text))
    out, index = [], 0
    for n, m in enumerate(fences):
        if m.group(1) != "python":
            continue
        block = Block(index, text.count("\n", 0, m.start(2)) + 1, m.group(2))
        index += 1
        nxt = fences[n + 1] if n + 1 < len(fences) else None
        if nxt is None or nxt.group(1) != "mcp" or text[m.end():nxt.start()].strip():
            out.append(Step(block, None, []))
            continue
        first = text.count("\n", 0, nxt.start(2)) + 1
        lines = []
        for k, raw in enumerate(nxt.group(2).splitlines()):
            if not raw.strip():
                continue
            try:
                lines.append(McpLine(first + k, json.loads(raw), None))
            except json.JSONDecodeError as exc:
                lines.append(McpLine(first + k, None, f"not one JSON object ({exc.msg})"))
        out.append(Step(block, first, lines))
    return out


def _load_fixtures(skill: Path):
    path = skill / "fixtures.py"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: every skill needs "
                                "prepare(workdir) and CHECKS")
    spec = importlib.util.spec_from_file_location(f"_fixtures_{skill.name.replace('-', '_')}",
                                                  path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look the module up by name
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def _offline():
    """Refuse any connection that leaves the machine while the blocks run."""
    original = socket.socket.connect

    def guarded(self, address, *args, **kwargs):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") \
                and self.family in (socket.AF_INET, socket.AF_INET6):
            raise OSError(f"check.py is offline: a block tried to connect to {address!r}")
        return original(self, address, *args, **kwargs)

    socket.socket.connect = guarded
    try:
        yield
    finally:
        socket.socket.connect = original


@dataclass
class Verdict:
    skill: str
    ok: bool
    blocks: int
    seconds: float
    detail: str


def check_skill(skill: Path, *, verbose: bool = False) -> Verdict:
    start = time.perf_counter()
    rel = (f"skills/{skill.name}/SKILL.md" if skill.parent == SKILLS
           else str(skill / "SKILL.md"))
    blocks = python_blocks((skill / "SKILL.md").read_text(encoding="utf-8"))
    try:
        fixtures = _load_fixtures(skill)
    except Exception as exc:  # a broken fixture is a failed skill, reported, not a crash
        return Verdict(skill.name, False, len(blocks), 0.0, f"fixtures: {exc!r}")
    checks = list(getattr(fixtures, "CHECKS", ()))
    if len(checks) != len(blocks):
        return Verdict(skill.name, False, len(blocks), 0.0,
                       f"{rel} has {len(blocks)} python blocks but fixtures.py has "
                       f"{len(checks)} CHECKS: add or remove a check so each block has one")
    cwd = os.getcwd()
    state = os.environ.get(STATE_ENV)
    with tempfile.TemporaryDirectory(prefix=f"check-{skill.name}-") as tmp:
        os.chdir(tmp)
        os.environ[STATE_ENV] = str(Path(tmp) / ".whileai-state")
        try:
            with _offline():
                namespace = {"__name__": f"skill:{skill.name}"}
                namespace.update(fixtures.prepare(Path(tmp)))
                for block, check in zip(blocks, checks):
                    where = f"{rel}:{block.line}"
                    out = io.StringIO()
                    try:
                        with contextlib.redirect_stdout(out):
                            exec(compile(block.code, where, "exec"), namespace)
                        check(namespace)
                    except Exception as exc:
                        tb = traceback.format_exc(limit=-3)
                        return Verdict(skill.name, False, len(blocks),
                                       time.perf_counter() - start,
                                       f"block {block.index + 1} ({where}) failed "
                                       f"[{check.__name__}]: {exc!r}\n{out.getvalue()}{tb}")
                    if verbose:
                        print(f"--- {where}\n{out.getvalue()}", end="")
        except Exception as exc:
            return Verdict(skill.name, False, len(blocks), time.perf_counter() - start,
                           f"prepare() failed: {exc!r}")
        finally:
            os.chdir(cwd)
            if state is None:
                os.environ.pop(STATE_ENV, None)
            else:
                os.environ[STATE_ENV] = state
    return Verdict(skill.name, True, len(blocks), time.perf_counter() - start, "")


def validate(skill: Path) -> list[str] | None:
    """The Agent Skills reference validator's (skills-ref) problems with a skill folder: [] when
    valid, None when skills-ref is not installed (the `test` extra installs it)."""
    try:
        from skills_ref.validator import validate as reference_validate
    except ImportError:
        return None
    return [str(problem) for problem in reference_validate(skill)]


# what the blocks import, by the extra that installs it (whileai_core.extras.MODULES says the same)
NEEDED_EXTRAS = {"train": ("torch", "transformers", "tokenizers", "trl", "peft", "datasets"),
                 "test": ("matplotlib", "skills_ref", "yaml")}


def missing_extras() -> str | None:
    """One line naming the modules the blocks need that are not installed, and the install
    command; None when everything is there."""
    absent: dict[str, list[str]] = {}
    for extra, modules in NEEDED_EXTRAS.items():
        for module in modules:
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                absent.setdefault(extra, []).append(module)
    if not absent:
        return None
    what = "; ".join(f"{', '.join(mods)} (the `{extra}` extra)" for extra, mods in absent.items())
    return (f"check.py cannot run the skills' blocks: {what} not installed. Fix: bash "
            "scripts/test.sh (installs every extra, the CPU build of torch where there is no "
            "NVIDIA GPU), or pip install -e '.[test,train]'")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("skills", nargs="*", help="skill folder names (default: all)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each block's output")
    args = parser.parse_args(argv)
    found = sorted(p.parent for p in SKILLS.glob("*/SKILL.md"))
    if args.skills:
        known = {p.name: p for p in found}
        # a name in skills/, or a path to a skill folder (a draft kept outside the tree)
        known.update({s: Path(s).resolve() for s in args.skills
                      if (Path(s) / "SKILL.md").is_file()})
        missing = [s for s in args.skills if s not in known]
        if missing:
            print(f"error: no skill named {', '.join(missing)}; have {', '.join(known)}",
                  file=sys.stderr)
            return 2
        found = [known[s] for s in args.skills]
    if not found:
        print("error: no skills/*/SKILL.md found", file=sys.stderr)
        return 1
    absent = missing_extras()
    if absent:
        print(f"error: {absent}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT))
    results, validated = [], True
    for skill in found:
        problems = validate(skill)
        validated = validated and problems is not None
        if problems:
            v = Verdict(skill.name, False, 0, 0.0, "skills-ref validation: " + "; ".join(problems))
        else:
            v = check_skill(skill, verbose=args.verbose)
        results.append(v)
        state = "pass" if v.ok else "FAIL"
        print(f"{v.skill}: verdict: {state} ({v.blocks} blocks, {v.seconds:.1f}s)")
        if not v.ok:
            print("  " + v.detail.rstrip().replace("\n", "\n  "))
    failed = [v.skill for v in results if not v.ok]
    print(f"summary: {len(results) - len(failed)} of {len(results)} skills pass"
          + (f"; failed: {', '.join(failed)}" if failed else "")
          + ("; each valid under skills-ref" if validated else
             "; frontmatter NOT validated: skills-ref is not installed (pip install skills-ref)"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
