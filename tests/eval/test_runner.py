import asyncio
import json

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core import LMError, Problem, PromptTooLong
from thoughtloom.eval import EvalResources, EvalSettings, evaluate
from thoughtloom.lm import Budget
from thoughtloom.tasks import Example
from thoughtloom.testing import ScriptedLM

TASK = tasks.get("gsm8k")


def examples(n):
    return [Example(Problem(f"q{i}", f"What is {i} plus 1?"), str(i + 1)) for i in range(n)]


def adder(req):
    """Answers 'What is i plus 1?' right for even i, wrong for odd i."""
    q = req.messages[-1].content.rsplit("Question: What is ", 1)[1]
    i = int(q.split()[0])
    return f"The answer is: {i + 1 if i % 2 == 0 else i}"


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_results_summary_and_trace(tmp_path):
    lm = ScriptedLM(adder)
    summary = await evaluate(strategies.get("cot")(), TASK, examples(4), EvalResources(lm), tmp_path,
                             settings=EvalSettings(concurrency=2), meta={"model": "scripted"})
    records = read(tmp_path / "results.jsonl")
    assert sorted(r["id"] for r in records) == ["q0", "q1", "q2", "q3"]
    r0 = next(r for r in records if r["id"] == "q0")
    assert r0["prediction"] == "1" and r0["gold"] == "1" and r0["metrics"] == {"accuracy": 1.0}
    assert r0["usage"]["calls"] == 1 and r0["error"] is None and r0["latency_s"] >= 0
    assert summary["metrics"]["accuracy"] == 0.5 and summary["n"] == 4 and summary["complete"]
    assert summary["usage"]["calls"] == 4 and summary["this_run"]["new_calls"] == 4
    assert json.loads((tmp_path / "summary.json").read_text())["model"] == "scripted"
    events = read(tmp_path / "trace.jsonl")
    assert {e["example"] for e in events if e["type"] == "llm_call"} == {"q0", "q1", "q2", "q3"}


async def test_resume_skips_done_and_drops_partial_line(tmp_path):
    lm = ScriptedLM(adder)
    strat = strategies.get("cot")()
    await evaluate(strat, TASK, examples(3), EvalResources(lm), tmp_path)
    # Simulate a kill mid-write: a partial record and an orphan trace event.
    with (tmp_path / "results.jsonl").open("a") as fh:
        fh.write('{"id": "q3", "predic')
    with (tmp_path / "trace.jsonl").open("a") as fh:
        fh.write(json.dumps({"type": "llm_call", "example": "q4"}) + "\n")
    lm2 = ScriptedLM(adder)
    summary = await evaluate(strat, TASK, examples(5), EvalResources(lm2), tmp_path)
    ids = [r["id"] for r in read(tmp_path / "results.jsonl")]
    assert sorted(ids) == ["q0", "q1", "q2", "q3", "q4"] and len(ids) == 5
    assert lm2.calls == 2 and summary["this_run"]["examples"] == 2
    trace_ids = [e["example"] for e in read(tmp_path / "trace.jsonl")]
    assert trace_ids.count("q4") == 1  # the orphan was compacted away


async def test_example_errors_are_recorded_and_retryable(tmp_path):
    def flaky(req):
        if "What is 1 plus" in req.messages[-1].content:
            raise RuntimeError("strategy bug")
        return adder(req)

    strat = strategies.get("cot")()
    summary = await evaluate(strat, TASK, examples(3), EvalResources(ScriptedLM(flaky)), tmp_path)
    bad = [r for r in read(tmp_path / "results.jsonl") if r["error"]]
    assert len(bad) == 1 and "RuntimeError: strategy bug" in bad[0]["error"]
    assert summary["n_errors"] == 1 and bad[0]["metrics"] == {"accuracy": 0.0}
    lm = ScriptedLM(adder)
    await evaluate(strat, TASK, examples(3), EvalResources(lm), tmp_path,
                   settings=EvalSettings(retry_errors=True))
    assert lm.calls == 1
    assert [r["error"] for r in read(tmp_path / "results.jsonl")] == [None, None, None]


