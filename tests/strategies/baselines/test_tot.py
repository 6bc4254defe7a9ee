"""Tree of Thoughts as Yao et al. (2023) run it and ThoughtSculpt compares against it.

tot-dfs runs the kernel's depth-first loop: see treesearch/test_treesearch_dfs.py.
Sources quoted: the ThoughtSculpt paper (Chi, Yang, Klein) and Yao et al.'s
released code (README and ``scripts/game24/bfs.sh`` of princeton-nlp/tree-of-thought-llm).
"""

import json
import re

from support import search_toy as toy
from support.search_toy import current
from thoughtloom.core.types import Problem
from thoughtloom.strategies.baselines.tot import BFSConfig, ToTBFS
from thoughtloom.strategies.sculpt.dfs import SculptDFS
from thoughtloom.strategies.treesearch.dfs import DFSConfig
from thoughtloom.tasks import get
from thoughtloom.tasks.outline import outline_items
from thoughtloom.testing import ScriptedLM


def generation_prompts(lm):
    return [r.messages[0].content for r in lm.requests if "JSON object" not in r.messages[0].content]


async def test_tot_generates_without_the_evaluators_feedback_and_sculpt_with_it():
    """ThoughtSculpt §4.2: "The node evaluation's prompt setup is similar to (Yao et al.,
    2023a)'s except that we use the evaluation feedback to generate new candidates
    instead of pruning branches." So ToT's generation prompts carry none of the
    evaluator's feedback (it only selects), while ThoughtSculpt's carry it."""
    lm = toy.make_lm({"ab": 9}, default=4)
    await ToTBFS(BFSConfig(beam=2, k=3, max_depth=2)).run(toy.PROBLEM, toy.make_ctx(lm, task=toy.ToyTask(root="a")))
    tot = generation_prompts(lm)
    assert tot and not any("feedback on" in p or "Feedback" in p for p in tot)

    lm = toy.make_lm({"ab": 9}, default=4)
    await SculptDFS(DFSConfig(max_steps=1)).run(toy.PROBLEM, toy.make_ctx(lm))
    sculpt = [p for p in generation_prompts(lm) if "Current solution" in p]
    assert sculpt and all("feedback on a" in p for p in sculpt)  # the root's feedback guides its children


def _game24_lm(values):
    """Proposals: the lines of ``values`` (expression -> value 0-10), as many as asked for;
    every evaluation of an expression reads its value."""
    exprs = list(values)

    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            expr = current(text).removeprefix("Expression: ")
            return json.dumps({"score": values.get(expr, 0), "feedback": "ok"})
        n = int(re.search(r"Propose (\d+)", text).group(1))
        parent = current(text).removeprefix("Expression: ")
        if parent == "(empty)":
            return "\n".join(f"Expression: {e}" for e in exprs[:n])
        return "\n".join(f"Expression: ({parent}) * {d}" for d in range(1, n + 1))

    return ScriptedLM(brain)


async def test_tot_bfs_with_b_5_holds_5_thoughts_at_level_1_on_game24():
    """Yao et al.'s README: "--n_select_sample: number of states to keep from each step
    (i.e. b in the paper's ToT + BFS algorithm)", and ThoughtSculpt Table 9 runs "ToT (b = 5)".
    With b = 5 the first level must hold 5 thoughts, so the propose step asks for at
    least b = 5 (k = 3 children of one root would leave the beam at 3), and level 2
    expands all 5: one proposal request each, 5 in one batch."""
    values = {"13 - 9": 8, "10 - 4": 7, "13 - 10": 5, "9 + 13": 3, "10 * 4": 2, "4 + 9": 1}
    lm = _game24_lm(values)
    ctx = toy.make_ctx(lm, task=get("game24"))
    result = await ToTBFS(BFSConfig(beam=5, k=3, max_depth=2, value_samples=1)).run(Problem("p", "4 9 10 13"), ctx)
    level1 = [n for n in result.details["tree"] if n["depth"] == 1]
    assert len(level1) == 5
    assert [len(b) for b in lm.batches] == [1, 5, 5, 25]  # propose, 5 values, 5 proposals, 25 values
    assert {n["parent"] for n in result.details["tree"] if n["depth"] == 2} == {n["id"] for n in level1}


