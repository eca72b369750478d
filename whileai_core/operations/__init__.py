"""Operations: each thing the library does for a caller, declared once.

An operation is a plain function with an annotated signature built from the shared argument
types (:mod:`whileai_core.operations.args`), declared with :func:`operation`: the toolset it
belongs to, its :class:`Effect` (reads, writes, spends), a title and a description written for
the caller, and its result type. Everything a caller meets is generated from the declarations:

- the MCP tools (``server.tooling``): the input schema from the signature, the output schema
  from the result type, the four annotation hints from the effect;
- the CLI subcommands (``whileai_core.cli``): one per operation, named by its declaration
  (``cli=``; default the operation's name with dashes), its flags the argument names with
  dashes;
- the package's exports (``whileai_core.__init__``), the three spellings of a call
  (``whileai_core.voice``), the README's tables (``scripts/readme_tools.py``) and the server's
  start-up cache (``server/tools.json``).

Path resolution, inline rows, the picture (``plot``) and the per-task page
(``detail``/``offset``/``limit``) are done from the argument types by
:mod:`whileai_core.operations.surface`, once for every operation. How to add one:
docs/development.md, "Adding an operation".
"""

from __future__ import annotations

import importlib
import os
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ArgumentError
from ..safepath import UserPath
from .checks import checked

# The table of contents: the modules that declare operations, in the order surfaces list them.
MODULES = (
    "whileai_core.describe",             # what fields rows carry
    "whileai_core.routing",              # inspect and route rows
    "whileai_core.stats.report",         # rates
    "whileai_core.tables",               # the per-task table
    "whileai_core.stats.compare",        # comparisons
    "whileai_core.stats.many",
    "whileai_core.stats.noise",          # re-run noise
    "whileai_core.stats.holdout",        # sizing a holdout
    "whileai_core.teacher",              # the teacher gate
    "whileai_core.prime_rl.writer",      # prime-rl configs: write one
    "whileai_core.prime_rl.schema",      # prime-rl configs: check one
    "whileai_core.runs.api",             # launch and follow runs
    "whileai_core.runs.collect",         # a run's results
    "whileai_core.hacking.probes",       # reward hacking: probes before training
    "whileai_core.hacking.verifier",     # reward hacking: a program reward proved
    "whileai_core.hacking.scan",         # reward hacking: a scan of the rows
    "whileai_core.hacking.watch",        # reward hacking: watch a run
    "whileai_core.hacking.doctor",       # reward hacking: a run's diagnosis
    "whileai_core.evalset",              # the eval itself: content names, frozen holdout
    "whileai_core.categories",           # the eval itself: pass@1 by category
    "whileai_core.judge.audit",          # LLM judges: the audit
    "whileai_core.judge.order",          # a pairwise judge's order reversal
    "whileai_core.judge.labels",         # how many replies to label
    "whileai_core.judge.ablation",       # which rubric clauses matter
    "whileai_core.traces.split",         # SFT data from traces: the frozen test, by task
    "whileai_core.traces.select",        # the asks never passed, the best passing attempt
    "whileai_core.traces.decontam",      # training traces that leak the test
    "whileai_core.traces.export",        # the SFT file
    "whileai_core.importers.result",     # graded rows from other systems' output
    "whileai_core.methods.specs",        # update math of methods run in your own trainer:
    "whileai_core.methods.grouping",     # rollout_update, shape_group
    "whileai_core.pairs.build",          # preparing a DPO or GRPO run: dpo_pairs,
    "whileai_core.pairs.folder",         # write_dpo_data,
    "whileai_core.methods.grpo_plan",    # grpo_plan
    "whileai_core.experiments.store",    # experiments registered before their runs
    "whileai_core.experiments.export",   # (export_experiments)
    "whileai_core.skills",               # the playbooks
    "whileai_core.init",                 # wiring a project to the pack
)

# Toolsets: what an MCP client sees is the union of the toolsets turned on. ``core`` is the
# journey (describe and route rows, rates, compare, config, validate, launch, follow, watch).
TOOLSETS: dict[str, str] = {
    "core": "the journey: describe and route rows, rates, compare, teacher gate, holdout size, "
            "config, validate, launch, status, collect, watch",
    "stats": "many comparisons, noise floor, per-task table",
    "evals": "content names, frozen holdout, can the eval fail, by category",
    "judge": "LLM judges: audit, order reversal, labels needed, rubric ablation",
    "sft": "SFT data from traces; import prime-rl, Inspect, lm-eval rows",
    "hacking": "reward hacking: probes, a scan of the rows, a run's diagnosis",
    "methods": "update math for your own trainer",
    "training": "DPO pairs and data folder, a GRPO plan",
    "experiments": "experiments registered before their runs",
    "skills": "the playbooks as tools (also resources)",
}
DEFAULT_TOOLSETS = ("core",)

