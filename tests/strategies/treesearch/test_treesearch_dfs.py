"""The kernel's depth-first loop (sculpt-dfs, tot-dfs) and its two generators."""

from support import search_toy as toy
from thoughtloom.strategies.baselines.tot import ToTDFS, ToTDFSConfig
from thoughtloom.strategies.sculpt.dfs import SculptDFSBacktrack
from thoughtloom.strategies.treesearch.dfs import DFSConfig


def expanded_in_order(lm):
    """The candidate each generation batch was asked to improve, in order."""
    out = []
    for batch in lm.batches:
        text = batch[0].messages[0].content
        if "Feedback on the current solution" in text:
            out.append(text.split("Current solution:\n", 1)[1].split("\n", 1)[0])
    return out


# Root "a"; its children (sample indices 2, 3, 4) are "ac", "aa", "ab".

async def test_dfs_descends_best_first_prunes_and_backtracks():
    lm = toy.make_lm({"ab": 9, "ac": 6, "aa": 2}, default=1)
    ctx = toy.make_ctx(lm)
    result = await SculptDFSBacktrack(DFSConfig(prune_below=0.3)).run(toy.PROBLEM, ctx)
    # "ab" first (best); its children all score 0.1 and are pruned; back to "ac"; "aa" pruned
    assert expanded_in_order(lm) == ["a", "ab", "ac"]
    pruned = {e["node"] for e in ctx.trace.of_type("tree_prune")}
    tree = result.details["tree"]
    assert {tree[i]["candidate"] for i in pruned} >= {"aa"}
    assert result.answer == "ab"  # best-scored node seen


async def test_dfs_stops_at_goal():
    lm = toy.make_lm({"ab": 9, "ac": 6, "abc": 10}, default=1)
    result = await SculptDFSBacktrack().run(toy.PROBLEM, toy.make_ctx(lm))
    assert expanded_in_order(lm) == ["a", "ab"]
    assert result.answer == "abc"


async def test_dfs_respects_max_steps():
    lm = toy.make_lm({}, default=8)
    await SculptDFSBacktrack(DFSConfig(max_steps=2)).run(toy.PROBLEM, toy.make_ctx(lm))
    assert len(expanded_in_order(lm)) == 2


def _revising_child(cand, index):
    # every third proposal rewrites the string instead of extending it
    return f"CAND: z{cand[1:]}q" if index % 3 == 0 else f"CAND: {cand}{'abc'[index % 3]}"


async def test_sculpt_children_may_revise():
    lm = toy.make_lm({}, default=5, child=_revising_child)
    result = await SculptDFSBacktrack(DFSConfig(max_steps=1)).run(toy.PROBLEM, toy.make_ctx(lm))
    kinds = {n["candidate"]: n["kind"] for n in result.details["tree"]}
    assert "revised" in kinds.values() and "extended" in kinds.values()
    assert kinds["zq"] == "revised"


async def test_tot_children_may_only_extend():
    lm = toy.make_lm({}, default=5,
                        propose=lambda cand, n: "\n".join(_revising_child(cand, i) for i in range(n)))
    ctx = toy.make_ctx(lm, task=toy.ToyTask(root="a"))
    result = await ToTDFS(ToTDFSConfig(max_steps=1)).run(toy.PROBLEM, ctx)
    assert all(n["kind"] in ("root", "extended") for n in result.details["tree"])
    rejected = ctx.trace.of_type("tree_rejected")
    assert rejected and rejected[0]["reason"] == "revises its parent"
    # and the generator was told to extend, not to revise
    gen_prompt = lm.batches[1][0].messages[0].content
    assert "keeps the current solution exactly as it is" in gen_prompt
