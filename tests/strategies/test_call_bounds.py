"""Every strategy has a finite default bound on model calls (issue 11 §2), enforced by the base class."""

import dataclasses

from thoughtloom import strategies, tasks
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Problem
from thoughtloom.lm.meter import Budget, Metered
from thoughtloom.strategies.base import CallCap, Context
from thoughtloom.testing import ScriptedLM


def test_every_registered_strategy_states_a_finite_max_calls():
    for name in strategies.available():
        fields = {f.name: f for f in dataclasses.fields(strategies.get(name).Config)}
        assert "max_calls" in fields, name
        assert isinstance(fields["max_calls"].default, int) and 0 < fields["max_calls"].default <= 1000, name


async def test_the_bound_shows_in_remaining_calls_so_a_sampler_trims_its_batch():
    cls = strategies.get("cot-sc")
    lm = ScriptedLM(lambda req: "The answer is: 4")
    result = await cls(cls.Config(n=5, max_calls=3)).run(Problem("q", "2+2?"),
                                                         Context(lm=lm, task=tasks.get("gsm8k")))
    assert lm.calls == 3 and result.answer == "4"


async def test_a_run_past_its_bound_gets_budget_exceeded_and_returns_its_best():
    cls = strategies.get("react")
    lm = ScriptedLM(lambda req: "Thought: look again\nAction: Search[Jaws]")
    trace = Trace()
    await cls(cls.Config(max_calls=2)).run(Problem("q", "Who directed Jaws?"),
                                           Context(lm=lm, task=tasks.get("hotpotqa"), trace=trace))
    assert lm.calls == 2
    assert [e for e in trace.events if e["type"] == "budget_exceeded"][0]["limit"] == "strategy_calls"


async def test_within_its_bound_a_strategy_runs_as_before():
    cls = strategies.get("cot-sc")
    lm = ScriptedLM(lambda req: "The answer is: 4")
    result = await cls(cls.Config(n=5)).run(Problem("q", "2+2?"), Context(lm=lm, task=tasks.get("gsm8k")))
    assert lm.calls == 5 and result.answer == "4"


async def test_remaining_calls_is_the_tighter_of_strategy_and_runner_budget():
    lm = Metered(ScriptedLM(lambda req: "x"), budget=Budget(max_calls=4))
    cap = CallCap(lm, 10, Trace())
    assert cap.remaining_calls() == 4
    assert CallCap(ScriptedLM(lambda req: "x"), 10, Trace()).remaining_calls() == 10
