"""Web search as a ``Retriever``: any SerpApi-compatible JSON endpoint.

The HGOT paper retrieved with Google through SerpApi.com. This backend sends
``GET {base_url}?engine=google&q=QUERY&num=K&api_key=KEY`` and turns the
response into passages: the answer box (when present) first, then the
organic results' snippets in order. Passage ids are the result links (the
answer box gets ``answer_box:<query>``), so they are stable across runs.
Scores are rank-based, 1 / (1 + rank), since web results carry none.

It was unit-tested on a recorded-format response only; it has NOT been run
against the live service from this project (no network here). The key is
passed in by the caller; the CLI reads it from ``SERPAPI_API_KEY``. It is
never logged, traced or part of a cache key.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, Sequence

import httpx

from ..core.errors import ConfigError, LMError, RateLimitError, TransientError
from ..core.types import Passage, ScoredPassage

DEFAULT_URL = "https://serpapi.com/search.json"


def parse_results(query: str, payload: dict[str, Any], k: int) -> list[ScoredPassage]:
    """Answer box, then organic results, as ranked passages (at most k)."""
    passages: list[Passage] = []
    box = payload.get("answer_box") or {}
    box_text = box.get("answer") or box.get("snippet") or ""
    if isinstance(box_text, str) and box_text.strip():
        passages.append(Passage(f"answer_box:{query}", box_text.strip(), box.get("title", ""),
                                {"link": box.get("link", ""), "source": "answer_box"}))
    for item in payload.get("organic_results") or []:
        snippet = item.get("snippet") or ""
        link = item.get("link") or ""
        if not snippet or not link:
            continue
        passages.append(Passage(link, " ".join(snippet.split()), item.get("title", ""),
                                {"link": link, "position": item.get("position")}))
    seen: set[str] = set()
    unique = [p for p in passages if not (p.id in seen or seen.add(p.id))][:k]
    return [ScoredPassage(p, 1.0 / (1 + r), r) for r, p in enumerate(unique)]


class WebSearchRetriever:
    """Batched: the queries of one ``search`` call go out concurrently."""

    def __init__(self, api_key: str, *, base_url: str = DEFAULT_URL, engine: str = "google",
                 timeout: float = 20.0, max_concurrent: int = 4,
                 client: httpx.AsyncClient | None = None) -> None:
        if not api_key:
            raise ConfigError("web search needs an API key", hint="set SERPAPI_API_KEY")
        self._key = api_key
        self._url = base_url
        self._engine = engine
        self._client = client or httpx.AsyncClient(timeout=timeout)
        self._sem = asyncio.Semaphore(max_concurrent)

    def __repr__(self) -> str:  # never show the key
        return f"WebSearchRetriever(base_url={self._url!r}, engine={self._engine!r})"

    async def _one(self, query: str, k: int) -> list[ScoredPassage]:
        params = {"engine": self._engine, "q": query, "num": str(k), "api_key": self._key}
        async with self._sem:
            try:
                resp = await self._client.get(self._url, params=params)
            except httpx.TimeoutException as exc:
                raise TransientError(f"web search timed out: {exc}") from None
            except httpx.TransportError as exc:
                raise TransientError(f"web search unreachable: {exc}") from None
        if resp.status_code == 429:
            retry = resp.headers.get("retry-after")
            raise RateLimitError("web search rate limit", retry_after=float(retry) if retry else None)
        if resp.status_code in (401, 403):
            raise ConfigError("web search rejected the API key", hint="check SERPAPI_API_KEY")
        if resp.status_code >= 500:
            raise TransientError(f"web search server error {resp.status_code}")
        if resp.status_code >= 400:
            raise LMError(f"web search request failed with {resp.status_code}")
        payload = resp.json()
        if isinstance(payload, dict) and payload.get("error") and not payload.get("organic_results"):
            if re.search(r"\b(no|any) results\b", str(payload["error"]), re.IGNORECASE):
                return []
            raise LMError(f"web search error: {payload['error']}")
        return parse_results(query, payload, k)

    async def search(self, queries: Sequence[str], k: int) -> list[list[ScoredPassage]]:
        return list(await asyncio.gather(*[self._one(q, k) for q in queries]))

    async def aclose(self) -> None:
        await self._client.aclose()
