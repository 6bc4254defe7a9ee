"""Rate and concurrency limits around a backend.

``max_concurrent`` caps requests in flight; ``rpm`` and ``tpm`` cap requests
and tokens per minute with leaky buckets from ``aiolimiter``. A request is
charged its prompt tokens plus ``max_tokens`` (what it may cost at most,
since the reply's length is known only after the call); the prompt tokens
are the model's own count where the backend can tokenize, else a
characters/4 estimate (:mod:`.tokens`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Sequence

from aiolimiter import AsyncLimiter

from ..core.protocols import LM
from ..core.types import Completion, Request
from .tokens import count_prompt_tokens


@dataclass
class Limited:
    inner: LM
    max_concurrent: int = 8
    rpm: float | None = None
    tpm: float | None = None
    _sem: asyncio.Semaphore | None = field(default=None, init=False, repr=False)
    _sem_loop: object = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_concurrent < 1:
            raise ValueError("max_concurrent must be >= 1")
        # Burst of one request: requests are spaced evenly, never bunched at
        # the start of a minute. Tokens may burst up to ten seconds' worth.
        self._rpm = AsyncLimiter(1, 60 / self.rpm) if self.rpm else None
        self._tpm = AsyncLimiter(self.tpm / 6, 10) if self.tpm else None

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._sem is None or self._sem_loop is not loop:
            self._sem, self._sem_loop = asyncio.Semaphore(self.max_concurrent), loop
        return self._sem

    async def _one(self, request: Request) -> Completion:
        if self._rpm is not None:
            await self._rpm.acquire()
        if self._tpm is not None:
            (prompt,) = (await count_prompt_tokens(self.inner, [request])).counts
            await self._tpm.acquire(min(prompt + request.max_tokens, self._tpm.max_rate))
        async with self._semaphore():
            return (await self.inner.generate([request]))[0]

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        return list(await asyncio.gather(*(self._one(r) for r in requests)))

    async def aclose(self) -> None:
        await self.inner.aclose()
