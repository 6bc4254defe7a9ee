"""The kernel itself: a strategy that adds only a control loop gets the run
scaffold (root, budget stop, result), batched generator and evaluator
objects from their registries, and the symbolic evaluator as a swap."""

import asyncio
import json

import pytest

from support import search_toy as toy
from thoughtloom.strategies import available
from thoughtloom.strategies.treesearch.evaluator import ModelEvaluator, SymbolicEvaluator
from thoughtloom.strategies.treesearch.parts import EVALUATORS, GENERATORS
from thoughtloom.strategies.treesearch.scaffold import SearchConfig, SearchRun, TreeSearch
from thoughtloom.strategies.treesearch.tree import Node


def search_run(ctx, cfg=SearchConfig(), generator="revise"):
    """One run's state with the parts a strategy would build from ``cfg``: looked up by name."""
    return SearchRun(toy.PROBLEM, ctx, cfg, GENERATORS.make(generator, cfg), EVALUATORS.make(cfg.evaluator, cfg))


class GrowForever(TreeSearch):
    """A control loop and nothing else: expand the newest node until something stops it."""

    algorithm = "grow-forever"

    async def loop(self, s: SearchRun, root: Node) -> None:
        node = root
        while True:
            children = await s.expand(node, 2)
            await s.evaluate(children)
            node = children[0]


def test_all_strategy_names_are_registered():
    assert {"sculpt-mcts", "sculpt-dfs", "tot-bfs", "tot-dfs", "self-refine", "cot", "cot-sc"} <= set(available())


async def test_a_control_loop_gets_root_budget_stop_and_result_from_the_base():
    lm = toy.make_lm({"aa": 9}, default=3)
    ctx = toy.make_ctx(lm, max_calls=8)
    result = await GrowForever(SearchConfig()).run(toy.PROBLEM, ctx)
    # root answer + its evaluation, then (2 children + 2 evaluations) per step until the budget is spent
    assert [len(b) for b in lm.batches] == [1, 1, 2, 2, 2]
    assert result.stopped == "budget" and ctx.trace.of_type("budget_exceeded")
    assert result.details["algorithm"] == "grow-forever"
    # the loop went on from "ac"; the answer is the best-scored node the budget left
    assert result.answer == "aa" and ctx.trace.of_type("tree_answer")[0]["answer"] == "aa"


async def test_the_strategy_object_keeps_no_run_state():
    strategy = GrowForever(SearchConfig(max_calls=6))
    before = dict(vars(strategy))
    runs = [(toy.make_lm({"ab": 9}), toy.make_lm({"ab": 9})) for _ in range(2)]
    together = await asyncio.gather(*(strategy.run(toy.PROBLEM, toy.make_ctx(lm)) for lm, _ in runs))
    alone = [await strategy.run(toy.PROBLEM, toy.make_ctx(lm)) for _, lm in runs]
    assert [r.details for r in together] == [r.details for r in alone]
    assert vars(strategy) == before


async def test_the_generator_sends_every_nodes_children_in_one_batch():
    lm = toy.make_lm({})
    s = search_run(toy.make_ctx(lm))
    root = await s.root()
    a, b = s.tree.add("x", root, "revised"), s.tree.add("y", root, "revised")
    groups = await s.expand_many([a, b], 3)
    assert [len(batch) for batch in lm.batches] == [1, 6]
    assert len({r.sample_index for r in lm.batches[1]}) == 6  # six distinct, replayable samples
    assert [[c.candidate for c in g] for g in groups] == [["xc", "xa", "xb"], ["yc", "ya", "yb"]]


async def test_the_tot_generator_starts_empty_and_drops_revisions():
    lm = toy.make_lm({}, propose=lambda cand, n: f"CAND: {cand}b\nsome prose\nCAND: zz")
    s = search_run(toy.make_ctx(lm), generator="tot")
    root = await s.root()
    assert root.candidate == "" and root.evaluator == "empty" and not lm.batches
    s.tree.add("a", root, "extended")
    children = await s.expand(s.tree.nodes[1], 2)
    assert [len(b) for b in lm.batches] == [1]  # one proposal request lists both thoughts
    assert [c.candidate for c in children] == ["ab"]
    assert s.ctx.trace.of_type("tree_rejected")[0]["reason"] == "revises its parent"
    assert not s.ctx.trace.of_type("malformed")  # a prose line in a proposal list is skipped, not an error


