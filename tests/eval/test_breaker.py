"""A flaky server costs an example; a dead one pauses the eval, is probed, and stops it only after a bounded wait."""

import json
from collections import deque

import httpx
import pytest
import respx

from thoughtloom import strategies, tasks
from thoughtloom.core import Problem
from thoughtloom.core.errors import RateLimitError, TransientError
from thoughtloom.eval import EvalResources, evaluate
from thoughtloom.eval.breaker import BreakerSettings, CircuitBreaker, ServerDown, ServerFailed
from thoughtloom.eval.runner import EvalSettings
from thoughtloom.lm import Retrying
from thoughtloom.lm.limits import Limited
from thoughtloom.lm.openai_compat import OpenAICompatLM
from thoughtloom.lm.retry import RetryStats
from thoughtloom.tasks import Example
from thoughtloom.testing.fake_server import FakeOpenAIServer, Faults

BASE = "http://127.0.0.1:8999/v1"
URL = f"{BASE}/chat/completions"


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def failure(name: str, exc: Exception | None = None) -> tuple[Example, ServerFailed]:
    example = Example(Problem(name, "q"), "1")
    record = {"id": name, "error": "TransientError: down"}
    return example, ServerFailed((record, []), exc or TransientError("cannot reach"))


def test_before_the_server_answered_once_a_failure_is_fatal():
    breaker = CircuitBreaker(BreakerSettings())
    example, failed = failure("a")
    with pytest.raises(TransientError):
        breaker.failed(example, failed, deque())
    # one call answered anywhere in the stack is enough to know the server works
    breaker = CircuitBreaker(BreakerSettings(), retries=RetryStats(answered=1))
    breaker.failed(example, failed, deque())
    assert [e.problem.id for e, _ in breaker.held] == ["a"]


def test_an_isolated_failure_is_its_examples_error_once_another_example_succeeds():
    clock = Clock()
    breaker = CircuitBreaker(BreakerSettings(trip_after=3), clock=clock)
    recorded = []
    breaker.ok(recorded.append)
    example, failed = failure("a")
    breaker.failed(example, failed, deque())
    assert recorded == [] and not breaker.open  # held until something says whether the server works
    breaker.ok(recorded.append)
    assert [r["id"] for r, _ in recorded] == ["a"] and breaker.held == []


def test_k_failures_in_a_row_pause_requeue_probe_and_resume():
    clock = Clock()
    breaker = CircuitBreaker(BreakerSettings(trip_after=3, probe_s=1.0, probe_max_s=8.0), clock=clock)
    breaker.ok(lambda o: None)
    todo: deque = deque()
    for name in "abc":
        breaker.failed(*failure(name), todo)
    assert breaker.open and [e.problem.id for e in todo] == ["a", "b", "c"]  # an outage costs no example
    assert breaker.room(16, 0) == 0 and 1.0 <= breaker.wait_s() <= 2.0  # first pause: probe_s plus jitter
    clock.t = 2.0
    assert breaker.room(16, 1) == 0  # the probe waits for the examples still in flight
    assert breaker.room(16, 0) == 1 and breaker.room(16, 1) == 0  # one probe, alone
    example = todo.popleft()
    breaker.failed(example, failure(example.problem.id)[1], todo)  # the probe failed: back in the queue
    assert todo[0] is example and 2.0 <= breaker.wait_s() <= 3.0  # the pause grows (2 s + jitter)
    clock.t = 10.0
    assert breaker.room(16, 0) == 1
    breaker.ok(lambda o: None)  # the probe was answered
    assert not breaker.open and breaker.room(16, 0) == 16 and breaker.trips == 1
    assert breaker.facts()["server_paused_s"] == 10.0


def test_silence_pauses_even_below_k_and_retry_after_is_honoured():
    clock = Clock()
    breaker = CircuitBreaker(BreakerSettings(trip_after=5, silence_s=30.0, probe_s=1.0), clock=clock)
    breaker.ok(lambda o: None)
    clock.t = 31.0
    breaker.failed(*failure("a", RateLimitError("429", retry_after=20.0)), deque())
    assert breaker.open and breaker.wait_s() == 20.0  # the server said when to come back


def test_the_wait_is_bounded_and_says_the_command_resumes():
    clock = Clock()
    breaker = CircuitBreaker(BreakerSettings(trip_after=1, max_wait_s=60.0), clock=clock)
    breaker.ok(lambda o: None)
    todo: deque = deque()
    breaker.failed(*failure("a"), todo)
    clock.t = 61.0
    with pytest.raises(ServerDown) as info:
        breaker.failed(*failure("b"), todo)
    assert "61 s" in str(info.value) and "same command resumes" in str(info.value) and "\n" not in str(info.value)


def test_status_line_says_retries_in_flight_and_the_pause():
    clock = Clock()
    stats = RetryStats(retrying=3, answered=1)
    breaker = CircuitBreaker(BreakerSettings(trip_after=1), retries=stats, clock=clock)
    assert breaker.status() == "server failing: 3 retries in flight"
    breaker.failed(*failure("a"), deque())
    clock.t = 12.0
    assert breaker.status() == "server failing: 3 retries in flight, paused 12 s"
    stats.retrying = 0
    breaker.ok(lambda o: None)
    assert breaker.status() == ""


