"""HGOT end to end on ScriptedLM + StaticRetriever + a fake judge."""

import asyncio
import json
import re

import pytest

from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Completion, Passage, Problem
from thoughtloom.lm.meter import Budget, Metered
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.hgot import HGOT, HGOTConfig
from thoughtloom.tasks.base import Task
from thoughtloom.testing import ScriptedLM, StaticRetriever

PASSAGES = [
    Passage("jaws", "Jaws is a 1975 film directed by Steven Spielberg.", "Jaws"),
    Passage("spielberg", "Steven Spielberg was born in 1946 in Cincinnati.", "Steven Spielberg"),
    Passage("shark", "The great white shark lives in coastal waters.", "Shark"),
]
Q = "In what year was the director of Jaws born?"


class SubstringJudge:
    """Entailed iff the hypothesis' key fact (its last word) is in the premise."""

    def __init__(self):
        self.calls = []

    async def judge(self, pairs):
        self.calls.append(list(pairs))
        return [1.0 if h.rstrip(".").split()[-1] in p else 0.0 for p, h in pairs]


def reply(plan_text="Step 1: Who directed the film Jaws?\nStep 2: In what year was the director from Step 1 born?\n"
                    "Dependencies: Step 1 -> Step 2"):
    def fn(req):
        prompt = req.messages[-1].content
        if prompt.startswith("List the essential steps"):
            if "Question: Who directed the film Jaws?" in prompt or "Steven Spielberg born" in prompt:
                return "Step 1: " + prompt.rsplit("Question: ", 1)[1].strip()
            return plan_text
        if prompt.startswith("Rewrite the final question"):
            return "In what year was Steven Spielberg born?"
        # infer
        question = prompt.rsplit("Question: ", 1)[1]
        if "Who directed" in question:
            return "Jaws was directed by Steven Spielberg [1].\nAnswer: Steven Spielberg"
        if req.sample_index == 0:
            return "Spielberg was born in 1946 [1].\nAnswer: 1946"
        if req.sample_index == 1:
            return "It was 1975 [2].\nAnswer: 1975"
        return "Spielberg was born in 1946 [1][2].\nAnswer: 1946"
    return fn


def run(cfg, lm, judge=None, retriever=None):
    trace = Trace()
    ctx = Context(lm=Metered(lm, trace=trace), task=Task(), trace=trace,
                  retriever=retriever or StaticRetriever(PASSAGES), entail=judge)
    result = asyncio.run(HGOT(cfg).run(Problem("q", Q), ctx))
    return result, trace


def test_hierarchy_rewrite_and_batching():
    lm = ScriptedLM(reply())
    judge = SubstringJudge()
    result, trace = run(HGOTConfig(samples=3, max_depth=2, thought_format="lines"), lm, judge)
    assert result.answer == "1946"
    tree = result.details["tree"]
    assert tree["stop"] == "searched"
    assert [c["question"] for c in tree["children"]] == [
        "Who directed the film Jaws?", "In what year was Steven Spielberg born?"]
    assert tree["children"][1]["original"] == "In what year was the director from Step 1 born?"
    assert all(c["stop"] == "depth limit" for c in tree["children"])
    # the rewrite saw only the parent's answer
    rewrite = [r for r in lm.requests if r.messages[-1].content.startswith("Rewrite")][0]
    assert "Who directed the film Jaws? ANSWER: Steven Spielberg" in rewrite.messages[-1].content
    # every Infer's samples went out as one batch
    infer_batches = [b for b in lm.batches if "Rationale:" in b[0].messages[-1].content]
    assert len(infer_batches) == 4 and all(len(b) == 3 for b in infer_batches)
    assert [r.sample_index for r in infer_batches[0]] == [0, 1, 2]
    # one judge call per Infer, not one per pair
    assert len(judge.calls) == 4
    report = HGOT(HGOTConfig()).report(result)
    assert "L1 In what year was the director of Jaws born?" in report
    assert "L2 In what year was Steven Spielberg born?" in report
    assert "rewritten from" in report
    kinds = {e["type"] for e in trace.events}
    assert {"retrieval", "plan", "rewrite", "hgot_infer", "passage_scores", "entailment", "hgot_stop"} <= kinds


def json_reply(req):
    """The same script, with Infer answered as schema-shaped JSON thoughts."""
    text = reply()(req)
    if req.json_schema is None:
        return text
    body, answer = text.rsplit("\nAnswer: ", 1)
    cites = [int(c) for c in re.findall(r"\[(\d+)\]", body)]
    return json.dumps({"statements": [{"text": body.split(" [")[0], "cites": cites}], "answer": answer})