async def test_a_reply_that_lists_k_candidates_may_be_k_candidates_long():
    """``gen_max_tokens`` caps each generated candidate (docs/sculpt.md). A ToT proposal lists ``k``
    thoughts in one reply (Yao et al.'s propose prompt), so its cap is ``k`` x ``gen_max_tokens``; with
    one candidate's cap, sculpt-commongen's 3-sentence proposals were cut off in 25 of 84 requests and
    lost their last thought, where ThoughtSculpt's children each had the whole cap. A sampled thought
    (one per reply) and a revision keep one candidate's cap."""
    cfg = SearchConfig(gen_max_tokens=40)
    for generator, k, expected in (("tot", 3, [120]), ("revise", 3, [40, 40, 40])):
        lm = toy.make_lm({}, propose=lambda cand, n: f"CAND: {cand}b")
        s = search_run(toy.make_ctx(lm), cfg, generator=generator)
        root = await s.root()
        await s.expand(s.tree.add("a", root, "extended"), k)
        assert [r.max_tokens for r in lm.batches[-1]] == expected, generator


async def test_the_symbolic_evaluator_is_a_swap_chosen_once():
    task = toy.ToyTask(symbolic={"ab": 1.0})
    lm = toy.make_lm({"ab": 2, "ac": 7})
    model = search_run(toy.make_ctx(lm, task=task))
    symbolic = search_run(toy.make_ctx(lm, task=task), SearchConfig(evaluator="symbolic"))
    assert type(model.evaluator) is ModelEvaluator and type(symbolic.evaluator) is SymbolicEvaluator
    for s in (model, symbolic):
        nodes = [s.tree.add("ab"), s.tree.add("ac")]
        await s.evaluate(nodes)
        assert len(lm.batches[-1]) == 2  # both nodes judged in one batch
    assert [(n.score, n.evaluator) for n in model.tree.nodes] == [(0.2, "model"), (0.7, "model")]
    assert [(n.score, n.evaluator) for n in symbolic.tree.nodes] == [(1.0, "symbolic"), (0.7, "model")]
    assert json.loads(json.dumps(symbolic.tree.to_json()))[0]["feedback"] == "feedback on ab"


def test_a_tree_strategy_writes_loop_not_search():
    """One meaning per name (issue 28): ``search`` is retrieval (``Context.search``); a tree strategy's
    control loop is ``loop``, and a subclass still defining ``search`` is told so instead of never running."""
    with pytest.raises(TypeError, match=r"defines search\(\); .* named loop"):
        class Old(TreeSearch):  # noqa: F841
            async def search(self, s, root):
                return None
    from thoughtloom.strategies.treesearch import search as old_path
    assert old_path.TreeSearch is TreeSearch  # the old module path still imports


async def test_an_unreadable_first_reply_is_dropped_and_the_search_starts_empty():
    """docs/tasks.md: a reply parse_candidate cannot read "is dropped and traced as unreadable"; the root
    kept it as a candidate (issue 39 §10), so prose could be the search's answer."""
    from thoughtloom.testing import ScriptedLM

    def reply(req):
        text = req.messages[0].content
        if "Current solution:" in text:  # a revision of the (empty) start
            return f"CAND: {'xyz'[req.sample_index % 3]}"
        return "I am not sure where to begin."

    lm = ScriptedLM(reply)
    s = search_run(toy.make_ctx(lm))
    root = await s.root()
    assert root.candidate == "" and root.evaluator == "empty" and root.score == 0.0
    assert s.ctx.trace.of_type("malformed")[0]["what"] == "tree_root"
    children = await s.expand(root, 2)
    assert {c.candidate for c in children} <= {"x", "y", "z"} and children  # revisions of the empty start
