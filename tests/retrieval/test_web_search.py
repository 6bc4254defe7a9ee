"""The web retriever against a response in SerpApi's format (hand-recorded
fixture; the live service is never called in tests)."""

import asyncio
import json
from pathlib import Path

import httpx
import pytest
import respx

from thoughtloom.core.errors import ConfigError, RateLimitError
from thoughtloom.retrieval.web import DEFAULT_URL, WebSearchRetriever, parse_results

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "serpapi_jaws.json").read_text())


def test_parse_answer_box_then_organic_results():
    hits = parse_results("who directed jaws", FIXTURE, 5)
    assert [h.passage.id for h in hits] == ["answer_box:who directed jaws",
                                            "https://en.wikipedia.org/wiki/Jaws_(film)",
                                            "https://www.imdb.com/title/tt0073195/"]
    assert hits[0].passage.text == "Steven Spielberg"
    assert [h.score for h in hits] == [1.0, 0.5, 1 / 3]
    assert len(parse_results("q", FIXTURE, 2)) == 2


@respx.mock
def test_search_sends_key_and_batches_queries():
    route = respx.get(DEFAULT_URL).mock(return_value=httpx.Response(200, json=FIXTURE))
    r = WebSearchRetriever("secret-key")
    out = asyncio.run(r.search(["who directed jaws", "jaws director"], 2))
    assert len(out) == 2 and all(len(x) == 2 for x in out)
    assert route.call_count == 2
    params = dict(route.calls[0].request.url.params)
    assert params["api_key"] == "secret-key" and params["engine"] == "google" and params["num"] == "2"
    assert "secret-key" not in repr(r)


@respx.mock
def test_errors_are_typed():
    respx.get(DEFAULT_URL).mock(return_value=httpx.Response(429, headers={"retry-after": "3"}))
    with pytest.raises(RateLimitError):
        asyncio.run(WebSearchRetriever("k").search(["q"], 3))
    respx.get(DEFAULT_URL).mock(return_value=httpx.Response(401, json={"error": "Invalid API key"}))
    with pytest.raises(ConfigError, match="API key"):
        asyncio.run(WebSearchRetriever("k").search(["q"], 3))
    with pytest.raises(ConfigError):
        WebSearchRetriever("")


@respx.mock
def test_no_results_is_empty_not_an_error():
    respx.get(DEFAULT_URL).mock(return_value=httpx.Response(200, json={"error": "Google hasn't returned any results for this query."}))
    assert asyncio.run(WebSearchRetriever("k").search(["zzqx"], 3)) == [[]]