async def test_model_service_failure_stops_the_run_and_keeps_results(tmp_path):
    def dies(req):
        if "What is 2 plus" in req.messages[-1].content:
            raise LMError("server gone")
        return adder(req)

    with pytest.raises(LMError):
        await evaluate(strategies.get("cot")(), TASK, examples(4), EvalResources(ScriptedLM(dies)),
                       tmp_path, settings=EvalSettings(concurrency=1))
    ids = [r["id"] for r in read(tmp_path / "results.jsonl")]
    assert "q2" not in ids and {"q0", "q1"} <= set(ids)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["complete"] is False


async def test_a_prompt_too_long_fails_only_its_example(tmp_path):
    def overflow(req):
        if "What is 2 plus" in req.messages[-1].content:
            raise PromptTooLong("Requested tokens (4666) exceed context window of 4096")
        return adder(req)

    await evaluate(strategies.get("cot")(), TASK, examples(4), EvalResources(ScriptedLM(overflow)),
                   tmp_path, settings=EvalSettings(concurrency=1))
    records = {r["id"]: r for r in read(tmp_path / "results.jsonl")}
    assert len(records) == 4 and "PromptTooLong" in records["q2"]["error"]
    assert all(r["error"] is None for i, r in records.items() if i != "q2")


async def test_budget_applies_per_question(tmp_path):
    lm = ScriptedLM(lambda r: "The answer is: 1")
    strat = strategies.get("cot-sc")()
    await evaluate(strat, TASK, examples(3), EvalResources(lm), tmp_path,
                   settings=EvalSettings(concurrency=3, budget=Budget(max_calls=2)))
    assert [r["usage"]["calls"] for r in read(tmp_path / "results.jsonl")] == [2, 2, 2]


async def test_concurrency_overlaps_examples(tmp_path):
    active = {"now": 0, "peak": 0}

    class Slow(ScriptedLM):
        async def generate(self, requests):
            active["now"] += 1
            active["peak"] = max(active["peak"], active["now"])
            await asyncio.sleep(0.01)
            active["now"] -= 1
            return await super().generate(requests)

    await evaluate(strategies.get("cot")(), TASK, examples(8), EvalResources(Slow(adder)), tmp_path,
                   settings=EvalSettings(concurrency=4))
    assert active["peak"] == 4


async def test_a_truncated_reply_scores_as_no_answer_and_is_counted(tmp_path):
    from thoughtloom.core import Completion

    def cut_q1(req):  # q1's reply carries the right number but was cut off at max_tokens
        text = adder(req) if "What is 1 plus" not in req.messages[-1].content else "1 + 1 = 2. The answer is 2"
        return Completion(text, finish_reason="length" if "What is 1 plus" in req.messages[-1].content else "stop")

    summary = await evaluate(strategies.get("cot")(), TASK, examples(3), EvalResources(ScriptedLM(cut_q1)),
                             tmp_path)
    records = {r["id"]: r for r in read(tmp_path / "results.jsonl")}
    assert records["q1"]["truncated"] is True and records["q1"]["prediction"] == "2"
    assert records["q1"]["metrics"] == {"accuracy": 0.0} and records["q1"]["error"] is None
    assert records["q0"]["truncated"] is False and records["q0"]["metrics"] == {"accuracy": 1.0}
    assert summary["n_truncated"] == 1

    class Lenient(type(TASK)):
        score_truncated = True

    await evaluate(strategies.get("cot")(), Lenient(), examples(3), EvalResources(ScriptedLM(cut_q1)),
                   tmp_path / "lenient")
    lenient = {r["id"]: r for r in read(tmp_path / "lenient" / "results.jsonl")}
    assert lenient["q1"]["truncated"] is True and lenient["q1"]["metrics"] == {"accuracy": 1.0}
