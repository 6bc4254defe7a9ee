"""The output folder under stress: locks, atomic rewrites, corrupt lines, traces, summary lifecycle."""

import asyncio
import json
import os
import subprocess
import sys

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core import Problem
from thoughtloom.eval import EvalResources, EvalSettings, OutputLock, OutputLocked, evaluate
from thoughtloom.eval import results as results_mod
from thoughtloom.eval.results import ResultsFile
from thoughtloom.tasks import Example
from thoughtloom.testing import ScriptedLM

TASK = tasks.get("gsm8k")
COT = strategies.get("cot")()


def examples(n):
    return [Example(Problem(f"q{i}", f"What is {i} plus 1?"), str(i + 1)) for i in range(n)]


def right(req):
    i = int(req.messages[-1].content.rsplit("Question: What is ", 1)[1].split()[0])
    return f"The answer is: {i + 1}"


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- the lock ------------------------------------------------------------------

async def test_two_concurrent_runs_cannot_both_write(tmp_path):
    """Two evaluations of one folder at once: one runs, the other is refused before writing."""
    release = asyncio.Event()

    class Gate(ScriptedLM):
        async def generate(self, requests):
            await release.wait()
            return await super().generate(requests)

    first = asyncio.create_task(evaluate(COT, TASK, examples(3), EvalResources(Gate(right)), tmp_path))
    await asyncio.sleep(0.05)  # the first run holds the lock and waits on its model
    second_lm = ScriptedLM(right)
    with pytest.raises(OutputLocked) as info:
        await evaluate(COT, TASK, examples(3), EvalResources(second_lm), tmp_path)
    assert f"pid {os.getpid()}" in str(info.value) and "started" in str(info.value)
    assert second_lm.calls == 0
    release.set()
    summary = await first
    assert summary["complete"] and len(read(tmp_path / "results.jsonl")) == 3


def test_lock_held_by_another_process_names_it(tmp_path):
    code = ("import sys, time; from thoughtloom.eval import OutputLock; "
            f"l = OutputLock({str(tmp_path)!r}); l.acquire(); print('held', flush=True); sys.stdin.read()")
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(OutputLocked) as info:
            OutputLock(tmp_path).acquire()
        assert f"pid {holder.pid}" in str(info.value) and "another run" in str(info.value)
    finally:
        holder.stdin.close()
        holder.wait(30)
    # the holder is gone: its lock went with it, whatever the file still says
    with OutputLock(tmp_path):
        info = json.loads((tmp_path / ".lock").read_text())
        assert info["pid"] == os.getpid()


async def test_stale_lock_file_of_a_dead_process_is_taken_over(tmp_path):
    (tmp_path / ".lock").write_text(json.dumps({"pid": 999999, "host": "gone", "started": "2020-01-01"}))
    summary = await evaluate(COT, TASK, examples(2), EvalResources(ScriptedLM(right)), tmp_path)
    assert summary["complete"]


