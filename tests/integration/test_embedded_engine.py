"""The embedded engine on the real model: batched decoding, seeds, grammars, crashes.

The engine's guarantees are checked on both llama.cpp libraries it runs on
(``library``): xllamacpp's prebuilt one and llama-cpp-python's."""

import asyncio
import importlib.util
import json
import os
import signal
import subprocess
import sys

import pytest

from thoughtloom.core import ModelCrashed, Request, system, user
from thoughtloom.lm.llamacpp import LlamaCppLM

pytestmark = pytest.mark.integration

LIBRARY_MODULES = {"xllamacpp": "xllamacpp", "llama-cpp-python": "llama_cpp"}


@pytest.fixture(params=sorted(LIBRARY_MODULES))
def library(request):
    # found, not imported: the engine loads it in its worker, one llama.cpp build per process
    if importlib.util.find_spec(LIBRARY_MODULES[request.param]) is None:
        pytest.skip(f"needs {request.param}")
    return request.param


PROMPTS = [
    "What is the capital of France? Answer in one word.",
    "Count: 1, 2, 3,",
    "Name three colours.",
    "Write one sentence about the sea.",
    "What is 12 + 30?",
]


async def completions(path, requests, *, max_parallel, one_at_a_time=False, **kw):
    lm = LlamaCppLM(path, n_ctx=1024, max_parallel=max_parallel, **kw)
    try:
        if one_at_a_time:
            return [(await lm.generate([r]))[0] for r in requests]
        return await lm.generate(requests)
    finally:
        await lm.aclose()


async def test_greedy_batched_equals_sequential(embedded_path, library):
    # resident=0: no prefix reuse across batches, which is fast but not bit-exact
    reqs = [Request.of(p, max_tokens=24) for p in PROMPTS] + [Request.of(PROMPTS[1], max_tokens=24)]
    alone = await completions(embedded_path, reqs, max_parallel=1, one_at_a_time=True, resident=0,
                              library=library)
    batched = await completions(embedded_path, reqs, max_parallel=8, resident=0, library=library)
    assert [c.text for c in batched] == [c.text for c in alone]
    assert [c.usage.completion_tokens for c in batched] == [c.usage.completion_tokens for c in alone]
    assert [c.usage.prompt_tokens for c in batched] == [c.usage.prompt_tokens for c in alone]
    assert "paris" in batched[0].text.lower()
    assert batched[1].text == batched[-1].text


async def test_greedy_replies_are_the_same_when_requests_arrive_while_others_decode(embedded_path, library):
    """Continuous batching (issue 41): a request that arrives mid-decode joins the
    running batch (the engine's counters show it decoding beside an earlier,
    separately submitted request) and its greedy reply, usage included, is the
    one it gets alone. Two slots for five requests, so ended sequences' slots
    and sequence ids are reused too."""
    reqs = [Request.of(p, max_tokens=24) for p in PROMPTS]
    first = Request.of("Count from 1 to 100, separated by commas.", max_tokens=48)
    alone = await completions(embedded_path, [first, *reqs], max_parallel=1, one_at_a_time=True, resident=0,
                              library=library)
    lm = LlamaCppLM(embedded_path, n_ctx=1024, max_parallel=2, resident=0, library=library)
    try:
        early = asyncio.ensure_future(lm.generate([first]))
        while (await lm.engine_stats())["decode_steps"] < 4:  # the first is decoding
            await asyncio.sleep(0.01)
        late = []
        for r in reqs:  # one at a time, each arriving while others decode
            late.append(asyncio.ensure_future(lm.generate([r])))
            await asyncio.sleep(0.05)
        staggered = [(await early)[0]] + [(await f)[0] for f in late]
        stats = await lm.engine_stats()
    finally:
        await lm.aclose()
    assert [c.text for c in staggered] == [c.text for c in alone]
    assert [c.usage.completion_tokens for c in staggered] == [c.usage.completion_tokens for c in alone]
    assert [c.usage.prompt_tokens for c in staggered] == [c.usage.prompt_tokens for c in alone]
    assert stats["peak_live"] == 2 and stats["joined"] >= 1
    assert stats["admitted"] == len(reqs) + 1


async def test_a_sample_is_the_same_alone_or_in_a_batch(embedded_path, library):
    reqs = [Request.of("Write a random animal name.", max_tokens=8, temperature=1.0, sample_index=i)
            for i in range(4)]
    kw = {"resident": 0, "library": library}
    alone = await completions(embedded_path, reqs, max_parallel=1, one_at_a_time=True, **kw)
    batched = await completions(embedded_path, reqs, max_parallel=8, **kw)
    again = await completions(embedded_path, reqs, max_parallel=8, **kw)
    assert [c.text for c in batched] == [c.text for c in again]  # replayable
    assert [c.text for c in batched] == [c.text for c in alone]  # independent of the batch
    assert len({c.text for c in batched}) > 1  # and the samples differ


async def test_grammar_and_plain_requests_share_a_batch(embedded_path, library):
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
    reqs = [Request.of("What is 2+2? Reply as JSON.", max_tokens=20, json_schema=schema),
            Request.of("Count: 1, 2, 3,", max_tokens=8),
            Request.of("What is 3+3? Reply as JSON.", max_tokens=20, json_schema=schema, temperature=0.7)]
    out = await completions(embedded_path, reqs, max_parallel=4, library=library)
    for c in (out[0], out[2]):
        assert isinstance(json.loads(c.text)["answer"], int)
        assert set(json.loads(c.text)) == {"answer"}  # no keys the schema does not name
    assert out[1].text


