"""Continuous batching through the model worker, on a stepping stand-in engine (no model).

The stand-in (``tests/lm/stand_in_engine.py``) decodes one word of each request
per step, up to ``max_parallel`` at once, and admits a request that arrives
mid-decode at the next step, as the real engine does; the worker runs it in a
child process of its own, so a crash is a real SIGSEGV there.
"""

import asyncio
import os
from pathlib import Path

import pytest

from thoughtloom.core import ModelCrashed, Request
from thoughtloom.lm.llamacpp import LlamaCppLM

STEP = "stand_in_engine:StepEngine"


@pytest.fixture
def model_file(tmp_path, monkeypatch):
    # the worker imports the stand-in by name in its own process
    here = str(Path(__file__).parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p))
    monkeypatch.syspath_prepend(here)
    path = tmp_path / "fake.gguf"
    path.write_bytes(b"0" * 10)
    return path


def words(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


async def open_lm(model_file, isolate=True, **engine_options):
    lm = LlamaCppLM(model_file, engine=STEP, isolate=isolate, max_parallel=engine_options.pop("slots", 4))
    lm.worker.options = {**lm.worker.options, **engine_options}
    return lm


@pytest.mark.parametrize("isolate", [True, False])
async def test_a_request_that_arrives_mid_decode_joins_the_running_batch(model_file, isolate):
    """The issue's case: another question's request joins the running batch instead of
    waiting for it to end, so the short late one ends long before the early long one."""
    lm = await open_lm(model_file, isolate=isolate, step_s=0.02)
    try:
        early = asyncio.ensure_future(lm.generate([Request.of(words(60, "a"))]))
        while (await lm.engine_stats())["decode_steps"] < 5:  # the early one is decoding
            await asyncio.sleep(0.02)
        [late] = await lm.generate([Request.of(words(3, "b"))])
        assert not early.done()  # joined: it did not wait for the early one to end
        [first] = await early
        stats = await lm.engine_stats()
    finally:
        await lm.aclose()
    assert late.text == words(3, "b") and late.usage.completion_tokens == 3  # per-request usage
    assert first.text == words(60, "a") and first.usage.completion_tokens == 60
    assert stats["peak_live"] == 2 and stats["joined"] == 1


async def test_slots_bound_the_batch_and_free_slots_are_refilled(model_file):
    lm = await open_lm(model_file, slots=3, step_s=0.005)
    try:
        texts = [words(2 + 3 * (i % 3), f"q{i}x") for i in range(10)]
        outs = await asyncio.gather(*(lm.generate([Request.of(t)]) for t in texts))
        stats = await lm.engine_stats()
    finally:
        await lm.aclose()
    assert [o[0].text for o in outs] == texts
    assert stats["peak_live"] == 3 and stats["admitted"] == 10
    assert stats["joined"] >= 6  # the later seven each took a slot that another freed mid-batch


async def test_a_count_is_answered_while_the_batch_decodes(model_file):
    lm = await open_lm(model_file, step_s=0.02)
    try:
        long = asyncio.ensure_future(lm.generate([Request.of(words(80, "a"))]))
        while (await lm.engine_stats())["decode_steps"] < 2:
            await asyncio.sleep(0.02)
        assert await lm.count_tokens([Request.of("one two three")]) == [3]
        assert not long.done()
        await long
    finally:
        await lm.aclose()


async def test_a_cancelled_call_leaves_the_engine(model_file):
    lm = await open_lm(model_file, step_s=0.02)
    try:
        doomed = asyncio.ensure_future(lm.generate([Request.of(words(500, "a"))]))
        while (await lm.engine_stats())["decode_steps"] < 2:
            await asyncio.sleep(0.02)
        doomed.cancel()
        [c] = await lm.generate([Request.of(words(3, "b"))])
        stats = await lm.engine_stats()
    finally:
        await lm.aclose()
    assert c.text == words(3, "b") and stats["cancelled"] == 1 and stats["decode_steps"] < 100


async def test_a_crash_fails_every_request_in_flight_and_the_next_call_gets_a_new_worker(model_file):
    """Crash isolation with requests that joined at different times: all those in
    flight hear ModelCrashed, the eval's process lives, a fresh worker serves on."""
    lm = await open_lm(model_file, step_s=0.02)
    try:
        await lm.generate([Request.of("warm up")])
        first = lm.worker.pid
        a = asyncio.ensure_future(lm.generate([Request.of(words(40, "a"))]))
        while (await lm.engine_stats())["decode_steps"] < 3:
            await asyncio.sleep(0.02)
        b = asyncio.ensure_future(lm.generate([Request.of(words(40, "b"))]))
        await asyncio.sleep(0.1)
        crash = asyncio.ensure_future(lm.generate([Request.of("x y SEGFAULT")]))
        for call in (a, b, crash):
            with pytest.raises(ModelCrashed, match="SIGSEGV"):
                await call
        [c] = await lm.generate([Request.of("still here")])
        assert c.text == "still here" and lm.worker.pid != first
    finally:
        await lm.aclose()
