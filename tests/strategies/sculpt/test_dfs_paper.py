"""ThoughtSculpt-DFS as the paper's Algorithm 2, checked on the toy task."""

from support import search_toy as toy
from thoughtloom.strategies.sculpt.dfs import GreedyDFSConfig, SculptDFS


def expanded_in_order(lm):
    """The candidate each generation batch was asked to improve, in order."""
    return [b[0].messages[0].content.split("Current solution:\n", 1)[1].split("\n", 1)[0]
            for b in lm.batches if "Feedback on the current solution" in b[0].messages[0].content]


async def test_algorithm_2_expands_takes_the_best_child_and_recurses_d_times():
    """Algorithm 2: "Expand node x by generating a set of children nodes X_child; for k <- 1 to
    max_candidates: Evaluate reward v(X_child[k]); Choose the node x* with the highest reward v in
    X_child; DFS(x*, d - 1)", returning x when d = 0. Root "a" (4/10); its children aa, ab, ac score 2,
    9, 6, so the descent takes ab; ab's children aba, abb, abc score 1, 3, 2, so it takes abb (lower than
    ab: the algorithm does not look back); abb's children all score 1 (the default), the first one
    proposed wins the tie. With d = 3 that depth-3 node is the answer, not ab, the best node seen.
    Calls: root + its evaluation + d x (k children + k evaluations) = 2 + 3 x 6 = 20."""
    lm = toy.make_lm({"a": 4, "aa": 2, "ab": 9, "ac": 6, "aba": 1, "abb": 3, "abc": 2}, default=1)
    result = await SculptDFS(GreedyDFSConfig(max_depth=3, k=3)).run(toy.PROBLEM, toy.make_ctx(lm))
    assert expanded_in_order(lm) == ["a", "ab", "abb"]
    tree = result.details["tree"]
    assert result.answer.startswith("abb") and len(result.answer) == 4
    first_child_of_abb = min(n["id"] for n in tree if n["parent"] is not None
                             and tree[n["parent"]]["candidate"] == "abb")
    assert result.details["chosen"] == first_child_of_abb and result.details["descent_depth"] == 3
    assert lm.calls == 2 + 3 * (3 + 3)


async def test_the_descent_is_d_expansions_whatever_the_scores():
    """Algorithm 2 has no backtracking and no pruning: d expansions, each of the node the last one
    chose, even when every child scores 0."""
    lm = toy.make_lm({}, default=0)
    ctx = toy.make_ctx(lm)
    result = await SculptDFS(GreedyDFSConfig(max_depth=4, k=2)).run(toy.PROBLEM, ctx)
    assert len(expanded_in_order(lm)) == 4 and result.details["descent_depth"] == 4
    assert not ctx.trace.of_type("tree_prune")


async def test_with_retry_empty_off_a_descent_with_no_readable_child_stops_and_says_so():
    lm = toy.make_lm({}, default=5, child=lambda cand, i: "I cannot improve this.")
    result = await SculptDFS(GreedyDFSConfig(max_depth=3, retry_empty=False)).run(toy.PROBLEM, toy.make_ctx(lm))
    assert result.answer == "a" and "no readable child of node #0" in result.details["stopped_early"]
    assert len(expanded_in_order(lm)) == 1 and result.details["empty_expansions"] == 1


async def test_an_expansion_with_no_readable_child_is_tried_again_and_spends_a_step():
    """Algorithm 2 line 7, "Expand node x by generating a set of children nodes X_child", says nothing of
    an empty X_child. Our choice (retry_empty, the default): expand x again, and that attempt is one of the
    d steps. Here the first k = 3 samples are unreadable and every later one reads: with d = 3 the root is
    expanded twice (the first attempt empty), then its best child once, so the descent ends at depth 2
    after 3 expansions; calls: root + its evaluation + 3 x 3 children + 2 x 3 evaluations = 17."""
    asked = []

    def child(cand, i):
        asked.append(cand)
        return "no idea" if len(asked) <= 3 else f"CAND: {cand}{'abc'[len(asked) % 3]}"

    lm = toy.make_lm({"ab": 9}, default=5, child=child)
    result = await SculptDFS(GreedyDFSConfig(max_depth=3, k=3)).run(toy.PROBLEM, toy.make_ctx(lm))
    assert expanded_in_order(lm) == ["a", "a", "ab"]
    assert result.details["empty_expansions"] == 1 and result.details["descent_depth"] == 2
    assert "stopped_early" not in result.details
    assert lm.calls == 2 + 3 * 3 + 2 * 3


async def test_stop_at_goal_ends_the_descent_on_a_solved_node():
    lm = toy.make_lm({"ab": 10}, default=5)
    result = await SculptDFS(GreedyDFSConfig(max_depth=5, stop_at_goal=True)).run(toy.PROBLEM,
                                                                                toy.make_ctx(lm))
    assert result.answer == "ab" and len(expanded_in_order(lm)) == 1


async def test_a_budget_stop_answers_with_the_node_the_descent_reached():
    lm = toy.make_lm({"ab": 9}, default=3)
    result = await SculptDFS(GreedyDFSConfig(max_depth=10)).run(toy.PROBLEM, toy.make_ctx(lm, max_calls=10))
    assert result.stopped == "budget" and result.answer.startswith("ab")