@pytest.mark.parametrize("schema", [{"type": "nonsense"}, {"type": "string", "pattern": "["}])
async def test_a_schema_that_cannot_be_compiled_fails_its_request_only(embedded_path, library, schema):
    """Neither a reply free of the constraint nor the batch's end: that request's own error."""
    from thoughtloom.core import LMError

    lm = LlamaCppLM(embedded_path, n_ctx=1024, max_parallel=4, library=library)
    try:
        bad = asyncio.ensure_future(lm.generate([Request.of("Reply as JSON.", max_tokens=8, json_schema=schema)]))
        [good] = await lm.generate([Request.of("Count: 1, 2, 3,", max_tokens=4)])
        with pytest.raises(LMError, match="cannot constrain the reply to this JSON schema"):
            await bad
    finally:
        await lm.aclose()
    assert good.text and good.usage.completion_tokens == 4


async def test_stop_strings_and_max_tokens(embedded_path, library):
    count = "List the numbers from 1 to 10, separated by commas."
    out = await completions(embedded_path, [Request.of(count, max_tokens=40, stop=(", 6",)),
                                            Request.of(count, max_tokens=3)], max_parallel=4, library=library)
    assert out[0].finish_reason == "stop" and out[0].text == "1, 2, 3, 4, 5"
    assert out[1].finish_reason == "length" and out[1].usage.completion_tokens == 3


async def test_killed_model_worker_is_survived(embedded_path):
    lm = LlamaCppLM(embedded_path, n_ctx=1024)
    try:
        await lm.generate([Request.of("Hi", max_tokens=2)])
        call = asyncio.ensure_future(lm.generate([Request.of("Count to 300: 1, 2,", max_tokens=400)]))
        await asyncio.sleep(1.0)
        os.kill(lm.worker.pid, signal.SIGKILL)
        with pytest.raises(ModelCrashed, match="SIGKILL"):
            await call
        [c] = await lm.generate([Request.of("What is the capital of France? Answer in one word.",
                                            max_tokens=8)])
        assert "paris" in c.text.lower()
    finally:
        await lm.aclose()


def _rendered(path, library, messages):
    """The engine's prompt tokens and stop strings, from a process of its own (one llama.cpp
    build per process: the reference below loads llama-cpp-python's here)."""
    script = ("import json, sys\n"
              "from thoughtloom.lm.llamacpp_engine import Engine\n"
              "engine = Engine(sys.argv[1], n_ctx=512, max_parallel=1, library=sys.argv[2])\n"
              "tokens, stop = engine.render(json.loads(sys.argv[3]))\n"
              "print(json.dumps([tokens, stop, engine.describe()['library']]))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", script, str(path), library, json.dumps(messages)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_prompts_are_tokenized_as_llama_cpp_python_does(embedded_path, library):
    """The engine renders chats with the GGUF's template exactly as llama-cpp-python's
    create_chat_completion does (the same prompt tokens and template stop strings),
    on either library."""
    Llama = pytest.importorskip("llama_cpp", reason="the reference is llama-cpp-python's").Llama

    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"},
                {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "What is 2+2?"}]
    reference = Llama(str(embedded_path), vocab_only=True, verbose=False)

    class Capture:  # stands in for the Llama object the chat handler drives
        verbose = False

        def tokenize(self, *args, **kwargs):
            return reference.tokenize(*args, **kwargs)

        def create_completion(self, **kwargs):
            self.kwargs = kwargs
            return {"id": "x", "created": 0, "model": "x", "usage": {}, "choices": [
                {"text": "", "index": 0, "logprobs": None, "finish_reason": "stop"}]}

    capture = Capture()
    reference._chat_handlers[reference.chat_format](llama=capture, messages=messages)
    tokens, stop, used = _rendered(embedded_path, library, messages)
    assert used == library
    assert tokens == capture.kwargs["prompt"]
    assert stop == capture.kwargs["stop"]


def test_a_chat_the_template_refuses_fails_alone(embedded_path):
    from thoughtloom.lm.llamacpp_engine import Engine

    engine = Engine(str(embedded_path), n_ctx=512, max_parallel=2)
    render = engine.template.render

    def strict(messages):
        if messages[0]["role"] != "user":
            raise ValueError("Conversation roles must alternate user/assistant")
        return render(messages)

    engine.template.render = strict
    try:
        bad, good = engine.generate([
            {"messages": [{"role": "assistant", "content": "x"}], "max_tokens": 4},
            {"messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 4}])
    finally:
        engine.close()
    assert bad["error"] == "error" and "alternate" in bad["message"]
    assert good["text"] and good["completion_tokens"] == 4


async def test_prompt_tokens_are_counted_exactly_before_the_call(embedded_path, library):
    """count_tokens (the rate limiter's and estimates' count) is the model's own: the
    prompt_tokens the call then reports, not characters/4."""
    from thoughtloom.lm.tokens import count_prompt_tokens, estimated_prompt_tokens

    reqs = [Request.of(p, max_tokens=4) for p in PROMPTS[:3]]
    reqs.append(Request.of([system("Be brief."), user("Hi there")], max_tokens=4))
    lm = LlamaCppLM(embedded_path, n_ctx=1024, max_parallel=4, library=library)
    try:
        counted = await count_prompt_tokens(lm, reqs)
        replies = await lm.generate(reqs)
    finally:
        await lm.aclose()
    assert counted.exact and counted.counts == [c.usage.prompt_tokens for c in replies]
    assert counted.counts != [estimated_prompt_tokens(r) for r in reqs]
