"""The package's import graph has no cycle and no import against the layering.

Data flows one way (../shared/ARCHITECTURE.md)::

    cli -> { api, view } -> eval -> strategies -> { lm, retrieval, entail } -> core
                                \\-> tasks <-/      (tasks: datasets, prompts, scorers, metrics)

``api`` (``thoughtloom.solve`` / ``thoughtloom.evaluate``) is one module that
drives the eval runner, so it sits above ``eval``; ``cli`` may use it. The
package's ``__init__`` loads it lazily and is no layer. ``view``, the run
inspector, reads run folders: above ``eval`` too, beside ``api``, below ``cli``.

An import may go to a lower layer or stay inside its own top-level
subpackage; between two subpackages of one layer only the listed sideways
edges are allowed (``prompts`` is package data beside ``core`` and reads
core's types). Every import of one of our modules counts, lazy ones inside
functions too, except those under ``if TYPE_CHECKING:``; a module importing
its own package (or a parent package's ``__init__``) is not an edge. The
same rules as ``../shared/tools/import-graph``, so the two agree (that tool
knows no ``api`` or ``view`` layer and skips them; this test checks them).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import thoughtloom

#: The layer of each top-level subpackage (higher imports lower).
LAYERS = {"core": 0, "prompts": 0, "lm": 1, "retrieval": 1, "entail": 1, "testing": 1,
          "tasks": 2, "strategies": 3, "eval": 4, "api": 5, "view": 5, "cli": 6}
#: Imports allowed between two subpackages of one layer.
ALLOWED_SIDEWAYS = {("prompts", "core")}


def module_names(root: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module of the package at ``root``."""
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _targets(node: ast.Import | ast.ImportFrom, current: str, is_package: bool, modules: dict) -> set[str]:
    """Our modules an import statement loads (``from a import b`` loads a, and a.b if it is a module)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = current if is_package else current.rsplit(".", 1)[0]
        if node.level:
            for _ in range(node.level - 1):
                base = base.rsplit(".", 1)[0]
            module = base + ("." + node.module if node.module else "")
        else:
            module = node.module or ""
        names = [module] + [f"{module}.{alias.name}" for alias in node.names]
    package = current.split(".")[0]
    found = set()
    for name in names:
        while name and name not in modules:  # an attribute of a module: the module
            name = name.rsplit(".", 1)[0] if "." in name else ""
        if name.startswith(package):
            found.add(name)
    return found


class _Imports(ast.NodeVisitor):
    def __init__(self, current: str, is_package: bool, modules: dict) -> None:
        self.current, self.is_package, self.modules = current, is_package, modules
        self.found: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
                (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
            for child in node.orelse:  # only the runtime branch counts
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found |= _targets(node, self.current, self.is_package, self.modules)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found |= _targets(node, self.current, self.is_package, self.modules)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports."""
    modules = module_names(root)
    graph = {}
    for name, path in modules.items():
        visitor = _Imports(name, path.name == "__init__.py", modules)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        graph[name] = {d for d in visitor.found if d != name and not name.startswith(d + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def against_layering(graph: dict[str, set[str]]) -> list[str]:
    """Every ``importer -> imported`` edge the layering forbids."""
    def layer(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else None

    bad = []
    for module, deps in graph.items():
        src = layer(module)
        for dep in deps:
            dst = layer(dep)
            if src not in LAYERS or dst not in LAYERS or src == dst:
                continue
            if LAYERS[dst] > LAYERS[src] or (LAYERS[dst] == LAYERS[src] and (src, dst) not in ALLOWED_SIDEWAYS):
                bad.append(f"{module} -> {dep}")
    return sorted(bad)


PACKAGE = Path(thoughtloom.__file__).parent


def test_the_package_has_no_import_cycle():
    assert cycles(import_graph(PACKAGE)) == []


def test_no_import_goes_against_the_layering():
    graph = import_graph(PACKAGE)
    assert len(graph) > 100 and "thoughtloom.core.types" in graph["thoughtloom.strategies.context"]
    assert "thoughtloom.eval.runner" in graph["thoughtloom.api"]  # the one-call API drives the runner
    assert against_layering(graph) == []


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_a_planted_cycle_and_upward_imports_are_caught(tmp_path):
    package = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/core/__init__.py": "from .types import T\n",
        "pkg/core/types.py": "T = int\n",
        "pkg/core/trace.py": "def f():\n    from ..lm import meter  # lazy, still an import\n",
        "pkg/lm/__init__.py": "",
        "pkg/lm/meter.py": "from ..core.types import T\nfrom pkg.retrieval import index\n",
        "pkg/retrieval/__init__.py": "",
        "pkg/retrieval/index.py": "from . import store\n",
        "pkg/retrieval/store.py": "from .index import x\n",
        "pkg/tasks/__init__.py": "",
        "pkg/tasks/odqa.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from ..strategies.base import Context  # types only: no edge\n"
                              "else:\n    from ..eval import runner\n"),
        "pkg/strategies/__init__.py": "",
        "pkg/strategies/base.py": "from pkg.tasks import odqa\nfrom ..lm.meter import M\n",
        "pkg/eval/__init__.py": "",
        "pkg/eval/runner.py": "import pkg.strategies.base\n",
        "pkg/prompts/__init__.py": "from ..core.types import T\n",
    })
    graph = import_graph(package)
    assert cycles(graph) == [
        ["pkg.eval.runner", "pkg.strategies.base", "pkg.tasks.odqa"],
        ["pkg.retrieval.index", "pkg.retrieval.store"],
    ]
    # "from ..lm import meter" loads the package pkg.lm and the module pkg.lm.meter: two edges
    assert against_layering(graph) == [
        "pkg.core.trace -> pkg.lm", "pkg.core.trace -> pkg.lm.meter",
        "pkg.lm.meter -> pkg.retrieval", "pkg.lm.meter -> pkg.retrieval.index",
        "pkg.tasks.odqa -> pkg.eval", "pkg.tasks.odqa -> pkg.eval.runner",
    ]


def test_no_import_hides_under_type_checking():
    """The graph above skips imports under ``if TYPE_CHECKING:``, so a cycle could hide there (issue 28:
    "no TYPE_CHECKING circle"); the package has none of them at all, so none can."""
    root = Path(thoughtloom.__file__).parent
    hiding = [str(path.relative_to(root)) for path in sorted(root.rglob("*.py"))
              for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
              if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)]
    assert hiding == []
