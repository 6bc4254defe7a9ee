"""The outline task's model judge (eval.judge): ThoughtSculpt §4.1's interestingness, judged
after the method by a labelled model judge, per step as Fig. 4 plots it."""

import json

from thoughtloom import strategies, tasks
from thoughtloom.eval.runner import EvalResources, EvalSettings, run_example
from thoughtloom.lm.meter import Budget
from thoughtloom.tasks.outline import JUDGE_QUESTION
from thoughtloom.testing import ScriptedLM

SPANS = {"proposals": [{"thought": "t", "reason": "flat", "start": 1, "end": 2, "interesting": 3}]}


def _brain(req):
    text = req.messages[0].content
    if JUDGE_QUESTION in text:  # the judge: a point with a twist is interesting, any other is not
        point = text.split(JUDGE_QUESTION, 1)[1]
        return json.dumps({"interesting": "yes" if "twist" in point else "no"})
    if "least interesting" in text:
        return json.dumps(SPANS)
    if "Feedback on the current solution" in text:  # every rewrite: two of the outline's points get a twist
        return "[1] A twist: the map is forged.\n[2] Tom walks.\n[3] A twist: the box sings.\n[4] Tom sleeps."
    return "[1] Tom finds a map.\n[2] Tom walks.\n[3] Tom finds a box.\n[4] Tom sleeps."


async def _record(strategy, max_calls=50):
    task = tasks.get("outline")
    example = task.load("seed")[0]
    lm = ScriptedLM(_brain)
    record, _ = await run_example(strategies.build(strategy, {}, task), task, example, EvalResources(lm=lm),
                                  EvalSettings(budget=Budget(max_calls=max_calls)))
    return record, lm


async def test_interestingness_is_the_share_of_points_judged_interesting_per_step():
    """§4.1: the content evaluator is trained "to rate interesting outlines as 1 and boring ones
    as 0"; App. A.1's PROMPT asks it of each story point ("do you think that the new story point
    below is interesting?"). The given outline (no twist) scores 0; every rewrite has 2 of 4
    points with a twist, so each later step's best outline and the answer score 2/4. The record
    says the judge is a model judge, and the metric is the final outline's score."""
    record, _ = await _record("sculpt-dfs")
    judge = record.details["judge"]
    assert judge["judge"].startswith("model judge")
    assert judge["initial"] == 0.0 and judge["steps"][0] == 0.0
    assert judge["steps"][1:] and all(s == 0.5 for s in judge["steps"][1:])
    assert judge["final"] == 0.5 and record.metrics["interesting"] == 0.5
    assert record.metrics["kept_length"] == 0.5  # 4 items for the given 8 (App. A.1: "from [1] to [num]")


async def test_the_judge_is_outside_the_methods_budget_and_usage():
    """§4.1: "Neither ThoughtSculpt nor the baselines have access to this evaluator during
    outline generation": the judge's calls come after the method, are in no method's usage and
    spend none of its budget (a method capped at 3 calls still gets judged)."""
    record, lm = await _record("self-refine", max_calls=3)
    judged = sum(JUDGE_QUESTION in r.messages[0].content for r in lm.requests)
    assert record.details["judge"]["calls"] == judged > 0
    assert record.usage["calls"] == len(lm.requests) - judged <= 3


async def test_no_answer_is_judged_zero():
    """An outline the method could not write scores 0, as the paper's evaluator would rate no outline."""
    task = tasks.get("outline")
    example = task.load("seed")[0]
    lm = ScriptedLM(lambda req: "")
    record, _ = await run_example(strategies.build("cot", {}, task), task, example, EvalResources(lm=lm),
                                  EvalSettings())
    assert record.metrics["interesting"] == 0.0 and record.details["judge"]["final"] is None
