"""A long eval's memory does not grow with its records (issue 40's soak: RSS 103 -> 141 MB over
20,000 questions, the runner holding every record for the summary)."""

import gc
import tracemalloc
from types import SimpleNamespace

from thoughtloom.eval.results import ResultsFile
from thoughtloom.eval.record import EvalRecord
from thoughtloom.eval.summary import summarize
from thoughtloom.lm.meter import UsageTotals


def _record(i: int) -> EvalRecord:
    return EvalRecord(id=f"q{i}", input="What is it? " * 200, prediction=str(i), gold=str(i),
                      metrics={"accuracy": float(i % 2)}, usage={"calls": 1, "prompt_tokens": 10},
                      latency_s=0.5, meta={"stratum": "short"}, details={"chain": "x" * 500})


def test_appending_records_holds_their_sums_not_the_records(tmp_path):
    store = ResultsFile(tmp_path / "out")
    for i in range(200):
        store.append(_record(i))
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(200, 1200):
        store.append(_record(i), [{"type": "call", "t": 0.0, "example": f"q{i}"}])
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert grown < 250_000, f"1,000 records of ~3 KB each grew the store by {grown:,} bytes"
    stats = SimpleNamespace(new=1200, usage=UsageTotals(), server=None)
    summary = summarize(store.tally, total=1200, stats=stats, wall_s=1.0, meta={}, finished=True)
    assert summary == summarize(store.records.values(), total=1200, stats=stats, wall_s=1.0, meta={},
                                finished=True)  # the sums say what the records say
    assert summary["n"] == 1200 and summary["metrics"] == {"accuracy": 0.5} and summary["usage"]["calls"] == 1200
    store.close()
    again = ResultsFile(tmp_path / "out")
    assert again.done() == {f"q{i}" for i in range(1200)} and again.tally.n == 1200
    assert list(again.records)[:2] == ["q0", "q1"]
    again.close()
