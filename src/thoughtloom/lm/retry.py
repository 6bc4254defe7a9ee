"""Retry wrapper: only :class:`TransientError` (and its RateLimitError) is retried.

Each request of a batch is retried on its own, so one failed sample does not
resend its siblings. Backoff is exponential with jitter; a server's
``Retry-After`` is honoured when it is longer.

A :class:`MalformedReply` (a 200 reply that is not a completion) is retried
at most ``malformed_attempts`` times in all: a garbled reply may be a glitch,
but a server that keeps sending them will not be cured by waiting.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Sequence

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    wait_exponential_jitter,
)

from ..core.errors import MalformedReply, RateLimitError, TransientError
from ..core.protocols import LM
from ..core.types import Completion, Request

log = logging.getLogger(__name__)


@dataclass
class Retrying:
    inner: LM
    attempts: int = 4
    initial_s: float = 0.5
    max_s: float = 20.0
    malformed_attempts: int = 2

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def _wait(self, state: RetryCallState) -> float:
        backoff = wait_exponential_jitter(multiplier=self.initial_s, max=self.max_s, jitter=self.initial_s)(state)
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, RateLimitError) and exc.retry_after:
            return max(backoff, min(exc.retry_after, self.max_s * 3))
        return backoff

    def _stop(self, state: RetryCallState) -> bool:
        exc = state.outcome.exception() if state.outcome else None
        limit = min(self.attempts, self.malformed_attempts) if isinstance(exc, MalformedReply) else self.attempts
        return state.attempt_number >= limit

    def _log(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning("retrying model call (attempt %d): %s", state.attempt_number, exc)

    async def _one(self, request: Request) -> Completion:
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(TransientError),
            stop=self._stop,
            wait=self._wait,
            before_sleep=self._log,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return (await self.inner.generate([request]))[0]
        raise AssertionError("unreachable")  # pragma: no cover

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        if len(requests) == 1:
            return [await self._one(requests[0])]
        return list(await asyncio.gather(*(self._one(r) for r in requests)))

    async def aclose(self) -> None:
        await self.inner.aclose()
