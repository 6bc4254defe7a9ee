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


# --- the small parts a step is made of (each found untested by benchmarks/mutation.py) ---

def test_a_spec_renders_as_it_was_written_and_is_frozen():
    import dataclasses

    spec = parse_spec("cot-sc n=3 temperature=0.5", "bind")
    assert spec.render() == "cot-sc n=3 temperature=0.5"
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "io"


def test_a_bad_option_word_hints_with_the_steps_own_name():
    with pytest.raises(ConfigError) as info:
        parse_spec("sculpt-mcts rollouts", "bind")
    assert info.value.hint == "e.g. sculpt-mcts n=3"


def test_a_steps_model_reports_the_tighter_of_its_own_bound_and_the_runs():
    """A step strategy that sizes its batch to the budget left (cot-sc) must see both bounds."""
    from thoughtloom.strategies.steps import _StepLM, _Tally

    trace = Trace()
    ctx = Context(lm=ScriptedLM(["x"]), task=tasks.get("gsm8k"), trace=trace)

    def step_lm(bound, sent, run_calls):
        inner = ScriptedLM(["x"], model_id="the-run") if run_calls is None else \
            Metered(ScriptedLM(["x"], model_id="the-run"), Budget(max_calls=run_calls), trace=trace)
        return _StepLM(inner, _Tally(bound=bound, sent=sent), ctx)

    assert step_lm(None, 0, None).model_id == "the-run"
    assert step_lm(None, 0, None).remaining_calls() is None
    assert step_lm(5, 2, None).remaining_calls() == 3
    assert step_lm(2, 5, None).remaining_calls() == 0
    assert step_lm(None, 0, 4).remaining_calls() == 4
    assert step_lm(5, 2, 1).remaining_calls() == 1
    assert step_lm(5, 4, 9).remaining_calls() == 1


def test_a_step_run_is_frozen():
    import dataclasses

    from thoughtloom.strategies.steps import StepRun

    field = dataclasses.fields(StepRun)[0].name
    run = StepRun(*[None] * len(dataclasses.fields(StepRun)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(run, field, None)


async def test_the_first_failing_step_is_raised_as_itself():
    """all_of: one step fails, the others are cancelled, and the caller sees that step's own error
    (not an exception group, not another step's)."""
    from thoughtloom.strategies.steps import all_of

    async def fine():
        await asyncio.sleep(0)
        return 1

    async def fails():
        raise BudgetExceeded("spent")

    with pytest.raises(BudgetExceeded, match="spent"):
        await all_of([fine(), fails()])
    assert await all_of([fine(), fine()]) == [1, 1]
