"""A model per role (issue 42): each role's requests reach its own model, under one budget and one trace.

ThoughtSculpt, Appendix I: "we investigate the impact of using a weaker model for the generator or the
evaluator" -- which needs the generator's and the evaluator's calls on different models. The same
mechanism carries DecomP's decomposer and handlers and the entailment judge (HGOT).
"""

import dataclasses
import json

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core.errors import ConfigError
from thoughtloom.core.types import Passage, Problem
from thoughtloom.eval.assembly import RunSpec
from thoughtloom.eval.runner import EvalResources, EvalSettings, evaluate, run_problem
from thoughtloom.lm.meter import Budget
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.decomp.controller import NEXT_STEP
from thoughtloom.tasks.datasets import sample_path
from thoughtloom.testing import ScriptedLM, StaticRetriever

from strategies.decomp.test_decomp_controller import LETTER_Q, letter_lm

EXPRESSION = "Expression: (13 - 9) * (10 - 4)\nThe answer is: (13 - 9) * (10 - 4)"


def is_evaluation(req) -> bool:
    """The tree evaluator's requests ask for a JSON object (tree_evaluate.txt); the generator's do not."""
    return "JSON object" in req.messages[0].content


def generator_reply(req):
    assert not is_evaluation(req), "an evaluation reached the generator's model"
    return EXPRESSION


def evaluator_reply(req):
    assert is_evaluation(req), "a generation reached the evaluator's model"
    return json.dumps({"feedback": "fine", "score": 6})


def mcts(rollouts: int = 2):
    cls = strategies.get("sculpt-mcts")
    return cls(strategies.make_config(cls, {"rollouts": str(rollouts)}))


async def test_tree_search_sends_generations_and_evaluations_to_their_own_models(tmp_path):
    main = ScriptedLM(lambda r: pytest.fail("no role asks --model here"), model_id="main")
    gen, ev = ScriptedLM(generator_reply, model_id="big"), ScriptedLM(evaluator_reply, model_id="small")
    task = tasks.get("game24")
    examples = task.load(sample_path("game24"))[:1]
    res = EvalResources(main, role_lms={"generator": gen, "evaluator": ev})
    summary = await evaluate(mcts(), task, examples, res, tmp_path, settings=EvalSettings(budget=Budget(max_calls=40)))
    assert summary["n_errors"] == 0
    assert gen.requests and ev.requests and not main.requests
    record = json.loads((tmp_path / "results.jsonl").read_text().splitlines()[0])
    by_role = record["usage"]["by_role"]
    assert by_role["generator"]["calls"] == len(gen.requests)
    assert by_role["evaluator"]["calls"] == len(ev.requests)
    assert by_role["default"]["calls"] == 0
    assert record["usage"]["calls"] == len(gen.requests) + len(ev.requests)
    assert summary["usage"]["by_role"]["evaluator"]["calls"] == len(ev.requests)
    # one trace: each call names its model and role
    events = [json.loads(x) for x in (tmp_path / "trace.jsonl").read_text().splitlines()]
    calls = [e for e in events if e.get("type") == "llm_call"]
    assert len(calls) == record["usage"]["calls"]
    assert {(e["role"], e["model"]) for e in calls} == {("generator", "big"), ("evaluator", "small")}
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["config"]["role_models"] == {"evaluator": "small", "generator": "big"}


@pytest.mark.parametrize("cap", [3, 5, 8])
async def test_both_roles_count_against_the_one_budget(cap):
    gen, ev = ScriptedLM(generator_reply, model_id="big"), ScriptedLM(evaluator_reply, model_id="small")
    task = tasks.get("game24")
    problem = task.load(sample_path("game24"))[0].problem
    run = await run_problem(mcts(rollouts=8), task, problem, EvalResources(gen, role_lms={"evaluator": ev}),
                            EvalSettings(budget=Budget(max_calls=cap)))
    assert run.error is None
    assert run.result.stopped == "budget"
    assert len(gen.requests) + len(ev.requests) == run.usage.calls <= cap
    assert gen.requests and ev.requests  # both spent from it
    assert run.by_role["evaluator"]["calls"] == len(ev.requests)
    assert run.by_role["default"]["calls"] == len(gen.requests)  # the generator here is --model


