import asyncio

from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Completion, Passage, Problem
from thoughtloom.strategies import get
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.baselines.react import parse_step
from thoughtloom.tasks.base import Task
from thoughtloom.testing import ScriptedLM, StaticRetriever

PASSAGES = [Passage("jaws", "Jaws is a 1975 film directed by Steven Spielberg.", "Jaws"),
            Passage("sp", "Steven Spielberg was born in 1946.", "Steven Spielberg")]
Q = "In what year was the director of Jaws born?"


def run(name, lm, **cfg):
    cls = get(name)
    trace = Trace()
    retriever = StaticRetriever(PASSAGES)
    ctx = Context(lm=lm, task=Task(), trace=trace, retriever=retriever)
    return asyncio.run(cls(cls.Config(**cfg)).run(Problem("q", Q), ctx)), trace, retriever


def test_retrieve_then_read_votes_over_one_batch():
    lm = ScriptedLM(["Born 1946 [2].\nAnswer: 1946", "Answer: 1975", "Answer: 1946."])
    result, trace, retriever = run("retrieve-then-read", lm, n=3)
    assert result.answer == "1946" and abs(result.confidence - 2 / 3) < 1e-9
    assert len(lm.batches) == 1 and len(lm.batches[0]) == 3
    assert "Steven Spielberg was born in 1946." in lm.requests[0].messages[-1].content
    assert retriever.queries == [Q]


def test_self_ask_answers_follow_ups_with_retrieval():
    lm = ScriptedLM([" Yes.\nFollow up: Who directed Jaws?", "Jaws was directed by Steven Spielberg.",
                     "Follow up: When was Steven Spielberg born?", "He was born in 1946.",
                     "So the final answer is: 1946."])
    result, trace, retriever = run("self-ask", lm)
    assert result.answer == "1946"
    assert retriever.queries == ["Who directed Jaws?", "When was Steven Spielberg born?"]
    assert "Intermediate answer: Jaws was directed by Steven Spielberg." in lm.requests[2].messages[-1].content
    assert len(trace.of_type("self_ask_step")) == 2


def test_react_parses_actions_and_observes():
    assert parse_step(" I should search.\nAction 1: search[Jaws director]") == ("I should search.", "search", "Jaws director")
    assert parse_step("Done.\nAction 3: finish[1946]")[1:] == ("finish", "1946")
    assert parse_step("I am confused")[1] is None
    lm = ScriptedLM([" Find the director.\nAction 1: search[Jaws director]", " gibberish", "more gibberish",
                     " Spielberg, born 1946.", "finish[1946]"])
    result, trace, retriever = run("react", lm)
    assert result.answer == "1946"
    assert "Observation 1: Jaws is a 1975 film" in lm.requests[1].messages[-1].content
    assert lm.requests[2].messages[-1].content.endswith("Thought 2: gibberish\nAction 2:")
    assert "Invalid action" in lm.requests[3].messages[-1].content
    assert [(e["what"], e["reason"]) for e in trace.of_type("malformed")] == [("react_action", "no_action")]
    assert result.details["gathered"][0] == "jaws"


def test_truncated_replies_do_not_vote_or_finish():
    """issue 17: a reader sample cut off at max_tokens does not vote; a self-ask
    final answer cut off is flagged."""
    cut = Completion("Born 1975 [1] and so on\nAnswer: 1975", finish_reason="length")
    result, trace, _ = run("retrieve-then-read", ScriptedLM([cut, "Answer: 1946", cut]), n=3)
    assert result.answer == "1946" and result.confidence == 1.0 and not result.truncated
    assert [e["truncated"] for e in trace.of_type("sample")] == [True, False, True]
    result, _, _ = run("self-ask", ScriptedLM([Completion("So the final answer is: 19", finish_reason="length")]))
    assert result.truncated and result.answer == "19"  # kept for reading; the runner scores it as none


def test_react_lookup_returns_the_next_sentence_with_the_keyword():
    """ReAct (Yao et al. 2023), its action space for HotpotQA: "lookup[keyword], which would return
    the next sentence containing keyword in the current passage"; its environment numbers them "(Result i / n)"
    and then says "No more results." Over the last search's passages (both of them here),
    "Spielberg" is in two sentences: result 1 / 2, result 2 / 2, then none."""
    lm = ScriptedLM([" Find him.\nAction 1: search[Jaws]", " Look.\nAction 2: lookup[spielberg]",
                     " Again.\nAction 3: lookup[Spielberg]", " Again.\nAction 4: lookup[Spielberg]",
                     " Done.\nAction 5: finish[1946]"])
    result, trace, _ = run("react", lm)
    observations = [e["observation"] for e in trace.of_type("react_step")]
    assert observations[1:4] == ["(Result 1 / 2) Jaws is a 1975 film directed by Steven Spielberg.",
                                 "(Result 2 / 2) Steven Spielberg was born in 1946.", "No more results."]
    assert result.answer == "1946"


def test_react_prompt_shows_six_trajectories_with_every_action():
    """ReAct's HotpotQA prompt holds six worked trajectories; ours are our own, six,
    and use search, lookup and finish."""
    from thoughtloom import prompts

    text = prompts.read("react")
    assert text.count("\nQuestion: ") == 7  # six demos and the question asked
    assert all(f"{a}[" in text.split("Question: $question")[0].split("Question:", 1)[1]
               for a in ("search", "lookup", "finish"))
