"""The circuit breaker: a flaky server costs an example now and then, a dead one pauses the eval.

Once a call's retries (:class:`~thoughtloom.lm.retry.Retrying`) are spent on
a server failure (a refused or cut connection, HTTP 429/5xx), its example
raises :class:`ServerFailed` out of the per-example boundary with its error
record made. The executor hands it to :class:`CircuitBreaker`, which tells a
flaky server from a dead one by what the other examples do:

- **before the server has answered once in this run** the failure is fatal,
  as it always was: a wrong URL or a server not started is one line
  (``cannot reach ... (is the server running? ...)``), at once;
- **closed** (the server answers): the failed example is *held*. The next
  example that finishes releases it as its error record (counted in the
  summary, rerun by ``--retry-errors``): the server is fine, that call was
  unlucky;
- **open**: after ``trip_after`` examples in a row failed on the server, or
  none was answered for ``silence_s`` seconds while failures came in, no new
  example starts and the held ones go back to the queue (an outage costs no
  example). The breaker then *probes*: it lets one example through, after a
  pause that grows exponentially with jitter (tenacity's) from ``probe_s`` to
  ``probe_max_s`` and is never shorter than the server's last ``Retry-After``.
  The probe goes out alone, once the examples in flight are back; the first answered closes the breaker and the eval goes on at full
  concurrency; a probe that fails goes back to the queue;
- after ``max_wait_s`` open, the eval stops with :class:`ServerDown` (one
  line; every finished record is on disk and the same command resumes).

The wait is for a server that is there but failing (429s, 5xx). A server
that is not there at all is found sooner by asking it (:meth:`CircuitBreaker.watch`,
for a backend that can: :class:`~thoughtloom.core.protocols.Probed`):
while the breaker is open, or while examples are in flight and no call has
been answered for ``quiet_s`` seconds, the server is probed (``GET /models``,
no model call) every ``probe_every_s``. A probe that gets any HTTP reply
says the server is alive (slow calls are then only slow); when probes have
failed for ``dead_s`` seconds the eval stops with :class:`ServerDown`,
saying which: **down** (the connection refused: about 50 s after a server
dies, by default) or **frozen** (connections taken, nothing answered: about
``quiet_s + dead_s`` = 75 s, within the 300 s read timeout of one call).

:meth:`CircuitBreaker.status` is the progress line's part
("server failing: 3 retries in flight, paused 12 s").
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable

from tenacity import wait_exponential_jitter

from ..core.errors import CallTimeout, LMError, MalformedReply, TransientError
from ..core.protocols import Probed
from ..lm.retry import RetryStats
from ..tasks.base import Example
from .results import RecordAndTrace


@dataclass(frozen=True)
class BreakerSettings:
    """When a failing server pauses an eval, and for how long (``eval --server-*`` options)."""

    trip_after: int = 3  # examples in a row failing on the server
    silence_s: float = 60.0  # or: seconds with failures and no answered example
    max_wait_s: float = 300.0  # seconds paused before the eval stops
    probe_s: float = 1.0  # first pause before a probe
    probe_max_s: float = 30.0  # longest pause between probes
    quiet_s: float = 30.0  # seconds with calls in flight and none answered before the server is asked
    dead_s: float = 45.0  # seconds of unanswered server probes before the eval stops (down or frozen)
    probe_every_s: float = 5.0  # seconds between server probes


def is_server_failure(exc: BaseException) -> bool:
    """A call's retries spent on the server itself (unreachable, cut off, 429, 5xx); not a
    garbled reply or a slow call, which are that example's own problem."""
    return isinstance(exc, TransientError) and not isinstance(exc, (MalformedReply, CallTimeout))


class ServerFailed(Exception):
    """An example whose call's retries were spent on a server failure; ``outcome`` is its
    error record, ``cause`` the failure. Judged by :class:`CircuitBreaker`."""

    def __init__(self, outcome: RecordAndTrace, cause: BaseException) -> None:
        super().__init__(outcome, cause)
        self.outcome, self.cause = outcome, cause


class ServerDown(LMError):
    """The server did not answer for the breaker's whole wait."""


