"""DecomP on one's own questions (issue 39): ``qa`` and a task of one's own that declares its shape get
a default program, and a task without one is told which to pass."""

import pytest

from thoughtloom import strategies
from thoughtloom.core.errors import ConfigError
from thoughtloom.core.types import Problem
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.decomp.catalogue import default_program
from thoughtloom.strategies.decomp.controller import NEXT_STEP
from thoughtloom.tasks import QA, Task
from thoughtloom.testing import ScriptedLM


def own_lm(reply_to_sub: dict[str, str]):
    """Plays the qa_decomp decomposer (two steps, the second naming #1) and its closed-book handler."""

    def reply(req):
        prompt = req.messages[-1].content
        if NEXT_STEP in prompt:
            n = prompt.split(NEXT_STEP, 1)[1].count("\nA: ")
            return ['(closedbook_qa) "Who wrote Hamlet?"', '(closedbook_qa) "In which town was #1 born?"',
                    "[EOQ]"][n]
        q = prompt.rsplit("Q: ", 1)[1].split("\n", 1)[0]
        return reply_to_sub[q]

    return reply


def test_qa_and_a_shaped_task_of_ones_own_get_the_closed_book_decomposer():
    class Mine(Task):
        name = "mine"
        question_shape = "qa"

    assert default_program("decomp", QA()).name == "qa_decomp"
    assert default_program("decomp", Mine()).name == "qa_decomp"
    assert strategies.get("decomp").supports(QA()) and strategies.get("decomp").supports(Mine())
    assert default_program("decomp-no-ctxt", QA()).name == "odqa_closedbook"


def test_a_task_with_no_program_is_told_which_to_pass():
    """Issue 39: `eval -S decomp -t qa` said only 'no default program' and listed 17 names."""
    with pytest.raises(ConfigError) as info:
        default_program("decomp", Task())
    assert "--set program=qa_decomp" in info.value.hint and "question_shape = 'qa'" in info.value.hint


async def test_the_qa_program_chains_sub_answers_and_answers_with_the_last():
    lm = ScriptedLM(own_lm({"Who wrote Hamlet?": "William Shakespeare",
                            "In which town was William Shakespeare born?": "Stratford-upon-Avon"}))
    cls = strategies.get("decomp")
    result = await cls(cls.Config()).run(Problem("q", "In which town was the author of Hamlet born?"),
                                         Context(lm=lm, task=QA()))
    assert result.answer == "Stratford-upon-Avon" and result.details["status"] == "ok"
    asked = [r.messages[-1].content.rsplit("Q: ", 1)[1] for b in lm.batches for r in b
             if NEXT_STEP not in r.messages[-1].content]
    assert [q.split("\n", 1)[0] for q in asked] == ["Who wrote Hamlet?", "In which town was William Shakespeare born?"]


async def test_a_sub_question_that_keeps_failing_the_same_way_is_not_asked_to_the_step_limit():
    """Issue 39 §6: the README's decomp example asked one cut-off sub-question 10 times
    (`A: [error: the reply was cut off at max_tokens]` x10, `stopped: step_limit`, 23 calls). Asked
    again and failed the same way, the program stops: 2 decomposer turns and 2 handler calls each."""
    from thoughtloom.core.types import Completion

    def reply(req):
        if NEXT_STEP in req.messages[-1].content:
            return '(closedbook_qa) "Who wrote Hamlet?"'
        return Completion("William Shakespeare, the famous English playwright who", finish_reason="length")

    lm = ScriptedLM(reply)
    cls = strategies.get("decomp")
    ctx = Context(lm=lm, task=QA())
    result = await cls(cls.Config()).run(Problem("q", "Who wrote Hamlet?"), ctx)
    assert result.details["status"] == "malformed" and result.details["steps"] == 2 and result.answer == ""
    assert len(lm.requests) == 4
    (end,) = ctx.trace.of_type("program_end")
    assert "asked again what step 1 asked, and failed the same way (the reply was cut off at max_tokens)" \
        in end["reason"]


async def test_a_repeated_sub_question_that_succeeds_or_fails_differently_goes_on():
    """Only the same failure twice stops a program: a repeated question answered, or failing otherwise, runs on."""
    from thoughtloom.core.types import Completion

    handler_replies = iter([Completion("cut", finish_reason="length"), "William Shakespeare"])

    def reply(req):
        prompt = req.messages[-1].content
        if NEXT_STEP in prompt:
            done = prompt.split(NEXT_STEP, 1)[1].count("\nA: ")
            return '(closedbook_qa) "Who wrote Hamlet?"' if done < 2 else "[EOQ]"
        return next(handler_replies)

    cls = strategies.get("decomp")
    result = await cls(cls.Config()).run(Problem("q", "Who wrote Hamlet?"), Context(lm=ScriptedLM(reply), task=QA()))
    assert result.details["status"] == "ok" and result.answer == "William Shakespeare"


async def test_a_decomposer_that_repeats_an_answered_step_stops_there():
    """The embedded model asked "What is the capital of Japan?" ten times, each answered alike, and never
    wrote [EOQ] (22 calls, step_limit): a step that gets what the step before got adds nothing."""
    def reply(req):
        if NEXT_STEP in req.messages[-1].content:
            return '(closedbook_qa) "What is the capital of Japan?"'
        return "The capital of Japan is Tokyo."

    lm = ScriptedLM(reply)
    cls = strategies.get("decomp")
    result = await cls(cls.Config()).run(Problem("q", "What is the capital of Japan?"), Context(lm=lm, task=QA()))
    assert result.details["status"] == "malformed" and result.details["steps"] == 2 and len(lm.requests) == 4
    assert "asked again what step 1 asked, and got the same answer" in result.text