def test_json_thoughts_carry_the_schema_and_vote_like_lines():
    lm = ScriptedLM(json_reply)
    result, trace = run(HGOTConfig(samples=3, max_depth=2), lm, SubstringJudge())
    assert result.answer == "1946"
    infer = [r for r in lm.requests if r.json_schema is not None]
    assert len(infer) == 12 and all("cites" in r.messages[-1].content for r in infer)
    assert not trace.of_type("malformed")
    lines, _ = run(HGOTConfig(samples=3, max_depth=2, thought_format="lines"), ScriptedLM(reply()),
                   SubstringJudge())
    first = trace.of_type("hgot_infer")[0]
    assert [t["answer"] for t in first["thoughts"]] == ["1946", "1975", "1946"]
    assert [c for t in first["thoughts"] for _, c in t["citations"]] == [[1], [2], [1, 2]]
    assert result.confidence == pytest.approx(lines.confidence)


def test_quality_weights_change_the_vote():
    # sample 1 ("1975", citing an unrelated passage) is the only one without support
    lm = ScriptedLM(reply())
    result, trace = run(HGOTConfig(samples=3, max_depth=1), lm, SubstringJudge())
    infer = trace.of_type("hgot_infer")[0]
    q = [t["quality"] for t in infer["thoughts"]]
    assert q[1] < q[0]
    assert infer["tally"]["1946"] == pytest.approx(q[0] + q[2])


def test_no_judge_means_plain_self_consistency():
    result, trace = run(HGOTConfig(samples=3, max_depth=1), ScriptedLM(reply()), None)
    infer = trace.of_type("hgot_infer")[0]
    assert [t["quality"] for t in infer["thoughts"]] == [1.0, 1.0, 1.0]
    assert result.confidence == pytest.approx(2 / 3)
    assert trace.of_type("no_entailment_judge")


def test_single_step_plan_resembling_question_stops():
    lm = ScriptedLM(reply(plan_text=f"Step 1: {Q}\nDependencies: None"))
    result, trace = run(HGOTConfig(samples=2, max_depth=3), lm, SubstringJudge())
    assert result.details["tree"]["stop"] == "single step resembles question"
    assert result.details["tree"]["children"] == []


def test_garbage_plan_is_reasked_then_falls_back():
    lm = ScriptedLM(reply(plan_text="Sure! Here is how I would think about it."))
    result, trace = run(HGOTConfig(samples=2, max_depth=2, plan_retries=1), lm, SubstringJudge())
    assert [(e["what"], e["reason"]) for e in trace.of_type("malformed")] == [("hgot_plan", "invalid_plan")] * 2
    assert trace.of_type("plan_fallback")
    # the re-ask tells the model what was wrong
    plans = [r for r in lm.requests if r.messages[-1].content.startswith("List the essential")]
    assert "could not be used" in plans[1].messages[-1].content
    assert result.details["tree"]["stop"] == "single step resembles question"
    assert result.answer == "1946"


def test_cyclic_plan_loses_an_edge_traced_not_fatal():
    """Section 3.1: a directed acyclic graph "to avoid circular dependencies"; the authors'
    search removes an edge of each cycle nx.find_cycle finds instead of re-asking. Of the
    cycle 1 -> 2 -> 1 one edge goes: 2 -> 1, the one the plan prompt forbids (a step may
    depend only on lower-numbered steps); the plan event says which."""
    lm = ScriptedLM(reply(plan_text="Step 1: A thing?\nStep 2: B thing?\nDependencies: Step 1 -> Step 2, Step 2 -> Step 1"))
    result, trace = run(HGOTConfig(samples=2, max_depth=2, plan_retries=0), lm, SubstringJudge())
    assert not trace.of_type("malformed") and not trace.of_type("plan_fallback")
    [plan] = trace.of_type("plan")
    assert plan["edges"] == [[1, 2]] and plan["dropped"] == [[2, 1]]
    assert result.answer == "1946"


def test_independent_steps_probe_in_one_retrieval_call():
    lm = ScriptedLM(reply(plan_text="Step 1: Who directed the film Jaws?\nStep 2: Where do great white sharks live?\nDependencies: None"))
    retriever = StaticRetriever(PASSAGES)
    calls = []
    orig = retriever.search

    async def spy(queries, k):
        calls.append(list(queries))
        return await orig(queries, k)
    retriever.search = spy
    run(HGOTConfig(samples=2, max_depth=2), lm, SubstringJudge(), retriever)
    assert calls[1] == ["Who directed the film Jaws?", "Where do great white sharks live?"]


def test_budget_exhaustion_returns_best_answer_so_far():
    trace = Trace()
    lm = Metered(ScriptedLM(reply()), budget=Budget(max_calls=3), trace=trace)
    ctx = Context(lm=lm, task=Task(), trace=trace, retriever=StaticRetriever(PASSAGES), entail=None)
    result = asyncio.run(HGOT(HGOTConfig(samples=2, max_depth=2)).run(Problem("q", Q), ctx))
    assert result.answer == "1946" and result.stopped == "budget"
    assert result.details["tree"]["stop"] == "budget exceeded" and result.details["tree"]["children"] == []
    assert [e["reason"] for e in trace.of_type("hgot_stop")] == ["budget exceeded"]


