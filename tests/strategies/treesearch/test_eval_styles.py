"""The paper's own evaluation prompts (ThoughtSculpt Appendix A) where it gives them.

A.3 (CommonGen), EVALUATE_CURRENT: 'Write "no need to improve" if you think 1) the sentence covers all
the concepts listed in the instruction; and 2) the sentence describes a common scene in daily life.
Otherwise, write "still need to improve" and provide a reason. # Write in this format: [No need to
improve/still need to improve] [reason]'. H.1 (Game of 24), REVISE_SOLUTIONS: '"calculation": "step by
step calculation of the current solution", "result: int, "feedback": "Your feedback here", "correct" :
true/false'. Both are asked for as JSON of that shape (the request carries its schema), for chat models.
"""

import json

import pytest

from support import search_toy as toy
from thoughtloom import strategies, tasks
from thoughtloom.core.types import Problem
from thoughtloom.strategies.treesearch.reading import read_evaluation
from thoughtloom.testing import ScriptedLM


def _run_one_level(task_name, question, answer, verdict_reply, strategy="sculpt-dfs", **options):
    task = tasks.get(task_name)
    asked = []

    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            asked.append(req)
            return json.dumps(verdict_reply)
        return answer

    lm = ScriptedLM(brain)
    ctx = toy.make_ctx(lm, task=task)
    result = strategies.build(strategy, {"max_depth": 1, "k": 1, **options}, task)
    return asked, lm, ctx, result, Problem(id="x", question=question)


@pytest.mark.parametrize("verdict, score", [("still need to improve", 0.0), ("no need to improve", 1.0)])
async def test_commongen_is_judged_by_the_papers_verdict_and_its_reason_is_the_feedback(verdict, score):
    asked, lm, ctx, strategy, problem = _run_one_level(
        "commongen", "dog, frisbee, catch, throw", "The dog catches the frisbee.",
        {"verdict": verdict, "reason": "the sentence misses the concept throw"}, stop_at_goal=False)
    result = await strategy.run(problem, ctx)
    first = asked[0]
    assert '"no need to improve"' in first.messages[0].content and "still need to improve" in first.messages[0].content
    assert first.json_schema["properties"]["verdict"]["enum"] == ["no need to improve", "still need to improve"]
    root = result.details["tree"][0]
    assert root["score"] == score and root["feedback"] == "the sentence misses the concept throw"
    generations = [r.messages[0].content for r in lm.requests if "JSON object" not in r.messages[0].content]
    assert "the sentence misses the concept throw" in generations[-1]  # the child is written from the reason


@pytest.mark.parametrize("correct, score", [(True, 1.0), (False, 0.0)])
async def test_game24_is_judged_by_revise_solutions_correct(correct, score):
    asked, lm, ctx, strategy, problem = _run_one_level(
        "game24", "4 9 10 13", "Expression: (13 - 9) * (10 - 4)",
        {"calculation": "4 * 6 = 24", "result": 24, "feedback": "fine", "correct": correct})
    result = await strategy.run(problem, ctx)
    assert set(asked[0].json_schema["required"]) == {"calculation", "result", "feedback", "correct"}
    assert result.details["tree"][0]["score"] == score


async def test_tot_values_partial_states_on_the_graded_scale():
    """Yao et al. value partial states (sure / likely / impossible): ToT keeps the 0-10 score prompt even
    where ThoughtSculpt uses the task's correct/incorrect check."""
    asked, lm, ctx, strategy, problem = _run_one_level(
        "game24", "4 9 10 13", "Expression: 13 - 9", {"score": 6, "feedback": "ok"}, strategy="tot-dfs",
        max_steps=1)
    await strategy.run(problem, ctx)
    assert asked and all("score" in r.json_schema["properties"] for r in asked)


def test_a_verdict_reads_as_one_or_zero_and_anything_else_is_no_reading():
    assert read_evaluation({"verdict": "No need to improve", "reason": "ok"}).score == 1.0
    assert read_evaluation({"verdict": "[still need to improve]", "reason": "x"}).score == 0.0
    assert read_evaluation({"verdict": "maybe", "reason": "x"}) is None
