"""Backend for any server speaking the OpenAI chat-completions API.

vLLM, the llama.cpp server, llama-cpp-python's server, Ollama and OpenAI
itself all work. This file only translates requests and responses and maps
HTTP and network failures onto our typed errors; retries, limits and caching
are wrappers (see ``thoughtloom.lm.open_lm``).

Structured output is sent as ``response_format`` of type ``json_schema``
(OpenAI, vLLM, Ollama). Servers that only know ``json_object`` plus a
``schema`` field (llama-cpp-python's server) are detected from their 4xx
reply to the first such request and answered in that dialect from then on.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any, Sequence

import httpx

from ..core.errors import LMError, PromptTooLong, RateLimitError, TransientError
from ..core.types import Completion, Request, Usage
from .llamacpp import _parse_logprobs

_RETRYABLE_STATUS = {408, 409, 500, 502, 503, 504}


class OpenAICompatLM:
    """``model_id`` is ``openai:<model>@<base_url>`` (never the key)."""

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 300.0,
        max_connections: int = 8,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.model_id = f"openai:{model}@{self.base_url}"
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = httpx.Timeout(timeout_s, connect=10.0)
        self._limits = httpx.Limits(max_connections=max_connections,
                                    max_keepalive_connections=max_connections)
        self._clients: dict[int, httpx.AsyncClient] = {}
        self._schema_dialect = "json_schema"

    def _client(self) -> httpx.AsyncClient:
        # One pooled client per event loop: connections are reused across
        # calls, and the sync facade's loop never sees another loop's sockets.
        key = id(asyncio.get_running_loop())
        client = self._clients.get(key)
        if client is None or client.is_closed:
            client = httpx.AsyncClient(base_url=self.base_url, headers=self._headers,
                                       timeout=self._timeout, limits=self._limits)
            self._clients[key] = client
        return client

    def _body(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "seed": request.derived_seed(),
        }
        if request.stop:
            body["stop"] = list(request.stop)
        if request.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = request.logprobs
        if request.json_schema is not None:
            schema = dict(request.json_schema)
            if self._schema_dialect == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "reply", "schema": schema},
                }
            else:
                body["response_format"] = {"type": "json_object", "schema": schema}
        return body

    async def _post(self, body: dict[str, Any]) -> httpx.Response:
        url = f"{self.base_url}/chat/completions"
        try:
            return await self._client().post("/chat/completions", json=body)
        except httpx.TimeoutException as exc:
            raise TransientError(f"timed out calling {url}: {exc!r}") from exc
        except httpx.TransportError as exc:
            raise TransientError(
                f"cannot reach {url}: {exc!r}",
                hint="is the server running? check the base URL in --model openai:MODEL@URL",
            ) from exc

    async def _one(self, request: Request) -> Completion:
        body = self._body(request)
        t0 = time.perf_counter()
        resp = await self._post(body)
        if (resp.status_code in (400, 422, 500) and request.json_schema is not None
                and self._schema_dialect == "json_schema" and "response_format" in resp.text):
            self._schema_dialect = "json_object"
            resp = await self._post(self._body(request))
        latency = time.perf_counter() - t0
        _raise_for_status(resp, self.base_url, self.model)
        try:
            data = resp.json()
            choice = data["choices"][0]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise TransientError(f"malformed reply from {self.base_url}: {resp.text[:200]!r}") from exc
        usage = data.get("usage") or {}
        return Completion(
            text=(choice.get("message") or {}).get("content") or "",
            finish_reason=choice.get("finish_reason") or "stop",
            usage=Usage(
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
                latency_s=latency,
            ),
            logprobs=_parse_logprobs(choice.get("logprobs")),
            model=self.model_id,
        )

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        return list(await asyncio.gather(*(self._one(r) for r in requests)))

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            try:
                await client.aclose()
            except RuntimeError:  # its loop is already closed; nothing to flush
                pass


# how vLLM, llama.cpp server and OpenAI word a prompt longer than the context
_CONTEXT_OVERFLOW = re.compile(r"context (length|window)|maximum context|exceeds? the context|too many tokens",
                               re.IGNORECASE)


def _raise_for_status(resp: httpx.Response, base_url: str, model: str) -> None:
    status = resp.status_code
    if status < 400:
        return
    detail = resp.text[:300]
    where = f"{base_url} answered HTTP {status}: {detail}"
    if status == 429:
        retry_after = resp.headers.get("retry-after")
        try:
            seconds = float(retry_after) if retry_after else None
        except ValueError:
            seconds = None
        raise RateLimitError(where, retry_after=seconds)
    if status in _RETRYABLE_STATUS:
        raise TransientError(where)
    if status in (401, 403):
        raise LMError(where, hint="set THOUGHTLOOM_API_KEY (or OPENAI_API_KEY) to a valid key")
    if status == 404:
        raise LMError(where, hint=f"check the model name {model!r} and that the URL ends in /v1")
    if status == 400 and _CONTEXT_OVERFLOW.search(detail):
        raise PromptTooLong(where, hint="shorten the prompt or serve the model with a longer context")
    raise LMError(where)
