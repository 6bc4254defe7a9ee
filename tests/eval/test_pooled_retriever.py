"""Without --index, every strategy on an open-domain task retrieves from the task's own paragraphs."""

import json

from thoughtloom import strategies, tasks
from thoughtloom.core.types import Passage
from thoughtloom.eval import EvalResources, evaluate
from thoughtloom.testing import ScriptedLM, StaticRetriever

RECORD = {"_id": "x", "question": "Where was Ida Vance born?", "answer": "Oslo",
          "context": [["Ida Vance", ["Ida Vance was born in Oslo in 1950."]],
                      ["The Tower", ["The Tower is a film."]]]}


def load(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    task = tasks.get("hotpotqa")
    return task, task.load(path)


async def test_decomp_and_the_baselines_see_the_same_pooled_bm25(tmp_path):
    for name, cfg in (("decomp-nodecomp-ctxt", {"k": 1}), ("retrieve-then-read", {"k": 1, "n": 1})):
        task, examples = load(tmp_path)
        lm = ScriptedLM(lambda req: "Oslo")
        cls = strategies.get(name)
        summary = await evaluate(cls(cls.Config(**cfg)), task, examples, EvalResources(lm), tmp_path / name)
        assert summary["metrics"]["em"] == 1.0
        assert summary["pooled_corpus"] == str(tmp_path / "q.jsonl")
        assert "Ida Vance was born in Oslo in 1950." in lm.requests[-1].messages[-1].content
        assert "The Tower is a film." not in lm.requests[-1].messages[-1].content


async def test_a_given_retriever_wins_over_the_pooled_one(tmp_path):
    task, examples = load(tmp_path)
    retriever = StaticRetriever([Passage("p", "Ida Vance was born in Bergen.", "Ida Vance")])
    lm = ScriptedLM(lambda req: "The answer is: Bergen")
    cls = strategies.get("retrieve-then-read")
    summary = await evaluate(cls(cls.Config(k=1, n=1)), task, examples, EvalResources(lm, retriever),
                             tmp_path / "out")
    assert retriever.queries == ["Where was Ida Vance born?"] and "pooled_corpus" not in summary
    assert "Bergen" in lm.requests[0].messages[-1].content
