"""Hostile OpenAI-compatible servers: malformed 200 replies, slow calls, unencodable text."""

import asyncio
import json

import httpx
import pytest
import respx

from thoughtloom import strategies, tasks
from thoughtloom.core import ConfigError, Problem, Request
from thoughtloom.core.errors import CallTimeout, MalformedReply
from thoughtloom.core.types import Completion, TokenLogprob
from thoughtloom.eval import EvalResources, evaluate
from thoughtloom.lm import Cached, CompletionStore, Retrying, open_lm
from thoughtloom.lm.openai_compat import OpenAICompatLM
from thoughtloom.tasks import Example

BASE = "http://127.0.0.1:8999/v1"
URL = f"{BASE}/chat/completions"


def reply(text="The answer is: 1"):
    return {"choices": [{"message": {"content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2}}


MALFORMED = {
    "bad JSON": httpx.Response(200, text='{"choices": [ {"mess'),
    "bad UTF-8": httpx.Response(200, content=b'{"choices": "\xff"}'),
    "not an object": httpx.Response(200, json=["hi"]),
    "empty choices": httpx.Response(200, json={"choices": []}),
    "null choice": httpx.Response(200, json={"choices": [None]}),
    "no choices": httpx.Response(200, json={"id": "x"}),
    "content not a string": httpx.Response(200, json={"choices": [{"message": {"content": {"a": 1}}}]}),
    "usage words": httpx.Response(200, json={**reply(), "usage": {"prompt_tokens": "many"}}),
    "usage negative": httpx.Response(200, json={**reply(), "usage": {"completion_tokens": -3}}),
    "usage a list": httpx.Response(200, json={**reply(), "usage": [1, 2]}),
    "finish_reason a number": httpx.Response(200, json={"choices": [{"message": {"content": "x"}, "finish_reason": 7}]}),
    "bad logprobs": httpx.Response(200, json={"choices": [{"message": {"content": "x"},
                                                           "logprobs": {"content": [{"token": "x"}]}}]}),
}


@respx.mock
@pytest.mark.parametrize("case", sorted(MALFORMED))
async def test_malformed_200_reply_is_its_own_error(case):
    respx.post(URL).mock(return_value=MALFORMED[case])
    lm = OpenAICompatLM("m", BASE)
    with pytest.raises(MalformedReply) as info:
        await lm.generate([Request.of("q")])
    assert "malformed reply from http://127.0.0.1:8999/v1" in str(info.value)
    await lm.aclose()


@respx.mock
async def test_malformed_reply_is_retried_a_bounded_number_of_times():
    route = respx.post(URL).mock(return_value=MALFORMED["null choice"])
    lm = Retrying(OpenAICompatLM("m", BASE), attempts=4, initial_s=0.001, max_s=0.001)
    with pytest.raises(MalformedReply):
        await lm.generate([Request.of("q")])
    assert route.call_count == 2  # not the 4 attempts a network error gets
    route.side_effect = [MALFORMED["bad JSON"], httpx.Response(200, json=reply("ok"))]
    [c] = await lm.generate([Request.of("q")])
    assert c.text == "ok"  # one garbled reply among good ones is retried away


@respx.mock
async def test_reply_text_is_made_encodable_where_it_enters():
    body = json.dumps(reply("smile \ud83d")).encode()  # json escapes the lone surrogate as \ud83d
    assert b"\\ud83d" in body
    respx.post(URL).mock(return_value=httpx.Response(200, content=body))
    [c] = await OpenAICompatLM("m", BASE).generate([Request.of("q")])
    assert c.text == "smile \ufffd"
    c.text.encode("utf-8")


@respx.mock
async def test_slow_call_times_out_after_timeout_s():
    async def slow(request):
        await asyncio.sleep(60)
        return httpx.Response(200, json=reply())

    respx.post(URL).mock(side_effect=slow)
    lm = OpenAICompatLM("m", BASE, timeout_s=0.1)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    with pytest.raises(CallTimeout) as info:
        await lm.generate([Request.of("q")])
    # well before the reply would come, with room for a loaded machine
    assert loop.time() - t0 < 30 and "within 0.1 s" in str(info.value) and "--timeout" in str(info.value)
    respx.post(URL).mock(side_effect=httpx.ReadTimeout("read timed out"))
    with pytest.raises(CallTimeout):
        await lm.generate([Request.of("q")])


def test_timeout_is_wired_through_open_lm():
    lm = open_lm("openai:m@http://127.0.0.1:8999/v1", timeout_s=7.5)
    backend = lm.inner.inner  # Retrying(Limited(backend)) without a cache
    assert isinstance(backend, OpenAICompatLM) and backend.timeout_s == 7.5
    assert open_lm("openai:m@http://127.0.0.1:8999/v1").inner.inner.timeout_s == 300.0
    with pytest.raises(ConfigError):
        OpenAICompatLM("m", BASE, timeout_s=0)


@respx.mock
async def test_eval_against_a_malformed_server_records_and_goes_on(tmp_path):
    def handler(request):
        question = json.loads(request.content)["messages"][-1]["content"]
        if "What is 1 plus" in question:
            return httpx.Response(200, json={"choices": [None]})
        return httpx.Response(200, json=reply())

    respx.post(URL).mock(side_effect=handler)
    lm = Retrying(OpenAICompatLM("m", BASE), initial_s=0.001, max_s=0.001)
    examples = [Example(Problem(f"q{i}", f"What is {i} plus 1?"), "1") for i in range(3)]
    summary = await evaluate(strategies.get("cot")(), tasks.get("gsm8k"), examples, EvalResources(lm), tmp_path)
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "results.jsonl").read_text().splitlines())}
    assert len(records) == 3 and summary["complete"] and summary["n_errors"] == 1
    assert records["q1"]["error"].startswith("MalformedReply: malformed reply")
    assert records["q0"]["metrics"] == {"accuracy": 1.0}


async def test_cache_stores_surrogate_text_sanitized(tmp_path):
    store = CompletionStore(tmp_path / "c.sqlite")
    lp = (TokenLogprob("\udc80", -0.1, (("\udc80", -0.1),)),)
    store.put_many([("k", Completion("half an emoji \ud83d", logprobs=lp, model="m"))])
    got = store.get_many(["k"])["k"]
    assert got.text == "half an emoji \ufffd" and got.logprobs[0].token == "\ufffd"
    assert got.logprobs[0].top == (("\ufffd", -0.1),)
    store.close()


def test_cache_below_a_file_is_one_clear_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="cannot open cache"):
        CompletionStore(tmp_path / "file" / "c.sqlite")
    (tmp_path / "notdb.sqlite").write_bytes(b"garbage" * 1000)
    with pytest.raises(ConfigError, match="cannot open cache"):
        CompletionStore(tmp_path / "notdb.sqlite")
