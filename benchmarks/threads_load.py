"""Embedded-model speed by thread count and OpenMP wait policy, quiet and under load.

For each of threads in {1, all cores} x OMP_WAIT_POLICY in {unset, ACTIVE,
PASSIVE}, and for the default (threads sized to the free cores, policy
unset), decodes B sequences (greedy, --tokens each) for one shared prompt, first on
a quiet machine and then while --burners busy-looping processes compete for
the cores (as other jobs on a shared machine would). Prints tokens/s.

Usage: python benchmarks/threads_load.py [--model M] [--batch 1] [--tokens 48] [--burners 1]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import time

from batched_decode import shared_prompt

from thoughtloom.core import Request
from thoughtloom.lm import open_backend


def burn(stop_at: float) -> None:
    x = 0
    while time.time() < stop_at:
        x += 1


async def rate(model: str, threads: int | None, batch: int, tokens: int) -> float:
    lm = open_backend(model, threads=threads, max_parallel=max(batch, 1))
    try:
        prompt = shared_prompt()
        await lm.generate([Request.of(prompt, max_tokens=1)])
        t0 = time.perf_counter()
        outs = await lm.generate([Request.of(prompt, max_tokens=tokens) for _ in range(batch)])
        return sum(c.usage.completion_tokens for c in outs) / (time.perf_counter() - t0)
    finally:
        await lm.aclose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--tokens", type=int, default=48)
    ap.add_argument("--burners", type=int, default=1)
    a = ap.parse_args()
    cores = os.cpu_count() or 1
    print(f"threads and wait policy: {a.model}, batch {a.batch}, {a.tokens} tokens per sequence, "
          f"{cores} cores, load {a.burners} busy process(es)")
    settings = [(t, p) for t in sorted({1, cores}) for p in ("unset", "ACTIVE", "PASSIVE")] + [(None, "unset")]
    for loaded in (False, True):
        for threads, policy in settings:
            os.environ.pop("OMP_WAIT_POLICY", None)
            if policy != "unset":
                os.environ["OMP_WAIT_POLICY"] = policy  # the model worker inherits it
            burners = []
            if loaded:
                stop_at = time.time() + 600
                burners = [multiprocessing.Process(target=burn, args=(stop_at,)) for _ in range(a.burners)]
                for b in burners:
                    b.start()
            try:
                r = asyncio.run(rate(a.model, threads, a.batch, a.tokens))
            finally:
                for b in burners:
                    b.terminate()
                    b.join()
            label = "auto" if threads is None else threads
            print(f"  {'loaded' if loaded else 'quiet ':<6} threads {label:<4} {policy:<7}: {r:6.1f} tokens/s",
                  flush=True)


if __name__ == "__main__":
    main()
