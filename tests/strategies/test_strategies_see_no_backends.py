"""Strategies see core protocols, never a concrete backend (house rule; ARCHITECTURE.md)."""

import ast
from pathlib import Path

import thoughtloom.strategies

#: packages whose backends strategies must not import; their own package API (factories) is fine
BACKEND_PACKAGES = ("lm", "retrieval", "entail")
#: helpers in those packages that are not backends (meter: budgets and the strategy's own CallCap)
ALLOWED = {"thoughtloom.lm.structured", "thoughtloom.lm.meter"}


def imported_modules(path: Path, package: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.add(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_no_strategy_imports_a_backend_module():
    root = Path(thoughtloom.strategies.__file__).parent
    offending = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root.parent).with_suffix("")
        package = ".".join(("thoughtloom", *rel.parts[:-1]))
        for module in imported_modules(path, package):
            parts = module.split(".")
            if len(parts) > 2 and parts[0] == "thoughtloom" and parts[1] in BACKEND_PACKAGES \
                    and module not in ALLOWED:
                offending.append(f"{path.relative_to(root)} imports {module}")
    assert offending == []
