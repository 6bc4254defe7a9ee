"""The Appendix I / Table 10 suite (``sculpt-components``): each marked role on the user's weaker model.

Appendix I: "We replaced GPT-4 with Llama3.1-8B-Instruct as the language model for either the thought
evaluator or the thought generator in the Constrained Generation task." So the suite's four methods are
one ThoughtSculpt whose generator, evaluator, both or neither ask the weaker model, on one budget.
"""

import json

import pytest

from support.suite_cells import sample_plan, trace_events
from thoughtloom.core.errors import ConfigError
from thoughtloom.eval.assembly import RunSpec
from thoughtloom.eval.reproduce import card as cards
from thoughtloom.eval.reproduce import render
from thoughtloom.eval.reproduce import run as runs
from thoughtloom.testing import ScriptedLM

SENTENCE = "The toddler in a vest pulls a piece of snow from the wall in winter."


def is_evaluation(req) -> bool:
    return "need to improve" in req.prompt_text()  # Appendix A.3's verdict prompt (tree_evaluate_verdict.txt)


def reply(req):
    return "[still need to improve] several concepts are missing" if is_evaluation(req) else SENTENCE


def models():
    return (ScriptedLM(reply, model_id="strong"), ScriptedLM(reply, model_id="weak-generator-model"),
            ScriptedLM(reply, model_id="weak-evaluator-model"))


def plan_for(tmp_path):
    return sample_plan("sculpt-components", tmp_path)  # the packaged CommonGen-Hard sample


async def test_each_method_sends_its_marked_roles_to_the_weak_model(tmp_path):
    plan, slices = plan_for(tmp_path)
    strong, weak_gen, weak_ev = models()
    spec = RunSpec(model=None, role_models={"generator": "weak-generator-model", "evaluator": "weak-evaluator-model"})
    async with spec.open(strong, role_lms={"generator": weak_gen, "evaluator": weak_ev}) as res:
        summaries = await runs.run_cells(plan, slices, spec, res=res)
    assert all(s["n_errors"] == 0 for s in summaries.values())
    expected = {"sculpt-mcts": {}, "weak-generator": {"generator": "weak-generator-model"},
                "weak-evaluator": {"evaluator": "weak-evaluator-model"},
                "weak-both": {"generator": "weak-generator-model", "evaluator": "weak-evaluator-model"}}
    for cell in plan.cells():
        calls = [e for e in trace_events(cell.folder(plan.out)) if e["type"] == "llm_call"]
        routed = {e["role"]: e["model"] for e in calls if "role" in e}
        assert routed == expected[cell.method.id], cell.method.id
        assert all(e["model"] == "strong" for e in calls if "role" not in e)
        records = [json.loads(x) for x in (cell.folder(plan.out) / "results.jsonl").read_text().splitlines()]
        for r in records:  # both roles spend from the one budget of each concept set
            assert r["usage"]["calls"] <= plan.budget.max_calls
            if expected[cell.method.id]:
                assert sum(u["calls"] for u in r["usage"]["by_role"].values()) == r["usage"]["calls"]
    assert weak_ev.requests and all(is_evaluation(q) for q in weak_ev.requests)
    assert weak_gen.requests and not any(is_evaluation(q) for q in weak_gen.requests)
    # the card's notes column gives each role's spend where a method has own models
    card = cards.collect(plan, slices, {})
    cell = next(c for c in card.cells if c.method.id == "weak-evaluator")
    assert set(cell.by_role) == {"default", "evaluator"} and cell.by_role["evaluator"][0] > 0
    text = render.to_markdown(render.outline(card))
    assert "per role: default" in text and "evaluator" in text
    # the card's header names the model each role on a model of its own asked, not only --model
    assert card.models == ("strong",)
    assert card.role_models == (("evaluator", "weak-evaluator-model"), ("generator", "weak-generator-model"))
    header = next(line for line in text.splitlines() if line.startswith("- Model:"))
    assert "evaluator: weak-evaluator-model" in header and "generator: weak-generator-model" in header


async def test_a_marked_role_without_its_model_is_refused_before_any_call(tmp_path):
    plan, slices = plan_for(tmp_path)
    strong, _, _ = models()
    spec = RunSpec(model=None, role_models={"generator": "weak-generator-model"})
    async with spec.open(strong, role_lms={"generator": ScriptedLM(reply)}) as res:
        with pytest.raises(ConfigError) as err:
            await runs.run_cells(plan, slices, spec, res=res)
    assert "weak-evaluator" in str(err.value) and "--role-model evaluator=MODEL" in err.value.hint
    assert not strong.requests
