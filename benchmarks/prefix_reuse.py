"""Prompt-prefix reuse in the embedded backend.

Two families of prompts, each a long shared preamble plus a short question,
are sent interleaved (A1 B1 A2 B2 ...). Sent one at a time in that order,
every prompt switches preamble, so llama.cpp re-reads it; sent as one batch,
the backend's queue runs each family back to back and llama.cpp reuses the
KV cache of the shared preamble. Prints seconds per prompt for both.
Usage: python benchmarks/prefix_reuse.py [--gguf PATH] [--per-family 6]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from thoughtloom.core import Request
from thoughtloom.lm.llamacpp import LlamaCppLM


def preamble(topic: str) -> str:
    facts = " ".join(f"Fact {i}: the {topic} item number {i} weighs {i * 3 + 1} grams." for i in range(60))
    return f"You answer questions about {topic}. {facts}"


async def timed(lm: LlamaCppLM, requests: list[Request], batched: bool) -> tuple[float, int]:
    t0 = time.perf_counter()
    if batched:
        outs = await lm.generate(requests)
    else:
        outs = [(await lm.generate([r]))[0] for r in requests]
    return time.perf_counter() - t0, sum(c.usage.prompt_tokens for c in outs)


async def main(gguf: str | None, per_family: int) -> None:
    fams = {t: preamble(t) for t in ("apples", "bolts")}
    reqs = [
        Request.of(f"{fams[t]}\nQuestion: how much does item {i} weigh?", max_tokens=1)
        for i in range(per_family) for t in fams
    ]
    lm = LlamaCppLM(gguf, n_ctx=4096)
    await lm.generate([Request.of("warm up", max_tokens=1)])
    one_by_one, toks = await timed(lm, reqs, batched=False)
    await lm.generate([Request.of("reset the KV cache", max_tokens=1)])
    grouped, _ = await timed(lm, reqs, batched=True)
    await lm.aclose()
    n = len(reqs)
    print(f"prefix reuse: {n} prompts, {toks // n} prompt tokens each, two interleaved preambles, "
          f"model {lm.model_id}")
    print(f"  one at a time, interleaved : {one_by_one / n:.3f} s per prompt")
    print(f"  one batch (grouped by prefix): {grouped / n:.3f} s per prompt "
          f"({one_by_one / grouped:.1f}x faster)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", default=None)
    ap.add_argument("--per-family", type=int, default=6)
    a = ap.parse_args()
    asyncio.run(main(a.gguf, a.per_family))
