"""Optional capabilities are declared protocols, not ``getattr`` guesses (rule 18, issue 42).

A member a strategy, a task, a strategy's config or an optional protocol may have is declared --
on :class:`~thoughtloom.tasks.Task` / :class:`~thoughtloom.strategies.Strategy` with a default, on
:class:`~thoughtloom.core.protocols.TaskView`, or as a ``runtime_checkable`` protocol read with
``isinstance`` -- and read as an attribute. This walks the package's source for
``getattr(obj, "member", ...)`` and ``hasattr(obj, "member")`` naming one of those members, so
discovery cannot creep back.
"""

import ast
import dataclasses
import typing
from pathlib import Path

import thoughtloom
from thoughtloom import strategies
from thoughtloom.core import protocols
from thoughtloom.eval import progress
from thoughtloom.strategies.treesearch.generator import GenerateModeOption
from thoughtloom.tasks import Task

ROOT = Path(thoughtloom.__file__).parent

def _public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


def protocol_members() -> set[str]:
    """Every member of a task, a strategy, a strategy's options, the task views and the optional
    protocols beside the LM, the judge and the progress display."""
    names = _public(Task) | _public(strategies.Strategy)
    for proto in (protocols.TaskView, protocols.SearchTask, protocols.ScoreLimited, protocols.PruneMasked,
                  protocols.Completable, protocols.Budgeted, protocols.Probed, protocols.Bindable,
                  progress.LiveProgress, progress.ServerProgress, GenerateModeOption):
        names |= {n for n in typing.get_type_hints(proto) | vars(proto) if not n.startswith("_")}
    for name in strategies.available():
        config = strategies.get(name).Config
        if dataclasses.is_dataclass(config):
            names |= {f.name for f in dataclasses.fields(config)}
    # ``name`` is every object's (the CLI reads click's command and parameter names, which may be None)
    return names - {"name"}


def named_members(tree: ast.AST, members: set[str]) -> list[str]:
    """The members named by a string literal in each ``getattr``/``hasattr`` call in ``tree``."""
    return [node.args[1].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant) and node.args[1].value in members]


def discoveries(members: set[str]) -> set[tuple[str, str]]:
    """(module, member) for every ``getattr``/``hasattr`` in the package naming one of ``members``."""
    return {(path.relative_to(ROOT).as_posix(), name) for path in sorted(ROOT.rglob("*.py"))
            for name in named_members(ast.parse(path.read_text(encoding="utf-8")), members)}


def test_no_getattr_finds_a_protocol_member():
    """Issue 42: "optional members become declared protocols (no ``getattr`` discovery of
    ``max_calls``)"."""
    assert discoveries(protocol_members()) == set()


def test_the_walk_finds_a_getattr_of_a_member():
    """The walk itself: the forms it must catch (a Task member, a config's option, an optional
    protocol's method) are caught, and a getattr of something else is not."""
    members = protocol_members()
    assert {"max_calls", "open_domain", "judge_schema", "parse_gold", "bind", "live", "demo_annotation"} <= members
    assert {"whole_thoughts", "judged_metrics", "score_limits", "judged_items", "complete", "generate"} <= members
    source = ('getattr(task, "open_domain", False)\nhasattr(task, "parse_gold")\n'
              'getattr(cfg, "max_calls", None)\ngetattr(exc, "option_name", None)\n')
    assert sorted(named_members(ast.parse(source), members)) == ["max_calls", "open_domain", "parse_gold"]
