"""ThoughtSculpt's MCTS (§3.3, Eq. 4, Algorithm 1) checked against the paper's text on the toy task."""

import itertools
import math
import random

import pytest

from support import search_toy as toy
from thoughtloom.strategies.sculpt.mcts import MCTSConfig, SculptMCTS, select, ucb1
from thoughtloom.strategies.treesearch.tree import Tree


def test_a_node_only_evaluated_has_ucb1_of_its_own_heuristic_score():
    """Eq. 4: "UCB1(x) = v(x) + c sqrt(ln n(x_parent) / n(x))", where "the UCB1 value of node x takes
    into account not only the heuristic score v(x) but also the total number of visits". A child whose
    evaluation (v = 0.6) is its one visit, under a parent visited 4 times, has
    UCB1 = 0.6 + 1.0 * sqrt(ln 4 / 1)."""
    tree = Tree()
    root = tree.add("r")
    child = tree.add("c", root, "revised")
    child.score = 0.6
    tree.first_visit(child)
    root.visits = 4
    assert (child.visits, child.mean_value) == (1, pytest.approx(0.6))
    assert ucb1(child, root.visits, 1.0) == pytest.approx(0.6 + math.sqrt(math.log(4)))


class _ByLength(dict):
    """Toy scores that tell every depth apart: a candidate of n letters scores LENGTH_SCORES[n]/10."""

    def get(self, cand, default=None):
        return LENGTH_SCORES.get(len(cand), 9)


LENGTH_SCORES = {1: 1, 2: 3, 3: 6, 4: 8}


async def test_each_evaluation_is_a_first_visit_and_each_rollout_one_more():
    """§3.3: "we update the reward of the last node generated in the simulation back to the root node";
    with a node's own evaluation as its first visit, after r rollouts the root has 1 + r visits and its
    average is (v(root) + the r rewards) / (1 + r), each reward the score of that rollout's simulated
    node. Every depth scores differently here, so backing up the expanded child's or the leaf's score
    instead of the simulated node's gives another average."""
    lm = toy.make_lm(_ByLength())
    ctx = toy.make_ctx(lm)
    result = await SculptMCTS(MCTSConfig(rollouts=3, k=2, max_depth=10)).run(toy.PROBLEM, ctx)
    tree = result.details["tree"]
    simulated = [n for n in tree if n["simulated"]]
    assert len(simulated) == 3  # d_simulation = 1: one simulated node per rollout
    rewards = [LENGTH_SCORES.get(len(n["candidate"]), 9) / 10 for n in simulated]
    root = tree[0]
    assert root["visits"] == 1 + 3
    assert root["mean_value"] == pytest.approx((0.1 + sum(rewards)) / 4)
    backed = [e["reward"] for e in ctx.trace.of_type("tree_backprop") if not e.get("evaluation")]
    assert backed == pytest.approx(rewards)
    assert result.details["rollouts_done"] == 3


def test_the_answer_is_the_node_with_the_highest_average_reward_unless_asked_for_the_highest_score():
    """§3.3: "The node with the highest average reward will be chosen as the final output." Child x
    scored v = 1.0 but its 3 visits average 1.0 / 3; child y scored 0.6 and its 2 visits average 0.6:
    the default answer is y; ``answer: score`` (Algorithm 1's "highest reward v") gives x."""
    tree = Tree()
    root = tree.add("r")
    root.score, root.visits, root.value_sum = 0.2, 6, 2.4
    x = tree.add("x", root, "revised")
    x.score, x.visits, x.value_sum = 1.0, 3, 1.0
    y = tree.add("y", root, "revised")
    y.score, y.visits, y.value_sum = 0.6, 2, 1.2
    assert tree.best_by_mean() is y and tree.best_by_value() is x


@pytest.mark.parametrize("seed", range(4))
async def test_by_default_mcts_answers_with_the_highest_average_reward(seed):
    """§3.3's rule end to end, on issue 23's toy (ab scores 10/10, everything below it 0/10): the answer is
    a node whose average reward is the highest in the tree, which here is not ab (its rollouts back up 0)."""
    scores = {"a": 6, "aa": 6, "ac": 6, "ab": 10}
    for n in range(1, 5):
        for tail in itertools.product("abc", repeat=n):
            scores["ab" + "".join(tail)] = 0
    result = await SculptMCTS(MCTSConfig(rollouts=8, k=3, max_depth=5)).run(
        toy.PROBLEM, toy.make_ctx(toy.make_lm(scores, default=6), seed=seed))
    means = [n["mean_value"] for n in result.details["tree"] if n["mean_value"] is not None]
    assert result.details["chosen_mean"] == pytest.approx(max(means))
    assert result.answer != "ab"