async def test_the_value_prompt_is_sampled_3_times_per_thought_and_the_mean_ranks():
    """Yao et al.'s ``scripts/game24/bfs.sh`` runs ``--n_evaluate_sample 3`` ("number of
    times to prompt for state evaluation", README) at temperature 0.7, and sums the
    samples' values. Three samples of a thought scoring 4, 3 and 2 (of 10) give it
    (4 + 3 + 2) / 30 = 0.3; a thought sampled 10, 0, 2 (sum 12) ranks below one sampled
    5, 5, 5 (sum 15) although its best sample is higher, so with b = 1 the steady one is kept."""
    table = {"a": [4, 3, 2], "b": [10, 0, 2], "c": [5, 5, 5]}

    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            return json.dumps({"score": table.get(current(text), [0, 0, 0])[req.sample_index], "feedback": "-"})
        return "CAND: a\nCAND: b\nCAND: c"

    lm = ScriptedLM(brain)
    result = await ToTBFS(BFSConfig(beam=1, k=3, max_depth=1)).run(toy.PROBLEM, toy.make_ctx(lm))
    values = lm.batches[1]
    assert len(values) == 9 and len({(r.messages, r.sample_index) for r in values}) == 9
    assert {r.temperature for r in values} == {0.7}
    scores = {n["candidate"]: n["score"] for n in result.details["tree"][1:]}
    assert scores["a"] == (4 + 3 + 2) / 30
    assert result.answer == "c"


async def test_tot_bfs_answers_with_the_best_thought_of_its_last_level():
    """Yao et al.'s BFS returns the states kept at the last step (README: ``ys, infos =
    solve(...)``; ``print(ys[0])``): the answer is the best of the final level, not a
    higher-valued thought from an earlier level."""
    lm = toy.make_lm({"b": 9, "ba": 4, "bb": 6}, default=1)
    result = await ToTBFS(BFSConfig(beam=1, k=2, max_depth=2, value_samples=1)).run(toy.PROBLEM, toy.make_ctx(lm))
    assert result.answer == "bb"


OUTLINE = "Anna moves to a new town.\nAnna meets a neighbour.\nAnna joins a club.\nAnna makes friends."
REWRITE = ("[1] Anna arrives in a town where every clock stopped the day she was born.\n"
           "[2] Her neighbour knows her name before she says it.\n"
           "[3] The club she joins keeps a list of people who vanished.\n"
           "[4] Her own name is the next one on it.")


async def test_tot_on_outlines_writes_whole_new_outlines():
    """ThoughtSculpt Table 1: ToT raises outline interestingness from 12.0 (the initial
    outline) to 72.1 (GPT-3.5), and its Appendix D.1 output rewrites most items: a ToT
    thought on this task is a whole new outline. Yao et al.'s README: the generator may
    "sample independent thoughts (used in Creative Writing)". So each node gets k = 3
    independent samples, a rewrite that keeps no item is a child, and the answer differs
    from the input."""
    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            score = 8 if "clock" in text else 3
            return json.dumps({"items": [{"item": f"[{i}]", "feedback": "flat", "score": score} for i in range(1, 5)]})
        return REWRITE.replace("town", "town" + "!" * req.sample_index)

    lm = ScriptedLM(brain)
    task = get("outline")
    result = await ToTBFS(BFSConfig(beam=1, k=3, max_depth=1, value_samples=1)).run(Problem("o", OUTLINE), toy.make_ctx(lm, task=task))
    assert [len(b) for b in lm.batches] == [1, 3, 3]  # root evaluation, 3 samples, 3 evaluations
    assert all(n["kind"] == "revised" for n in result.details["tree"][1:])
    assert result.answer != "\n".join(outline_items(OUTLINE)) and "clock stopped" in result.answer


async def test_a_hostile_proposal_reply_costs_at_most_its_bounded_lines():
    """A proposal reply is model text: a million lines, or one huge line, is read in
    bounded time and gives at most the k thoughts asked for."""
    import time

    for reply in ("CAND: x\n" * 1_000_000, "CAND: " + "y" * 5_000_000, "\n" * 2_000_000, "CAND: \ud800z\n" * 10):
        lm = toy.make_lm({}, propose=lambda cand, n, r=reply: r)
        t0 = time.perf_counter()
        result = await ToTBFS(BFSConfig(beam=2, k=3, max_depth=1, value_samples=1)).run(
            toy.PROBLEM, toy.make_ctx(lm))
        assert time.perf_counter() - t0 < 10
        assert len(result.details["tree"]) <= 1 + 3


async def test_a_thought_proposed_twice_in_one_level_is_valued_once():
    """Yao et al.'s ``get_values`` gives a candidate already valued in the same step the
    value 0 ("avoid duplicate candidates"), so it is never kept twice: two beam nodes
    proposing the same thought make one child, valued once."""
    lm = toy.make_lm({"a": 9, "b": 8}, default=1, propose=lambda cand, n: "CAND: ab\nCAND: ba" if cand else "CAND: a\nCAND: b")
    task = toy.ToyTask()
    task.change_kind = lambda parent, child: "extended"  # both parents may lead to either thought
    result = await ToTBFS(BFSConfig(beam=2, k=2, max_depth=2, value_samples=1)).run(toy.PROBLEM, toy.make_ctx(lm, task=task))
    level2 = [n["candidate"] for n in result.details["tree"] if n["depth"] == 2]
    assert sorted(level2) == ["ab", "ba"]
    assert len(lm.batches[-1]) == 2  # two values, not four
