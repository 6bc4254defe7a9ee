"""Which paper each strategy comes from and which tasks it is built for (``thoughtloom strategies``)."""

from thoughtloom import strategies, tasks
from thoughtloom.strategies.interface import NEEDS
from thoughtloom.strategies.decomp.catalogue import DEFAULTS


def built_for(name):
    cls = strategies.get(name)
    return {t for t in tasks.available() if cls.supports(tasks.get(t))}


def test_every_strategy_declares_a_paper_and_a_known_need():
    for name in strategies.available():
        cls = strategies.get(name)
        assert cls.paper in ("DecomP", "HGOT", "ThoughtSculpt", "baselines"), name
        assert cls.needs in NEEDS, name
    assert strategies.get("decomp-cot").paper == "DecomP" and strategies.get("sculpt-mcts").paper == "ThoughtSculpt"
    assert strategies.get("hgot").paper == "HGOT" and strategies.get("tot-bfs").paper == "baselines"


def test_supported_tasks_follow_the_tasks_own_metadata():
    assert built_for("cot-sc") == set(tasks.available())
    # decomp: the tasks with a default program, by name or by the shape of their questions (qa: issue 39)
    assert built_for("decomp") == set(DEFAULTS["decomp"]) | {"qa"} and built_for("decomp-cot-rollout") == {"letter_cat"}
    # retrieval strategies: open-domain tasks
    assert built_for("hgot") == built_for("retrieve-then-read") == {
        t for t in tasks.available() if tasks.get(t).open_domain} >= {"hotpotqa", "fever", "2wiki"}
    # tree searches: tasks with a SearchTask view
    assert built_for("sculpt-mcts") == built_for("tot-bfs") == {"game24", "crosswords", "commongen", "outline"}


def test_every_strategy_class_has_resolvable_annotations():
    """The strategy base's annotations name only imported types, so tools that read them
    (typing.get_type_hints, documentation builders) work on every strategy."""
    import typing

    for name in strategies.available():
        typing.get_type_hints(strategies.get(name))
