"""strategies/steps.py: a strategy or a function as one step of another run (the seam DecomP's handlers
and HGOT's Infer share): the run's budget and trace, the step's own calls counted, its own bound."""

import asyncio

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core.errors import BudgetExceeded, ConfigError
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Problem, Request
from thoughtloom.lm.meter import Budget, Metered
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.steps import StepSpec, build_step, parse_spec, run_function_step, run_step
from thoughtloom.testing import ScriptedLM


def context(max_calls=None, reply="The answer is: 42"):
    lm = ScriptedLM(lambda r: '{"score": 6, "feedback": "ok"}' if r.json_schema else reply)
    trace = Trace()
    meter = Metered(lm, Budget(max_calls=max_calls), trace=trace)
    return Context(lm=meter, task=tasks.get("gsm8k"), trace=trace), meter


def test_a_spec_is_a_name_and_options_read_by_the_one_coercer():
    assert parse_spec("cot-sc n=3 temperature=0.5", "x") == StepSpec("cot-sc", (("n", "3"), ("temperature", "0.5")))
    assert parse_spec("cot-sc layout='text'", "x").options == (("layout", "text"),)
    assert build_step(parse_spec("cot-sc n=3", "x")).config.n == 3
    for bad, says in (("", "expected NAME"), ("cot-sc n", "an option is KEY=VALUE"), ("cot-sc 'n=3", "quotation")):
        with pytest.raises(ConfigError, match=says):
            parse_spec(bad, "decomp option bind")
    with pytest.raises(ConfigError, match="^hgot option infer 'cot-sc n=0': bad value for cot-sc option n: 0"):
        build_step(parse_spec("cot-sc n=0", "x"), where="hgot option infer 'cot-sc n=0'")


def test_functions_side_by_side_count_only_their_own_calls_and_the_meter_counts_each_once():
    """Two steps interleave their calls; each step's count is its own, the meter's total is their sum,
    and each step's llm_call events carry its own scope."""
    ctx, meter = context()

    async def asks(n):
        async def fn(question, step_ctx):
            for i in range(n):
                await step_ctx.lm.generate([Request.of(f"{question} {i}")])
                await asyncio.sleep(0)
            return question
        return fn

    async def both():
        return await asyncio.gather(run_function_step(await asks(3), "a", ctx, step="s", name="a"),
                                    run_function_step(await asks(2), "b", ctx, step="s", name="b"))

    (va, ca, ta), (vb, cb, tb) = asyncio.run(both())
    assert (va, ca, vb, cb) == ("a", 3, "b", 2) and ta > 0 and tb > 0
    assert meter.totals.calls == 5
    calls = ctx.trace.of_type("llm_call")
    assert sorted(e["within"][0]["name"] for e in calls) == ["a", "a", "a", "b", "b"]
    assert all(e["messages"][-1][1].startswith(e["within"][0]["name"]) for e in calls)


def test_a_step_strategys_own_max_calls_ends_the_step_with_its_best_so_far_and_the_run_goes_on():
    """sculpt-mcts bounded to 2 calls spends them on its root and the root's evaluation; its next call
    is refused inside the step, which answers with the tree so far (the root); the run's meter has
    calls left and is used again after."""
    ctx, meter = context(max_calls=50)
    mcts = strategies.build("sculpt-mcts", {"rollouts": 3, "k": 1, "max_calls": 2})
    step = asyncio.run(run_step(mcts, Problem("p", "What is 6 * 7?"), ctx, step="test"))
    assert step.result.stopped == "budget" and step.result.answer == "42"
    assert step.calls == 2 == meter.totals.calls
    [refused] = ctx.trace.of_type("budget_exceeded")
    assert refused["limit"] == "strategy_calls" and refused["cap"] == 2 and refused["within"] == [{"step": "test"}]
    again = asyncio.run(run_step(mcts, Problem("p", "What is 6 * 7?"), ctx, step="test"))
    assert again.calls == 2 and meter.totals.calls == 4


def test_the_runs_budget_spent_in_a_step_ends_the_run_not_only_the_step():
    ctx, meter = context(max_calls=3)
    mcts = strategies.build("sculpt-mcts", {"rollouts": 3, "k": 1})
    with pytest.raises(BudgetExceeded) as info:
        asyncio.run(run_step(mcts, Problem("p", "What is 6 * 7?"), ctx, step="test"))
    assert type(info.value) is BudgetExceeded  # the run's, not the step's own
    assert meter.totals.calls == 3


def test_a_steps_best_so_far_and_anytime_are_its_own():
    """The step strategy reports its best so far to its own record: the outer run's is untouched, so a
    budget stop of the outer run never answers with a step's result."""
    from thoughtloom.strategies.result import SoFar

    ctx, _ = context()
    outer = SoFar()
    ctx.so_far = outer
    asyncio.run(run_step(strategies.build("sculpt-mcts", {"rollouts": 1, "k": 1}), Problem("p", "q?"), ctx, step="t"))
    assert outer.make is None