# Old tool names -> the operation that replaced them. No alias is served: a call of an old
# name fails with a message naming the new one (see :func:`renamed`); at the shell the old name
# with dashes fails the same way, naming the operation's command. Every command name the CLI
# had before the registry is kept (each operation's ``cli``), so no command is listed here.
RENAMED: dict[str, str] = {
    "route": "route_rows",  # the design's name; the shell keeps the command `route`
    "compare_runs": "compare",
    "pass_at": "rate",
    "mean_reward": "rate",
    "field_share": "rate",
    "plot_band": "route_rows", "plot_forest": "compare", "plot_judge_audit": "audit_judge",
}
# How an old name's call maps to the new one, where more than the name changed.
RENAMED_HOW: dict[str, str] = {
    "mean_reward": "with metric='reward'",
    "field_share": "with field='<the field>'",
    "plot_band": "with plot=true",
    "plot_forest": "with plot=true",
    "plot_judge_audit": "with plot=true",
}


@dataclass(frozen=True)
class Effect:
    """What an operation does to the world beyond its answer; the four MCP annotation hints are
    read from it (every operation here is idempotent: the same call again changes nothing more).

    ``writes``: it changes files or state (a file, a run). ``replaces``: it may replace or stop
    something that exists (an existing file only when asked: ``overwrite``). ``world``: it reaches
    outside this machine (Modal).
    """

    name: str
    writes: bool
    replaces: bool
    world: bool
    meaning: str

    def hints(self) -> dict[str, bool]:
        return {"readOnlyHint": not self.writes, "destructiveHint": self.replaces,
                "idempotentHint": True, "openWorldHint": self.world}


READS = Effect("reads", False, False, False, "reads files under the root and computes")
ASKS = Effect("asks", False, False, True,
              "reads the run registry and asks the run's backend (Modal, a local process)")
WRITES = Effect("writes", True, True, False,
                "writes files; replaces one only when asked (overwrite)")
WRITES_NEW = Effect("writes new", True, False, False,
                    "writes a new file and never replaces one")
RUNS_CODE = Effect("runs code", True, True, False,
                   "runs the user's own code from the workspace, in a child process")
RECORDS = Effect("records", True, False, False,
                 "adds to the run registry; never changes or removes what is there")
SPENDS = Effect("spends", True, True, True,
                "starts a paid GPU run on Modal (or a local process); launches once per name")
STOPS = Effect("stops", True, True, True, "stops a run on Modal or locally")

SURFACES = frozenset({"mcp", "cli"})


def VERDICT(result: Any) -> int:  # noqa: N802 - declared like the effects: exit_code=VERDICT
    """The exit code of an operation whose result carries a verdict, read from the result's own
    ``negative`` (what makes it negative: its ``negative_means``, the README's exit-code table):
    1 when the verdict is negative or not ready, else 0."""
    return 1 if result.negative else 0


# --- where an operation runs -------------------------------------------------------------------

@dataclass(frozen=True)
class Context:
    """Where an operation runs: a parameter typed ``Context`` receives it from the surface
    (:func:`whileai_core.operations.surface.invoke`), a Python caller gets :data:`HERE`.
    ``root``: the MCP server's workspace (every path is taken under it and opened through its
    door); None: a shell or Python caller's own paths, as typed. ``skills``: the skills catalog
    the caller is served (``whileai_core.skills.SkillCatalog``; None: the pack's own)."""

    root: Any = None
    skills: Any = None

    def locate(self, value: Any, *, argument: str, writes: str | None = None) -> Any:
        """A path as the core opens it: under the root (a ``UserPath``; ``writes``: the kind
        of output an ``OUT`` argument writes), or as given."""
        if self.root is None:
            return value
        return self.root.locate(value, argument=argument, writes=writes)

    def relative(self, path: Any) -> str:
        """A path as the caller writes it: relative to the root, or as the user typed it."""
        if isinstance(path, UserPath) and self.root is not None:
            return "/".join(path.parts) or "."
        if self.root is None:
            return str(path)
        return self.root.relative(Path(os.fspath(path)))


HERE = Context()
"""A Python caller's context: paths as given."""


@dataclass(frozen=True)
class Operation:
    """One operation: the function and what every surface needs to offer it.

    ``serves``: the ``whileai_core`` names a skill step may call for this operation (its own name
    first); a step calling one of them shows this operation's tool as its MCP form.
    ``picture``: ``(arguments, result, out, overwrite) -> picture`` for the ``plot`` option
    (a picture object with ``png()``; ``out`` writes it). ``paged``: the result keeps its whole
    per-task table (``result.table()``), so the surfaces offer one page of it.
    ``exit_code``: ``result -> int`` at the shell (0 by default); :data:`VERDICT` for every
    result with a verdict (a test checks that none is left out). ``cli``: the command's name at
    the shell, where it is not the name with dashes (the short names users type: ``pass-at``
    for ``rate``, ``launch`` for ``launch_run``).
    """

    name: str
    fn: Callable[..., Any]
    toolset: str
    effect: Effect
    title: str
    describe: Callable[[], str]
    result: str
    serves: tuple[str, ...]
    doing: str
    surfaces: frozenset[str] = SURFACES
    picture: Callable[..., Any] | None = None
    paged: bool = False
    exit_code: Callable[[Any], int] | None = None
    cli: str | None = None
    module: str = ""
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def command(self) -> str:
        """The CLI subcommand: the declared ``cli`` name, else the name with dashes."""
        return self.cli or self.name.replace("_", "-")

    @property
    def description(self) -> str:
        if "description" not in self._cache:
            self._cache["description"] = " ".join(self.describe().split())
        return self._cache["description"]

    def result_type(self) -> type:
        """The result class: the declared ``module:name`` (imported now), else the function's
        return annotation."""
        if not self.result:
            return typing.get_type_hints(self.fn)["return"]
        module, _, name = self.result.partition(":")
        return getattr(importlib.import_module(module), name)


