"""The core's layers read top-down: no import runs from a lower layer to a higher one, and no
module imports itself back through others (docs/development.md, "Layers").

The import graph is read from the source with ``ast``: every ``import`` and ``from ... import``,
at module level or inside a function, counts; only ``if TYPE_CHECKING:`` blocks are left out
(they never run). Python's own rules are followed where they add edges a reader could miss:
importing ``a.b.c`` runs ``a/b/__init__.py`` first, and a name taken from a package whose
``__init__`` hands out names lazily (a ``{name: submodule}`` table read by ``__getattr__``) comes
from the submodule the table names.

``LAYERS`` below is the one table of which module sits in which layer.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "whileai_core"

# bottom to top: (layer, why it sits there, module prefixes). A module takes the layer of its
# longest matching prefix; the package's root ``__init__`` is only a lazy table of public names.
LAYERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("infrastructure", "errors, defaults, messages, the path door, safe JSON and atomic writes: "
     "what every other module stands on",
     ("whileai_core", "errors", "defaults", "voice", "result", "progress", "admission", "os_errors",
      "safepath", "safejson", "jsonc", "io", "staged", "failures", "extras", "bundled",
      "interrupts", "confine", "seal", "operations", "operations.args", "operations.checks",
      "operations.describe")),
    ("data", "reading records, graded rows and other systems' output into columns, with "
     "line-numbered errors and no statistic",
     ("records", "file_shapes", "field_names", "columns", "budgets", "rewards", "rows", "rows_cache", "tables",
      "importers")),
    ("format detection", "what loaded rows hold (fields, their kinds, the reward's scale): read "
     "by the statistics to name a field that is missing",
     ("describe", "roles", "role_names", "writers")),
    ("statistics", "rates with task-clustered intervals, paired comparisons, noise floors, "
     "holdout sizes: numbers, no decisions",
     ("bootstrap", "stats")),
    ("domain", "the decisions and the systems they drive: routing, methods, the prime-rl writer, "
     "judges, traces, reward hacking, runs, experiments",
     ("importers.result", "models", "questions", "truncation", "grading", "next_steps", "routing",
      "teacher", "categories", "evalset",
      "methods", "prime_rl", "judge", "traces", "sft", "pairs", "hacking", "runs",
      "experiments", "pictures", "init", "skills")),
    ("operations", "what every surface does with a declared operation: validate, resolve paths, "
     "call, page, picture; the table of calls generated from the declarations",
     ("operations.surface", "operations.calls", "operations.__main__")),
    ("surfaces", "the CLI, the MCP server, the skills and the recipes: they call the core, "
     "nothing calls them",
     ("cli", "shell", "server", "recipes", "check")),
)

# outside the package, these top-level names are this repository's own surfaces
SURFACES_OUTSIDE = ("server", "recipes", "check")



# --- reading the package -------------------------------------------------------------------

def modules(root: Path = REPO) -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name -> (file, is a package ``__init__``)."""
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return found


def lazy_table(tree: ast.Module) -> dict[str, str] | None:
    """A package ``__init__``'s ``{name: submodule}`` table when a module ``__getattr__`` hands
    names out from it, else None."""
    if not any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body):
        return None
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Dict) and value.keys and all(
                isinstance(k, ast.Constant) and isinstance(k.value, str)
                and isinstance(v, ast.Constant) and isinstance(v.value, str)
                for k, v in zip(value.keys, value.values)):
            return {k.value: v.value for k, v in zip(value.keys, value.values)}
    return None


class Import:
    """One import statement's target module, where it sits and whether it runs in a function."""

    def __init__(self, source: str, target: str, line: int, text: str, in_function: bool):
        self.source, self.target, self.line = source, target, line
        self.text, self.in_function = text, in_function

    def __repr__(self) -> str:
        return f"{self.source}:{self.line} -> {self.target}"


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = getattr(test, "id", None) or getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skipped


def _function_nodes(tree: ast.Module) -> set[int]:
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inside.update(id(n) for stmt in ast.iter_child_nodes(node) for n in ast.walk(stmt))
    return inside


def imports(root: Path = REPO) -> list[Import]:
    """Every import of every module of the package, each target resolved to a module (internal
    ones) or a top-level name (external ones)."""
    mods = modules(root)
    trees = {name: ast.parse(path.read_text(encoding="utf-8"), str(path))
             for name, (path, _) in mods.items()}
    tables = {name: lazy_table(tree) for name, tree in trees.items() if mods[name][1]}

    def known(name: str) -> str:
        while name not in mods and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

    def through_table(package: str, attr: str) -> str:
        """The module that ``from package import attr`` ends up loading."""
        here = f"{package}.{attr}"
        if here in mods:
            return here
        table = tables.get(package)
        if table and attr in table:
            target = f"{package}.{table[attr]}" if table[attr] else here
            if target in mods:
                return target
        return package

    found = []
    for name, tree in trees.items():
        is_pkg = mods[name][1]
        lines = mods[name][0].read_text(encoding="utf-8").splitlines()
        skipped, inside = _type_checking_nodes(tree), _function_nodes(tree)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in skipped:
                continue
            text = "\n".join(lines[node.lineno - 1:node.end_lineno])
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
                targets = [through_table(prefix, a.name) for a in node.names]
            elif node.module == PACKAGE or node.module.startswith(PACKAGE + "."):
                targets = [through_table(node.module, a.name) for a in node.names]
            else:
                targets = [node.module]
            for target in targets:
                if target == PACKAGE or target.startswith(PACKAGE + "."):
                    target = known(target)
                found.append(Import(name, target, node.lineno, text, id(node) in inside))
    return found


