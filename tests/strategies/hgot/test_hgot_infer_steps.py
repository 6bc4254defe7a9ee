"""HGOT's Infer as a pluggable step (strategies/hgot/infer_steps.py): the paper's Infer is the default,
a CoT-SC step is one option away, a step of your own registers by name; every step runs on the run's
budget and in its trace."""

import asyncio
import dataclasses

import pytest

from thoughtloom import strategies
from thoughtloom.core.errors import ConfigError
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Problem, ScoredPassage
from thoughtloom.lm.meter import Budget, Metered
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.hgot import HGOT, HGOTConfig
from thoughtloom.strategies.hgot import infer_steps
from thoughtloom.strategies.hgot.infer import InferOutcome, infer
from thoughtloom.strategies.hgot.infer_steps import CitedInfer, StrategyInfer, infer_step, register_infer
from thoughtloom.strategies.hgot.node import QuestionNode
from thoughtloom.strategies.steps import StepSpec
from thoughtloom.tasks.base import Task
from thoughtloom.testing import ScriptedLM, StaticRetriever

from test_hgot_search import PASSAGES, Q, SubstringJudge, reply


def run(cfg, max_calls=None, judge=None):
    lm = ScriptedLM(reply())
    trace = Trace()
    meter = Metered(lm, Budget(max_calls=max_calls), trace=trace)
    ctx = Context(lm=meter, task=Task(), trace=trace, retriever=StaticRetriever(PASSAGES), entail=judge)
    return asyncio.run(HGOT(cfg).run(Problem("q", Q), ctx)), trace, meter, lm


def stripped(events):
    return [{k: v for k, v in e.items() if k not in ("t", "seconds", "latency_s")} for e in events]


def test_the_default_infer_step_is_the_papers_infer():
    """The default step is the paper's Infer: the same requests and the same events as calling
    :func:`infer` itself, and a run that names `cited` is the run that names nothing."""
    assert isinstance(infer_step(HGOTConfig()), CitedInfer)
    cfg = HGOTConfig(samples=3, thought_format="lines")
    pool = [ScoredPassage(p, 1.0 / (i + 1), i) for i, p in enumerate(PASSAGES)]
    outs = []
    for call in (lambda ctx: infer(ctx, cfg, QuestionNode(Q, 0), pool, ""),
                 lambda ctx: infer_step(cfg)(ctx, QuestionNode(Q, 0), pool, "")):
        lm, trace = ScriptedLM(reply()), Trace()
        outs.append((asyncio.run(call(Context(lm=lm, task=Task(), trace=trace))), lm.requests, stripped(trace.events)))
    assert outs[0] == outs[1] and outs[0][0].answer == "1946"
    default, named = run(HGOTConfig(samples=3)), run(HGOTConfig(samples=3, infer="cited"))
    assert default[3].requests == named[3].requests and stripped(default[1].events) == stripped(named[1].events)


def test_a_cot_sc_infer_is_one_option_away_and_runs_in_the_runs_trace():
    """infer="cot-sc n=3": every Infer of the hierarchy (the root's two, one per step) is a cot-sc run of
    3 samples in one batch over the node's passages; no cited thought is asked for and no citation is
    judged; each hgot_infer holds cot-sc's vote, and cot-sc's events sit under the Infer's node."""
    judge = SubstringJudge()
    result, trace, meter, lm = run(HGOTConfig(infer="cot-sc n=3", max_depth=2), judge=judge)
    assert result.answer == "1946"
    infers = trace.of_type("hgot_infer")
    assert [e["node"] for e in infers] == ["1", "1.1", "1.2", "1"]
    assert all(e["thoughts"] == [] and sum(e["tally"].values()) == 3 for e in infers)
    assert judge.calls == [] and not any(r.json_schema for r in lm.requests)
    cot_batches = [b for b in lm.batches if len(b) == 3]
    assert len(cot_batches) == 4 and all([r.sample_index for r in b] == [0, 1, 2] for b in cot_batches)
    assert all("Steven Spielberg was born in 1946" in b[0].messages[-1].content for b in cot_batches[2:])
    samples = trace.of_type("sample")
    assert [e["within"] for e in samples[:3]] == [[{"step": "hgot_infer", "node": "1", "strategy": "cot-sc"}]] * 3
    assert [e["within"][0]["node"] for e in trace.of_type("vote")] == ["1", "1.1", "1.2", "1"]
    assert meter.totals.calls == len(lm.requests) == len(trace.of_type("llm_call"))
    from thoughtloom.view.hierarchy import hierarchy  # the run inspector reads such a run

    assert [i.answer for i in hierarchy(trace.events).questions["1"].infers] == ["1946", "1946"]


