"""`thoughtloom index build|search|eval` and the --index plumbing into strategies."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from typer.testing import CliRunner

from thoughtloom.cli.main import app
from thoughtloom.core.types import Problem
from thoughtloom.entail import CachedJudge, LexicalJudge
from thoughtloom.eval.runner import EvalResources, evaluate
from thoughtloom.retrieval import CachedRetriever, build_index, open_index, read_corpus
from thoughtloom.strategies.interface import Strategy
from thoughtloom.strategies.result import Result
from thoughtloom.tasks.base import Example, Task
from thoughtloom.testing import ScriptedLM

runner = CliRunner()

HOTPOT = [
    {"_id": "q1", "question": "Which river flows through the capital of France?", "answer": "Seine",
     "supporting_facts": [["Paris", 0], ["Seine", 0]],
     "context": [["Paris", ["Paris is the capital of France."]],
                 ["Seine", ["The Seine is a river that flows through Paris."]],
                 ["Llama", ["Llamas live in the Andes."]]]},
    {"_id": "q2", "question": "Where do llamas live?", "answer": "Andes",
     "supporting_facts": [["Llama", 0]],
     "context": [["Llama", ["Llamas live in the Andes."]], ["Tea", ["Tea is a drink."]]]},
]


def test_build_search_eval(tmp_path):
    data = tmp_path / "hot.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in HOTPOT))
    idx = tmp_path / "idx"
    res = runner.invoke(app, ["index", "build", "--corpus", str(data), "--out", str(idx), "--set", "bm25.k1=1.2"])
    assert res.exit_code == 0, res.output
    assert "bm25 index of 4 passages" in res.output
    assert json.loads((idx / "manifest.json").read_text())["settings"]["bm25"]["k1"] == 1.2

    res = runner.invoke(app, ["index", "search", str(idx), "llamas andes", "-k", "2", "--json"])
    assert res.exit_code == 0, res.output
    hits = json.loads(res.stdout)["results"][0]["hits"]
    assert hits[0]["title"] == "Llama" and hits[0]["rank"] == 0

    res = runner.invoke(app, ["index", "search", str(idx), "llamas andes"])
    assert res.exit_code == 0 and "Llamas live in the Andes." in res.output

    res = runner.invoke(app, ["index", "eval", str(idx), "--data", str(data), "--data", str(data),
                              "-k", "1,2", "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["n"] == 2  # the same questions twice count once
    assert report["recall_any@1"] == 1.0 and report["recall_all@2"] == 1.0 and report["recall_all@1"] == 0.5

    res = runner.invoke(app, ["index", "eval", str(idx), "--data", str(data), "-k", "1,x"])
    assert res.exit_code != 0


def test_build_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{oops\n')
    cmd = [sys.executable, "-m", "thoughtloom", "index", "build", "--corpus", str(bad), "--out", str(tmp_path / "i")]
    env = {**os.environ, "COLUMNS": "1000"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    stderr = " ".join(proc.stderr.split())
    assert proc.returncode == 2 and "bad.jsonl:2: invalid JSON" in stderr and "--skip-bad" in stderr
    proc = subprocess.run(cmd + ["--skip-bad"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "1 skipped" in proc.stderr and "bad.jsonl:2" in proc.stderr


def test_bad_set_is_rejected(tmp_path):
    res = runner.invoke(app, ["index", "build", "--corpus", str(tmp_path), "--out", str(tmp_path / "i"),
                              "--set", "k1=2"])
    assert res.exit_code != 0


class RetrieveAndJudge(Strategy):
    """Test strategy: retrieve for the question, judge the top passage against it."""

    name = "test-retrieve-judge"

    async def solve(self, problem: Problem, ctx) -> Result:
        (hits,) = await ctx.search([problem.question], 2)
        (prob,) = await ctx.entail.judge([(hits[0].passage.text, problem.question)])
        return Result(answer=hits[0].passage.title, confidence=prob)


async def test_eval_gives_strategies_a_retriever_and_judge_and_traces_each_search_once(tmp_path):
    data = tmp_path / "hot.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in HOTPOT))
    build_index(read_corpus(data), "bm25", tmp_path / "idx")
    index = open_index(tmp_path / "idx")
    res = EvalResources(ScriptedLM([]), CachedRetriever(index), CachedJudge(LexicalJudge()))
    examples = [Example(Problem("q2", "Where do llamas live?"), "Llama")]
    summary = await evaluate(RetrieveAndJudge(), Task(), examples, res, tmp_path / "out")
    assert summary["metrics"]["em"] == 1.0
    record = json.loads((tmp_path / "out" / "results.jsonl").read_text().splitlines()[0])
    assert record["confidence"] > 0
    events = [json.loads(line) for line in (tmp_path / "out" / "trace.jsonl").read_text().splitlines()]
    retrievals = [e for e in events if e["type"] == "retrieval"]
    assert len(retrievals) == 1 and retrievals[0]["results"][0][0]["title"] == "Llama"


def test_importing_thoughtloom_loads_no_heavy_libraries():
    code = ("import sys, thoughtloom, thoughtloom.retrieval, thoughtloom.entail, thoughtloom.cli.main;"
            "heavy = [m for m in ('torch', 'sentence_transformers', 'transformers', 'bm25s', 'llama_cpp')"
            " if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_entail_and_index_options(tmp_path):
    import pytest

    from thoughtloom.eval.services import open_entail, open_retriever
    from thoughtloom.core.errors import ConfigError
    from thoughtloom.entail import LLMJudge

    lm = ScriptedLM([])
    judge = open_entail("llm:mode=votes,votes=3", lm)
    assert isinstance(judge.inner, LLMJudge) and judge.inner.config.votes == 3
    assert isinstance(open_entail("lexical", lm).inner, LexicalJudge)
    assert open_entail("none", lm) is None and open_retriever(None) is None
    with pytest.raises(ConfigError, match="unknown --entail"):
        open_entail("nli", lm)
    with pytest.raises(ConfigError, match="cross-encoder model folder not found"):
        open_entail(f"cross:{tmp_path / 'missing'}", lm)
    with pytest.raises(ConfigError, match="is not an index"):
        open_retriever(tmp_path)
