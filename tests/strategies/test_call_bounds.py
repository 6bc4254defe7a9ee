"""Every strategy has a finite default bound on model calls (issue 11 §2), enforced by ``Strategy.run``,
which is also the one place a spent budget is caught (the run's best result so far, ``stopped="budget"``)."""

import ast
import dataclasses
from pathlib import Path

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Problem, Request
from thoughtloom.lm.meter import Budget, CallCap, Metered
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.interface import Strategy
from thoughtloom.strategies.result import Result
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


class _Counting(Strategy):
    """Asks one question at a time until the budget stops it; its best so far is the last reply."""

    name = "counting"

    async def solve(self, problem, ctx):
        replies: list[str] = []
        ctx.best_so_far(lambda: Result(answer=replies[-1] if replies else "", details={"asked": len(replies)}))
        while True:
            replies.append((await ctx.lm.generate([Request.of(problem.question)]))[0].text)


def _numbered_lm():
    calls = iter(range(1, 1000))
    return ScriptedLM(lambda req: str(next(calls)))


async def test_a_budget_stop_returns_the_best_so_far_the_strategy_reported():
    lm = Metered(_numbered_lm(), budget=Budget(max_calls=3))
    result = await _Counting().run(Problem("q", "next?"), Context(lm=lm, task=tasks.get("gsm8k")))
    # the function is called at the stop, so it sees the run's state then
    assert (result.answer, result.details, result.stopped) == ("3", {"asked": 3}, "budget")


async def test_without_a_best_so_far_a_budget_stop_is_no_answer():
    class Silent(Strategy):
        async def solve(self, problem, ctx):
            while True:
                await ctx.lm.generate([Request.of(problem.question)])

    lm = Metered(_numbered_lm(), budget=Budget(max_calls=2))
    result = await Silent().run(Problem("q", "?"), Context(lm=lm, task=tasks.get("gsm8k")))
    assert (result.answer, result.details, result.stopped) == ("", {}, "budget")


async def test_a_finished_run_is_not_stopped():
    cls = strategies.get("cot")
    result = await cls().run(Problem("q", "2+2?"), Context(lm=ScriptedLM(lambda r: "The answer is: 4"),
                                                            task=tasks.get("gsm8k")))
    assert result.answer == "4" and result.stopped is None


async def test_the_stop_is_caught_once_by_the_outermost_run():
    class Outer(Strategy):
        async def solve(self, problem, ctx):
            ctx.best_so_far(lambda: Result(answer="outer's"))
            inner = await _Counting().run(problem, ctx)  # the inner run does not catch the stop
            return Result(answer=f"after {inner.answer}")

    lm = Metered(_numbered_lm(), budget=Budget(max_calls=2))
    result = await Outer().run(Problem("q", "?"), Context(lm=lm, task=tasks.get("gsm8k")))
    # the outer run never went on "after" the stop; the latest best so far (the inner's) is the answer
    assert (result.answer, result.details, result.stopped) == ("2", {"asked": 2}, "budget")


def _catches_budget_stop(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ExceptHandler) and node.type is not None:
            names = {n.id if isinstance(n, ast.Name) else getattr(n, "attr", "") for n in ast.walk(node.type)}
            if names & {"BudgetExceeded", "ThoughtloomError", "Exception", "BaseException"}:
                return True
    return False


def test_no_strategy_catches_budget_exceeded_itself():
    root = Path(strategies.__file__).parent
    catching = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                      # Strategy.run (interface.py) catches the stop; anytime.py's catch is of a maker
                      # failing on a look between batches (it makes no calls, so it never sees a budget stop)
                      if p.name not in ("interface.py", "anytime.py") and _catches_budget_stop(p))
    assert catching == [], "a strategy reports its best so far (ctx.best_so_far); Strategy.run catches the stop"


def test_a_strategy_writes_solve_and_cannot_replace_the_run_around_it():
    """Strategy.run is the one wrapper (call cap, budget stop): a subclass that defines run
    would bypass it, so defining one is refused when the class is made, naming solve."""
    with pytest.raises(TypeError, match=r"defines run\(\); a strategy writes solve"):
        class Bypass(Strategy):
            async def run(self, problem, ctx):
                return Result(answer="uncapped")
    with pytest.raises(TypeError, match="abstract"):
        Strategy()  # solve is what a strategy must write


async def test_a_solve_calling_super_solve_runs_inside_one_cap():
    """super().solve is inside the same run: the subclass's cap (its config's max_calls)
    applies to the parent's calls, and the stop is caught once, with the latest best so far."""
    @dataclasses.dataclass(frozen=True)
    class Two:
        max_calls: int = 2

    class Child(_Counting):
        Config = Two

        async def solve(self, problem, ctx):
            ctx.best_so_far(lambda: Result(answer="child's"))
            return await super().solve(problem, ctx)

    trace = Trace()
    result = await Child().run(Problem("q", "?"), Context(lm=_numbered_lm(), task=tasks.get("gsm8k"), trace=trace))
    assert (result.answer, result.stopped) == ("2", "budget")
    assert [e["limit"] for e in trace.of_type("budget_exceeded")] == ["strategy_calls"]


def test_max_calls_is_one_number_from_the_cli_and_the_api():
    """Issue 28: "one meaning of max_calls (the budget and the strategy's own cap, as the API
    does)". --max-calls N sets both; --set max_calls wins for the strategy; without either the
    strategy keeps its own default (decomp: 300)."""
    from thoughtloom import api
    from thoughtloom.cli.options import RunOptions

    assert RunOptions(max_calls=2000).strategy("decomp").config.max_calls == 2000
    assert RunOptions(max_calls=2000).spec().budget().max_calls == 2000
    assert RunOptions(max_calls=2000, sets=["max_calls=50"]).strategy("decomp").config.max_calls == 50
    assert RunOptions().strategy("decomp").config.max_calls == 300
    assert RunOptions().spec().budget().max_calls == 1000  # the runner's default (DEFAULT_MAX_CALLS)
    assert api.keyword_spec(max_calls=2000).strategy("decomp").config.max_calls == 2000
    assert api.keyword_spec(max_calls=2000).budget().max_calls == 2000
    assert api.keyword_spec().strategy("decomp").config.max_calls == 300


async def test_a_config_without_max_calls_is_still_bounded():
    """Issue 42: "Strategy.run reads max_calls that way [getattr], so a config without it silently has
    no cap". A config that declares no max_calls field, on a context with no budget, is capped at
    DEFAULT_MAX_CALLS (under a runner budget, that budget bounds it: test_runner_boundary.py)."""
    from thoughtloom.strategies.interface import DEFAULT_MAX_CALLS

    @dataclasses.dataclass(frozen=True)
    class Bare:
        n: int = 1

    class Forever(Strategy):
        Config = Bare

        async def solve(self, problem, ctx):
            for _ in range(DEFAULT_MAX_CALLS + 5):  # a runaway loop: only its own bound can stop it here
                await ctx.lm.generate([Request.of(problem.question)])
            return Result(answer="never stopped")

    lm = ScriptedLM(lambda req: "again")
    result = await Forever().run(Problem("q", "loop?"), Context(lm=lm, task=tasks.get("gsm8k")))
    assert Forever().call_bound() is None
    assert result.stopped == "budget" and len(lm.requests) == DEFAULT_MAX_CALLS
