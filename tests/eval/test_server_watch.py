"""A dead server stops the eval within 60 s and a frozen one within the read timeout (issue 40: 5.5
and 10.5 minutes, most of them showing only "16 in flight"), by probing the server itself."""

import asyncio
import json
import time

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core import Problem
from thoughtloom.eval import EvalResources, evaluate
from thoughtloom.eval.breaker import BreakerSettings, CircuitBreaker, ServerDown
from thoughtloom.eval.runner import EvalSettings
from thoughtloom.lm import Retrying
from thoughtloom.lm.limits import Limited
from thoughtloom.lm.openai_compat import OpenAICompatLM
from thoughtloom.lm.retry import RetryStats
from thoughtloom.tasks import Example
from thoughtloom.testing.fake_server import FakeOpenAIServer


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class Probe:
    def __init__(self, why):
        self.why, self.asked = why, 0

    async def probe(self):
        self.asked += 1
        return self.why


async def _seconds_to_stop(breaker, clock, in_flight, *, limit=600):
    """Fake seconds, in the executor's one-second looks, until the watch raises ServerDown."""
    for _ in range(limit):
        clock.t += 1.0
        try:
            await breaker.watch(in_flight)
        except ServerDown as exc:
            return clock.t, str(exc)
        await asyncio.sleep(0)  # the probe runs beside the examples
    return None, ""


async def test_by_default_a_refusing_server_stops_the_eval_within_60_s_of_the_pause():
    clock = Clock()
    breaker = CircuitBreaker(BreakerSettings(), retries=RetryStats(answered=5), clock=clock)
    breaker.probe = Probe("cannot connect (ConnectError: [Errno 111] Connection refused)")
    breaker.opened_at = clock.t = 4.0  # three examples' retries spent on a server that died at 0 s
    stopped, said = await _seconds_to_stop(breaker, clock, 0)
    assert stopped is not None and stopped <= 60.0, stopped
    assert said.startswith("the server is down: cannot connect") and "\n" not in said
    breaker.down_since, breaker.down_reason, clock.t = 10.0, "cannot connect (x)", 22.0  # the status on the way
    assert breaker.status() == "server down: cannot connect (x), 12 s (stops at 45 s)"


async def test_by_default_a_frozen_server_stops_the_eval_within_the_300_s_read_timeout():
    clock = Clock()
    breaker = CircuitBreaker(BreakerSettings(), retries=RetryStats(answered=5), clock=clock)
    breaker.probe = Probe("no reply within 10 s")
    stopped, said = await _seconds_to_stop(breaker, clock, 16)  # 16 calls in flight, none answered
    assert stopped is not None and stopped < 300.0, stopped
    assert said.startswith("the server is frozen: no reply within 10 s")


async def test_a_slow_server_that_answers_probes_is_never_stopped():
    clock = Clock()
    breaker = CircuitBreaker(BreakerSettings(), retries=RetryStats(answered=5), clock=clock)
    breaker.probe = probe = Probe(None)
    stopped, _ = await _seconds_to_stop(breaker, clock, 16, limit=400)
    assert stopped is None and probe.asked > 10 and breaker.status() == ""


def _questions(n):
    return [Example(Problem(f"q{i}", f"What is {i} plus 1?"), str(i + 1)) for i in range(n)]


def _lm(base, timeout_s=300.0):
    return Retrying(Limited(OpenAICompatLM("m", base, timeout_s=timeout_s), max_concurrent=8),
                    initial_s=0.001, max_s=0.001)


FAST = BreakerSettings(trip_after=2, probe_s=0.1, probe_max_s=0.2, quiet_s=1.0, dead_s=2.0, probe_every_s=0.3)


@pytest.mark.integration  # the loopback fake server (rule 11)
@pytest.mark.parametrize("how", ["kill", "freeze"])
async def test_a_dead_or_frozen_server_stops_the_eval_at_the_watchs_pace_with_records_kept(tmp_path, how):
    with FakeOpenAIServer(lambda prompt: "The answer is: 1") as server:
        done = []

        class Watch:
            def start(self, stats): ...

            def update(self, record, stats):
                done.append(record["id"])
                if len(done) == 5:
                    getattr(server, how)()

        t0 = time.monotonic()
        with pytest.raises(ServerDown, match="down: cannot connect" if how == "kill" else "frozen: no reply"):
            await evaluate(strategies.get("cot")(), tasks.get("gsm8k"), _questions(40),
                           EvalResources(_lm(server.base_url)), tmp_path,
                           settings=EvalSettings(concurrency=4, breaker=FAST), progress=Watch())
        took = time.monotonic() - t0
        server.thaw()
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(records) >= 5 and not any(r["error"] for r in records)
    assert took < 60, took  # a bound on a hang, not a speed figure: the calls' own timeout is 300 s
