"""Byte-identity of a refactor: every registered strategy on each of its tasks (2 examples each), answered
by a scripted model that picks a well-formed reply by the request's content hash, printed as one JSON
line per run: the request hashes in order, prediction, metrics, calls, and digests of the whole record
and trace (timings left out). Run it on two checkouts and diff the outputs::

    (cd OLD && PYTHONPATH=src python benchmarks/byte_identity.py > /tmp/old.jsonl)
    (cd NEW && PYTHONPATH=src python benchmarks/byte_identity.py > /tmp/new.jsonl)
    diff /tmp/old.jsonl /tmp/new.jsonl && echo identical

Reads the tasks' data from THOUGHTLOOM_DATA (default ../shared/data); a task without its data is skipped.
"""
import asyncio
import hashlib
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd() / "tests"))
from support.fuzz_harness import examples, strategy_tasks  # noqa: E402

from thoughtloom import strategies, tasks  # noqa: E402
from thoughtloom.core.types import Passage  # noqa: E402
from thoughtloom.eval import runner  # noqa: E402
from thoughtloom.eval.settings import EvalResources, EvalSettings  # noqa: E402
from thoughtloom.testing import ScriptedLM, StaticRetriever  # noqa: E402

PASSAGES = (Passage("p1", "Steven Spielberg directed Jaws. He was born in 1946.", "Jaws"),
            Passage("p2", "The answer to everything is 42.", "42"))

REPLIES = ["The answer is 42.", '{"score": 7, "feedback": "check the last line"}', "Score: 8/10\nFeedback: fine",
           "QS: [EOQ]", "Answer: 42", "Thought: look it up\nAction: Finish[42]",
           '{"rationale": "It is 42 [1].", "answer": "42"}',
           "Step 1: Who directed Jaws?\nStep 2: When was he born?\nDependencies: Step 1 -> Step 2",
           "So the final answer is: 42", "Rationale: it is 42 [1].\nAnswer: 42", "h1. apple\nh2. grape",
           "(4 + 8) * (6 / 3) = 24"]

def key(req) -> str:
    """The request's content hash (messages, decoding settings, sample index)."""
    return hashlib.sha256(json.dumps([[m.role, m.content] for m in req.messages] + [req.max_tokens,
        req.temperature, req.sample_index, req.seed], default=str).encode()).hexdigest()

TIMEY = {"latency_s", "seconds", "t", "time", "elapsed", "elapsed_s", "started", "ms", "wall_s", "duration_s"}

def strip(x):
    """``x`` without its timings (the only fields that differ between two identical runs)."""
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in TIMEY}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x

def digest(x):
    return hashlib.sha256(json.dumps(strip(x), sort_keys=True, default=str).encode()).hexdigest()[:16]

async def main() -> None:
    data = os.environ.get("THOUGHTLOOM_DATA", str(Path("..") / "shared" / "data"))
    for name, task_names in sorted(strategy_tasks().items()):
        for tname in task_names:
            exs = examples(tname, data)[:2]
            for ex in exs:
                seen = []
                def reply(req):
                    k = key(req); seen.append(k[:12])
                    return REPLIES[int(k, 16) % len(REPLIES)]
                lm = ScriptedLM(reply)
                task = tasks.get(tname)
                try:
                    strat = strategies.build(name, {}, task)
                except Exception as exc:
                    print(json.dumps({"run": [name, tname], "build_error": str(exc)})); continue
                res = EvalResources(lm, StaticRetriever(PASSAGES), None)
                try:
                    rec, trace = await runner.run_example(strat, task, ex, res, EvalSettings())
                    r = rec.to_dict() if hasattr(rec, "to_dict") else dict(rec)
                    kinds = [e.get("type") or e.get("kind") for e in (trace if isinstance(trace, list) else [])]
                    out = {"run": [name, tname, ex.problem.id], "requests": seen, "prediction": r.get("prediction"),
                           "metrics": r.get("metrics"), "error": r.get("error"), "calls": (r.get("usage") or {}).get("calls"),
                           "stopped": r.get("stopped"), "n_events": len(kinds),
                           "record": digest(r), "events": digest(trace)}
                except Exception as exc:
                    out = {"run": [name, tname, ex.problem.id], "exception": f"{type(exc).__name__}: {exc}"[:300]}
                print(json.dumps(out, sort_keys=True), flush=True)

asyncio.run(main())