class CircuitBreaker:
    """The state of one eval's server (see the module doc); used by one event loop."""

    def __init__(self, settings: BreakerSettings = BreakerSettings(), retries: RetryStats | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.retries = retries
        self.clock = clock
        self.answered = False  # an example finished without a server failure in this run
        self.last_ok = clock()
        self.in_a_row = 0  # examples failing on the server since the last answered one
        self.held: list[tuple[Example, RecordAndTrace]] = []  # failed while closed: judged by what comes next
        self.opened_at: float | None = None
        self.probes = 0  # probes sent since the breaker opened
        self.next_probe = 0.0
        self.trips = 0  # times it opened
        self.paused_s = 0.0  # seconds open, the pauses closed so far
        self.on_tick: Callable[[], None] | None = None  # a display to refresh while the server fails
        self.probe: Probed | None = None  # the backend, when it can be asked whether the server is there
        self.seen_answered = -1  # the answered-call count at the last look, and when it last grew
        self.last_answer = clock()
        self.down_since: float | None = None  # probes unanswered since (None: the last one was answered)
        self.down_reason = ""
        self.next_server_probe = 0.0
        self._probing: asyncio.Task[str | None] | None = None

    async def watch(self, in_flight: int) -> None:
        """Probe the server while every call fails or none returns (see the module doc); raises
        :class:`ServerDown` once probes have gone unanswered for ``dead_s``. Called by the
        executor's regular look; a probe runs beside the examples, never holding them up."""
        now, s = self.clock(), self.settings
        answered = self.retries.answered if self.retries is not None else 0
        if answered != self.seen_answered:
            self.seen_answered, self.last_answer = answered, now
        if self._probing is not None and self._probing.done():
            why, self._probing = self._probing.result(), None
            if why is None:
                self.down_since, self.down_reason = None, ""
            else:
                self.down_since = self.down_since if self.down_since is not None else self._probe_sent
                self.down_reason = why
        suspect = self.open or (in_flight > 0 and now - self.last_answer >= s.quiet_s)
        if self.probe is None or not suspect:
            self.down_since, self.down_reason = None, ""
            return
        if self.down_since is not None and now - self.down_since >= s.dead_s:
            raise ServerDown(f"the server is {self.down_state}: {self.down_reason}, for {now - self.down_since:.0f} s",
                             hint="check the server; finished records are kept and the same command resumes")
        if self._probing is None and now >= self.next_server_probe:
            self._probe_sent, self.next_server_probe = now, now + s.probe_every_s
            self._probing = asyncio.ensure_future(self.probe.probe())

    @property
    def down_state(self) -> str:
        """"down" (nothing listens) or "frozen" (connections taken, nothing answered)."""
        return "frozen" if self.down_reason.startswith("no reply") else "down"

    def stop_watching(self) -> None:
        if self._probing is not None:
            self._probing.cancel()
            self._probing = None

    def tick(self) -> None:
        """The executor's regular look (about once a second, and after each example)."""
        if self.on_tick is not None and self.status():
            self.on_tick()

    @property
    def open(self) -> bool:
        return self.opened_at is not None

    def server_answered(self) -> bool:
        return self.answered or (self.retries is not None and self.retries.answered > 0)

    def room(self, concurrency: int, running: int) -> int:
        """How many examples may start now."""
        if not self.open:
            return max(0, concurrency - running)
        if running or self.clock() < self.next_probe:  # a probe goes out alone, once the others are back
            return 0
        self.probes += 1
        return 1

    def wait_s(self) -> float:
        """Seconds until the next probe may go (0 when closed)."""
        return max(0.0, self.next_probe - self.clock()) if self.open else 0.0

    def ok(self, on_record: Callable[[RecordAndTrace], None]) -> None:
        """An example finished without a server failure: the server answers."""
        self.answered, self.last_ok, self.in_a_row = True, self.clock(), 0
        if self.opened_at is not None:
            self.paused_s += self.last_ok - self.opened_at
        self.opened_at, self.probes = None, 0
        for _example, outcome in self.held:  # truly exhausted retries: their examples' errors
            on_record(outcome)
        self.held = []

    def failed(self, example: Example, failure: ServerFailed, requeue: deque[Example]) -> None:
        """An example failed on the server: held, or back in ``requeue`` while the breaker is
        open; raises the failure before the server has answered once, and :class:`ServerDown`
        once the wait is over."""
        if not self.server_answered():
            raise failure.cause
        now = self.clock()
        if not self.open:
            self.held.append((example, failure.outcome))
            self.in_a_row += 1
            if self.in_a_row >= self.settings.trip_after or now - self.last_ok >= self.settings.silence_s:
                self.opened_at, self.trips = now, self.trips + 1
                requeue.extendleft(e for e, _ in reversed(self.held))
                self.held = []
                self._schedule(now, failure.cause)
            return
        requeue.appendleft(example)
        if now - self.opened_at >= self.settings.max_wait_s:
            raise ServerDown(f"the server failed every call for {now - self.opened_at:.0f} s "
                             f"(last: {failure.cause})",
                             hint="finished records are kept and the same command resumes; "
                                  "--server-wait SECONDS waits longer") from failure.cause
        self._schedule(now, failure.cause)

    def _schedule(self, now: float, cause: BaseException) -> None:
        s = self.settings
        wait = wait_exponential_jitter(multiplier=s.probe_s, max=s.probe_max_s, jitter=s.probe_s)(
            SimpleNamespace(attempt_number=self.probes + 1))
        if isinstance(cause, TransientError) and cause.retry_after:
            wait = max(wait, min(cause.retry_after, s.max_wait_s))
        self.next_probe = now + wait

    def settle(self, on_record: Callable[[RecordAndTrace], None]) -> None:
        """Nothing left to judge the held examples by (the run's last ones): their records."""
        for _example, outcome in self.held:
            on_record(outcome)
        self.held = []

    def facts(self) -> dict[str, Any]:
        """For the summary's ``this_run``: retries sent, pauses and their seconds."""
        now = self.clock()
        paused = self.paused_s + (now - self.opened_at if self.opened_at is not None else 0.0)
        return {"retries": self.retries.retries if self.retries is not None else None,
                "server_pauses": self.trips, "server_paused_s": round(paused, 3)}

    def status(self) -> str:
        """"server failing: 3 retries in flight, paused 12 s"; "server down: cannot connect ..., 12 s
        (stops at 45 s)" or "server frozen: ..." once a probe went unanswered; "" while all is well."""
        if self.down_since is not None:
            return (f"server {self.down_state}: {self.down_reason}, {self.clock() - self.down_since:.0f} s "
                    f"(stops at {self.settings.dead_s:.0f} s)")
        retrying = self.retries.retrying if self.retries is not None else 0
        if not self.open and not retrying:
            return ""
        parts = [f"{retrying} retr{'y' if retrying == 1 else 'ies'} in flight"] if retrying else []
        if self.opened_at is not None:
            parts.append(f"paused {self.clock() - self.opened_at:.0f} s")
        return "server failing: " + ", ".join(parts)
