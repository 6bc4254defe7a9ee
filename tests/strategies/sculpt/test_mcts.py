import asyncio
import dataclasses
import math

import pytest

from support import search_toy as toy
from thoughtloom.strategies.sculpt.mcts import MCTSConfig, SculptMCTS, growable, select, ucb1
from thoughtloom.strategies.treesearch.scaffold import report
from thoughtloom.strategies.treesearch.tree import Tree


def _tree_with(stats):
    """Root (expanded) with children given as (visits, value_sum, score)."""
    tree = Tree()
    root = tree.add("r")
    root.expanded = True
    for i, (n, s, score) in enumerate(stats):
        child = tree.add(f"c{i}", root, "revised")
        child.visits, child.value_sum, child.score = n, s, score
    root.visits = sum(n for n, _, _ in stats)
    return tree


def test_ucb1_formula():
    tree = _tree_with([(2, 1.0, 0.5)])
    node = tree.nodes[1]
    assert ucb1(node, 3, 1.0) == pytest.approx(0.5 + math.sqrt(math.log(3) / 2))
    assert ucb1(node, 3, 0.0) == pytest.approx(0.5)
    unvisited = tree.add("u", tree.root, "revised")
    assert ucb1(unvisited, 3, 1.0) == math.inf


def test_selection_trades_exploration_against_value():
    # a: mean 0.8 over 10 visits; b: mean 0.5 over 1 visit
    tree = _tree_with([(10, 8.0, 0.8), (1, 0.5, 0.5)])
    assert select(tree, c=0.0).candidate == "c0"   # pure exploitation
    assert select(tree, c=1.0).candidate == "c1"   # 0.5 + sqrt(ln 11) > 0.8 + sqrt(ln 11 / 10)


def test_selection_prefers_unvisited_then_better_scored():
    tree = _tree_with([(3, 3.0, 1.0), (0, 0.0, 0.4), (0, 0.0, 0.7)])
    assert select(tree, c=1.0).candidate == "c2"


def test_selection_descends_only_through_expanded_nodes():
    tree = _tree_with([(1, 0.9, 0.9)])
    child = tree.nodes[1]
    tree.add("sim", child, "extended", simulated=True)  # child is NOT expanded
    assert select(tree, 1.0) is child
    child.expanded = True
    assert select(tree, 1.0).candidate == "sim"


def test_backpropagation_arithmetic():
    tree = Tree()
    root = tree.add("r")
    a = tree.add("a", root, "extended")
    b = tree.add("ab", a, "extended")
    tree.backpropagate(b, 0.6)
    tree.backpropagate(a, 0.2)
    assert (root.visits, root.value_sum) == (2, pytest.approx(0.8))
    assert (a.visits, a.mean_value) == (2, pytest.approx(0.4))
    assert (b.visits, b.mean_value) == (1, pytest.approx(0.6))


def test_answer_is_the_highest_scored_evaluated_node_even_if_never_visited_by_a_rollout():
    """Algorithm 1, line 14: "Choose the best node x* with the highest reward v", where v is the
    evaluator's score (Eq. 1: "f_numeric(x^i) = v(x^i)"). c2 scored 1.0 and was never reached by a
    rollout; c1 has the best average backed-up reward (1.6 / 2 = 0.8) but scored 0.3 itself, c0 scored
    0.9. The highest v is c2's 1.0. (The old rule, highest mean among visited nodes, answered c1.)"""
    tree = _tree_with([(4, 2.0, 0.9), (2, 1.6, 0.3), (0, 0.0, 1.0)])
    assert tree.best_by_value().candidate == "c2"


def test_ties_in_score_go_to_the_highest_average_reward():
    """§3.3: "The node with the highest average reward will be chosen as the final output": among
    nodes of equal v = 0.8, c1's average (1 own visit 0.8 + 2 rollouts 0.9 each) / 3 = 0.867 beats
    c0's (0.8 + 0.5) / 2 = 0.65."""
    tree = _tree_with([(2, 1.3, 0.8), (3, 2.6, 0.8)])
    assert tree.best_by_value().candidate == "c1"