def test_a_strategy_infer_rescores_the_pool_as_the_paper_rescores_an_uncited_passage():
    """§3.3 updates every passage's quality after an Infer: s'(p) = w1 * s(p) + w2 * f~(p) + w3 * conf,
    with f~(p) its quality-weighted citation frequency. A CoT-SC step cites nothing, so f~ = 0 for
    every passage: s' = w1 * s + w3 * conf. Its two samples agree (conf = 1), so with the paper's
    w1 = 0.2, w3 = 0.25 the scores 1.0, 0.5, 0.25 become 0.45, 0.35, 0.3, in the same order."""
    cfg = HGOTConfig(top_k=2)
    pool = [ScoredPassage(p, s, i) for i, (p, s) in enumerate(zip(PASSAGES, (1.0, 0.5, 0.25)))]
    trace = Trace()
    ctx = Context(lm=ScriptedLM(lambda r: "It is 1946.\nAnswer: 1946"), task=Task(), trace=trace)
    step = StrategyInfer(cfg, StepSpec("cot-sc", (("n", "2"),)))
    out = asyncio.run(step(ctx, QuestionNode(Q, 0), pool, ""))
    assert (out.answer, out.confidence) == ("1946", 1.0)
    assert [(s.passage.id, s.score) for s in out.pool] == [
        ("jaws", pytest.approx(0.45)), ("spielberg", pytest.approx(0.35)), ("shark", pytest.approx(0.3))]
    assert len(out.shown) == 2  # the top K the step was shown
    [scores] = trace.of_type("passage_scores")
    assert [p["cite_freq"] for p in scores["passages"] + scores["unshown"]] == [0.0, 0.0, 0.0]


def test_the_runs_budget_bounds_the_infer_step_and_a_stop_answers_with_the_root_so_far():
    """4 calls: the root's first cot-sc Infer (3) and its plan (1); the steps' Infers are refused, and the
    run answers with the root's answer so far (HGOT's own best so far, not a step's)."""
    result, trace, meter, _ = run(HGOTConfig(infer="cot-sc n=3", max_depth=2), max_calls=4)
    assert result.stopped == "budget" and result.answer == "1946"
    assert meter.totals.calls == 4 and trace.of_type("budget_exceeded")[0]["within"][0]["node"] == "1.1"


def test_an_infer_step_of_your_own_registers_by_name():
    class FirstTitle:
        """Answers with the title of the best passage (no model call)."""

        def __init__(self, cfg, spec):
            self.cfg = cfg

        async def __call__(self, ctx, node, pool, demos, hints=""):
            best = max(pool, key=lambda s: s.score)
            return InferOutcome(best.passage.title, 1.0, list(pool), [], shown=(best.passage.text,))

    register_infer("first-title", FirstTitle)
    try:
        result, trace, meter, _ = run(HGOTConfig(infer="first-title", max_depth=1))
        assert result.answer == "Steven Spielberg" and meter.totals.calls == 0  # the probe ranks it first
        with pytest.raises(ValueError, match="registered twice"):
            register_infer("first-title", lambda cfg, spec: FirstTitle(cfg, spec))
    finally:
        infer_steps._STEPS.pop("first-title")
        infer_step.cache_clear()


@pytest.mark.parametrize("value,says", [
    ("cot-sx", "no Infer step or strategy 'cot-sx'"),
    ("cited n=3", "the paper's Infer takes no options"),
    ("cot-sc n=0", "hgot option infer 'cot-sc n=0': bad value for cot-sc option n: 0"),
])
def test_a_bad_infer_step_is_refused_when_hgot_is_built(value, says):
    with pytest.raises(ConfigError, match=says):
        strategies.build("hgot", {"infer": value})


def test_a_config_names_its_infer_step_once():
    cfg = HGOTConfig(infer="cot-sc n=3")
    assert infer_step(cfg) is infer_step(dataclasses.replace(cfg))  # built once per config, not per Infer
