"""Issue 42: a tree search is a generator, an evaluator and a search algorithm, objects passed in or
looked up by name in their registries (llm-reasoners' split: what the world is, how good it is, how we
search), each keeping no run state on itself."""

import asyncio
import dataclasses
import json

import pytest

from support import search_toy as toy
from thoughtloom import strategies
from thoughtloom.core.errors import ConfigError
from thoughtloom.strategies.baselines.tot import ToTDFS, ToTDFSConfig
from thoughtloom.strategies.sculpt.dfs import GreedyDFSConfig, SculptDFS, SculptDFSBacktrack
from thoughtloom.strategies.sculpt.mcts import MCTSConfig, SculptMCTS
from thoughtloom.strategies.treesearch.dfs import DFSConfig
from thoughtloom.strategies.treesearch.evaluator import ModelEvaluator
from thoughtloom.strategies.treesearch.parts import EVALUATORS, GENERATORS, Evaluator
from thoughtloom.strategies.treesearch.scaffold import SEARCH_ALGORITHMS, SearchConfig, TreeSearch


class Longest:
    """A user's evaluator: the longer the candidate, the better (no model call)."""

    name = "longest"

    @classmethod
    def from_config(cls, cfg):
        return cls()

    async def evaluate(self, run, nodes):
        for node in nodes:
            if node.score is None:
                node.score, node.feedback, node.evaluator = min(len(node.candidate) / 4, 1.0), "", self.name
                run.tree.scored(node)


def evaluation_requests(lm):
    return [r for batch in lm.batches for r in batch if "JSON object" in r.messages[0].content]


SEARCHES = {  # one of each control loop over ThoughtSculpt's and ToT's generators, with the goal out of reach
    "mcts": lambda **parts: SculptMCTS(MCTSConfig(rollouts=3, max_depth=3, goal_score=2.0), **parts),
    "dfs": lambda **parts: SculptDFS(GreedyDFSConfig(max_depth=3, goal_score=2.0), **parts),
    "dfs-backtrack": lambda **parts: SculptDFSBacktrack(DFSConfig(max_steps=3, goal_score=2.0), **parts),
    "tot-dfs": lambda **parts: ToTDFS(ToTDFSConfig(max_steps=3, goal_score=2.0), **parts),
}


@pytest.mark.parametrize("name", SEARCHES)
async def test_an_evaluator_object_passed_in_judges_every_node(name):
    """The object given takes the model evaluator's place: no evaluation request reaches the model,
    every node carries its verdict, and the answer is the longest candidate."""
    lm = toy.make_lm({}, default=9)
    ctx = toy.make_ctx(lm)
    result = await SEARCHES[name](evaluator=Longest()).run(toy.PROBLEM, ctx)
    assert isinstance(Longest(), Evaluator) and evaluation_requests(lm) == []
    tree = result.details["tree"]
    assert {n["evaluator"] for n in tree} <= {"longest", "empty"} and result.details["evaluator"] == "longest"
    assert len(result.answer) == max(len(n["candidate"]) for n in tree) and result.details["nodes"] > 3


@pytest.mark.parametrize("name", ["sculpt-mcts", "sculpt-dfs-backtrack"])
async def test_a_registered_evaluator_is_an_option_value(name):
    """Registered, the evaluator is a choice of the ``evaluator`` option like ``model`` and ``symbolic``
    (the option reads the registry's names as they are when it is checked, not when it was declared)."""
    with pytest.raises(ConfigError, match="must be one of: model, symbolic"):
        strategies.build(name, {"evaluator": "longest"})
    EVALUATORS.register("longest")(Longest)
    try:
        strategy = strategies.build(name, {"evaluator": "longest", "goal_score": 2.0})
        assert type(strategy.parts.evaluator) is Longest
        lm = toy.make_lm({}, default=9)
        result = await strategy.run(toy.PROBLEM, toy.make_ctx(lm))
        assert evaluation_requests(lm) == [] and result.details["evaluator"] == "longest"
    finally:
        EVALUATORS.unregister("longest")
    assert "longest" not in EVALUATORS.names()


def test_the_built_in_parts_are_looked_up_by_name():
    cfg = SearchConfig()
    assert sorted(GENERATORS.names()) == ["revise", "tot"] and sorted(EVALUATORS.names()) == ["model", "symbolic"]
    assert {"mcts", "dfs", "dfs-backtrack", "bfs", "refine"} <= set(SEARCH_ALGORITHMS.names())
    assert EVALUATORS.make("symbolic", cfg).name == "symbolic"
    assert ModelEvaluator.from_config(SearchConfig(eval_max_tokens=99, k=5)) == EVALUATORS.make(
        "model", SearchConfig(eval_max_tokens=99, k=5))
    with pytest.raises(ConfigError, match=r"unknown tree evaluator 'modle' \(did you mean 'model'"):
        EVALUATORS.make("modle", cfg)
    with pytest.raises(ValueError, match="registered twice"):
        EVALUATORS.register("model")(Longest)


async def test_a_search_algorithm_object_passed_in_runs_the_loop():
    """The control loop is a part too: MCTS's config with a one-expansion loop of one's own."""
    class OneExpansion:
        async def loop(self, run, root):
            await run.evaluate(await run.expand(root, 2))

        def choose(self, run):
            return run.tree.nodes[-1]

    lm = toy.make_lm({}, default=5)
    result = await SculptMCTS(MCTSConfig(rollouts=8), search_algorithm=OneExpansion()).run(toy.PROBLEM, toy.make_ctx(lm))
    assert [len(b) for b in lm.batches] == [1, 1, 2, 2] and result.details["nodes"] == 3
    assert result.answer == "aa" and "rollouts_done" not in result.details  # its choice: the newest node


def test_a_tree_strategy_without_a_control_loop_is_refused():
    class NoLoop(TreeSearch):
        pass

    with pytest.raises(TypeError, match="NoLoop has no control loop: name a search_algorithm"):
        NoLoop()


@pytest.mark.parametrize("name", ["sculpt-mcts", "sculpt-dfs", "sculpt-dfs-backtrack", "tot-bfs", "tot-dfs",
                                  "self-refine"])
async def test_no_part_keeps_run_state(name):
    """Two runs at once answer as each alone does, and no part of the strategy changed (issue 42:
    "no per-run state on self"; MCTS's virtual losses are a rollout's own, not the run's)."""
    strategy = strategies.build(name, {"max_calls": 12} if name != "sculpt-mcts" else {"max_calls": 12, "parallel": 2})
    parts = {f.name: json.dumps(vars(getattr(strategy.parts, f.name)), default=repr, sort_keys=True)
             for f in dataclasses.fields(strategy.parts)}
    runs = [(toy.make_lm({"ab": 9, "b": 7}), toy.make_lm({"ab": 9, "b": 7})) for _ in range(2)]
    together = await asyncio.gather(*(strategy.run(toy.PROBLEM, toy.make_ctx(lm)) for lm, _ in runs))
    alone = [await strategy.run(toy.PROBLEM, toy.make_ctx(lm)) for _, lm in runs]
    assert [r.details for r in together] == [r.details for r in alone]
    assert {f.name: json.dumps(vars(getattr(strategy.parts, f.name)), default=repr, sort_keys=True)
            for f in dataclasses.fields(strategy.parts)} == parts
