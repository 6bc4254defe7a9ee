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
