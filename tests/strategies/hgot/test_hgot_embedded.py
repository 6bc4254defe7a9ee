"""One end-to-end HGOT run on the real embedded model (SmolLM2-135M)."""

import asyncio

import pytest

from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Passage, Problem
from thoughtloom.lm import Metered, open_lm
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.hgot import HGOT, HGOTConfig
from thoughtloom.tasks.base import Task
from thoughtloom.testing import StaticRetriever


class OverlapJudge:
    async def judge(self, pairs):
        return [float(len(set(h.lower().split()) & set(p.lower().split())) >= 3) for p, h in pairs]


@pytest.mark.integration
def test_hgot_runs_on_the_embedded_model(embedded_path, tmp_path):
    lm = open_lm("embedded", cache_path=tmp_path / "c.sqlite")
    trace = Trace()
    passages = [Passage("p1", "Jaws is a 1975 film directed by Steven Spielberg.", "Jaws"),
                Passage("p2", "Steven Spielberg was born in 1946 in Cincinnati, Ohio.", "Steven Spielberg")]
    ctx = Context(lm=Metered(lm, trace=trace), task=Task(), trace=trace,
                  retriever=StaticRetriever(passages), entail=OverlapJudge())
    cfg = HGOTConfig(samples=2, max_depth=2, max_tokens=48, plan_max_tokens=48, plan_retries=0)
    try:
        result = asyncio.run(HGOT(cfg).run(Problem("e2e", "In what year was the director of Jaws born?"), ctx))
    finally:
        asyncio.run(lm.aclose())
    tree = result.details["tree"]
    assert tree["stop"]  # the run ended by one of the documented rules
    assert trace.of_type("hgot_infer") and trace.of_type("retrieval")
    assert HGOT(cfg).report(result).startswith("L1 In what year was the director of Jaws born?")
