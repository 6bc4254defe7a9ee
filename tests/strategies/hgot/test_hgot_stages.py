"""Planning in the paper's three calls (appendix C): plan, self-reflection, formalization."""

from thoughtloom.strategies.hgot import HGOTConfig
from thoughtloom.strategies.hgot.demos import Annotated, render_plan_demos
from thoughtloom.strategies.hgot.stages import stage_demos
from thoughtloom.testing import ScriptedLM

from test_hgot_search import Q, SubstringJudge, reply, run

PLAN = "Step 1: Who directed the film Jaws?\nStep 2: In what year was that director born?\nDependencies: None"


def staged(formal="Step 1 -> Step 2", plan=PLAN):
    base = reply(plan_text=plan)

    def fn(req):
        prompt = req.messages[-1].content
        if prompt.startswith("Say which of the steps"):
            return " Step 2 depends on Step 1."
        if prompt.startswith("Write the dependencies described"):
            return " " + formal
        return base(req)
    return fn


def test_three_stages_take_the_edges_from_the_formalization():
    """Appendix C.1-C.3: the plan lists the steps, self-reflection ("Highlight interdependencies
    among the steps below if any") describes the dependencies, formalization ("Express the
    dependencies in formal language by giving the descriptions below") writes them as
    Step 1 -> Step 2. The plan said "None"; the formalized edge 1 -> 2 is the one searched."""
    lm = ScriptedLM(staged())
    result, trace = run(HGOTConfig(samples=2, max_depth=2, plan_stages=3), lm, SubstringJudge())
    [plan] = trace.of_type("plan")
    assert plan["edges"] == [[1, 2]] and plan["levels"] == [[1], [2]]
    assert plan["reflection"] == " Step 2 depends on Step 1." and plan["formalization"] == " Step 1 -> Step 2"
    prompts = [r.messages[-1].content for r in lm.requests]
    reflect = next(p for p in prompts if p.startswith("Say which of the steps"))
    assert reflect.endswith("Steps:\nStep 1: Who directed the film Jaws?\nStep 2: In what year was that director "
                            "born?\nDependencies:\n") or reflect.endswith("born?\nDependencies:")
    formal = next(p for p in prompts if p.startswith("Write the dependencies described"))
    assert "Descriptions: Step 2 depends on Step 1." in formal
    assert trace.of_type("rewrite") and result.answer == "1946"


def test_three_stages_cost_two_calls_more_per_usable_plan_and_default_is_one():
    """Same plan, same edges: three stages add exactly the self-reflection and formalization calls."""
    plan = PLAN.replace("Dependencies: None", "Dependencies: Step 1 -> Step 2")
    one, three = ScriptedLM(staged(plan=plan)), ScriptedLM(staged(plan=plan))
    run(HGOTConfig(samples=2, max_depth=2), one, SubstringJudge())
    run(HGOTConfig(samples=2, max_depth=2, plan_stages=3), three, SubstringJudge())
    assert len(three.requests) == len(one.requests) + 2
    assert not [r for r in one.requests if r.messages[-1].content.startswith(("Say which", "Write the dependencies"))]


def test_an_unreadable_formalization_falls_back_to_the_reflection():
    lm = ScriptedLM(staged(formal="I am not sure."))
    _, trace = run(HGOTConfig(samples=2, max_depth=2, plan_stages=3), lm, SubstringJudge())
    assert trace.of_type("plan")[0]["edges"] == [[1, 2]]


def test_stage_demos_come_from_the_plan_demos():
    demo = Annotated("Q?", "Step 1: A thing? Step 2: B thing? Step 3: C thing?",
                     "Step 3 depends on the answers from Steps 1 and 2.")
    reflect, formal = stage_demos(render_plan_demos([demo]))
    assert reflect == "\nSteps:\nStep 1: A thing?\nStep 2: B thing?\nStep 3: C thing?\n" \
                      "Dependencies: Step 3 depends on Steps 1 and 2.\n"
    assert formal == "\nDescriptions: Step 3 depends on Steps 1 and 2.\nDependencies: (Step 1 and Step 2) -> Step 3\n"
    assert stage_demos("") == ("", "")


def test_labelled_three_stage_plans_of_the_bench_model():
    """The bench model's three-stage replies (plan, self-reflection, formalization) on HotpotQA
    package-sample questions, the edges labelled by hand from the formalization (the
    self-reflection's when the formalization names no step); see data/README.md."""
    import json
    from pathlib import Path

    import pytest

    from thoughtloom.core.types import Completion
    from thoughtloom.strategies.hgot.plan import PlanError
    from thoughtloom.strategies.hgot.stages import PlanReplies

    path = Path(__file__).parent / "data" / "plan_replies_3stage.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert rows
    for row in rows:
        stage = [None if row.get(k) is None else Completion(row[k]) for k in ("reflection", "formalization")]
        replies = PlanReplies(Completion(row["reply"]), *stage)
        if row["label"].get("error"):
            with pytest.raises(PlanError):
                replies.parse(4)
            continue
        plan = replies.parse(4)
        assert list(plan.steps) == row["label"]["steps"], row["question"]
        assert sorted(plan.edges) == sorted(tuple(e) for e in row["label"]["edges"]), row["question"]


def test_a_stage_reply_cut_off_at_max_tokens_keeps_the_plans_own_dependencies():
    """A self-reflection or formalization cut off at plan_max_tokens is not a description of the
    dependencies: it is traced (malformed, truncated) and the plan's own line is used, here
    "Dependencies: None", so the two steps are searched side by side (one level)."""
    from thoughtloom.core.types import Completion

    for stage in ("Say which of the steps", "Write the dependencies described"):
        base = staged()

        def fn(req, base=base, stage=stage):
            text = base(req)
            if req.messages[-1].content.startswith(stage):
                return Completion(text, finish_reason="length")
            return text
        _, trace = run(HGOTConfig(samples=2, max_depth=2, plan_stages=3), ScriptedLM(fn), SubstringJudge())
        plan = trace.of_type("plan")[0]
        assert plan["edges"] == [] and plan["levels"] == [[1, 2]] and "formalization" not in plan
        [cut] = [e for e in trace.of_type("malformed") if e["reason"] == "truncated"]
        assert cut["what"] == ("hgot_reflect" if stage.startswith("Say") else "hgot_formalize")
