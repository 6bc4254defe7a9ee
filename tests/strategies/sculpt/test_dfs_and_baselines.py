from sculpt_toy import TOY as toy
from thoughtloom.strategies.baselines.self_refine import SelfRefine, SelfRefineConfig
from thoughtloom.strategies.baselines.tot import BFSConfig, ToTBFS
from thoughtloom.strategies.baselines.tot import ToTDFS
from thoughtloom.strategies.sculpt.dfs import SculptDFS
from thoughtloom.strategies.treesearch.dfs import DFSConfig
from thoughtloom.strategies import available


def expanded_in_order(lm):
    """The candidate each generation batch was asked to improve, in order."""
    out = []
    for batch in lm.batches:
        text = batch[0].messages[0].content
        if "Feedback on the current solution" in text:
            out.append(text.split("Current solution:\n", 1)[1].split("\n", 1)[0])
    return out


def test_all_strategy_names_are_registered():
    assert {"sculpt-mcts", "sculpt-dfs", "tot-bfs", "tot-dfs", "self-refine", "cot", "cot-sc"} <= set(available())


# Root "a"; its children (sample indices 2, 3, 4) are "ac", "aa", "ab".

async def test_dfs_descends_best_first_prunes_and_backtracks():
    lm = toy["make_lm"]({"ab": 9, "ac": 6, "aa": 2}, default=1)
    ctx = toy["make_ctx"](lm)
    result = await SculptDFS(DFSConfig(prune_below=0.3)).run(toy["problem"], ctx)
    # "ab" first (best); its children all score 0.1 and are pruned; back to "ac"; "aa" pruned
    assert expanded_in_order(lm) == ["a", "ab", "ac"]
    pruned = {e["node"] for e in ctx.trace.of_type("sculpt_prune")}
    tree = result.details["tree"]
    assert {tree[i]["candidate"] for i in pruned} >= {"aa"}
    assert result.answer == "ab"  # best-scored node seen


async def test_dfs_stops_at_goal():
    lm = toy["make_lm"]({"ab": 9, "ac": 6, "abc": 10}, default=1)
    result = await SculptDFS().run(toy["problem"], toy["make_ctx"](lm))
    assert expanded_in_order(lm) == ["a", "ab"]
    assert result.answer == "abc"


async def test_dfs_respects_max_steps():
    lm = toy["make_lm"]({}, default=8)
    await SculptDFS(DFSConfig(max_steps=2)).run(toy["problem"], toy["make_ctx"](lm))
    assert len(expanded_in_order(lm)) == 2


def _revising_child(cand, index):
    # every third proposal rewrites the string instead of extending it
    return f"CAND: z{cand[1:]}q" if index % 3 == 0 else f"CAND: {cand}{'abc'[index % 3]}"


async def test_sculpt_children_may_revise():
    lm = toy["make_lm"]({}, default=5, child=_revising_child)
    result = await SculptDFS(DFSConfig(max_steps=1)).run(toy["problem"], toy["make_ctx"](lm))
    kinds = {n["candidate"]: n["kind"] for n in result.details["tree"]}
    assert "revised" in kinds.values() and "extended" in kinds.values()
    assert kinds["zq"] == "revised"


async def test_tot_children_may_only_extend():
    lm = toy["make_lm"]({}, default=5, child=_revising_child)
    ctx = toy["make_ctx"](lm, task=toy["Task"](root="a"))
    result = await ToTDFS(DFSConfig(max_steps=1)).run(toy["problem"], ctx)
    assert all(n["kind"] in ("root", "extended") for n in result.details["tree"])
    rejected = ctx.trace.of_type("sculpt_rejected")
    assert rejected and rejected[0]["reason"] == "revises its parent"
    # and the generator was told to extend, not to revise
    gen_prompt = lm.batches[1][0].messages[0].content
    assert "Do not change what is already there" in gen_prompt


async def test_tot_bfs_batches_the_whole_beam_and_keeps_the_best():
    lm = toy["make_lm"]({"ab": 9, "ac": 6, "aa": 2}, default=1)
    ctx = toy["make_ctx"](lm, task=toy["Task"](root="a"))
    result = await ToTBFS(BFSConfig(beam=2, k=3, max_depth=2)).run(toy["problem"], ctx)
    sizes = [len(b) for b in lm.batches]
    assert sizes == [1, 3, 3, 6, 6]  # level 2: 2 beam nodes x 3 children in ONE batch
    level2_parents = {n["parent"] for n in result.details["tree"] if n["depth"] == 2}
    tree = result.details["tree"]
    assert {tree[p]["candidate"] for p in level2_parents} == {"ab", "ac"}


async def test_self_refine_is_one_chain_and_returns_the_last_version():
    lm = toy["make_lm"]({"a": 3, "ab": 9}, default=2)
    result = await SelfRefine(SelfRefineConfig(iterations=3)).run(toy["problem"], toy["make_ctx"](lm))
    assert all(len(b) == 1 for b in lm.batches)
    tree = result.details["tree"]
    assert [n["depth"] for n in tree] == [0, 1, 2, 3]
    assert result.text == tree[-1]["candidate"]  # last, even though an earlier one scored higher


async def test_self_refine_stops_when_the_evaluator_is_satisfied():
    lm = toy["make_lm"]({"a": 10})
    result = await SelfRefine().run(toy["problem"], toy["make_ctx"](lm))
    assert len(result.details["tree"]) == 1 and lm.calls == 2


async def test_tot_without_a_given_start_builds_up_from_an_empty_solution():
    lm = toy["make_lm"]({"b": 9}, default=3)
    result = await ToTBFS(BFSConfig(beam=1, max_depth=1)).run(toy["problem"], toy["make_ctx"](lm))
    tree = result.details["tree"]
    assert tree[0]["candidate"] == "" and tree[0]["evaluator"] == "empty"
    assert [len(b) for b in lm.batches] == [3, 3]  # no root call, no root evaluation
    assert {n["candidate"] for n in tree[1:]} == {"a", "b", "c"}
    assert all(n["kind"] == "extended" for n in tree[1:]) and result.answer == "b"
