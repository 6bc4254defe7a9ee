"""Framework overhead per LLM call, measured on ScriptedLM (no model time).

Prints microseconds per call for the bare ScriptedLM and for each layer of
the standard stack: Limited, Retrying, Cached (miss and hit), Metered with a
trace. Usage: python benchmarks/overhead.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from thoughtloom.core import Request, Trace
from thoughtloom.lm import Cached, CompletionStore, Limited, Metered, Retrying
from thoughtloom.testing import ScriptedLM


async def per_call_us(lm, requests, batch: int) -> float:
    t0 = time.perf_counter()
    for i in range(0, len(requests), batch):
        await lm.generate(requests[i : i + batch])
    return (time.perf_counter() - t0) / len(requests) * 1e6


async def main(calls: int) -> None:
    reply = "The answer is: 42"
    reqs = [Request.of(f"question {i}: what is six times seven?", max_tokens=32) for i in range(calls)]
    tmp = Path(tempfile.mkdtemp())
    rows = []
    for batch in (1, 8):
        base = ScriptedLM(lambda r: reply)
        rows.append((f"ScriptedLM bare (batch {batch})", await per_call_us(base, reqs, batch)))
        lim = Limited(ScriptedLM(lambda r: reply), max_concurrent=64)
        rows.append((f"+ Limited (batch {batch})", await per_call_us(lim, reqs, batch)))
        ret = Retrying(Limited(ScriptedLM(lambda r: reply), max_concurrent=64))
        rows.append((f"+ Retrying (batch {batch})", await per_call_us(ret, reqs, batch)))
        store = CompletionStore(tmp / f"c{batch}.sqlite")
        cached = Cached(Retrying(Limited(ScriptedLM(lambda r: reply), max_concurrent=64)), store)
        rows.append((f"+ Cached, miss+write (batch {batch})", await per_call_us(cached, reqs, batch)))
        rows.append((f"+ Cached, hit (batch {batch})", await per_call_us(cached, reqs, batch)))
        metered = Metered(cached, trace=Trace())
        rows.append((f"+ Metered+trace, hit (batch {batch})", await per_call_us(metered, reqs, batch)))
    print(f"framework overhead per call ({calls} calls, ScriptedLM, no model time)")
    for name, us in rows:
        print(f"  {name:<40} {us:9.1f} us")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=4000)
    asyncio.run(main(ap.parse_args().calls))
