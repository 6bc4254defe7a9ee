"""tot-bfs (tot-dfs runs the kernel's depth-first loop: see treesearch/test_treesearch_dfs.py)."""

from search_toy import TOY as toy
from thoughtloom.strategies.baselines.tot import BFSConfig, ToTBFS


async def test_tot_bfs_batches_the_whole_beam_and_keeps_the_best():
    lm = toy["make_lm"]({"ab": 9, "ac": 6, "aa": 2}, default=1)
    ctx = toy["make_ctx"](lm, task=toy["Task"](root="a"))
    result = await ToTBFS(BFSConfig(beam=2, k=3, max_depth=2)).run(toy["problem"], ctx)
    sizes = [len(b) for b in lm.batches]
    assert sizes == [1, 3, 3, 6, 6]  # level 2: 2 beam nodes x 3 children in ONE batch
    level2_parents = {n["parent"] for n in result.details["tree"] if n["depth"] == 2}
    tree = result.details["tree"]
    assert {tree[p]["candidate"] for p in level2_parents} == {"ab", "ac"}


async def test_tot_without_a_given_start_builds_up_from_an_empty_solution():
    lm = toy["make_lm"]({"b": 9}, default=3)
    result = await ToTBFS(BFSConfig(beam=1, max_depth=1)).run(toy["problem"], toy["make_ctx"](lm))
    tree = result.details["tree"]
    assert tree[0]["candidate"] == "" and tree[0]["evaluator"] == "empty"
    assert [len(b) for b in lm.batches] == [3, 3]  # no root call, no root evaluation
    assert {n["candidate"] for n in tree[1:]} == {"a", "b", "c"}
    assert all(n["kind"] == "extended" for n in tree[1:]) and result.answer == "b"