def test_no_rewrite_when_the_parent_found_no_answer():
    base = reply()

    def fn(req):
        prompt = req.messages[-1].content
        if "Question: Who directed the film Jaws?" in prompt and not prompt.startswith("List"):
            return "I cannot tell from these passages, sorry about that."
        return base(req)
    lm = ScriptedLM(fn)
    result, trace = run(HGOTConfig(samples=2, max_depth=2), lm, SubstringJudge())
    assert not [r for r in lm.requests if r.messages[-1].content.startswith("Rewrite")]
    assert trace.of_type("rewrite_skipped")[0]["step"] == 2
    # without step 1's answer the step is searched without naming "Step 1" (which no passage holds)
    child = result.details["tree"]["children"][1]
    assert child["question"] == "In what year was the director born?"
    assert child["original"] == "In what year was the director from Step 1 born?"


def test_replies_cut_off_at_max_tokens_are_not_read():
    """issue 17: a truncated plan is re-asked, a truncated thought does not vote."""
    inner = reply()
    plans = {"n": 0}

    def fn(req):
        text = inner(req)
        prompt = req.messages[-1].content
        if prompt.startswith("List the essential steps") and "director of Jaws" in prompt:
            plans["n"] += 1
            if plans["n"] == 1:  # the first plan is cut off, though it reads as a plan
                return Completion(text, finish_reason="length")
        if req.sample_index == 1 and not prompt.startswith(("List", "Rewrite")):
            return Completion("It was 1946 [1].\nAnswer: 1946", finish_reason="length")
        return text

    result, trace = run(HGOTConfig(samples=3, max_depth=2, thought_format="lines"), ScriptedLM(fn),
                        SubstringJudge())
    assert result.answer == "1946"
    cut = trace.of_type("malformed")
    # one event per unreadable reply: the cut-off plan, and each cut-off thought
    assert {(e["what"], e["reason"]) for e in cut} == {("hgot_plan", "truncated"), ("hgot_thought", "truncated")}
    [plan] = [e for e in cut if e["what"] == "hgot_plan"]
    assert plans["n"] == 2 and plan["error"].startswith("it was cut off")
    top = [e for e in trace.of_type("hgot_infer") if e["depth"] == 0][-1]
    assert [t["answer"] for t in top["thoughts"]] == ["1946", None, "1946"]  # the cut-off one has no answer
    assert set(top["tally"]) == {"1946"}


def _budget_run(max_calls, judge_from_lm=True, samples=5):
    """HGOT with an LLM judge that asks through the question's metered LM (as the CLI's --entail llm)."""
    from thoughtloom.entail import LLMJudge

    trace = Trace()
    lm = Metered(ScriptedLM(lambda req: "yes" if "entail" in req.messages[-1].content.lower()
                            or "premise" in req.messages[-1].content.lower() else reply()(req)),
                 budget=Budget(max_calls=max_calls), trace=trace)
    judge = LLMJudge(lm, trace=trace) if judge_from_lm else None
    ctx = Context(lm=lm, task=Task(), trace=trace, retriever=StaticRetriever(PASSAGES), entail=judge)
    result = asyncio.run(HGOT(HGOTConfig(samples=samples, max_depth=2, thought_format="lines"))
                         .run(Problem("q", Q), ctx))
    return result, trace


def test_a_budget_spent_while_the_root_thoughts_are_judged_answers_with_their_plain_vote():
    """issue 13: `run hgot` printed `answer: (none)` with five answered thoughts in its trace."""
    result, trace = _budget_run(max_calls=5)  # the five thoughts; the judge's first call is refused
    assert trace.of_type("budget_exceeded") and not trace.of_type("hgot_infer")
    assert result.stopped == "budget"
    assert result.answer == "1946" and result.confidence == 0.8  # 4 of 5 thoughts say 1946, 1 says 1975
    assert result.text == "Spielberg was born in 1946 [1]."
    tree = result.details["tree"]
    assert tree["stop"] == "budget exceeded (plain vote: its thoughts were not weighed yet)"
    assert [e["reason"] for e in trace.of_type("hgot_stop")] == [tree["stop"]]


def test_once_weighed_the_root_answer_is_no_longer_called_a_plain_vote():
    result, trace = _budget_run(max_calls=12)  # the root's Infer is judged; the run stops later
    assert result.stopped == "budget" and result.answer == "1946"
    assert [e["depth"] for e in trace.of_type("hgot_infer")][0] == 0
    assert result.details["tree"]["stop"] == "budget exceeded"


def test_a_budget_too_small_for_the_first_thoughts_leaves_no_answer_but_says_where_it_stopped():
    result, trace = _budget_run(max_calls=4)  # the batch of five thoughts is refused whole
    assert result.stopped == "budget" and result.answer == ""
    assert result.details["tree"]["stop"] == "budget exceeded" and result.details["tree"]["question"] == Q
    assert HGOT().report(result).startswith(f"L1 {Q}  ->  (none) (0%; budget exceeded)")