async def test_the_strategys_own_cap_covers_every_role():
    gen, ev = ScriptedLM(generator_reply, model_id="big"), ScriptedLM(evaluator_reply, model_id="small")
    task = tasks.get("game24")
    cls = strategies.get("sculpt-mcts")
    strategy = cls(strategies.make_config(cls, {"rollouts": "8", "max_calls": "4"}))
    problem = task.load(sample_path("game24"))[0].problem
    await run_problem(strategy, task, problem, EvalResources(gen, role_lms={"evaluator": ev}),
                      EvalSettings(budget=Budget(max_calls=100)))
    assert len(gen.requests) + len(ev.requests) <= 4 and ev.requests


async def test_decomp_decomposer_and_handlers_on_their_own_models():
    main = ScriptedLM(lambda r: pytest.fail("no role asks --model here"), model_id="main")
    dec, hand = ScriptedLM(letter_lm(), model_id="planner"), ScriptedLM(letter_lm(), model_id="worker")
    task = tasks.get("letter_cat")
    run = await run_problem(strategies.get("decomp")(), task, Problem("q", LETTER_Q),
                            EvalResources(main, role_lms={"decomposer": dec, "handler": hand}), EvalSettings())
    assert run.result.answer == "d y e"
    assert dec.requests and all(NEXT_STEP in r.messages[-1].content for r in dec.requests)
    assert hand.requests and not any(NEXT_STEP in r.messages[-1].content for r in hand.requests)
    assert run.by_role["decomposer"]["calls"] + run.by_role["handler"]["calls"] == run.usage.calls


async def test_hgot_entailment_judge_asks_the_judge_model():
    main = ScriptedLM(lambda r: "Spielberg was born in 1946 [1].\nAnswer: 1946", model_id="main")
    judge = ScriptedLM(lambda r: "yes", model_id="judge")
    spec = RunSpec(model=None, entail="llm")
    task = tasks.get("hotpotqa")
    strategy = strategies.build("hgot", {"samples": 2, "max_depth": 1})
    async with spec.open(main, role_lms={"judge": judge}) as res:
        res = dataclasses.replace(res, retriever=StaticRetriever(
            [Passage("s", "Steven Spielberg was born in 1946.", "Steven Spielberg")]))
        run = await run_problem(strategy, task, Problem("q", "Jaws director birth year?"), res, EvalSettings())
    assert run.error is None
    assert judge.requests and all("premise entails the hypothesis" in r.messages[-1].content for r in judge.requests)
    assert not any("premise entails the hypothesis" in r.messages[-1].content for r in main.requests)
    assert run.by_role["judge"]["calls"] == len(judge.requests)


def test_no_role_models_leaves_the_record_as_it_was():
    lm = ScriptedLM(generator_reply)
    ctx = Context(lm=lm, task=tasks.get("game24"))
    assert ctx.lm_for("evaluator") is lm


def test_an_unknown_role_is_one_line_naming_the_roles():
    with pytest.raises(ConfigError) as err:
        RunSpec(role_models={"critic": "embedded"})
    assert "critic" in str(err.value) and "generator, evaluator, judge, decomposer, handler" in str(err.value)
    with pytest.raises(ConfigError):
        Context(lm=ScriptedLM([]), task=tasks.get("game24")).lm_for("critic")


def test_run_spec_sorts_and_checks_its_role_models():
    spec = RunSpec(role_models={"judge": "embedded", "evaluator": "openai:small@http://127.0.0.1:1/v1"})
    assert spec.role_models == (("evaluator", "openai:small@http://127.0.0.1:1/v1"), ("judge", "embedded"))
    with pytest.raises(ConfigError):
        RunSpec(role_models={"evaluator": "nonsense:x"}).check_model()
