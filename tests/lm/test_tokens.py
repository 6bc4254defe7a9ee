"""Prompt token counts before a call: the backend's exact count through the wrappers, else a labelled estimate."""

import pytest

from thoughtloom.core import Request, Trace
from thoughtloom.lm import Cached, CompletionStore, Limited, Metered, Retrying
from thoughtloom.lm.llamacpp import LlamaCppLM
from thoughtloom.lm.tokens import count_prompt_tokens, estimated_prompt_tokens, tokenizer_of
from thoughtloom.testing import ScriptedLM

ECHO = "thoughtloom.testing.engine:EchoEngine"


@pytest.fixture
async def echo_lm(tmp_path):
    """The embedded backend's real worker process on the stand-in engine (its 'tokens' are words)."""
    path = tmp_path / "fake.gguf"
    path.write_bytes(b"0" * 10)
    lm = LlamaCppLM(path, engine=ECHO)
    yield lm
    await lm.aclose()


async def test_the_embedded_backend_counts_through_every_wrapper(echo_lm, tmp_path):
    stack = Metered(Cached(Retrying(Limited(echo_lm)), CompletionStore(tmp_path / "c.sqlite")), trace=Trace())
    assert tokenizer_of(stack) is not None
    requests = [Request.of("one two three"), Request.of("a b c d e f g h i j")]
    counted = await count_prompt_tokens(stack, requests)
    assert counted.exact and counted.counts == [3, 10]
    # the count is what the engine reports as the call's prompt_tokens
    replies = await echo_lm.generate(requests)
    assert [c.usage.prompt_tokens for c in replies] == counted.counts


async def test_without_a_tokenizer_the_count_is_a_labelled_estimate():
    lm = Retrying(ScriptedLM(["x"]))
    request = Request.of("twelve chars" * 4)
    counted = await count_prompt_tokens(lm, [request])
    assert not counted.exact and counted.counts == [48 // 4] == [estimated_prompt_tokens(request)]


async def test_a_request_the_backend_cannot_count_is_estimated_alone():
    class PartlyCounting(ScriptedLM):
        async def count_tokens(self, requests):
            return [7, None]

    a, b = Request.of("a"), Request.of("b" * 40)
    counted = await count_prompt_tokens(PartlyCounting(["x"]), [a, b])
    assert counted.counts == [7, 10] and not counted.exact


async def test_the_tokens_per_minute_bucket_is_charged_the_exact_count(echo_lm):
    limited = Limited(echo_lm, tpm=6000)
    charged = []
    real_acquire = limited._tpm.acquire

    async def acquire(amount=1):
        charged.append(amount)
        await real_acquire(amount)

    limited._tpm.acquire = acquire
    # 5 words but 60 characters: the estimate would have charged 15 + 8
    await limited.generate([Request.of("aaaaaaaaaaa bbbbbbbbbbb ccccccccccc ddddddddddd eeeeeeeeeeee", max_tokens=8)])
    assert charged == [5 + 8]
