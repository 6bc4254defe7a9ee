import json

import httpx
import pytest
import respx

from thoughtloom.core import LMError, PromptTooLong, RateLimitError, Request, TransientError
from thoughtloom.lm.openai_compat import OpenAICompatLM

BASE = "http://127.0.0.1:8999/v1"


def ok(text="hi", **extra):
    body = {"choices": [{"message": {"content": text}, "finish_reason": "stop", **extra}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
    return httpx.Response(200, json=body)


@respx.mock
async def test_request_body_and_completion():
    route = respx.post(f"{BASE}/chat/completions").mock(return_value=ok("hello"))
    lm = OpenAICompatLM("qwen", BASE, api_key="k")
    out = await lm.generate([Request.of("q", temperature=0.5, sample_index=2, seed=1, stop=("\n",))])
    body = json.loads(route.calls[0].request.content)
    assert body["model"] == "qwen" and body["messages"] == [{"role": "user", "content": "q"}]
    assert body["seed"] == Request.of("q", seed=1, sample_index=2).derived_seed()
    assert body["stop"] == ["\n"] and body["temperature"] == 0.5
    assert route.calls[0].request.headers["authorization"] == "Bearer k"
    assert out[0].text == "hello" and out[0].usage.prompt_tokens == 5
    await lm.aclose()


@respx.mock
@pytest.mark.parametrize("status,error,hint", [
    (429, RateLimitError, ""),
    (503, TransientError, ""),
    (401, LMError, "API_KEY"),
    (404, LMError, "/v1"),
    (400, LMError, ""),
    (400, PromptTooLong, "longer context"),
])
async def test_status_mapping(status, error, hint):
    text = "This model's maximum context length is 4096 tokens" if error is PromptTooLong else "nope"
    respx.post(f"{BASE}/chat/completions").mock(
        return_value=httpx.Response(status, text=text, headers={"retry-after": "3"}))
    lm = OpenAICompatLM("m", BASE)
    with pytest.raises(error) as info:
        await lm.generate([Request.of("q")])
    assert type(info.value) is error
    assert hint in str(info.value)
    if status in (429, 503):  # both may say when to come back (RFC 9110, Retry-After)
        assert info.value.retry_after == 3.0
    await lm.aclose()


@respx.mock
async def test_network_failure_is_transient_and_names_the_server():
    respx.post(f"{BASE}/chat/completions").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(TransientError) as info:
        await OpenAICompatLM("m", BASE).generate([Request.of("q")])
    assert "127.0.0.1:8999" in str(info.value) and "server running" in str(info.value)


@respx.mock
async def test_schema_dialect_falls_back_to_json_object():
    seen = []

    def handler(request):
        body = json.loads(request.content)
        seen.append(body["response_format"]["type"])
        if body["response_format"]["type"] == "json_schema":
            return httpx.Response(422, text="response_format: unknown type json_schema")
        return ok('{"a": 1}')

    respx.post(f"{BASE}/chat/completions").mock(side_effect=handler)
    lm = OpenAICompatLM("m", BASE)
    schema = {"type": "object"}
    await lm.generate([Request.of("q", json_schema=schema)])
    await lm.generate([Request.of("r", json_schema=schema)])
    assert seen == ["json_schema", "json_object", "json_object"]


@respx.mock
async def test_logprobs_parsed():
    lp = {"content": [{"token": "yes", "logprob": -0.05, "top_logprobs": [
        {"token": "yes", "logprob": -0.05}, {"token": "no", "logprob": -3.0}]}]}
    respx.post(f"{BASE}/chat/completions").mock(return_value=ok("yes", logprobs=lp))
    out = await OpenAICompatLM("m", BASE).generate([Request.of("q", logprobs=2)])
    assert out[0].logprobs[0].top[1] == ("no", -3.0)