async def test_one_rollout_expands_simulates_and_backpropagates():
    lm = toy.make_lm({"a": 2, "aa": 3, "ab": 4, "ac": 5}, default=7)
    ctx = toy.make_ctx(lm)
    result = await SculptMCTS(MCTSConfig(rollouts=1, k=3, simulation_depth=1)).run(toy.PROBLEM, ctx)
    # root generation, root evaluation, 3 children (one batch), their evaluations
    # (one batch), one simulated child, its evaluation
    assert [len(b) for b in lm.batches] == [1, 1, 3, 3, 1, 1]
    tree = result.details["tree"]
    assert len(tree) == 5
    root, sim = tree[0], tree[4]
    assert sim["simulated"] and tree[sim["parent"]]["parent"] == 0
    # its own evaluation (v = 2/10) is the root's first visit; the rollout adds the sim node's 7/10
    assert root["visits"] == 2 and root["mean_value"] == pytest.approx((0.2 + 0.7) / 2)
    unvisited = [n for n in tree[1:4] if n["id"] != sim["parent"]]
    assert all(n["visits"] == 1 and n["mean_value"] == pytest.approx(n["score"]) for n in unvisited)
    assert tree[sim["parent"]]["visits"] == 2 and sim["visits"] == 1  # the sim's evaluation was its visit
    rollout_backprops = [e for e in ctx.trace.of_type("tree_backprop") if not e.get("evaluation")]
    assert len(rollout_backprops) == 1 and rollout_backprops[0]["path"] == [0, sim["parent"]]


async def test_simulation_depth_limits_the_chain():
    lm = toy.make_lm({})
    ctx = toy.make_ctx(lm)
    result = await SculptMCTS(MCTSConfig(rollouts=1, simulation_depth=2, max_depth=5)).run(toy.PROBLEM, ctx)
    sims = [n for n in result.details["tree"] if n["simulated"]]
    assert len(sims) == 2 and sims[1]["parent"] == sims[0]["id"] and sims[1]["depth"] == 3
    # and the max depth caps it
    lm = toy.make_lm({})
    result = await SculptMCTS(MCTSConfig(rollouts=1, simulation_depth=3, max_depth=2)).run(
        toy.PROBLEM, toy.make_ctx(lm))
    assert max(n["depth"] for n in result.details["tree"]) == 2


async def test_search_finds_the_high_reward_branch():
    # only strings through "ab" score well
    import itertools

    scores = {"a": 3}
    for n in range(0, 4):
        for tail in itertools.product("abc", repeat=n):
            scores["ab" + "".join(tail)] = 9
    lm = toy.make_lm(scores, default=1)
    result = await SculptMCTS(MCTSConfig(rollouts=6, c=0.5)).run(toy.PROBLEM, toy.make_ctx(lm))
    assert result.answer.startswith("ab")
    assert result.details["chosen_mean"] == pytest.approx(0.9)
    root_children = [n for n in result.details["tree"] if n["parent"] == 0]
    most_visited = max(root_children, key=lambda n: n["visits"])
    assert most_visited["candidate"] == "ab"  # UCB1 kept coming back to the rewarding branch


async def test_budget_exhaustion_returns_best_so_far():
    lm = toy.make_lm({"ab": 9}, default=2)
    ctx = toy.make_ctx(lm, max_calls=8)
    result = await SculptMCTS(MCTSConfig(rollouts=50)).run(toy.PROBLEM, ctx)
    assert result.stopped == "budget"
    assert lm.calls <= 8
    assert result.answer  # something from the tree, not an empty failure
    assert ctx.trace.of_type("budget_exceeded")


async def test_budget_too_small_for_anything():
    lm = toy.make_lm({})
    result = await SculptMCTS().run(toy.PROBLEM, toy.make_ctx(lm, max_calls=0))
    assert result.answer == "" and result.stopped == "budget" and result.details == {"nodes": 0}


async def test_two_searches_run_concurrently_without_sharing_state():
    strat = SculptMCTS(MCTSConfig(rollouts=3))
    lm1 = toy.make_lm({"ab": 9}, default=1)
    lm2 = toy.make_lm({"ac": 9}, default=1)
    r1, r2 = await asyncio.gather(strat.run(toy.PROBLEM, toy.make_ctx(lm1)),
                                  strat.run(toy.PROBLEM, toy.make_ctx(lm2)))
    assert r1.answer.startswith("ab") and r2.answer.startswith("ac")
    ids1 = [n["id"] for n in r1.details["tree"]]
    assert ids1 == list(range(len(ids1)))


async def test_every_node_is_traced_and_report_shows_the_tree():
    lm = toy.make_lm({"ab": 9})
    ctx = toy.make_ctx(lm)
    result = await SculptMCTS(MCTSConfig(rollouts=2)).run(toy.PROBLEM, ctx)
    nodes = ctx.trace.of_type("tree_node")
    evals = ctx.trace.of_type("tree_eval")
    assert len(nodes) == len(result.details["tree"]) == len(evals)
    for key in ("candidate", "parent", "kind"):
        assert key in nodes[0]
    assert {"score", "feedback"} <= set(evals[0])
    text = report(result)
    assert "mcts:" in text and "#0 [root]" in text
    # the chosen node's line, and only it, is marked with a leading "*"
    marked = [line for line in text.splitlines() if line.startswith("*")]
    assert len(marked) == 1 and marked[0].lstrip("* ").startswith(f"#{result.details['chosen']} [")