@pytest.mark.parametrize("seed", range(4))
async def test_a_ten_out_of_ten_child_whose_revisions_score_zero_is_the_answer(seed):
    """``answer: score``, Algorithm 1, line 14: "Choose the best node x* with the highest reward v". Issue 23's toy: the root
    and its other children score 6/10, child "ab" scores 10/10 and every revision below it 0/10; the
    highest v among the evaluated nodes is ab's 1.0, so ab is the answer whatever the seed (before: a 0.6
    node, for 4 of 4 seeds, because ab's backed-up rewards were 0)."""
    scores = {"a": 6, "aa": 6, "ac": 6, "ab": 10}
    for n in range(1, 5):
        for tail in itertools.product("abc", repeat=n):
            scores["ab" + "".join(tail)] = 0
    lm = toy.make_lm(scores, default=6)
    result = await SculptMCTS(MCTSConfig(rollouts=8, k=3, max_depth=5, answer="score")).run(
        toy.PROBLEM, toy.make_ctx(lm, seed=seed))
    assert result.answer == "ab" and result.confidence == 1.0


@pytest.mark.parametrize("seed, parallel", [(s, p) for s in range(12) for p in (1, 3)])
async def test_mcts_never_answers_with_a_node_worse_than_one_it_evaluated(seed, parallel):
    """``answer: score`` (Algorithm 1, line 14, "the highest reward v") over every evaluated node: on random
    score tables, sequential and leaf-parallel, the answer's score is the maximum score in the tree; with
    the default ``answer: mean`` (§3.3) the answer's average reward is the maximum average."""
    rng = random.Random(seed)
    scores = {"".join(t): rng.randint(0, 10) for n in range(1, 7) for t in itertools.product("abc", repeat=n)}
    c = rng.choice([0.1, 1, 3])
    for answer in ("score", "mean"):
        cfg = MCTSConfig(rollouts=9, k=3, max_depth=5, parallel=parallel, c=c, answer=answer)
        result = await SculptMCTS(cfg).run(toy.PROBLEM, toy.make_ctx(toy.make_lm(scores), seed=seed))
        nodes = [n for n in result.details["tree"] if n["score"] is not None]
        if answer == "score":
            assert result.details["chosen_score"] == max(n["score"] for n in nodes)
        else:
            assert result.details["chosen_mean"] == pytest.approx(max(n["mean_value"] for n in nodes))


async def test_rollouts_that_cannot_grow_are_not_counted_and_the_search_says_it_stopped():
    """Fig. 5: "One step is equal to one d_rollout"; Algorithm 1, line 6: each rollout "Expand[s] node x
    by generating a set of children nodes". With max_depth 1 the root's 3 children (depth 1) can have no
    children, so after the first rollout no rollout can expand anything: the search stops after 1 of
    its 10 rollouts, having made root + its evaluation + 3 children + 3 evaluations = 8 calls (before:
    10 "rollouts", 9 of which backed the same leaves up again for free)."""
    lm = toy.make_lm({}, default=5)
    ctx = toy.make_ctx(lm)
    result = await SculptMCTS(MCTSConfig(rollouts=10, k=3, max_depth=1)).run(toy.PROBLEM, ctx)
    assert lm.calls == 8 and result.details["rollouts_done"] == 1
    assert "max_depth=1" in result.details["stopped_early"]
    assert ctx.trace.of_type("tree_exhausted")[0]["rollouts"] == 1
    assert len(ctx.trace.of_type("tree_select")) == 1
    assert [e["step"] for e in ctx.trace.of_type("phase") if e["phase"] == "rollout"] == [1]


def test_selection_skips_subtrees_that_cannot_grow():
    """A leaf at max_depth is never selected: its siblings' subtree is taken instead, even at a lower UCB1."""
    tree = Tree()
    root = tree.add("r")
    root.expanded = True
    root.visits = 3
    deep = tree.add("deep", root, "revised")
    deep.score, deep.visits, deep.value_sum, deep.expanded = 1.0, 1, 1.0, True
    capped = tree.add("capped", deep, "revised")  # depth 2 = max_depth: cannot grow
    capped.score, capped.visits, capped.value_sum = 1.0, 1, 1.0
    other = tree.add("other", root, "revised")
    other.score, other.visits, other.value_sum = 0.1, 1, 0.1
    assert select(tree, 1.0, max_depth=2) is other
    other.depth = 2  # now nothing below the root can grow
    assert select(tree, 1.0, max_depth=2) is None
    assert select(tree, 1.0) is capped  # without a cap the capped leaf is a leaf like any other


