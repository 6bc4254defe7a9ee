"""One short-answer reading for free-form QA, whichever strategy asked (issue 39 §4): a chatty reply's
answer is read the same way by io, cot, cot-sc's vote, retrieve-then-read and DecomP's handlers."""

import pytest

from thoughtloom import strategies
from thoughtloom.core.types import Problem
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.decomp.controller import NEXT_STEP
from thoughtloom.tasks import QA
from thoughtloom.testing import ScriptedLM

CHATTY = "The answer to the question is: H2O"


def build(name, **sets):
    cls = strategies.get(name)
    return cls(strategies.make_config(cls, {k: str(v) for k, v in sets.items()}))


@pytest.mark.parametrize("name", ["io", "cot", "cot-sc", "retrieve-then-read"])
async def test_every_strategy_reads_the_short_answer_of_a_chatty_reply(name):
    strategy = build(name, n=3) if name == "cot-sc" else build(name)
    result = await strategy.run(Problem("q", "What is the formula of water?"),
                                Context(lm=ScriptedLM(lambda r: CHATTY), task=QA()))
    assert result.answer == "H2O"


async def test_decomp_reads_a_handler_reply_with_an_answer_marker():
    def reply(req):
        prompt = req.messages[-1].content
        if NEXT_STEP in prompt:
            done = prompt.split(NEXT_STEP, 1)[1].count("\nA: ")
            return ['(closedbook_qa) "What is the formula of water?"', "[EOQ]"][done]
        return CHATTY

    result = await build("decomp").run(Problem("q", "What is the formula of water?"),
                                       Context(lm=ScriptedLM(reply), task=QA()))
    assert result.answer == "H2O"


async def test_the_self_consistency_vote_counts_one_answer_however_it_is_phrased():
    """Issue 39: cot-sc's vote split between 'mars' and 'answer to this question is mars'."""
    replies = iter(["Mars is red.\nThe answer is: Mars", "The answer to this question is mars.",
                    "Sure! Here it is:\nMars.", "The answer is: Venus"])
    trace_lm = ScriptedLM(lambda r: next(replies))
    ctx = Context(lm=trace_lm, task=QA())
    result = await build("cot-sc", n=4).run(Problem("q", "Which planet is called the red planet?"), ctx)
    (vote,) = ctx.trace.of_type("vote")
    assert vote["tally"] == {"mars": 3.0, "venus": 1.0}
    assert result.answer.lower() == "mars" and result.confidence == 0.75
