"""The embedded backend's queue and model worker, on a stand-in engine (no model).

The worker tests start real child processes (``thoughtloom.testing.engine``),
so a crash is a real SIGSEGV in another process.
"""

import asyncio
import os
import signal

import pytest

from thoughtloom.core import ConfigError, LMError, ModelCrashed, PromptTooLong, Request
from thoughtloom.lm.llamacpp import LlamaCppLM
from thoughtloom.lm.cpu import LoadMeter, cpu_flags, repack_safe, threads_for
from thoughtloom.lm.llamacpp_worker import MAX_CRASHES_IN_A_ROW

ECHO = "thoughtloom.testing.engine:EchoEngine"


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "fake.gguf"
    path.write_bytes(b"0" * 10)
    return path


class Recorder:
    """An in-process worker that answers each request with its text and records
    what it was handed in each exchange."""

    def __init__(self):
        self.handed: list[list[str]] = []
        self.pid = os.getpid()

    def exchange(self, submit, cancel=()):
        self.handed.append([r["messages"][-1]["content"] for _, r in submit])
        return [(key, {"text": r["messages"][-1]["content"], "finish_reason": "stop", "prompt_tokens": 1,
                       "completion_tokens": 1, "latency_s": 0.0, "logprobs": None}) for key, r in submit]

    def wake(self):
        pass

    def stop(self):
        pass


@pytest.fixture
def recorded(model_file):
    lm = LlamaCppLM(model_file, max_parallel=3)
    lm.worker = Recorder()
    return lm


async def test_results_come_back_in_request_order_and_requests_are_handed_over_at_once(recorded):
    prompts = [f"question {i}" for i in range(6)]
    out = await recorded.generate([Request.of(p) for p in prompts])
    assert [c.text for c in out] == prompts
    # all six at once, beyond max_parallel: the engine's slots decide what decodes when
    assert recorded.worker.handed == [prompts]


async def test_engine_errors_are_typed(model_file):
    lm = LlamaCppLM(model_file, engine=ECHO, isolate=False)
    with pytest.raises(PromptTooLong, match="n_ctx"):  # per example, not fatal to an eval
        await lm.generate([Request.of("TOO LONG")])
    lm.worker.exchange = lambda submit, cancel=(): [(k, {"error": "error", "message": "bad grammar"})
                                                    for k, _ in submit]
    with pytest.raises(LMError, match="bad grammar"):
        await lm.generate([Request.of("x")])


async def test_reply_text_is_made_encodable(recorded):
    [c] = await recorded.generate([Request.of("half an emoji \ud83d")])
    assert c.text == "half an emoji \ufffd"
    c.text.encode("utf-8")


def test_missing_model_file():
    with pytest.raises(ConfigError, match="not found"):
        LlamaCppLM("/nonexistent/model.gguf")


def test_model_id_names_the_file(model_file):
    assert LlamaCppLM(model_file).model_id == "gguf:fake.gguf:10"


def test_max_parallel_must_be_positive(model_file):
    with pytest.raises(ConfigError, match="max_parallel"):
        LlamaCppLM(model_file, max_parallel=0)


# -- the worker process -------------------------------------------------------

async def test_worker_runs_in_another_process_and_batches(model_file):
    lm = LlamaCppLM(model_file, engine=ECHO)
    try:
        out = await lm.generate([Request.of(f"q{i}") for i in range(4)])
        assert [c.text for c in out] == ["q0", "q1", "q2", "q3"]
        assert lm.worker.pid != os.getpid()
    finally:
        await lm.aclose()
    assert lm.worker.pid is None  # stopped


async def test_a_native_crash_is_model_crashed_and_the_next_call_gets_a_new_worker(model_file):
    lm = LlamaCppLM(model_file, engine=ECHO)
    try:
        await lm.generate([Request.of("warm up")])
        first = lm.worker.pid
        with pytest.raises(ModelCrashed, match="SIGSEGV") as info:
            await lm.generate([Request.of("please SEGFAULT now")])
        assert "fake.gguf" in str(info.value)
        [c] = await lm.generate([Request.of("still here")])
        assert c.text == "still here" and lm.worker.pid != first
    finally:
        await lm.aclose()