def test_out_that_is_a_file_is_a_config_error(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(Exception) as info:
        OutputLock(target).acquire()
    assert "is a file" in str(info.value)


# -- results.jsonl -----------------------------------------------------------------

async def test_corrupt_middle_line_keeps_every_valid_line(tmp_path):
    await evaluate(COT, TASK, examples(4), EvalResources(ScriptedLM(right)), tmp_path)
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    lines[1] = '{"id": "q1", "predic\x00tion garbage'
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    lm = ScriptedLM(right)
    summary = await evaluate(COT, TASK, examples(4), EvalResources(lm), tmp_path)
    ids = [r["id"] for r in read(tmp_path / "results.jsonl")]
    assert sorted(ids) == ["q0", "q1", "q2", "q3"] and len(ids) == 4
    assert lm.calls == 1 and summary["this_run"]["examples"] == 1  # only the lost one ran again
    aside = (tmp_path / "results.jsonl.bad").read_text()
    assert aside.startswith("2\t") and "garbage" in aside


async def test_rewrite_is_atomic(tmp_path, monkeypatch):
    """A crash in the middle of a rewrite (--retry-errors) leaves the old file whole."""
    def fails_q1(req):
        if "What is 1 plus" in req.messages[-1].content:
            raise RuntimeError("boom")
        return right(req)

    await evaluate(COT, TASK, examples(3), EvalResources(ScriptedLM(fails_q1)), tmp_path)
    before = (tmp_path / "results.jsonl").read_bytes()

    def crash(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(results_mod.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        ResultsFile(tmp_path, retry_errors=True)
    assert (tmp_path / "results.jsonl").read_bytes() == before
    monkeypatch.undo()
    lm = ScriptedLM(right)
    await evaluate(COT, TASK, examples(3), EvalResources(lm), tmp_path, settings=EvalSettings(retry_errors=True))
    assert lm.calls == 1 and [r["error"] for r in read(tmp_path / "results.jsonl")] == [None] * 3


async def test_resume_leaves_one_trace_per_example(tmp_path):
    def fails_q1(req):
        if "What is 1 plus" in req.messages[-1].content:
            raise RuntimeError("boom")
        return right(req)

    await evaluate(COT, TASK, examples(3), EvalResources(ScriptedLM(fails_q1)), tmp_path)
    await evaluate(COT, TASK, examples(3), EvalResources(ScriptedLM(right)), tmp_path,
                   settings=EvalSettings(retry_errors=True))
    # a third open compacts what the retry appended
    ResultsFile(tmp_path).close()
    events = read(tmp_path / "trace.jsonl")
    q1 = [e for e in events if e["example"] == "q1"]
    assert [e["type"] for e in q1] == ["llm_call"]  # the failed attempt's events are gone
    for ex in ("q0", "q2"):
        assert [e["type"] for e in events if e["example"] == ex] == ["llm_call"]


# -- summary.json --------------------------------------------------------------

async def test_summary_is_written_at_start_and_completed_at_the_end(tmp_path):
    seen = []

    def peek(req):
        seen.append(json.loads((tmp_path / "summary.json").read_text()))
        return right(req)

    summary = await evaluate(COT, TASK, examples(3), EvalResources(ScriptedLM(peek)), tmp_path)
    assert seen[0]["complete"] is False and seen[0]["n"] == 0 and seen[0]["total"] == 3
    assert all(s["complete"] is False for s in seen)
    final = json.loads((tmp_path / "summary.json").read_text())
    assert final == summary and final["complete"] is True and final["n"] == 3
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


async def test_summary_is_kept_current_during_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr("thoughtloom.eval.summary.SummaryWriter.__init__.__defaults__", (0.0,))
    seen = []

    def peek(req):
        seen.append(json.loads((tmp_path / "summary.json").read_text())["n"])
        return right(req)

    await evaluate(COT, TASK, examples(3), EvalResources(ScriptedLM(peek)), tmp_path)
    assert seen == [0, 1, 2]


async def test_duplicated_runs_compact_to_one_record_and_one_trace_each(tmp_path):
    """What two unlocked runs used to leave: every record and every trace block twice."""
    await evaluate(COT, TASK, examples(3), EvalResources(ScriptedLM(right)), tmp_path)
    for name in ("results.jsonl", "trace.jsonl"):
        path = tmp_path / name
        path.write_text(path.read_text() * 2)
    ResultsFile(tmp_path).close()
    assert sorted(r["id"] for r in read(tmp_path / "results.jsonl")) == ["q0", "q1", "q2"]
    events = read(tmp_path / "trace.jsonl")
    assert sorted(e["example"] for e in events) == ["q0", "q1", "q2"]


def test_numbers_read_back_from_records_are_finite_or_zero():
    from thoughtloom.core.errors import ConfigError
    from thoughtloom.eval.results import number, score, usage

    record = {"metrics": {"em": 1, "f1": float("nan"), "x": True, "y": "0.5"},
              "usage": {"calls": 3, "prompt_tokens": 10, "completion_tokens": float("inf")}}
    assert [score(record, m) for m in ("em", "f1", "x", "y")] == [1.0, 0.0, 0.0, 0.0]
    with pytest.raises(ConfigError, match="no metric 'missing'.*em, f1, x, y"):  # never a silent 0
        score(record, "missing")
    assert usage(record, "calls") == 3.0
    assert usage(record, "total_tokens") == 10.0  # summed from its parts; the infinite one reads 0
    assert usage({"usage": "garbage"}, "calls") == 0.0 and score({"metrics": None}, "em") == 0.0
    assert number(float("-inf")) == 0.0 and number(2) == 2.0
