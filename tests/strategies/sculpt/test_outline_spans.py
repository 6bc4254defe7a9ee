"""ThoughtSculpt App. A.1 on story outlines: the itemized evaluation names the least interesting
spans of consecutive items (EVALUATE_CURRENT_ITEMIZED) and each child rewrites one of them
(NEW_CANDIDATE); Fig. 4's per-step best outline."""

import json

from support import search_toy as toy
from thoughtloom.core.types import Problem
from thoughtloom.strategies.sculpt.dfs import GreedyDFSConfig, SculptDFS
from thoughtloom.strategies.treesearch.reading import evaluation_schema, read_evaluation
from thoughtloom.tasks import get
from thoughtloom.testing import ScriptedLM

OUTLINE = "\n".join(["Tom finds a map.", "Tom walks to the forest.", "Tom digs a hole.", "Tom finds a box.",
                     "The box is empty.", "Tom goes home.", "Tom eats dinner.", "Tom goes to bed."])
# App. A.1's shape: [reason] [start_index]-[end_index] [interesting level: 1-10]
SPANS = [{"thought": "a walk and a dig", "reason": "lack of conflicts", "start": 2, "end": 3, "interesting": 4},
         {"thought": "an empty box", "reason": "unsurprising", "start": 5, "end": 6, "interesting": 6},
         {"thought": "dinner, bed", "reason": "too repetitive", "start": 7, "end": 8, "interesting": 3}]


def _lm(spans=SPANS):
    def brain(req):
        text = req.messages[0].content
        if "least interesting" in text:
            return json.dumps({"proposals": spans})
        return "\n".join(f"[{i}] Tom, twist {i}." for i in range(1, 9))
    return ScriptedLM(brain)


def _prompts(lm, marker):
    return [r for r in lm.requests if marker in r.messages[0].content]


async def test_the_evaluator_asks_for_the_least_interesting_spans_and_k_proposals():
    """App. A.1, EVALUATE_CURRENT_ITEMIZED: "Which continuous num_consecutive_lines outlines items
    do you think are least interesting? ... [start_index]-[end_index] [interesting level: 1-10]
    ... Can you provide num_candidates proposals?" With k = 3 children (§4.1: "a maximum of 3
    candidate child outlines") the evaluation asks for 3 proposals of 2 consecutive items (the
    example's "[9]-[10]", Fig. 2's "[2]-[3]"), and its JSON schema holds at most 3 of them."""
    lm = _lm()
    await SculptDFS(GreedyDFSConfig(k=3, max_depth=1)).run(Problem("o", OUTLINE), toy.make_ctx(lm, task=get("outline")))
    (first, *_) = _prompts(lm, "least interesting")
    text = first.messages[0].content
    assert "Which 2 consecutive outline items do you think are least interesting?" in text
    assert "Give 3 proposals" in text and "[8] Tom goes to bed." in text
    assert first.json_schema["properties"]["proposals"]["maxItems"] == 3
    assert "You are a popular novel writer" in text  # App. A.1's TASK_DESCRIPTION leads every prompt


async def test_each_child_rewrites_one_span_least_interesting_first():
    """§4.1: "Based on each itemized feedback, a child node will be proposed to modify the
    current outline"; App. A.1's NEW_CANDIDATE: "can you make a better story outline by
    replacing the items suggested by the feedback? Write the outline ... just like the original
    outline from [1] to [num]". Child j reads span j, least interesting first: [7]-[8] (level 3),
    [2]-[3] (4), [5]-[6] (6)."""
    lm = _lm()
    result = await SculptDFS(GreedyDFSConfig(k=3, max_depth=1)).run(Problem("o", OUTLINE),
                                                                    toy.make_ctx(lm, task=get("outline")))
    gens = _prompts(lm, "Feedback on the current solution")
    feedback = [g.messages[0].content.split("Feedback on the current solution:\n", 1)[1].split("\n\n", 1)[0]
                for g in gens]
    assert feedback == ["[7]-[8]: too repetitive; dinner, bed", "[2]-[3]: lack of conflicts; a walk and a dig",
                        "[5]-[6]: unsurprising; an empty box"]
    assert all("replacing the items suggested by the feedback" in g.messages[0].content
               and "from [1] to [8]" in g.messages[0].content for g in gens)
    root = result.details["tree"][0]
    assert abs(root["score"] - (4 + 6 + 3) / 30) < 1e-9  # §4.1: "an interesting score from 1 to 10", mean of the spans


def test_span_reading_holds_to_the_outline():
    """A reply is model text: a span past the outline's 8 items is dropped, an end past it cut to
    [8], a start-only span is one item, a bool or a non-finite level reads as nothing."""
    labels = [f"[{i}]" for i in range(1, 9)]
    r = read_evaluation({"proposals": [
        {"start": 12, "end": 13, "interesting": 1, "reason": "past the end"},
        {"start": 7, "end": 11, "interesting": 5, "reason": "cut"},
        {"start": "3", "interesting": "2", "reason": "one item"},
        {"start": True, "end": 2, "interesting": 1},
        {"start": 1, "end": 2, "interesting": float("nan")}]}, labels)
    assert [i["item"] for i in r.items] == ["[7]-[8]", "[3]-[3]", "[1]-[2]"]
    assert abs(r.score - (0.5 + 0.2) / 2) < 1e-9
    assert read_evaluation({"proposals": [{"start": 1, "end": 2}]}, labels) is None
    many = read_evaluation({"proposals": [{"start": 1, "interesting": 4}] * 5000}, labels)
    assert len(many.items) == 20 and abs(many.score - 0.4) < 1e-9  # at most MAX_PROPOSALS read
    schema = evaluation_schema(8, "spans", proposals=3)["properties"]["proposals"]["items"]["properties"]
    assert schema["interesting"]["enum"] == list(range(1, 11)) and schema["end"]["maximum"] == 8


async def test_each_steps_best_outline_is_recorded():
    """Fig. 4: "Average outline interestingness at each step". step_best[s] is the best-scored
    outline within s revisions of the given one: step 0 is the given outline itself, step 1 the
    best child (here every child scores above the root)."""
    lm = _lm()
    result = await SculptDFS(GreedyDFSConfig(k=3, max_depth=1)).run(Problem("o", OUTLINE),
                                                                    toy.make_ctx(lm, task=get("outline")))
    steps = result.details["step_best"]
    assert steps[0] == OUTLINE and len(steps) == 2 and steps[1] != OUTLINE