async def test_leaf_parallel_stops_the_same_way_and_leaves_no_virtual_visit():
    """Leaf-parallel rollouts select only leaves that can grow too: with max_depth 1 the first iteration
    can take only the root (the tree has no other leaf), the second finds none and the search stops;
    afterwards every visit is an evaluation or a backed-up reward (virtual losses are gone)."""
    lm = toy.make_lm({}, default=5)
    ctx = toy.make_ctx(lm)
    result = await SculptMCTS(MCTSConfig(rollouts=10, k=3, max_depth=1, parallel=4, virtual_loss=3)).run(
        toy.PROBLEM, ctx)
    assert result.details["rollouts_done"] == 1 and ctx.trace.of_type("tree_exhausted")
    backprops = ctx.trace.of_type("tree_backprop")
    for node in result.details["tree"]:
        assert node["visits"] == sum(node["id"] in e["path"] for e in backprops)


async def test_stop_at_goal_is_off_by_default_and_ends_the_search_when_on():
    """Algorithm 1 runs "for j <- 1 to d_rollout" with no early exit, so by default a 10/10 node does
    not end the search; stop_at_goal (ours) ends it at the first rollout that reaches goal_score."""
    lm = toy.make_lm({"ab": 10, "ac": 10, "aa": 10}, default=5)
    result = await SculptMCTS(MCTSConfig(rollouts=4)).run(toy.PROBLEM, toy.make_ctx(lm))
    assert result.details["rollouts_done"] == 4
    lm = toy.make_lm({"ab": 10, "ac": 10, "aa": 10}, default=5)
    result = await SculptMCTS(MCTSConfig(rollouts=4, stop_at_goal=True)).run(toy.PROBLEM, toy.make_ctx(lm))
    assert result.details["rollouts_done"] < 4 and result.confidence == 1.0


# -- the loop's counting and stopping, exactly (each kills a mutant the tests above let through) ------

async def test_the_defaults_are_the_papers_sequential_search():
    """§4.1: "In this and all the experiments below, ThoughtSculpt with MCTS will have a maximum
    d_simulation of 1"; Algorithm 1 runs its rollouts one after another ("for j <- 1 to d_rollout") with
    no early exit. Run with the defaults on a toy where every node below the root scores 10/10: each
    rollout selects one leaf (sequential), adds exactly one simulated node, and all d_rollout rollouts
    run although a solved node is found in the first (max_depth is raised so that depth never stops a
    simulation)."""
    ctx = toy.make_ctx(toy.make_lm({"a": 5}, default=10))
    cfg = MCTSConfig(max_depth=50)
    result = await SculptMCTS(cfg).run(toy.PROBLEM, ctx)
    assert [e["parallel"] for e in ctx.trace.of_type("tree_select")] == [1] * cfg.rollouts
    assert sum(n["simulated"] for n in result.details["tree"]) == cfg.rollouts
    assert result.details["rollouts_done"] == cfg.rollouts and result.confidence == 1.0


def test_virtual_loss_may_be_zero_but_not_negative():
    """The config's rule: "parallel must be >= 1 and virtual_loss >= 0" (0 = plain leaf-parallel, no
    steering); a negative loss would ADD value to a path in flight and is refused."""
    assert MCTSConfig(parallel=2, virtual_loss=0).virtual_loss == 0
    with pytest.raises(Exception, match=r"option virtual_loss: -1 \(must be >= 0\)"):
        MCTSConfig(virtual_loss=-1)


async def test_leaf_parallel_rollouts_are_counted_leaf_by_leaf_up_to_exactly_d_rollout():
    """"Each leaf counts as one of the rollouts": with rollouts=6 and parallel=3 the iterations take
    1 (only the root exists), 3, then the 2 left, never a 7th; a search that spent its rollouts did not
    stop early (no tree_exhausted event, no stopped_early note)."""
    ctx = toy.make_ctx(toy.make_lm({}, default=5))
    result = await SculptMCTS(MCTSConfig(rollouts=6, k=3, parallel=3, max_depth=4)).run(toy.PROBLEM, ctx)
    assert [e["parallel"] for e in ctx.trace.of_type("tree_select")] == [1, 3, 3, 3, 2, 2]
    assert result.details["rollouts_done"] == 6
    assert ctx.trace.of_type("tree_exhausted") == [] and "stopped_early" not in result.details


