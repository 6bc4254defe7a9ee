"""The Ray executor on a local cluster (loopback): same records as the local executor, a killed
actor replaced and its example retried once, a fatal error on a worker stops the run."""

import functools
import json
import os
import signal
import sys
from pathlib import Path

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core import LMError, Problem
from thoughtloom.eval import EvalResources, EvalSettings, RunSpec, evaluate
from thoughtloom.tasks import Example
from thoughtloom.testing import ScriptedLM

pytestmark = pytest.mark.integration

TASK = tasks.get("gsm8k")
STRATEGY = strategies.get("cot")()


@pytest.fixture(autouse=True)
def _ray(ray_cluster):
    # The actors run this module's functions: send them by value (tests/ is not importable there).
    import ray.cloudpickle

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


def examples(n):
    return [Example(Problem(f"q{i}", f"What is {i} plus 1?"), str(i + 1)) for i in range(n)]


def question_number(req):
    return int(req.messages[-1].content.rsplit("Question: What is ", 1)[1].split()[0])


def reply(marker_dir, deaths, fatal, req):
    """Right for even i, wrong for odd; question 3 kills its worker the first ``deaths`` times it is asked;
    question ``fatal`` says the service is down."""
    i = question_number(req)
    if i == fatal:
        raise LMError("service down")
    if i == 3:
        for n in range(deaths):
            marker = Path(marker_dir) / f"death{n}"
            if not marker.exists():
                marker.write_text(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGKILL)
    return f"The answer is: {i + 1 if i % 2 == 0 else i}"


def scripted_lm(marker_dir, deaths=0, fatal=-1):
    return ScriptedLM(functools.partial(reply, marker_dir, deaths, fatal))


def scripted_services(marker_dir, deaths=0, fatal=-1):
    return EvalResources(scripted_lm(marker_dir, deaths, fatal))


def ray_executor(tmp_path, workers=2, **kw):
    """Workers that open the services of a spec with no judge and no index, on the scripted model."""
    from thoughtloom.eval.ray_executor import RayExecutor

    return RayExecutor(RunSpec(model=None, entail="none"), workers=workers,
                       lm=functools.partial(scripted_lm, str(tmp_path), **kw))


def read(path):
    return [json.loads(line) for line in (path / "results.jsonl").read_text().splitlines()]


def answers(path):
    return sorted((r["id"], r["prediction"], r["metrics"]["accuracy"], r["error"]) for r in read(path))


async def test_same_records_as_the_local_executor(tmp_path):
    settings = EvalSettings(concurrency=2)
    await evaluate(STRATEGY, TASK, examples(8), scripted_services(str(tmp_path)), tmp_path / "local",
                   settings=settings)
    summary = await evaluate(STRATEGY, TASK, examples(8), None, tmp_path / "ray", settings=settings,
                             executor=ray_executor(tmp_path))
    assert answers(tmp_path / "ray") == answers(tmp_path / "local")
    assert len(read(tmp_path / "ray")) == 8
    assert summary["executor"] == "ray" and summary["workers"] == 2 and summary["model"] == "scripted"
    assert summary["complete"] and summary["usage"]["calls"] == 8
    # run.json names the services the workers ran on, as a local run names its own
    identity = [json.loads((tmp_path / run / "run.json").read_text()) for run in ("local", "ray")]
    assert identity[1]["config"] == identity[0]["config"] and identity[1]["config"]["model"]["id"] == "scripted"
    assert identity[1]["settings"]["notes"]["executor"] == "ray"
    events = [json.loads(line) for line in (tmp_path / "ray" / "trace.jsonl").read_text().splitlines()]
    assert {e["example"] for e in events if e["type"] == "llm_call"} == {f"q{i}" for i in range(8)}


async def test_a_killed_actor_is_replaced_and_its_example_retried_once(tmp_path):
    summary = await evaluate(STRATEGY, TASK, examples(6), None, tmp_path / "out",
                             executor=ray_executor(tmp_path, deaths=1))
    assert (tmp_path / "death0").exists()  # a worker really died
    records = read(tmp_path / "out")
    assert sorted(r["id"] for r in records) == [f"q{i}" for i in range(6)]
    assert all(r["error"] is None for r in records)
    assert next(r for r in records if r["id"] == "q3")["prediction"] == "3"
    assert summary["complete"] and summary["n_errors"] == 0


async def test_an_example_whose_worker_dies_twice_is_an_error_record(tmp_path):
    summary = await evaluate(STRATEGY, TASK, examples(6), None, tmp_path / "out",
                             executor=ray_executor(tmp_path, deaths=2))
    records = read(tmp_path / "out")
    assert sorted(r["id"] for r in records) == [f"q{i}" for i in range(6)]
    bad = [r for r in records if r["error"]]
    assert [r["id"] for r in bad] == ["q3"] and "worker died 2 times" in bad[0]["error"]
    assert bad[0]["metrics"] == {"accuracy": 0.0} and bad[0]["usage"]["calls"] == 0
    assert set(bad[0]) == set(records[0])  # the same fields as any record
    assert summary["n_errors"] == 1 and summary["complete"]
    # the error record is retried like any other
    await evaluate(STRATEGY, TASK, examples(6), None, tmp_path / "out", settings=EvalSettings(retry_errors=True),
                   executor=ray_executor(tmp_path, deaths=2))
    assert [r["error"] for r in read(tmp_path / "out") if r["id"] == "q3"] == [None]


async def test_a_fatal_error_on_a_worker_stops_the_run_as_itself(tmp_path):
    with pytest.raises(LMError, match="service down"):
        await evaluate(STRATEGY, TASK, examples(6), None, tmp_path / "out", settings=EvalSettings(concurrency=1),
                       executor=ray_executor(tmp_path, fatal=4))
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["complete"] is False and all(r["id"] != "q4" for r in read(tmp_path / "out"))