async def test_last_batch_is_trimmed_to_the_budget_not_refused():
    lm = toy.make_lm({}, default=6)
    ctx = toy.make_ctx(lm, max_calls=7)
    result = await SculptMCTS(MCTSConfig(rollouts=3)).run(toy.PROBLEM, ctx)
    # root gen + root eval + 3 children = 5 calls; 2 calls left for 3 evaluations
    assert lm.calls == 7 and [len(b) for b in lm.batches] == [1, 1, 3, 2]
    assert ctx.trace.of_type("tree_budget_trim")[0] == {**ctx.trace.of_type("tree_budget_trim")[0],
                                                          "wanted": 3, "sent": 2}
    scored = [n for n in result.details["tree"] if n["score"] is not None]
    assert len(scored) == 3 and result.stopped == "budget"


async def test_leaf_parallel_batches_several_leaves_and_removes_virtual_loss():
    lm = toy.make_lm({"a": 2, "aa": 3, "ab": 8, "ac": 5}, default=4)
    ctx = toy.make_ctx(lm)
    result = await SculptMCTS(MCTSConfig(rollouts=7, k=3, parallel=3, max_depth=4)).run(toy.PROBLEM, ctx)
    sizes = [len(b) for b in lm.batches]
    # the first iteration has only the root to offer; later ones expand 3 leaves x k=3 in one batch
    assert sizes[:4] == [1, 1, 3, 3] and 9 in sizes
    selects = ctx.trace.of_type("tree_select")
    assert len(selects) == 7 and len({e["node"] for e in selects}) == 7  # distinct leaves, 7 rollouts
    tree = result.details["tree"]
    backprops = ctx.trace.of_type("tree_backprop")
    rollout_backprops = [e for e in backprops if not e.get("evaluation")]
    assert len(rollout_backprops) == 7 and tree[0]["visits"] == 1 + 7  # no virtual visit left behind
    for node in tree:  # every visit count is its own evaluation plus real backpropagations through it
        assert node["visits"] == sum(node["id"] in e["path"] for e in backprops)
        assert node["visits"] >= (node["score"] is not None)


def test_virtual_loss_steers_the_next_selection():
    from thoughtloom.strategies.sculpt.mcts import select_leaves

    tree = _tree_with([(2, 1.8, 0.9), (2, 1.0, 0.5)])
    pending: dict[int, int] = {}
    leaves = select_leaves(tree, MCTSConfig(c=0.1, virtual_loss=3), 2, pending)
    assert [n.candidate for n in leaves] == ["c0", "c1"]  # without the loss c0 would win again
    assert pending == {0: 3 + 3, 1: 3, 2: 3}  # each chosen leaf's path, root included
    assert [n.visits for n in tree.nodes] == [4, 2, 2]  # the tree's own statistics stay real


def test_parallel_config_is_checked():
    with pytest.raises(Exception, match="parallel"):
        MCTSConfig(parallel=0)


def test_a_parents_virtual_visits_count_in_its_childrens_exploration_term():
    """Eq. 4's n(x_parent) under leaf-parallel rollouts is the parent's visits plus the virtual ones in
    flight. c0 (mean 0.6, 1 visit) beats c1 (mean 0.9, 10 visits) once ln n(x_parent) > 0.19: with the
    root's 1 real visit (ln 1 = 0) c1 wins, with 2 virtual ones beside it (ln 3) c0 does."""
    tree = _tree_with([(1, 0.6, 0.6), (10, 9.0, 0.9)])
    tree.root.visits = 1
    assert select(tree, 1.0).candidate == "c1"
    assert select(tree, 1.0, pending={0: 2}).candidate == "c0"
    assert tree.root.visits == 1  # pending visits are never written to the tree


def test_an_empty_expansion_stays_selectable_unless_retry_empty_is_off():
    """retry_empty (the default): a leaf whose expansion gave no readable child may be selected again."""
    tree = Tree()
    tree.add("r").expanded = True
    assert growable(tree, math.inf) == {0} and select(tree, 1.0) is tree.root
    assert growable(tree, math.inf, retry_empty=False) == set() and select(tree, 1.0, retry_empty=False) is None
    fresh = Tree()
    fresh.add("r")  # not expanded yet: growable either way
    assert growable(fresh, math.inf, retry_empty=False) == {0}


def test_the_mcts_search_algorithm_is_frozen():
    """A part keeps no run state (issue 42): MCTS's settings cannot change under a run."""
    algorithm = SculptMCTS(MCTSConfig()).parts.search_algorithm
    with pytest.raises(dataclasses.FrozenInstanceError):
        algorithm.config = MCTSConfig(rollouts=1)
