"""Several OpenAI-compatible servers behind one model: ``--model openai:MODEL@URL1,URL2,...``.

Each call goes to the server with the fewest requests outstanding, among
those not taken out; no server gets more than ``max_per_server`` at once
(a call waits for a free place). A server whose call fails in a way that
says the server is unwell -- unreachable, connection cut, HTTP 5xx, 429 --
is taken out for ``cooldown_s`` seconds and the call goes at once to
another server; the call fails only when every server has failed it (the
``Retrying`` wrapper above then backs off and tries again). Failures that
belong to the request (a 4xx, a prompt too long, a malformed reply, a call
past ``--timeout``) are the caller's, as with one server.

The pool is one model to the rest of the library: ``model_id`` is
``openai:MODEL@`` and the sorted server URLs, the same whichever server
answers, so the completion cache key does not depend on it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from ..core.errors import CallTimeout, ConfigError, MalformedReply, TransientError
from ..core.types import Completion, Request
from .openai_compat import OpenAICompatLM

log = logging.getLogger(__name__)

#: Seconds a failing server is out of rotation.
DEFAULT_COOLDOWN_S = 10.0


@dataclass
class _Server:
    client: OpenAICompatLM
    outstanding: int = 0
    out_until: float = 0.0  # monotonic time it is back in rotation

    @property
    def url(self) -> str:
        return self.client.base_url


def _server_unwell(exc: TransientError) -> bool:
    """Whether ``exc`` says the server is unwell (not the request: a slow or garbled reply is its own)."""
    return not isinstance(exc, (MalformedReply, CallTimeout))


class ServerPool:
    """One model served by several OpenAI-compatible servers (see the module docstring)."""

    def __init__(self, model: str, base_urls: Sequence[str], *, api_key: str | None = None,
                 timeout_s: float = 300.0, max_per_server: int = 8, cooldown_s: float = DEFAULT_COOLDOWN_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        urls = [url.rstrip("/") for url in base_urls]
        if len(urls) < 2 or len(set(urls)) != len(urls):
            raise ConfigError(f"a server pool needs two or more different URLs, got {list(base_urls)}",
                              hint="use openai:MODEL@URL1,URL2")
        if max_per_server < 1:
            raise ConfigError(f"max_per_server must be >= 1, got {max_per_server}")
        self.servers = [_Server(OpenAICompatLM(model, url, api_key=api_key, timeout_s=timeout_s,
                                               max_connections=max_per_server)) for url in urls]
        self.model_id = f"openai:{model}@{','.join(sorted(urls))}"
        self.max_per_server = max_per_server
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._changed: asyncio.Condition | None = None
        self._changed_loop: object = None

    def _condition(self) -> asyncio.Condition:
        loop = asyncio.get_running_loop()
        if self._changed is None or self._changed_loop is not loop:  # one per event loop, as in Limited
            self._changed, self._changed_loop = asyncio.Condition(), loop
        return self._changed

    def _choose(self, tried: list[_Server]) -> _Server | None:
        """The server for the next try, or None to wait for a free place."""
        now = self._clock()
        untried = [s for s in self.servers if all(s is not t for t in tried)]
        free = [s for s in untried if s.outstanding < self.max_per_server]
        healthy = [s for s in free if s.out_until <= now]
        if healthy:
            return min(healthy, key=lambda s: s.outstanding)
        if any(s.out_until <= now for s in untried):
            return None  # a server in rotation is busy: wait for it
        # every server left is out: try the one back soonest, so a call fails only after every server failed it
        return min(free, key=lambda s: s.out_until) if free else None

    async def _take(self, tried: list[_Server]) -> _Server:
        changed = self._condition()
        async with changed:
            while (server := self._choose(tried)) is None:
                await changed.wait()
            server.outstanding += 1
            return server

    async def _give_back(self, server: _Server) -> None:
        changed = self._condition()
        async with changed:
            server.outstanding -= 1
            changed.notify_all()

    def _take_out(self, server: _Server, exc: TransientError) -> None:
        wait = self.cooldown_s
        if isinstance(exc, TransientError) and exc.retry_after:
            wait = max(wait, exc.retry_after)
        now = self._clock()
        if server.out_until <= now:  # once per outage, not once per call it had in flight
            log.warning("server %s failed (%s): out of rotation for %.0f s, its calls go to the others",
                        server.url, exc, wait)
        server.out_until = now + wait

    async def _one(self, request: Request) -> Completion:
        tried: list[_Server] = []
        while True:
            server = await self._take(tried)
            try:
                completion = (await server.client.generate([request]))[0]
            except TransientError as exc:
                if not _server_unwell(exc):
                    raise
                self._take_out(server, exc)
                tried.append(server)
                if len(tried) == len(self.servers):
                    raise
                continue
            finally:
                await self._give_back(server)
            server.out_until = 0.0
            return dataclasses.replace(completion, model=self.model_id)

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        return list(await asyncio.gather(*(self._one(r) for r in requests)))

    async def aclose(self) -> None:
        for server in self.servers:
            await server.client.aclose()
