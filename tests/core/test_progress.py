"""The progress hook (core/progress.py): an update at the start, at every model call and at every phase."""

import itertools
import logging

from thoughtloom import strategies, tasks
from thoughtloom.core.events import phase
from thoughtloom.core.progress import ProgressUpdate, QuestionProgress, phase_label
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Problem, request_hash
from thoughtloom.eval import EvalResources, EvalSettings, run_problem
from thoughtloom.strategies import make_config
from thoughtloom.testing import ScriptedLM

GSM = tasks.get("gsm8k")


def scripted() -> ScriptedLM:
    """A model whose every answer differs from the last (a rewrite is never a duplicate)."""
    versions = itertools.count(1)

    def reply(req):
        if "JSON object" in req.messages[-1].content:
            return '{"feedback": "fine", "score": 6}'
        return f"Four apples, version {next(versions)}.\nThe answer is: 4"

    return ScriptedLM(reply)


def refine(iterations: int = 2):
    cls = strategies.get("self-refine")
    return cls(make_config(cls, {"iterations": str(iterations), "stop_at_goal": "false"}))


async def test_the_hook_hears_every_model_call_with_growing_counts():
    updates: list[ProgressUpdate] = []
    lm = scripted()
    run = await run_problem(refine(), GSM, Problem("q1", "2 + 2?"), EvalResources(lm), EvalSettings(),
                            progress=updates.append)
    assert run.error is None and lm.calls == 6  # root + evaluation, then 2 rounds of rewrite + evaluation
    first = updates[0]
    assert (first.question, first.kind, first.phase, first.calls, first.in_flight) == ("q1", "start", "", 0, 0)
    calls = [u for u in updates if u.kind == "call"]
    assert [u.calls for u in calls] == [1, 2, 3, 4, 5, 6]
    # each call is announced as it goes out (one at a time here), then counted when it is back
    kinds = [u.kind for u in updates if u.kind in ("sent", "call")]
    assert kinds == ["sent", "call"] * 6
    assert {u.in_flight for u in updates if u.kind == "sent"} == {1} and {u.in_flight for u in calls} == {0}
    tokens = [u.total_tokens for u in calls]
    assert tokens == sorted(tokens) and len(set(tokens)) == 6
    last = updates[-1]
    assert (last.calls, last.prompt_tokens, last.completion_tokens) == (
        run.usage.calls, run.usage.prompt_tokens, run.usage.completion_tokens)
    assert all(u.question == "q1" for u in updates)
    # the phase each call was made in
    assert [u.phase for u in calls] == ["first answer"] * 2 + ["round 1/2"] * 2 + ["round 2/2"] * 2


async def test_progress_changes_no_request():
    plain, watched = scripted(), scripted()
    problem = Problem("q1", "2 + 2?")
    a = await run_problem(refine(), GSM, problem, EvalResources(plain), EvalSettings())
    b = await run_problem(refine(), GSM, problem, EvalResources(watched), EvalSettings(), progress=lambda u: None)
    assert [request_hash("m", r) for r in plain.requests] == [request_hash("m", r) for r in watched.requests]
    assert [len(x) for x in plain.batches] == [len(x) for x in watched.batches]
    assert a.result.answer == b.result.answer
    strip = [{k: v for k, v in e.items() if k not in ("t", "latency_s")} for e in a.trace.events]
    assert strip == [{k: v for k, v in e.items() if k not in ("t", "latency_s")} for e in b.trace.events]


async def test_a_failing_hook_is_dropped_and_the_question_still_answers(caplog):
    heard = []

    def broken(update):
        heard.append(update)
        raise RuntimeError("display gone")

    with caplog.at_level(logging.WARNING, logger="thoughtloom.core.progress"):
        run = await run_problem(refine(), GSM, Problem("q1", "2 + 2?"), EvalResources(scripted()),
                                EvalSettings(), progress=broken)
    assert run.error is None and run.result.answer == "4"
    assert len(heard) == 1 and "progress hook" in caplog.text


def test_only_calls_and_phases_move_it():
    updates = []
    watcher = QuestionProgress(updates.append, "q")
    trace = Trace(sink=watcher)
    trace.emit("sample", index=0, answer="4", truncated=False)
    assert updates == []
    phase(trace, "rollout", 3, 8)
    trace.emit("llm_call", request_hash="h", model="m", sample_index=0, temperature=0.0, prompt_tokens=10,
               completion_tokens=5, cached=True, latency_s=0.0, finish_reason="stop")
    assert [(u.kind, u.phase, u.calls, u.cached_calls, u.total_tokens) for u in updates] == [
        ("phase", "rollout 3/8", 0, 0, 0), ("call", "rollout 3/8", 1, 1, 15)]


def test_phase_labels():
    assert phase_label({"phase": "rollout", "step": 3, "of": 20}) == "rollout 3/20"
    assert phase_label({"phase": "program step", "step": 4, "of": None, "depth": 1}) == "program step 4 · depth 1"
    assert phase_label({"phase": "plan level", "step": 2, "of": 3, "depth": 0}) == "plan level 2/3"
    assert phase_label({"phase": "sampling", "step": None, "of": 5}) == "sampling 5"
    assert phase_label({"phase": "first answer", "step": None, "of": None}) == "first answer"
