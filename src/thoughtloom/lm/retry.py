"""Retry wrapper: only :class:`TransientError` (and its RateLimitError) is retried,
never sooner than a wait the server asked for (``retry_after``).

Each request of a batch is retried on its own, so one failed sample does not
resend its siblings. Backoff is exponential with jitter; a server's
``Retry-After`` is honoured when it is longer.

A :class:`MalformedReply` (a 200 reply that is not a completion) is retried
at most ``malformed_attempts`` times in all: a garbled reply may be a glitch,
but a server that keeps sending them will not be cured by waiting.

Retries are logged at INFO (shown with ``-v``), not as warnings: a flaky
server is expected, and what a run shows of it is its :class:`RetryStats`
(calls waiting to retry now, retries so far), which the eval's progress line
reads through :func:`retry_stats`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Sequence

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    wait_exponential_jitter,
)

from ..core.errors import MalformedReply, TransientError
from ..core.protocols import LM
from ..core.types import Completion, Request

log = logging.getLogger(__name__)


@dataclass
class RetryStats:
    """What one :class:`Retrying` has seen of its server, for progress displays."""

    retrying: int = 0  # calls that failed at least once and have not finished yet
    retries: int = 0  # retries sent so far
    answered: int = 0  # calls the server answered (after any retries)


@dataclass
class Retrying:
    inner: LM
    attempts: int = 4
    initial_s: float = 0.5
    max_s: float = 20.0
    malformed_attempts: int = 2
    stats: RetryStats = field(default_factory=RetryStats, compare=False)

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def _wait(self, state: RetryCallState) -> float:
        backoff = wait_exponential_jitter(multiplier=self.initial_s, max=self.max_s, jitter=self.initial_s)(state)
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, TransientError) and exc.retry_after:
            return max(backoff, min(exc.retry_after, self.max_s * 3))
        return backoff

    def _stop(self, state: RetryCallState) -> bool:
        exc = state.outcome.exception() if state.outcome else None
        limit = min(self.attempts, self.malformed_attempts) if isinstance(exc, MalformedReply) else self.attempts
        return state.attempt_number >= limit

    def _before_sleep(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        self.stats.retries += 1
        self.stats.retrying += state.attempt_number == 1
        log.info("retrying model call (attempt %d): %s", state.attempt_number, exc)

    async def _one(self, request: Request) -> Completion:
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(TransientError),
            stop=self._stop,
            wait=self._wait,
            before_sleep=self._before_sleep,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    completion = (await self.inner.generate([request]))[0]
                    self.stats.answered += 1
                    return completion
        finally:
            self.stats.retrying -= retrying.statistics.get("attempt_number", 1) > 1
        raise AssertionError("unreachable")  # pragma: no cover

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        if len(requests) == 1:
            return [await self._one(requests[0])]
        return list(await asyncio.gather(*(self._one(r) for r in requests)))

    async def aclose(self) -> None:
        await self.inner.aclose()


def retry_stats(lm: Any) -> RetryStats | None:
    """The :class:`RetryStats` of the :class:`Retrying` in ``lm``'s wrapper stack, if it has one."""
    for _ in range(32):
        if isinstance(lm, Retrying):
            return lm.stats
        lm = getattr(lm, "inner", None)
        if lm is None:
            return None
    return None