async def test_a_tree_that_cannot_grow_stops_its_rollouts_and_says_so():
    """With max_depth=1 and k=1 the first rollout expands the root into one child at the cap; no leaf
    can grow after it, so the search stops after 1 of its 4 rollouts, with rollouts_done 1 and the reason
    (max_depth=0, a root at the cap, is refused when the config is made: max_depth >= 1)."""
    for retry_empty in (True, False):  # no expansion came back empty: the reason is the cap alone
        ctx = toy.make_ctx(toy.make_lm({}, default=5))
        result = await SculptMCTS(MCTSConfig(rollouts=4, k=1, max_depth=1, retry_empty=retry_empty)).run(
            toy.PROBLEM, ctx)
        assert result.details["rollouts_done"] == 1
        assert result.details["stopped_early"] == "no leaf below max_depth=1 left to grow"
    assert [(e["rollouts"], e["planned"]) for e in ctx.trace.of_type("tree_exhausted")] == [(1, 4)]
    with pytest.raises(Exception, match=r"option max_depth: 0 \(must be >= 1\)"):
        MCTSConfig(max_depth=0)


class _GrandchildrenOfTheFirstChildSolve(dict):
    """Scores for the toy model: 10/10 for every node below the root's first child ("a.1."), else 5/10."""

    def get(self, cand, default=None):
        return 10 if cand.startswith("a.1.") else 5


def _numbered_children():
    counter = itertools.count(1)
    return lambda cand, sample_index: f"CAND: {cand}.{next(counter)}"


@pytest.mark.parametrize("stop_at_goal, done", [(True, 3), (False, 6)])
async def test_stop_at_goal_ends_the_iteration_in_which_any_leaf_reaches_the_goal(stop_at_goal, done):
    """Leaf-parallel, 2 leaves per iteration, no simulation: iteration 1 expands the root into a.1 and a.2
    (5/10), iteration 2 expands both; a.1's children score 10/10, a.2's 5/10. With stop_at_goal the search
    ends after that iteration because ONE of its rewarded nodes is solved (1 + 2 = 3 rollouts); without
    it, Algorithm 1 spends all 6 rollouts although solved nodes were rewarded."""
    lm = toy.make_lm(_GrandchildrenOfTheFirstChildSolve(), child=_numbered_children())
    cfg = MCTSConfig(rollouts=6, k=2, parallel=2, simulation_depth=0, stop_at_goal=stop_at_goal)
    result = await SculptMCTS(cfg).run(toy.PROBLEM, toy.make_ctx(lm))
    assert result.details["rollouts_done"] == done
    assert result.answer.startswith("a.1.") and result.confidence == 1.0


def test_ucb1_under_a_parent_with_no_visit_yet_is_the_nodes_value():
    """Eq. 4's ln n(x_parent) is read with n(x_parent) at least 1 (ln 1 = 0): a child evaluated (one
    visit, v = 0.6) under a parent not yet visited scores its own value, not a math domain error."""
    tree = Tree()
    root = tree.add("r")
    child = tree.add("c", root, "revised")
    child.score = 0.6
    tree.first_visit(child)
    assert ucb1(child, 0, 1.0) == pytest.approx(0.6)


def test_d_rollout_is_at_least_one():
    """d_rollout counts the rollouts MCTS runs; a search of 0 rollouts is refused when the config is made."""
    assert MCTSConfig(rollouts=1).rollouts == 1
    with pytest.raises(Exception, match=r"option rollouts: 0 \(must be >= 1\)"):
        MCTSConfig(rollouts=0)


async def test_a_budget_stop_inside_the_first_rollout_reports_none_done():
    """The root's generation and evaluation take the first 2 calls; a budget of 2 stops the search in its
    first rollout (its batch of k=3 children does not fit), so the answer so far says 0 rollouts done."""
    ctx = toy.make_ctx(toy.make_lm({}, default=5))
    result = await SculptMCTS(MCTSConfig(rollouts=4, max_calls=2)).run(toy.PROBLEM, ctx)
    assert result.stopped == "budget" and result.details["rollouts_done"] == 0 and result.details["nodes"] == 1