async def test_a_worker_killed_mid_call_fails_that_batch_only(model_file):
    lm = LlamaCppLM(model_file, engine=ECHO)
    lm.worker.options = {**lm.worker.options, "delay_s": 2.0}
    try:
        await lm.generate([Request.of("warm up")])
        call = asyncio.ensure_future(lm.generate([Request.of("a"), Request.of("b")]))
        await asyncio.sleep(0.5)
        os.kill(lm.worker.pid, signal.SIGKILL)
        with pytest.raises(ModelCrashed, match="SIGKILL"):
            await call
        [c] = await lm.generate([Request.of("after")])
        assert c.text == "after"
    finally:
        await lm.aclose()


async def test_repeated_crashes_become_fatal(model_file):
    lm = LlamaCppLM(model_file, engine=ECHO)
    try:
        for _ in range(MAX_CRASHES_IN_A_ROW - 1):
            with pytest.raises(ModelCrashed):
                await lm.generate([Request.of("SEGFAULT")])
        with pytest.raises(LMError, match="in a row") as info:
            await lm.generate([Request.of("SEGFAULT")])
        assert not isinstance(info.value, ModelCrashed)  # an eval stops here
    finally:
        await lm.aclose()


async def test_a_model_that_cannot_load_is_a_config_error(model_file):
    lm = LlamaCppLM(model_file, engine="thoughtloom.testing.engine:NoSuchEngine")
    with pytest.raises(ConfigError, match="cannot load model fake.gguf"):
        await lm.generate([Request.of("x")])
    await lm.aclose()


# -- CPU features ----------------------------------------------------------------

def test_repack_is_off_on_amx_cpus(tmp_path):
    amx = tmp_path / "cpuinfo"
    amx.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f amx_bf16 amx_tile amx_int8\n")
    plain = tmp_path / "cpuinfo2"
    plain.write_text("processor\t: 0\nflags\t\t: fpu avx2 fma\n")
    assert not repack_safe(cpu_flags(amx))
    assert repack_safe(cpu_flags(plain))
    assert repack_safe(cpu_flags(tmp_path / "absent"))


def test_threads_follow_the_free_cores():
    assert threads_for(2, 0.0) == 2
    assert threads_for(2, 0.1) == 2
    assert threads_for(2, 0.8) == 1  # a core mostly taken: don't wait on it
    assert threads_for(2, 3.0) == 1  # never zero
    assert threads_for(16, 4.0) == 12


def test_load_meter_counts_other_processes_only(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 100 1000 0 0 0 0 0 0\n")
    meter = LoadMeter(stat)
    tick = meter.tick
    # one second later: 2 cores x 1 s passed, of which 1 s busy (others: we used ~0)
    meter._last = (meter._last[0] - 1.0, meter._last[1], meter._last[2])
    stat.write_text(f"cpu  {100 + tick} 0 100 {1000 + tick} 0 0 0 0 0 0\n")
    assert meter.others() == pytest.approx(1.0, abs=0.1)
    assert LoadMeter(tmp_path / "absent").others() is None


async def test_an_eval_records_a_crash_against_its_example_and_goes_on(model_file, tmp_path):
    import json

    from thoughtloom import strategies, tasks
    from thoughtloom.core import Problem
    from thoughtloom.eval import EvalResources, evaluate
    from thoughtloom.tasks import Example

    lm = LlamaCppLM(model_file, engine=ECHO)
    questions = ["What is 1 plus 1?", "SEGFAULT: what is 2 plus 2?", "What is 3 plus 3?"]
    examples = [Example(Problem(f"q{i}", q), "0") for i, q in enumerate(questions)]
    try:
        summary = await evaluate(strategies.get("io")(), tasks.get("gsm8k"), examples, EvalResources(lm),
                                 tmp_path / "out")
    finally:
        await lm.aclose()
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "out" / "results.jsonl").read_text().splitlines())}
    assert sorted(records) == ["q0", "q1", "q2"] and summary["complete"]
    assert records["q1"]["error"].startswith("ModelCrashed") and "SIGSEGV" in records["q1"]["error"]
    assert records["q0"]["error"] is None and records["q2"]["error"] is None
