"""The members a tree search reads off its view of the task are declared (issue 42, rule 18): the
SearchTask protocol's attributes (defaults on ``Task``, and on the generic view of a task without
SearchTask's methods), its optional methods as protocols of their own, and the Tree-of-Thoughts
generator's ``generate`` option as a protocol of the config."""

import typing

import pytest

from support import search_toy as toy
from thoughtloom.core.errors import ConfigError
from thoughtloom.core.protocols import Completable, PruneMasked, ScoreLimited, SearchTask
from thoughtloom.strategies.baselines.tot import BFSConfig, ToTDFSConfig
from thoughtloom.strategies.treesearch.generator import GenerateModeOption
from thoughtloom.strategies.treesearch.parts import GENERATORS
from thoughtloom.strategies.treesearch.scaffold import SearchConfig
from thoughtloom.strategies.treesearch.world import GenericSearchView, World, search_view
from thoughtloom.tasks import Task
from thoughtloom.tasks.crosswords import MiniCrosswords
from thoughtloom.tasks.game24 import Game24

DECLARED = ("whole_thoughts", "child_per_feedback_item", "candidate_list", "evaluation_style", "judged_metrics")


def test_search_task_declares_the_attributes_a_search_reads():
    assert set(DECLARED) <= set(typing.get_type_hints(SearchTask))


@pytest.mark.parametrize("member", DECLARED)
def test_the_generic_view_declares_each_attribute_as_task_does(member):
    """A task without SearchTask's methods is searched through the generic view, which reads as a
    plain ``Task`` does (what ``getattr(view, member, default)`` gave it before: the defaults)."""
    view = search_view(Task())
    assert isinstance(view, GenericSearchView) and isinstance(view, SearchTask)
    assert getattr(view, member) == getattr(Task, member)


def test_a_task_with_the_methods_is_its_own_view_and_one_without_the_attributes_is_refused():
    task = toy.ToyTask()
    assert search_view(task) is task and World.of(toy.PROBLEM, task).view is task

    class Methods:  # SearchTask's methods copied onto a class that is not a Task: no declared attributes
        name = "mine"
    for name, member in vars(toy.ToyTask).items():
        if callable(member) and not name.startswith("_"):
            setattr(Methods, name, member)
    with pytest.raises(ConfigError, match="'mine' has SearchTask's methods but not its declared attributes") as err:
        search_view(Methods())
    assert "thoughtloom.tasks.Task" in err.value.hint


def test_the_optional_methods_are_protocols_only_the_tasks_that_define_them_meet():
    """Crosswords limits its scores, masks its pruning items and has complete boards; Game of 24, the
    toy task and the generic view do none of it (and are searched as before)."""
    crosswords = MiniCrosswords()
    assert all(isinstance(crosswords, p) for p in (ScoreLimited, PruneMasked, Completable))
    for other in (Game24(), toy.ToyTask(), GenericSearchView(Task())):
        assert not any(isinstance(other, p) for p in (ScoreLimited, PruneMasked, Completable))


def test_the_tot_generator_takes_its_mode_from_a_config_that_declares_it_else_auto():
    assert isinstance(BFSConfig(), GenerateModeOption) and isinstance(ToTDFSConfig(), GenerateModeOption)
    assert not isinstance(SearchConfig(), GenerateModeOption)
    assert GENERATORS.make("tot", SearchConfig()).mode == "auto"
    assert GENERATORS.make("tot", BFSConfig(generate="sample")).mode == "sample"
    assert GENERATORS.make("tot", ToTDFSConfig(generate="propose")).mode == "propose"
