"""The embedded backend's queue: prefix-sharing requests run back to back."""

import asyncio
import threading

import pytest

from thoughtloom.core import ConfigError, Request
from thoughtloom.core.types import Completion
from thoughtloom.lm.llamacpp import LlamaCppLM


@pytest.fixture
def fake_model(tmp_path, monkeypatch):
    path = tmp_path / "fake.gguf"
    path.write_bytes(b"0" * 10)
    lm = LlamaCppLM(path)
    order, threads = [], set()

    def complete(request):
        order.append(request.messages[0].content)
        threads.add(threading.get_ident())
        return Completion(text=request.messages[0].content)

    monkeypatch.setattr(lm, "_complete", complete)
    return lm, order, threads


async def test_requests_sharing_a_prefix_run_together(fake_model):
    lm, order, threads = fake_model
    a = [f"AAAA long shared preamble question {i}" for i in range(3)]
    b = [f"BBBB other preamble question {i}" for i in range(3)]
    interleaved = [x for pair in zip(a, b) for x in pair]
    out = await lm.generate([Request.of(p) for p in interleaved])
    assert [c.text for c in out] == interleaved  # results in request order
    assert order[:3] == a and order[3:] == b  # execution grouped by prefix
    assert len(threads) == 1  # one worker thread: llama.cpp is not thread-safe


async def test_concurrent_callers_are_serialized(fake_model):
    lm, order, threads = fake_model
    outs = await asyncio.gather(*(lm.generate([Request.of(f"p{i}")]) for i in range(10)))
    assert sorted(o[0].text for o in outs) == sorted(f"p{i}" for i in range(10))
    assert len(order) == 10 and len(threads) == 1


async def test_errors_reach_the_caller(fake_model, monkeypatch):
    lm, _, _ = fake_model

    def boom(request):
        raise ValueError("too long")

    monkeypatch.setattr(lm, "_complete", boom)
    with pytest.raises(ValueError):
        await lm.generate([Request.of("x")])


def test_missing_model_file():
    with pytest.raises(ConfigError, match="not found"):
        LlamaCppLM("/nonexistent/model.gguf")


def test_model_id_names_the_file(fake_model):
    lm, _, _ = fake_model
    assert lm.model_id == "gguf:fake.gguf:10"


async def test_a_prompt_over_the_context_window_is_prompt_too_long(tmp_path, monkeypatch):
    from thoughtloom.core import LMError, PromptTooLong

    path = tmp_path / "fake.gguf"
    path.write_bytes(b"0" * 10)
    lm = LlamaCppLM(path, n_ctx=4096)

    class Rejecting:
        def __init__(self, message):
            self.message = message

        def create_chat_completion(self, **kwargs):
            raise ValueError(self.message)

    monkeypatch.setattr(lm, "_load", lambda: Rejecting("Requested tokens (4666) exceed context window of 4096"))
    with pytest.raises(PromptTooLong, match="n_ctx"):  # per example, not fatal to an eval
        await lm.generate([Request.of("x")])
    monkeypatch.setattr(lm, "_load", lambda: Rejecting("something else"))
    with pytest.raises(LMError):
        await lm.generate([Request.of("x")])
