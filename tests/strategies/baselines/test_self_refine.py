"""self-refine: one chain of feedback and rewrite on the tree-search kernel."""

from support import search_toy as toy
from thoughtloom.strategies.baselines.self_refine import SelfRefine, SelfRefineConfig


async def test_self_refine_is_one_chain_and_returns_the_last_version():
    """ThoughtSculpt §2: Self-Refine (Madaan et al.) and its kin "follow left-to-right linear
    processes" and §4.1 speaks of "Self-refine's limited search space": one chain of
    feedback and rewrite, one child per round (batches of one), whose answer is its last
    version, even where an earlier one scored higher."""
    lm = toy.make_lm({"a": 3, "ab": 9}, default=2)
    result = await SelfRefine(SelfRefineConfig(iterations=3)).run(toy.PROBLEM, toy.make_ctx(lm))
    assert all(len(b) == 1 for b in lm.batches)
    tree = result.details["tree"]
    assert [n["depth"] for n in tree] == [0, 1, 2, 3]
    assert result.text == tree[-1]["candidate"]  # last, even though an earlier one scored higher


async def test_self_refine_stops_when_the_evaluator_is_satisfied():
    lm = toy.make_lm({"a": 10})
    result = await SelfRefine().run(toy.PROBLEM, toy.make_ctx(lm))
    assert len(result.details["tree"]) == 1 and lm.calls == 2
