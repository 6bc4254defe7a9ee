"""A spent budget ends a run with its best answer so far (issue 13 item 5), in every strategy.

What each strategy holds when the budget runs out (HGOT: tests/strategies/hgot; the tree
searches: tests/strategies/sculpt and treesearch; DecomP: tests/strategies/decomp):

- io, cot: one call; refused, nothing is in hand: no answer.
- cot-sc: shrinks its batch to the calls left; with none left: no answer.
- retrieve-then-read, dsp's reading: one batch of samples; refused whole: no answer (dsp keeps
  the passages its hops gathered).
- self-ask: the chain so far, read for an answer; an unfinished chain is not a malformed reply.
- react: only finish[...] answers; the steps so far are the text.
"""

import asyncio

from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Passage, Problem
from thoughtloom.lm.meter import Budget, Metered
from thoughtloom.strategies import get
from thoughtloom.strategies.context import Context
from thoughtloom.tasks.base import Task
from thoughtloom.testing import ScriptedLM, StaticRetriever

PASSAGES = [Passage("jaws", "Jaws is a 1975 film directed by Steven Spielberg.", "Jaws"),
            Passage("sp", "Steven Spielberg was born in 1946.", "Steven Spielberg")]
Q = "In what year was the director of Jaws born?"


def run(name, script, max_calls, **cfg):
    cls = get(name)
    trace = Trace()
    lm = ScriptedLM(script)
    ctx = Context(lm=Metered(lm, budget=Budget(max_calls=max_calls), trace=trace), task=Task(), trace=trace,
                  retriever=StaticRetriever(PASSAGES))
    result = asyncio.run(cls(cls.Config(**cfg)).run(Problem("q", Q), ctx))
    return result, trace, lm


def test_self_ask_stopped_mid_chain_answers_from_the_chain_without_a_malformed_event():
    replies = ["Are follow up questions needed here: Yes.\nFollow up: Who directed Jaws?", "Steven Spielberg"]
    result, trace, lm = run("self-ask", replies, max_calls=2)  # hop 1 and its answer; hop 2 is refused
    assert result.stopped == "budget" and lm.calls == 2
    assert result.text == ("Are follow up questions needed here: Yes.\nFollow up: Who directed Jaws?\n"
                           "Intermediate answer: Steven Spielberg\n")
    assert trace.of_type("malformed") == []  # the chain was cut by the budget, not off its format
    _, trace, _ = run("self-ask", ["No follow up needed. 1946."], max_calls=None)
    assert [e["what"] for e in trace.of_type("malformed")] == ["self_ask_answer"]  # a finished chain is


def test_react_stopped_before_finish_has_no_answer_and_keeps_its_steps():
    result, trace, lm = run("react", lambda req: " Look it up.\nAction 1: search[Jaws director]", max_calls=2)
    assert result.stopped == "budget" and result.answer == ""
    assert result.text.startswith("Thought 1: Look it up.\nAction 1: search[Jaws director]\nObservation 1:")
    assert result.details["gathered"] == ["jaws", "sp"]


def test_dsp_stopped_while_reading_keeps_what_its_hops_gathered():
    result, _, lm = run("dsp", lambda req: "Jaws director" if "search query" in req.messages[-1].content
                        else "Answer: 1946", max_calls=3, n=5, queries=1)
    assert result.stopped == "budget" and result.answer == "" and lm.calls == 2  # two hops; 5 samples refused
    assert result.details["gathered"]


def test_retrieve_then_read_with_too_few_calls_for_its_batch_has_no_answer():
    result, _, lm = run("retrieve-then-read", lambda req: "Answer: 1946", max_calls=4, n=5)
    assert result.stopped == "budget" and result.answer == "" and lm.calls == 0


def test_one_call_strategies_stopped_before_their_call_have_no_answer():
    for name in ("io", "cot"):
        result, _, lm = run(name, lambda req: "Answer: 1946", max_calls=0)
        assert (result.stopped, result.answer, lm.calls) == ("budget", "", 0), name
