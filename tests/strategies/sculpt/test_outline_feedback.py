"""ThoughtSculpt on story outlines: one child per item of the itemized feedback (§4.1)."""

import json

from support import search_toy as toy
from thoughtloom.core.types import Problem
from thoughtloom.strategies.sculpt.dfs import GreedyDFSConfig, SculptDFS
from thoughtloom.strategies.baselines.self_refine import SelfRefine, SelfRefineConfig
from thoughtloom.strategies.treesearch.dfs import DFSConfig
from thoughtloom.tasks import get
from thoughtloom.testing import ScriptedLM

OUTLINE = "\n".join(["Tom finds a map.", "Tom walks to the forest.", "Tom digs a hole.", "Tom finds a box."])
# the evaluator's verdict on the given outline: item 2 is the least interesting, then 4, 1, 3
ITEMS = [("[1]", 6, "give the map a stake"), ("[2]", 2, "the walk is flat"),
         ("[3]", 9, "keep this"), ("[4]", 4, "the box needs a twist")]


def _lm():
    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            return json.dumps({"items": [{"item": i, "score": s, "feedback": f} for i, s, f in ITEMS]})
        fb = text.split("Feedback on the current solution:\n", 1)[1].split("\n\n", 1)[0]
        return f"[1] Tom finds a map ({fb}).\n[2] He walks.\n[3] He digs.\n[4] He finds a box."
    return ScriptedLM(brain)


def _feedback_of_children(lm):
    return [r.messages[0].content.split("Feedback on the current solution:\n", 1)[1].split("\n\n", 1)[0]
            for r in lm.requests if "Feedback on the current solution" in r.messages[0].content]


async def test_each_child_is_proposed_from_one_item_of_feedback():
    """§4.1, Method Setup: "The thought evaluator will perform an itemized evaluation on the
    current outline ... Based on each itemized feedback, a child node will be proposed to
    modify the current outline." With k = 3 the three children are tied one-to-one to
    three items of feedback: the least interesting first, [2] (2/10), [4] (4/10), [1] (6/10)."""
    lm = _lm()
    await SculptDFS(GreedyDFSConfig(k=3, max_depth=1)).run(Problem("o", OUTLINE), toy.make_ctx(lm, task=get("outline")))
    assert _feedback_of_children(lm) == ["[2]: the walk is flat", "[4]: the box needs a twist",
                                         "[1]: give the map a stake"]


async def test_a_single_rewrite_still_reads_the_whole_feedback():
    """Self-Refine (Madaan et al.) rewrites once per round from all of its feedback; one
    child has no items to share out, so it gets every item's feedback."""
    lm = _lm()
    await SelfRefine(SelfRefineConfig(iterations=1)).run(Problem("o", OUTLINE), toy.make_ctx(lm, task=get("outline")))
    (feedback,) = _feedback_of_children(lm)
    assert all(f in feedback for _, _, f in ITEMS)
