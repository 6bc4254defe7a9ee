"""``thoughtloom.strategies.base`` was split by concern (issue 28); its names still import from it,
as the objects their new modules hold, and nothing in the package imports it any more."""

import ast
from pathlib import Path

import thoughtloom
from thoughtloom.lm import meter
from thoughtloom.strategies import base, context, interface, prompting, registry, result, vote

HOMES = {
    interface: ["DEFAULT_MAX_CALLS", "NEEDS", "NoConfig", "Strategy"],
    registry: ["available", "get", "register"],
    context: ["Context"],
    result: ["Result", "SoFar"],
    prompting: ["LAYOUTS", "LayoutChecked", "check_layout", "demo_turn", "few_shot", "finished", "render_demos"],
    vote: ["vote_samples"],
    meter: ["CallCap"],
}


def test_every_old_name_is_the_object_its_new_module_holds():
    moved = sorted(n for names in HOMES.values() for n in names)
    assert sorted(base.__all__) == moved
    for module, names in HOMES.items():
        for name in names:
            assert getattr(base, name) is getattr(module, name), name


def test_no_module_of_the_package_imports_the_old_base():
    assert _importers("thoughtloom.strategies.base") == []


def test_no_module_imports_the_old_tree_search_path():
    """``treesearch/search.py`` became ``scaffold.py`` (``search`` is retrieval); the old path re-exports."""
    assert _importers("thoughtloom.strategies.treesearch.search") == []


def _importers(module: str) -> list[str]:
    root = Path(thoughtloom.__file__).parent
    importing = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                within = path.parent.relative_to(root.parent).parts
                package = ".".join(within[: len(within) - node.level + 1]) if node.level else ""
                names = [f"{package}.{node.module}" if node.level and node.module else node.module or package]
                names += [f"{names[0]}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if module in names:
                importing.append(str(path.relative_to(root)))
    return importing
