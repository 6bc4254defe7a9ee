"""Everything that touches one example's model text stays inside its record."""

import asyncio
import json
from dataclasses import dataclass

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core import ConfigError, LMError, Problem
from thoughtloom.core.errors import CallTimeout, MalformedReply
from thoughtloom.core.options import option
from thoughtloom.eval import DEFAULT_MAX_CALLS, EvalResources, EvalSettings, evaluate
from thoughtloom.lm import Budget
from thoughtloom.strategies import Result, Strategy
from thoughtloom.tasks import Example
from thoughtloom.testing import ScriptedLM

GSM = tasks.get("gsm8k")


def examples(n):
    return [Example(Problem(f"q{i}", f"What is {i} plus 1?"), str(i + 1)) for i in range(n)]


def read(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def by_id(path):
    return {r["id"]: r for r in read(path)}


class Echo(Strategy):
    """Answers with the model's reply, whatever it is, and keeps it in details."""

    name = "echo"

    async def solve(self, problem, ctx):
        from thoughtloom.core import Request

        [c] = await ctx.lm.generate([Request.of(problem.question)])
        return Result(answer=c.text, details={"raw": c.text})


class ScoreTask(type(GSM)):
    """gsm8k whose scorer trips on chosen predictions, like a parser of hostile text."""

    def score(self, prediction, gold):
        if prediction == "raise":
            raise RecursionError("maximum recursion depth exceeded")
        if prediction == "inf":
            return {"accuracy": float("inf")}
        if prediction == "nan":
            return {"accuracy": float("nan")}
        return super().score(prediction, gold)


async def test_hostile_replies_cost_one_record_each(tmp_path):
    replies = {"q0": "raise", "q1": "inf", "q2": "nan", "q3": "lone \ud83d surrogate", "q4": "5"}

    def reply(req):
        i = req.messages[-1].content.split()[2]
        return replies[f"q{i}"]

    task = ScoreTask()
    summary = await evaluate(Echo(), task, examples(5), EvalResources(ScriptedLM(reply)), tmp_path)
    records = by_id(tmp_path / "results.jsonl")
    assert len(records) == 5 and summary["complete"] and summary["n_errors"] == 3
    assert "RecursionError" in records["q0"]["error"]
    assert "not a finite number" in records["q1"]["error"] and "not a finite number" in records["q2"]["error"]
    assert records["q1"]["metrics"] == {"accuracy": 0.0}  # the scores of no answer
    assert records["q3"]["error"] is None and records["q3"]["prediction"] == "lone \ufffd surrogate"
    assert records["q4"]["metrics"] == {"accuracy": 1.0}
    trace = (tmp_path / "trace.jsonl").read_text(encoding="utf-8")  # encodable, so it read back
    assert "\ufffd" in trace


async def test_an_unwritable_result_becomes_an_error_record(tmp_path):
    class Huge(Strategy):
        name = "huge"

        async def solve(self, problem, ctx):
            return Result(answer="1", details={"n": 10 ** 5000})  # past int->str's 4,300 digits

    await evaluate(Huge(), GSM, examples(2), EvalResources(ScriptedLM([])), tmp_path)
    records = read(tmp_path / "results.jsonl")
    assert len(records) == 2
    assert all("unwritable record" in r["error"] and r["details"] == {} for r in records)


async def test_failing_task_report_still_writes_the_summary(tmp_path):
    class BadReport(type(GSM)):
        def report(self, records):
            raise ValueError("report chokes on a prediction")

    summary = await evaluate(strategies.get("cot")(), BadReport(), examples(2),
                             EvalResources(ScriptedLM(lambda r: "The answer is: 1")), tmp_path)
    assert summary["complete"] and "report chokes" in summary["task_report_error"]


@pytest.mark.parametrize("error", [MalformedReply("malformed reply from x (no choices)"),
                                   CallTimeout("no reply from x within 5 s")])
async def test_malformed_or_timed_out_call_is_per_example(tmp_path, error):
    def reply(req):
        if "What is 1 plus" in req.messages[-1].content:
            raise error
        return "The answer is: 1"

    summary = await evaluate(strategies.get("cot")(), GSM, examples(3), EvalResources(ScriptedLM(reply)), tmp_path)
    records = by_id(tmp_path / "results.jsonl")
    assert len(records) == 3 and summary["complete"]
    assert type(error).__name__ in records["q1"]["error"]


async def test_service_failure_is_still_fatal(tmp_path):
    with pytest.raises(LMError):
        await evaluate(strategies.get("cot")(), GSM, examples(2),
                       EvalResources(ScriptedLM(lambda r: LMError("bad credentials"))), tmp_path)


async def test_runaway_strategy_stops_at_the_default_call_cap(tmp_path):
    class Runaway(Strategy):
        name = "runaway"

        async def solve(self, problem, ctx):
            from thoughtloom.core import Request

            while True:  # a decomposer that keeps calling its own program
                await ctx.lm.generate([Request.of(problem.question)])

    assert EvalSettings().budget.max_calls == DEFAULT_MAX_CALLS
    await evaluate(Runaway(), GSM, examples(1), EvalResources(ScriptedLM(lambda r: "x")), tmp_path)
    [record] = read(tmp_path / "results.jsonl")
    # a spent budget is a stop, not an error: the strategy's best answer so far (none here)
    assert record["stopped"] == "budget" and record["error"] is None and record["prediction"] == ""
    assert record["usage"]["calls"] == DEFAULT_MAX_CALLS
    assert json.loads((tmp_path / "summary.json").read_text())["n_budget_stopped"] == 1
    # another budget is another config: resuming with it is refused unless forced (tests/eval/test_identity.py)
    await evaluate(Runaway(), GSM, examples(2), EvalResources(ScriptedLM(lambda r: "x")), tmp_path,
                   settings=EvalSettings(budget=Budget(max_calls=DEFAULT_MAX_CALLS + 500)), force=True)
    assert read(tmp_path / "results.jsonl")[1]["usage"]["calls"] == DEFAULT_MAX_CALLS + 500  # the user raised it


async def test_example_deadline_is_an_error_record(tmp_path):
    class Slow(ScriptedLM):
        async def generate(self, requests):
            if "What is 0 plus" in requests[0].messages[-1].content:
                await asyncio.sleep(30)
            return await super().generate(requests)

    summary = await evaluate(strategies.get("cot")(), GSM, examples(2), EvalResources(Slow(lambda r: "The answer is: 2")),
                             tmp_path, settings=EvalSettings(example_timeout_s=0.2))
    records = by_id(tmp_path / "results.jsonl")
    assert "ExampleTimeout" in records["q0"]["error"] and "0.2 s" in records["q0"]["error"]
    assert records["q1"]["error"] is None and summary["complete"]


@dataclass(frozen=True)
class PlainConfig:
    """A user's config: declares its bound, but is a plain dataclass (not checked when made)."""

    n: int = option(3, min=1)


class Counted(Echo):
    name = "counted"
    Config = PlainConfig


async def test_strategy_options_are_range_checked_before_any_call(tmp_path):
    """Ours refuse a bad value when made; a plain dataclass config is checked by the runner before any call."""
    lm = ScriptedLM(lambda r: "x")
    with pytest.raises(ConfigError, match="option n: 0"):
        strategies.get("cot-sc").Config(n=0)
    with pytest.raises(ConfigError, match=r"bad value for counted option n: 0 \(must be >= 1\)"):
        await evaluate(Counted(PlainConfig(n=0)), GSM, examples(1), EvalResources(lm), tmp_path)
    assert lm.calls == 0
