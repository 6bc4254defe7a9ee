"""Backend for any server speaking the OpenAI chat-completions API.

vLLM, the llama.cpp server, llama-cpp-python's server, Ollama and OpenAI
itself all work. This file only translates requests and responses and maps
HTTP and network failures onto our typed errors; retries, limits and caching
are wrappers (see ``thoughtloom.lm.open_lm``).

Structured output is sent as ``response_format`` of type ``json_schema``
(OpenAI, vLLM, Ollama). Servers that only know ``json_object`` plus a
``schema`` field (llama-cpp-python's server) are detected from their 4xx
reply to the first such request and answered in that dialect from then on.

A 200 reply whose body is not a usable completion (bad JSON, empty or null
``choices``, a non-string ``content``, non-numeric ``usage``) raises
:class:`MalformedReply`; a call past ``timeout_s`` raises
:class:`CallTimeout`. Both are transient (the ``Retrying`` wrapper retries
them a bounded number of times) and per-example (the eval runner records them
against the example and goes on). Reply text is made encodable (lone
surrogates -> U+FFFD) here, where it enters the library.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import math
import re
import time
from typing import Any, Sequence

import httpx

from ..core.errors import CallTimeout, ConfigError, LMError, MalformedReply, PromptTooLong, RateLimitError, TransientError
from ..core.text import encodable, redact_credentials, split_userinfo
from ..core.types import Completion, Request, TokenLogprob, Usage

_RETRYABLE_STATUS = {408, 409, 500, 502, 503, 504}

#: Seconds a server probe waits for any reply (:meth:`OpenAICompatLM.probe`).
PROBE_TIMEOUT_S = 10.0


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
        authorization: str | None = None,
    ) -> None:
        self.model = model
        base_url, userinfo = split_userinfo(base_url.rstrip("/"))
        if userinfo:  # httpx would send it as Basic auth, over the key, and it would name the model
            raise ConfigError(f"user-info in the base URL {redact_credentials(base_url)}",
                              hint="pass the credential as api_key or authorization, not in the URL")
        self.base_url = base_url
        self.model_id = f"openai:{model}@{self.base_url}"
        # ``authorization``: the whole header value (``Basic ...`` from a URL's user:password)
        auth = authorization or (f"Bearer {api_key}" if api_key else None)
        self._headers = {"Authorization": auth} if auth else {}
        if not timeout_s > 0:
            raise ConfigError(f"timeout must be > 0 seconds, got {timeout_s}", hint="pass --timeout SECONDS")
        self.timeout_s = float(timeout_s)
        self._timeout = httpx.Timeout(timeout_s, connect=min(10.0, timeout_s))
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
        body = chat_params(self.model, request)
        if request.json_schema is not None and self._schema_dialect != "json_schema":
            body["response_format"] = {"type": "json_object", "schema": dict(request.json_schema)}
        return body

    async def _post(self, body: dict[str, Any]) -> httpx.Response:
        url = f"{self.base_url}/chat/completions"
        try:
            # httpx's read timeout is per chunk; the outer bound makes timeout_s the whole call's.
            async with asyncio.timeout(self.timeout_s):
                return await self._client().post("/chat/completions", json=body)
        except httpx.ConnectTimeout as exc:
            raise TransientError(f"cannot reach {url}: {exc!r}",
                                 hint="is the server running? check the base URL in --model openai:MODEL@URL") from exc
        except (httpx.TimeoutException, TimeoutError) as exc:
            raise CallTimeout(f"no reply from {url} within {self.timeout_s:g} s",
                              hint="raise --timeout, or check the server's load") from exc
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
        return completion_from_reply(resp, latency, self.base_url, self.model_id)

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        return list(await asyncio.gather(*(self._one(r) for r in requests)))

    async def probe(self, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
        """Whether the server answers at all (``core.protocols.Probed``): ``GET /models`` on a
        connection of its own (the pool's may all be held by stuck calls); any HTTP status is an
        answer. Else "connection refused ..." (down) or "no reply within N s" (frozen)."""
        try:
            async with asyncio.timeout(timeout_s), httpx.AsyncClient(
                    base_url=self.base_url, headers=self._headers, timeout=timeout_s) as client:
                await client.get("/models")
            return None
        except (httpx.TimeoutException, TimeoutError):
            return f"no reply within {timeout_s:g} s"
        except httpx.TransportError as exc:
            return f"cannot connect ({type(exc).__name__}: {exc})"

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            try:
                await client.aclose()
            except RuntimeError:  # its loop is already closed; nothing to flush
                pass


def chat_params(model: str, request: Request) -> dict[str, Any]:
    """``request`` as chat-completions parameters, structured output as a ``json_schema``
    response format; shared by every backend that speaks OpenAI's API (this one, LiteLLM's)."""
    params: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "top_p": request.top_p,
        "seed": request.derived_seed(),
    }
    if request.stop:
        params["stop"] = list(request.stop)
    if request.logprobs:
        params["logprobs"] = True
        params["top_logprobs"] = request.logprobs
    if request.json_schema is not None:
        params["response_format"] = {"type": "json_schema",
                                     "json_schema": {"name": "reply", "schema": dict(request.json_schema)}}
    return params


def completion_from_reply(resp: httpx.Response, latency: float, base_url: str, model_id: str) -> Completion:
    """The :class:`Completion` in a 200 reply, or :class:`MalformedReply` saying what is wrong."""
    try:
        data = resp.json()
    except ValueError:  # bad JSON or bad UTF-8
        raise MalformedReply(f"malformed reply from {base_url} (not JSON): {encodable(resp.text[:200])!r}") from None
    return completion_from_body(data, latency, base_url, model_id, resp.text)


def completion_from_body(data: Any, latency: float, where: str, model_id: str, raw: str) -> Completion:
    """The :class:`Completion` in a chat-completions body (decoded JSON), or
    :class:`MalformedReply` naming ``where`` and quoting ``raw``. Shared by every
    backend whose replies have OpenAI's shape (this one, LiteLLM's)."""
    def bad(why: str) -> MalformedReply:
        return MalformedReply(f"malformed reply from {where} ({why}): {encodable(raw[:200])!r}")

    if not isinstance(data, dict):
        raise bad("not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise bad("no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    content = message.get("content") if isinstance(message, dict) else None
    if content is not None and not isinstance(content, str):
        raise bad("message content is not a string")
    finish = choice.get("finish_reason") or "stop"
    if not isinstance(finish, str):
        raise bad("finish_reason is not a string")
    usage = data.get("usage") or {}
    if not isinstance(usage, dict):
        raise bad("usage is not an object")
    try:
        prompt_tokens = _count(usage.get("prompt_tokens"))
        completion_tokens = _count(usage.get("completion_tokens"))
        logprobs = _parse_logprobs(choice.get("logprobs"))
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
        raise bad(f"usage or logprobs: {exc}") from None
    return Completion(
        text=encodable(content or ""),
        finish_reason=encodable(finish),
        usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, latency_s=latency),
        logprobs=logprobs,
        model=model_id,
    )


def _count(value: Any) -> int:
    """A token count: a non-negative whole number (missing or null is 0)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value \
            or value < 0 or value != int(value):
        raise ValueError(f"bad token count {value!r}")
    return int(value)