_REGISTRY: dict[str, Operation] = {}
_COMMAND = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


def _imported_on_call(where: str) -> Callable[..., Any]:
    """The function named ``"module:name"``, imported when first called."""
    module, _, name = where.partition(":")

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    return call


def operation(*, toolset: str, effect: Effect, title: str, description: str | Callable[[], str],
              result: str = "", serves: tuple[str, ...] = (), doing: str,
              surfaces: frozenset[str] = SURFACES,
              picture: Callable[..., Any] | str | None = None,
              paged: bool = False, exit_code: Callable[[Any], int] | None = None,
              cli: str | None = None):
    """Declare the decorated function an operation (see :class:`Operation`). ``description`` may
    be a function returning it, so values it names are read from the core's Literals when a
    surface asks, not when the module loads. ``cli``: the command's name at the shell when it
    is not the operation's name with dashes. ``result``: ``"module:Class"``, where the function
    has no return annotation naming its result (the declaration on a domain function has one).
    ``picture`` may be ``"module:function"``, imported when a picture is asked for: a function
    declared below the layer that draws it (the statistics' ``compare``, drawn by
    ``whileai_core.pictures``)."""
    if toolset not in TOOLSETS:
        raise ValueError(f"unknown toolset {toolset!r}; known: {', '.join(TOOLSETS)}")
    if cli is not None and not _COMMAND.fullmatch(cli):
        raise ValueError(f"cli {cli!r} is not a command name (lowercase words joined by '-')")

    def declare(fn: Callable[..., Any]) -> Callable[..., Any]:
        name = fn.__name__
        if name in _REGISTRY and _REGISTRY[name].module != fn.__module__:
            raise RuntimeError(f"operation {name!r} is declared twice ({_REGISTRY[name].module}, "
                               f"{fn.__module__})")
        text = description
        _REGISTRY[name] = Operation(
            name=name, fn=fn, toolset=toolset, effect=effect, title=title,
            describe=text if callable(text) else (lambda: text), result=result,
            serves=(name, *[s for s in serves if s != name]), doing=doing, surfaces=surfaces,
            picture=_imported_on_call(picture) if isinstance(picture, str) else picture,
            paged=paged, exit_code=exit_code, cli=cli, module=fn.__module__)
        return checked(fn)

    return declare


def operations() -> dict[str, Operation]:
    """Every operation, in table-of-contents order (imports the declaring modules)."""
    for module in MODULES:
        importlib.import_module(module)
    order = {m: i for i, m in enumerate(MODULES)}
    ops = dict(sorted(_REGISTRY.items(), key=lambda kv: order.get(kv[1].module, len(order))))
    commands: dict[str, str] = {}
    for op in ops.values():
        if "cli" in op.surfaces and commands.setdefault(op.command, op.name) != op.name:
            raise RuntimeError(f"operations {commands[op.command]!r} and {op.name!r} both declare "
                               f"the command {op.command!r}")
    return ops


def load(name: str) -> Operation:
    """The operation ``name``, importing only the module that declares it (named in
    ``calls.json``): a command or a tool's first call does not import every other declaration.
    A name the table lacks falls back to :func:`get` (every declaration imported)."""
    from ..voice import OPS

    if name not in _REGISTRY and name in OPS and OPS[name].module:
        importlib.import_module(OPS[name].module)
    return _REGISTRY[name] if name in _REGISTRY else get(name)


def get(name: str) -> Operation:
    """The operation ``name``; a renamed or unknown name raises ``ArgumentError`` naming the
    operation to use."""
    ops = operations()
    if name in ops:
        return ops[name]

    raise ArgumentError(renamed(name) or f"no operation {name!r}. Fix: one of "
                        + ", ".join(ops))


def renamed(name: str, *, spell: Callable[[str], str] | None = None) -> str | None:
    """The message for a call of an old name (``None`` if ``name`` was never renamed)."""
    new = RENAMED.get(name)
    if new is None:
        return None
    spell = spell or (lambda n: f"`{n}`")
    how = RENAMED_HOW.get(name)
    return (f"{spell(name)} is now {spell(new)}{' ' + how if how else ''}: the old name is not "
            f"served. Fix: call {spell(new)}")


def in_toolsets(toolsets: tuple[str, ...] | list[str]) -> list[Operation]:
    """The operations of these toolsets that MCP serves, in table-of-contents order."""
    return [op for op in operations().values() if op.toolset in toolsets and "mcp" in op.surfaces]
