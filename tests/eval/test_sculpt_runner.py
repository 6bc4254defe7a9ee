"""Every tree strategy on every ThoughtSculpt task through the eval runner (ScriptedLM)."""

import json

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.eval.runner import EvalResources, EvalSettings, evaluate
from thoughtloom.lm.meter import Budget
from thoughtloom.testing import ScriptedLM

from conftest import data_file

REPLY = ("h1. AGEND\nSentence: The snow fell on a vest.\nExpression: (13 - 9) * (10 - 4)\n"
         "[1] A twist.\n[2] A chase.\n[3] A reveal.\nThe answer is: (13 - 9) * (10 - 4)")


def brain(req):
    if "JSON object" in req.messages[0].content:
        return json.dumps({"feedback": "fine", "score": 6,
                           "items": [{"item": "x", "score": 6, "feedback": "ok"}]})
    return REPLY


def _data(task):
    return {"game24": lambda: data_file("game24", "24.csv"),
            "crosswords": lambda: data_file("crosswords_mini5x5", "mini0505.json"),
            "commongen": lambda: data_file("commongen_hard", "commongen_hard.jsonl"),
            "outline": lambda: "seed"}[task]()


@pytest.mark.parametrize("task_name", ["game24", "crosswords", "commongen", "outline"])
@pytest.mark.parametrize("strategy", ["sculpt-mcts", "sculpt-dfs", "tot-bfs", "tot-dfs", "self-refine",
                                      "cot", "cot-sc"])
async def test_runner(tmp_path, task_name, strategy):
    task = tasks.get(task_name)
    examples = task.load(_data(task_name))[:2]
    cls = strategies.get(strategy)
    cfg = strategies.make_config(cls, {"rollouts": "2"} if strategy == "sculpt-mcts" else {})
    summary = await evaluate(cls(cfg), task, examples, EvalResources(ScriptedLM(brain)), tmp_path,
                             settings=EvalSettings(concurrency=2, budget=Budget(max_calls=30)))
    assert summary["n"] == 2 and summary["n_errors"] == 0
    assert task.primary_metric in summary["metrics"]
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert all(r["usage"]["calls"] <= 30 for r in records)
    if task_name == "game24":
        # the scripted expression solves 4 9 10 13, not these puzzles: the checker must say so
        assert all(r["prediction"] == "(13 - 9) * (10 - 4)" for r in records)
        assert summary["metrics"]["success"] == 0.0
    if task_name == "crosswords":
        assert summary["metrics"]["letters"] > 0.0  # AGEND is puzzle 0's first row
