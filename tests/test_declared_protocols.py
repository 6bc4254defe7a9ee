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
from thoughtloom.tasks import Task

ROOT = Path(thoughtloom.__file__).parent

#: Sites in modules other helpers were reworking this round (issue 42's declared-protocols item):
#: each is the tree-search kernel's or DecomP's reading of a ``Task`` member that ``Task`` already
#: declares; what is left to change there, by file and member. Nothing may be added.
NOT_YET = {
    ("strategies/decomp/catalogue.py", "question_shape"),
    ("strategies/treesearch/evaluator.py", "evaluation_style"),
    ("strategies/treesearch/evaluator.py", "score_limits"),
    ("strategies/treesearch/generator.py", "candidate_list"),
    ("strategies/treesearch/generator.py", "child_per_feedback_item"),
    ("strategies/treesearch/generator.py", "whole_thoughts"),
    ("strategies/treesearch/generator.py", "generate"),
    ("strategies/treesearch/dfs.py", "judged_items"),
    ("strategies/treesearch/scaffold.py", "judged_metrics"),
}


def _public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


def protocol_members() -> set[str]:
    """Every member of a task, a strategy, a strategy's options, the task views and the optional
    protocols beside the LM, the judge and the progress display."""
    names = _public(Task) | _public(strategies.Strategy)
    for proto in (protocols.TaskView, protocols.SearchTask, protocols.Budgeted, protocols.Probed,
                  protocols.Bindable, progress.LiveProgress, progress.ServerProgress):
        names |= {n for n in typing.get_type_hints(proto) | vars(proto) if not n.startswith("_")}
    for name in strategies.available():
        config = strategies.get(name).Config
        if dataclasses.is_dataclass(config):
            names |= {f.name for f in dataclasses.fields(config)}
    names |= {"score_limits", "judged_items"}  # SearchTask's optional methods (see its docstring)
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
    ``max_calls``)". Only the sites listed in NOT_YET (modules other helpers own this round) remain."""
    found = discoveries(protocol_members())
    assert found - NOT_YET == set()
    assert NOT_YET - found == set(), "a listed site is gone: take it off NOT_YET"


def test_the_walk_finds_a_getattr_of_a_member():
    """The walk itself: the forms it must catch (a Task member, a config's option, an optional
    protocol's method) are caught, and a getattr of something else is not."""
    members = protocol_members()
    assert {"max_calls", "open_domain", "judge_schema", "parse_gold", "bind", "live", "demo_annotation"} <= members
    source = ('getattr(task, "open_domain", False)\nhasattr(task, "parse_gold")\n'
              'getattr(cfg, "max_calls", None)\ngetattr(exc, "option_name", None)\n')
    assert sorted(named_members(ast.parse(source), members)) == ["max_calls", "open_domain", "parse_gold"]
