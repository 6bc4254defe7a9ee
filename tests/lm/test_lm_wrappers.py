import asyncio
import time

import pytest

from thoughtloom.core import BudgetExceeded, LMError, RateLimitError, Request, Trace, TransientError
from thoughtloom.core.protocols import Budgeted
from thoughtloom.lm import Budget, Limited, Metered, Retrying
from thoughtloom.lm.meter import CallCap, remaining_calls
from thoughtloom.testing import ScriptedLM


async def test_retry_transient_then_success():
    inner = ScriptedLM([TransientError("blip"), TransientError("blip"), "ok"])
    lm = Retrying(inner, attempts=3, initial_s=0.001, max_s=0.01)
    assert (await lm.generate([Request.of("q")]))[0].text == "ok"
    assert inner.calls == 3


async def test_retry_gives_up_after_attempts():
    inner = ScriptedLM([TransientError("down")] * 5)
    lm = Retrying(inner, attempts=2, initial_s=0.001, max_s=0.01)
    with pytest.raises(TransientError):
        await lm.generate([Request.of("q")])
    assert inner.calls == 2


async def test_non_retryable_errors_are_not_retried():
    inner = ScriptedLM([LMError("bad request"), "never"])
    with pytest.raises(LMError):
        await Retrying(inner, attempts=5, initial_s=0.001).generate([Request.of("q")])
    assert inner.calls == 1


async def test_rate_limit_waits_at_least_retry_after():
    inner = ScriptedLM([RateLimitError("slow down", retry_after=0.2), "ok"])
    t0 = time.perf_counter()
    await Retrying(inner, attempts=2, initial_s=0.001, max_s=1).generate([Request.of("q")])
    assert time.perf_counter() - t0 >= 0.2


async def test_batch_retries_only_the_failed_request():
    replies = {"a": "A", "b": TransientError("once")}
    seen = []

    def script(req):
        key = req.messages[0].content
        seen.append(key)
        reply = replies[key]
        if isinstance(reply, Exception):
            replies[key] = "B"
        return reply

    out = await Retrying(ScriptedLM(script), initial_s=0.001).generate([Request.of("a"), Request.of("b")])
    assert [c.text for c in out] == ["A", "B"]
    assert seen.count("a") == 1 and seen.count("b") == 2


class SlowLM:
    model_id = "slow"

    def __init__(self):
        self.active = 0
        self.peak = 0

    async def generate(self, requests):
        self.active += 1
        self.peak = max(self.peak, self.active)
        await asyncio.sleep(0.01)
        self.active -= 1
        return await ScriptedLM(lambda r: "x").generate(requests)

    async def aclose(self):
        pass


async def test_limited_caps_concurrency():
    inner = SlowLM()
    lm = Limited(inner, max_concurrent=3)
    out = await lm.generate([Request.of(str(i)) for i in range(12)])
    assert len(out) == 12 and inner.peak == 3


async def test_rpm_limit_spaces_requests():
    lm = Limited(ScriptedLM(lambda r: "x"), max_concurrent=10, rpm=1200)  # one per 50 ms
    t0 = time.perf_counter()
    await lm.generate([Request.of(str(i)) for i in range(9)])
    assert time.perf_counter() - t0 >= 0.3


async def test_metered_budget_calls():
    trace = Trace()
    lm = Metered(ScriptedLM(lambda r: "x"), budget=Budget(max_calls=3), trace=trace)
    await lm.generate([Request.of("a"), Request.of("b")])
    assert lm.remaining_calls() == 1
    with pytest.raises(BudgetExceeded):
        await lm.generate([Request.of("c"), Request.of("d")])
    assert lm.totals.calls == 2
    assert trace.of_type("budget_exceeded")[0]["limit"] == "calls"
    await lm.generate([Request.of("e")])
    assert lm.remaining_calls() == 0


async def test_remaining_calls_is_read_from_the_budgeted_wrappers_only():
    """``remaining_calls`` is the optional ``Budgeted`` part of the LM protocol: the
    per-question wrappers have it, a backend does not (no known bound)."""
    backend = ScriptedLM(lambda r: "x")
    metered = Metered(backend, budget=Budget(max_calls=5))
    capped = CallCap(metered, max_calls=3, trace=Trace())
    assert [isinstance(lm, Budgeted) for lm in (backend, metered, capped)] == [False, True, True]
    assert remaining_calls(backend) is None and remaining_calls(Metered(backend)) is None
    await capped.generate([Request.of("a")])
    assert (remaining_calls(capped), remaining_calls(metered)) == (2, 4)
    await metered.generate([Request.of("b")] * 3)  # the runner's budget is now the tighter one
    assert remaining_calls(capped) == 1


async def test_metered_tells_in_flight_of_each_batch_sent_and_back():
    told = []
    lm = Metered(ScriptedLM(["a", "b", LMError("down")]), budget=Budget(max_calls=3), in_flight=told.append)
    await lm.generate([Request.of("1"), Request.of("2")])
    with pytest.raises(LMError):
        await lm.generate([Request.of("3")])
    with pytest.raises(BudgetExceeded):  # refused before it goes out: nothing in flight
        await lm.generate([Request.of("4"), Request.of("5")])
    assert told == [2, -2, 1, -1]


async def test_metered_budget_tokens_and_trace():
    trace = Trace(example="ex")
    lm = Metered(ScriptedLM(lambda r: "y" * 40), budget=Budget(max_tokens=15), trace=trace)
    await lm.generate([Request.of("q" * 8)])  # "user: qqqqqqqq": 3 prompt + 10 completion tokens
    assert lm.totals.total_tokens == 13
    await lm.generate([Request.of("q")])
    with pytest.raises(BudgetExceeded):
        await lm.generate([Request.of("q")])
    calls = trace.of_type("llm_call")
    assert len(calls) == 2 and calls[0]["example"] == "ex"
    assert calls[0]["completion_tokens"] == 10 and calls[0]["text"] == "y" * 40
    assert len(calls[0]["request_hash"]) == 64
