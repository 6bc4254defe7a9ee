"""DSP as HGOT compares it: Demonstrate, fused sampled queries per hop, voted reading."""

import asyncio
import math

from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Demo, Passage, Problem
from thoughtloom.strategies import get
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.baselines.dsp import fuse, parse_query
from thoughtloom.tasks.base import Task
from thoughtloom.testing import ScriptedLM, StaticRetriever

PASSAGES = [Passage("jaws", "Jaws is a 1975 film directed by Steven Spielberg.", "Jaws"),
            Passage("sp", "Steven Spielberg was born in 1946.", "Steven Spielberg"),
            Passage("alien", "Alien is a 1979 film directed by Ridley Scott.", "Alien"),
            Passage("scott", "Ridley Scott was born in 1937.", "Ridley Scott")]
Q = "In what year was the director of Jaws born?"


class DemoTask(Task):
    def demos(self):
        return (Demo("In what year was the director of Alien born?", "1937"),
                Demo("Which film did Ridley Scott direct in 1979?", "Jaws"))  # its reading will not say Jaws


def script(req):
    prompt = req.messages[-1].content
    if prompt.startswith("Write a search query"):
        question = prompt.rsplit("Question: ", 1)[1]
        second = "we have learned" in prompt.rsplit("Question: ", 1)[1]
        if "Alien" in question or "Ridley" in question:
            return " the director.\nSearch Query: Ridley Scott born" if second else " the director.\nSearch Query: Alien director"
        if second:
            return " Jaws was directed by Steven Spielberg.\nSearch Query: Steven Spielberg born"
        return [" who directed Jaws.\nSearch Query: Jaws: the 1975 film director",
                " the director.\nSearch Query: Jaws director", ""][req.sample_index]
    question = prompt.rsplit("Question: ", 1)[1]
    if "Alien" in question:
        return "Rationale: Scott directed Alien [1] and was born in 1937 [2].\nAnswer: 1937"
    if "Ridley Scott direct" in question:
        return "Rationale: He directed Alien [1].\nAnswer: Alien"
    return "Rationale: Spielberg was born in 1946 [1].\nAnswer: 1946"


def run(lm, task=None, **cfg):
    cls = get("dsp")
    trace = Trace()
    retriever = StaticRetriever(PASSAGES)
    ctx = Context(lm=lm, task=task or DemoTask(), trace=trace, retriever=retriever)
    return asyncio.run(cls(cls.Config(**cfg)).run(Problem("q", Q), ctx)), trace, retriever


def test_a_query_keeps_its_colon():
    """Issue 24 item 5: the query was cut at its first colon ("Star Wars: A New Hope release"
    became "A New Hope release"); only a leading label is a label."""
    assert parse_query("Search Query: Star Wars: A New Hope release") == ("", "Star Wars: A New Hope release")
    assert parse_query(" the film's year.\nSearch Query: Star Wars: A New Hope release") == \
        ("the film's year.", "Star Wars: A New Hope release")
    assert parse_query("Star Wars: A New Hope release") == ("", "Star Wars: A New Hope release")
    assert parse_query("Query: Jaws director") == ("", "Jaws director")
    assert parse_query("") == ("", "")


def test_fusion_sums_each_querys_probabilities():
    """HGOT's DSP_QA (after DSP's multihop program): "Collect the queries and search with result
    fusion": queries = the sampled queries + [the question], fused by retrieveEnsemble, which in
    DSP adds up each passage's probability over the queries. Query 1 scores a 2 and b 0, query 2
    scores b 2, c 2 and a 0; each query's probabilities are the softmax of its scores, so
    p(a) = e^2/(e^2+1) + 1/(2e^2+1), p(b) = 1/(e^2+1) + e^2/(2e^2+1), p(c) = e^2/(2e^2+1)."""
    a, b, c = Passage("a", "A"), Passage("b", "B"), Passage("c", "C")
    q1 = [(a, 2.0), (b, 0.0)]
    q2 = [(b, 2.0), (c, 2.0), (a, 0.0)]
    e2 = math.exp(2)
    score = {"a": e2 / (e2 + 1) + 1 / (2 * e2 + 1), "b": 1 / (e2 + 1) + e2 / (2 * e2 + 1), "c": e2 / (2 * e2 + 1)}
    expected = sorted(score, key=lambda pid: -score[pid])
    assert [p.id for p in fuse([q1, q2], 3)] == expected
    assert [p.id for p in fuse([q1, q2], 1)] == expected[:1]
    assert fuse([[(a, float("nan"))], []], 2) == [a]  # a non-finite score weighs nothing, nothing crashes


def test_demonstrate_then_fused_search_then_voted_reading():
    """DSP's program as HGOT runs it (DSP_QA: multihop_demonstrate, multihop_search_v2, QA_predict):
    the training demos are first run through the simple pipeline and kept when "passage_match"
    and "answer_match"; each hop samples n=3 queries and fuses them with the question."""
    lm = ScriptedLM(script)
    result, trace, retriever = run(lm, n=2)
    demos = trace.of_type("dsp_demo")
    assert [(d["passage_match"], d["prediction"], d["kept"]) for d in demos] == [
        (True, "1937", True), (True, "Alien", False)]  # the second reads a wrong answer: not kept
    assert result.details["demos"] == ["In what year was the director of Alien born?"]
    hops = trace.of_type("dsp_hop")
    assert [h["hop"] for h in hops] == [0, 1]
    # three samples, one without a query (traced); the question is always searched; the colon stays
    assert hops[0]["queries"] == ["Jaws: the 1975 film director", "Jaws director", Q]
    assert [(m["what"], m["reason"]) for m in trace.of_type("malformed")] == [("dsp_query", "empty")]
    query_batches = [b for b in lm.batches if b[0].messages[-1].content.startswith("Write a search query")
                     and Q in b[0].messages[-1].content]
    assert [len(b) for b in query_batches] == [3, 3]
    # the annotated demo shows in the hop prompts and in the reading prompt, with its rationale
    assert "Search Query: Alien director" in query_batches[0][0].messages[-1].content
    reading = lm.requests[-1].messages[-1].content
    assert "Scott directed Alien [1] and was born in 1937 [2]." in reading
    # hop 2's rationale heads the reading context
    assert "Jaws was directed by Steven Spielberg." in reading.split("Passages:", 1)[1]
    assert result.answer == "1946" and "sp" in result.details["gathered"]


def test_without_demonstrate_or_task_demos_there_is_no_annotation():
    result, trace, _ = run(ScriptedLM(script), demonstrate=False, n=1)
    assert not trace.of_type("dsp_demo") and result.answer == "1946"
    result, trace, _ = run(ScriptedLM(script), task=Task(), n=1)
    assert not trace.of_type("dsp_demo") and result.details["demos"] == []