def reply(text="The answer is: 1"):
    return {"choices": [{"message": {"content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2}}


def questions(n):
    return [Example(Problem(f"q{i}", f"What is {i} plus 1?"), str(i + 1)) for i in range(n)]


def fast_lm(base=BASE):
    return Retrying(Limited(OpenAICompatLM("m", base), max_concurrent=8), initial_s=0.001, max_s=0.001)


@respx.mock
async def test_exhausted_retries_mid_run_cost_one_example_and_retry_errors_reruns_it(tmp_path):
    broken = {"on": True}

    def handler(request):
        question = json.loads(request.content)["messages"][-1]["content"]
        if broken["on"] and "What is 3 plus" in question:
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")
        return httpx.Response(200, json=reply())

    respx.post(URL).mock(side_effect=handler)
    cot, gsm8k = strategies.get("cot")(), tasks.get("gsm8k")
    summary = await evaluate(cot, gsm8k, questions(8), EvalResources(fast_lm()), tmp_path,
                             settings=EvalSettings(concurrency=2))
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "results.jsonl").read_text().splitlines())}
    assert summary["complete"] and summary["n"] == 8 and summary["n_errors"] == 1
    assert records["q3"]["error"].startswith("TransientError: cannot reach") and len(records) == 8
    assert records["q3"]["metrics"] == {"accuracy": 0.0}  # scored as no answer, as every errored example is
    assert summary["this_run"]["retries"] == 3 and summary["this_run"]["server_pauses"] == 0
    broken["on"] = False
    summary = await evaluate(cot, gsm8k, questions(8), EvalResources(fast_lm()), tmp_path,
                             settings=EvalSettings(concurrency=2, retry_errors=True))
    assert summary["n_errors"] == 0 and summary["this_run"]["examples"] == 1


@pytest.mark.integration  # the loopback fake server (rule 11)
async def test_an_outage_mid_run_pauses_and_resumes_without_losing_an_example(tmp_path):
    with FakeOpenAIServer(lambda prompt: "The answer is: 1", latency_s=0.01) as server:
        lm = fast_lm(server.base_url)
        seen = []

        class Watch:
            def start(self, stats): ...

            def update(self, record, stats):
                seen.append(record["id"])
                if len(seen) == 10:
                    server.down()

            def refresh(self, stats):
                if stats.server.open and stats.server.clock() - stats.server.opened_at > 1.0:
                    server.up()  # back after a second of pause

        settings = EvalSettings(concurrency=4, breaker=BreakerSettings(trip_after=2, probe_s=0.2, probe_max_s=0.5))
        summary = await evaluate(strategies.get("cot")(), tasks.get("gsm8k"), questions(40), EvalResources(lm),
                                 tmp_path, settings=settings, progress=Watch())
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert summary["complete"] and len(records) == len({r["id"] for r in records}) == 40
    assert summary["n_errors"] == 0 and summary["this_run"]["server_pauses"] >= 1
    assert summary["this_run"]["server_paused_s"] >= 1.0


@pytest.mark.integration  # the loopback fake server (rule 11)
async def test_a_server_that_stays_dead_stops_the_eval_after_the_wait_with_records_kept(tmp_path):
    with FakeOpenAIServer(lambda prompt: "The answer is: 1") as server:
        done = []

        class Watch:
            def start(self, stats): ...

            def update(self, record, stats):
                done.append(record["id"])
                if len(done) == 5:
                    server.kill()

        settings = EvalSettings(concurrency=2, breaker=BreakerSettings(trip_after=2, max_wait_s=0.5, probe_s=0.1))
        with pytest.raises(ServerDown):
            await evaluate(strategies.get("cot")(), tasks.get("gsm8k"), questions(30),
                           EvalResources(fast_lm(server.base_url)), tmp_path, settings=settings, progress=Watch())
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(records) >= 5 and not any(r["error"] for r in records)  # the outage cost no record


@pytest.mark.integration  # the loopback fake server (rule 11)
async def test_a_flaky_server_is_survived_with_every_question_recorded_once(tmp_path):
    with FakeOpenAIServer(lambda prompt: "The answer is: 1", faults=Faults(rate=0.3, seed=1, retry_after_s=0)) as s:
        summary = await evaluate(strategies.get("cot")(), tasks.get("gsm8k"), questions(60),
                                 EvalResources(fast_lm(s.base_url)), tmp_path, settings=EvalSettings(concurrency=4))
        faulted = sum(s.faulted.values())
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert summary["complete"] and len({r["id"] for r in records}) == len(records) == 60
    assert faulted > 5 and summary["this_run"]["retries"] >= faulted - summary["n_errors"] * 4
    # an error only where one call met four faults in a row
    assert all(r["error"].startswith(("TransientError", "RateLimitError")) for r in records if r["error"])


def test_the_eval_bar_shows_the_servers_state():
    from thoughtloom.eval.progress import RunStats
    from thoughtloom.eval.rich_progress import RichProgress

    clock = Clock()
    breaker = CircuitBreaker(BreakerSettings(trip_after=1), retries=RetryStats(retrying=2, answered=1), clock=clock)
    breaker.failed(*failure("a"), deque())
    clock.t = 7.0
    info = RichProgress("accuracy").info(RunStats(total=10, server=breaker), elapsed_s=1.0)
    assert "server failing: 2 retries in flight, paused 7 s" in info


def test_retry_after_is_read_as_seconds_or_an_http_date():
    import email.utils
    import time

    from thoughtloom.lm.openai_compat import retry_after_s

    assert retry_after_s("3") == 3.0 and retry_after_s("-5") == 0.0
    assert retry_after_s(None) is None and retry_after_s("soon") is None and retry_after_s("nan") is None
    assert 25 < retry_after_s(email.utils.formatdate(time.time() + 30, usegmt=True)) <= 30
