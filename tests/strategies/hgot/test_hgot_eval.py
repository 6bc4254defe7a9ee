"""HGOT through the eval runner on a paper-format CSV: stratified task report."""

import asyncio
import json

from thoughtloom.core.types import Passage
from thoughtloom.eval.runner import EvalResources, evaluate
from thoughtloom.strategies.hgot import HGOT, HGOTConfig
from thoughtloom.tasks import get
from thoughtloom.testing import ScriptedLM, StaticRetriever


def test_eval_writes_length_strata(tmp_path):
    for stratum, q in (("long", "In what year was the long-winded director of the film Jaws born?"),
                       ("short", "Jaws director birth year?")):
        (tmp_path / f"hgot_test_{stratum}.csv").write_text(f"Question,Answer\n{q},1946\n")
    (tmp_path / "hgot_test_medium.csv").write_text("Question,Answer\nWho directed Jaws?,Steven Spielberg\n")
    task = get("hotpotqa")
    examples = task.load(tmp_path)
    lm = ScriptedLM(lambda r: "Spielberg was born in 1946 [1].\nAnswer: 1946")
    retriever = StaticRetriever([Passage("s", "Steven Spielberg was born in 1946.", "Steven Spielberg")])
    summary = asyncio.run(evaluate(HGOT(HGOTConfig(samples=2, max_depth=1)), task, examples,
                                   EvalResources(lm, retriever=retriever), tmp_path / "out"))
    strata = summary["task_report"]["strata"]["em"]
    assert strata["long"] == {"n": 1, "mean": 1.0}
    assert strata["medium"] == {"n": 1, "mean": 0.0}
    assert abs(strata["overall"]["mean"] - 2 / 3) < 1e-9
    rec = json.loads((tmp_path / "out" / "results.jsonl").read_text().splitlines()[0])
    assert rec["details"]["tree"]["question"] and rec["details"]["gathered"] == ["s"]