def edges(found: list[Import]) -> dict[str, set[str]]:
    """module -> the package modules it imports, with each target's enclosing packages (their
    ``__init__`` runs first) except those the importer sits in (already running)."""
    graph: dict[str, set[str]] = {}
    for imp in found:
        if not imp.target.startswith(PACKAGE + "."):
            continue
        parts = imp.target.split(".")
        for i in range(2, len(parts) + 1):
            target = ".".join(parts[:i])
            if imp.source == target or imp.source.startswith(target + "."):
                continue  # a package the importer is inside of, or itself
            graph.setdefault(imp.source, set()).add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as one cycle
    through them, for the message."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(_one_cycle(graph, set(component)))

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return found


def _one_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest path back to the start inside ``component`` (breadth first)."""
    start = min(component)
    paths = {start: [start]}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph.get(v, ())):
            if w == start:
                return paths[v] + [start]
            if w in component and w not in paths:
                paths[w] = paths[v] + [w]
                todo.append(w)
    return sorted(component)


def layer_of(module: str) -> int | None:
    """The index in ``LAYERS`` of ``module`` (a package module, or one of the repository's
    surfaces outside it), or None when no entry covers it."""
    if module.split(".")[0] in SURFACES_OUTSIDE:
        return len(LAYERS) - 1
    if module == PACKAGE:
        return 0
    rel = module[len(PACKAGE) + 1:]
    best, best_len = None, -1
    for i, (_, _, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if prefix != PACKAGE and (rel == prefix or rel.startswith(prefix + ".")) \
                    and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    return best


# --- the checks ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def found() -> list[Import]:
    return imports()


def test_every_module_has_a_layer():
    missing = sorted(m for m in modules() if layer_of(m) is None)
    assert not missing, (f"{len(missing)} module(s) in no layer: {missing}. Fix: add each to "
                         "LAYERS in tests/test_layers.py (and docs/development.md if a layer "
                         "changes)")


def test_no_import_cycle(found):
    loops = cycles(edges(found))
    assert not loops, "import cycles: " + "; ".join(" -> ".join(c) for c in loops)


def test_no_import_runs_upward(found):
    upward = []
    for imp in found:
        if not (imp.target.startswith(PACKAGE + ".") or imp.target.split(".")[0]
                in SURFACES_OUTSIDE):
            continue
        low, high = layer_of(imp.source), layer_of(imp.target)
        if low is not None and high is not None and high > low:
            upward.append(f"{imp.source} ({LAYERS[low][0]}) line {imp.line} imports "
                          f"{imp.target} ({LAYERS[high][0]})")
    assert not upward, ("imports from a lower layer to a higher one:\n" + "\n".join(upward)
                        + "\nFix: move the code to the layer it belongs to")


def test_the_layers_are_documented_in_order():
    text = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    section = text[text.index("## Layers"):]
    positions = [section.find(f"**{name}**") for name, _, _ in LAYERS]
    assert -1 not in positions and positions == sorted(positions), (
        "docs/development.md, section Layers, must name each layer in bold, bottom to top: "
        + ", ".join(name for name, _, _ in LAYERS))


# --- the checks check something ------------------------------------------------------------

def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / PACKAGE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_a_lazy_import_still_makes_a_cycle(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "rows.py": "from .stats import rate\n",
        "stats/__init__.py": "from .rates import rate\n",
        "stats/rates.py": "def rate():\n    from ..rows import x  # lazy: planted\n",
    })
    loop = cycles(edges(imports(root)))
    # rows -> stats.rates -> rows; the package stats/__init__ is on the way
    assert len(loop) == 1 and set(loop[0]) == {"whileai_core.rows", "whileai_core.stats",
                                               "whileai_core.stats.rates"}


def test_type_checking_imports_and_lazy_tables_are_read_as_python_runs_them(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "errors.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                     "    from .stats import Rate\n",
        "stats/__init__.py": "_WHERE = {'Rate': 'rates'}\n\ndef __getattr__(name):\n"
                             "    return name\n",
        "stats/rates.py": "from ..errors import E\n",
        "rows.py": "from .stats import Rate\n",
    })
    found = imports(root)
    graph = edges(found)
    assert "whileai_core.errors" not in graph  # the TYPE_CHECKING block never runs
    assert graph["whileai_core.rows"] == {"whileai_core.stats", "whileai_core.stats.rates"}
    assert not cycles(graph)
    # rows (data) -> stats.rates (statistics) is upward; the check names it
    ups = [i for i in found if i.source == "whileai_core.rows"]
    assert [(layer_of(i.source), layer_of(i.target)) for i in ups] == [(1, 3)]


# --- a plain rows file loads without the importers or the statistics -----------------------

def test_loading_a_jsonl_file_imports_neither_the_importers_nor_the_statistics(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"task_id": "a", "reward": 1}\n{"task_id": "b", "reward": 0}\n',
                    encoding="utf-8")
    script = ("import sys\nfrom whileai_core.rows import load_rows\n"
              f"rows = load_rows({str(rows)!r})\n"
              "print(rows.n_tasks, rows.n_rows)\n"
              "print(sorted(m for m in sys.modules if m.startswith(('whileai_core.stats', "
              "'whileai_core.importers', 'whileai_core.bootstrap', 'scipy'))))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": ""}, check=True)
    assert out.stdout.splitlines() == ["2 2", "[]"], out.stderr
