"""The App. C / Figure 17 suite (``decomp-commaqa-scale``): fine DecomP and CoT on the short prompts,
each on --model and on the user's smaller model.

App. C: "CommAQA에 사용하는 모델이 더 약해지거나 작아져도 DECOMP는 CoT를 능가하지만, 성능은 하락하며
curie에서는 0에 가까워진다" (with a weaker or smaller model DecomP still beats CoT, but the scores
drop, near 0 for curie), and those models needed the shorter prompts of G.4. So the suite's four
methods are two arms times two scales, a smaller-model method differing from its twin only in the
model every one of its calls asks, and its claims are DecomP over CoT at each scale and each arm
over itself on the smaller model.
"""

import json

import pytest

from support.commaqa_kb import oracle
from support.suite_cells import sample_plan, trace_events
from thoughtloom.core.errors import ConfigError
from thoughtloom.core.types import Problem
from thoughtloom.eval.assembly import RunSpec
from thoughtloom.eval.reproduce import run as runs
from thoughtloom.eval.reproduce import suites
from thoughtloom.strategies import get
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.decomp.controller import NEXT_STEP
from thoughtloom.tasks import get as get_task
from thoughtloom.tasks.datasets import sample_path
from thoughtloom.testing import ScriptedLM

SMALL = {"decomposer": "small-model", "handler": "small-model"}


def right(model_id: str) -> ScriptedLM:
    """A model that is always right (the oracle), so both scales score and every call is counted."""
    return ScriptedLM(lambda req: oracle(req.prompt_text(), NEXT_STEP), model_id=model_id)


def test_the_suite_runs_both_short_arms_at_each_scale_on_decomp_commaqas_iid_split():
    suite = suites.load("decomp-commaqa-scale")
    base = suites.load("decomp-commaqa")
    assert [(d.task, d.data, d.metrics) for d in suite.datasets] == [
        (d.task, d.data, d.metrics) for d in base.datasets if d.id == "iid"]
    assert suite.budget == base.budget
    methods = {m.id: m for m in suite.methods}
    assert {m: (x.strategy, dict(x.settings)) for m, x in methods.items() if not x.own_models} == {
        "fine": ("decomp", {"program": "commaqa_fine_short"}),
        "cot": ("decomp-cot", {"program": "commaqa_cot_short_baseline"})}
    for arm in ("fine", "cot"):  # the smaller-model twin: the same strategy and settings, only its model differs
        twin = methods[f"{arm}-small"]
        assert (twin.strategy, dict(twin.settings), methods[arm].own_models) == (
            methods[arm].strategy, dict(methods[arm].settings), ())
    assert methods["fine-small"].own_models == ("decomposer", "handler")
    assert methods["cot-small"].own_models == ("handler",)
    assert {(c.better, c.worse) for c in suite.claims} == {
        ("fine", "cot"), ("fine-small", "cot-small"), ("fine", "fine-small"), ("cot", "cot-small")}
    assert all("Figure 17" in c.source for c in suite.claims)


def plan_for(tmp_path):
    return sample_plan("decomp-commaqa-scale", tmp_path)  # the packaged CommaQA-E sample


async def test_a_smaller_model_method_asks_the_smaller_model_for_every_call(tmp_path):
    """Every model call of fine-small (decomposer turns and readers) and cot-small (its chain) goes to
    the --role-model model, none to --model; every call of fine and cot to --model. Both scales
    answer right here (the scripted models are right), so only the model differs."""
    plan, slices = plan_for(tmp_path)
    strong, small = right("strong"), right("small-model")
    spec = RunSpec(model=None, role_models=SMALL)
    async with spec.open(strong, role_lms={"decomposer": small, "handler": small}) as res:
        summaries = await runs.run_cells(plan, slices, spec, res=res)
    assert all(s["n_errors"] == 0 for s in summaries.values())
    for cell in plan.cells():
        folder = cell.folder(plan.out)
        calls = [e for e in trace_events(folder) if e["type"] == "llm_call"]
        want = "small-model" if cell.method.own_models else "strong"
        assert calls and {e["model"] for e in calls} == {want}, cell.method.id
        records = [json.loads(x) for x in (folder / "results.jsonl").read_text().splitlines()]
        assert [r["metrics"]["em"] for r in records] == [1.0, 1.0], cell.method.id
    assert small.requests and strong.requests


async def test_fine_decomp_on_the_smaller_model_needs_both_of_its_roles_there():
    """fine-small marks the decomposer and the handler: with the handler alone on the smaller model,
    the decomposer's turns still ask --model (so a method marked with fewer roles would mix scales)."""
    ex = get_task("commaqa").load(sample_path("commaqa"))[0]
    strong, small = right("strong"), right("small-model")
    cls = get("decomp")
    ctx = Context(lm=strong, task=get_task("commaqa"), role_lms={"handler": small})
    result = await cls(cls.Config(program="commaqa_fine_short")).run(Problem(ex.problem.id, ex.problem.question,
                                                                             context=ex.problem.context), ctx)
    assert result.details["status"] == "ok"
    assert strong.requests and all(NEXT_STEP in r.prompt_text() for r in strong.requests)
    assert small.requests and not any(NEXT_STEP in r.prompt_text() for r in small.requests)


@pytest.mark.parametrize("given,missing", [({}, "decomposer"), ({"decomposer": "small-model"}, "handler")])
async def test_the_smaller_model_methods_are_refused_without_their_role_models(tmp_path, given, missing):
    plan, slices = plan_for(tmp_path)
    strong = right("strong")
    spec = RunSpec(model=None, role_models=given)
    async with spec.open(strong, role_lms={r: right(m) for r, m in given.items()}) as res:
        with pytest.raises(ConfigError) as err:
            await runs.run_cells(plan, slices, spec, res=res)
    assert "fine-small" in str(err.value) and f"--role-model {missing}=MODEL" in err.value.hint
    assert not strong.requests