def _parse_logprobs(raw: Any) -> tuple[TokenLogprob, ...] | None:
    """Chat-completion logprobs (``{"content": [{token, logprob, top_logprobs}]}``),
    tokens made encodable; a malformed entry raises (the caller's MalformedReply)."""
    if not raw or not isinstance(raw, dict) or not raw.get("content"):
        return None
    return tuple(
        TokenLogprob(
            token=encodable(str(item["token"])),
            logprob=float(item["logprob"]),
            top=tuple((encodable(str(t["token"])), float(t["logprob"])) for t in item.get("top_logprobs") or ()),
        )
        for item in raw["content"]
    )


# how vLLM, llama.cpp server and OpenAI word a prompt longer than the context
_CONTEXT_OVERFLOW = re.compile(r"context (length|window)|maximum context|exceeds? the context|too many tokens",
                               re.IGNORECASE)


def retry_after_s(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds: a number of seconds or an HTTP date; None if unreadable."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None
        seconds = (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _raise_for_status(resp: httpx.Response, base_url: str, model: str) -> None:
    status = resp.status_code
    if status < 400:
        return
    detail = resp.text[:300]
    where = f"{base_url} answered HTTP {status}: {detail}"
    if status == 429:
        raise RateLimitError(where, retry_after=retry_after_s(resp.headers.get("retry-after")))
    if status in _RETRYABLE_STATUS:  # a 503 may say when to come back, as a 429 does
        raise TransientError(where, retry_after=retry_after_s(resp.headers.get("retry-after")))
    if status in (401, 403):
        raise LMError(where, hint="set THOUGHTLOOM_API_KEY (or OPENAI_API_KEY) to a valid key")
    if status == 404:
        raise LMError(where, hint=f"check the model name {model!r} and that the URL ends in /v1")
    if status == 400 and _CONTEXT_OVERFLOW.search(detail):
        raise PromptTooLong(where, hint="shorten the prompt or serve the model with a longer context")
    raise LMError(where)
