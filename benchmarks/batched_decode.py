"""Parallel-sequence decoding in the embedded backend.

Part 1: aggregate completion tokens/s when B requests for one shared
~400-token prompt (greedy, max_tokens each) are handed to the backend at
once, for B = 1, 2, 4, 8, 16. The prompt is evaluated once before timing
(it stays resident in the KV cache), so the figure is decoding speed. The
sizes are run in --rounds interleaved rounds and the median is reported:
these VMs' CPU speed drifts by tens of percent from minute to minute.

Part 2: wall time of ``thoughtloom eval --strategy cot-sc --set n=8`` on the
first GSM8K problems with no cache, decoding one sequence at a time
(``--parallel 1``, how the backend worked before) and batched (the default).

Part 0 (``--ceiling``): what llama.cpp itself gains on this CPU, with no
backend around it: one ``llama_decode`` of B tokens (one per sequence, each
with logits, as generation needs) timed against B = 1, after the shared
prompt is evaluated once and its KV cells copied to the B sequences. No
sampling, no Python loop per token beyond filling the batch: the most the
backend could get from batching here. Run with the weight repacking on and
off (``use_extra_bufts``), since the two take different matrix kernels.

Usage: python benchmarks/batched_decode.py [--model M] [--tokens 64] [--rounds 3]
       [--eval-n 5] [--skip-eval] [--threads T] [--ceiling] [--json]
With --json the last line is one JSON object: model, tok_s (B -> tokens/s),
speedup_8, speedup_16, the two eval wall times when part 2 ran, and with
--ceiling ``ceiling`` (repack on/off -> B -> tokens/s of bare llama_decode).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import DATA, thoughtloom

from thoughtloom.core import Request
from thoughtloom.lm import ModelSpec, open_backend

SIZES = (1, 2, 4, 8, 16)


def shared_prompt() -> str:
    facts = " ".join(f"Station {i} lies {i * 7 + 3} km north of the coast." for i in range(24))
    return (f"Here are some notes. {facts}\n"
            "Now list every whole number from 1 to 500 in order, separated by commas, and nothing else.")


async def decode_rates(model: str, tokens: int, threads: int | None,
                       rounds: int) -> tuple[str, dict[int, float]]:
    lm = open_backend(model, max_parallel=max(SIZES), threads=threads)
    prompt = shared_prompt()
    try:
        [warm] = await lm.generate([Request.of(prompt, max_tokens=1)])
        print(f"model {lm.model_id}: prompt {warm.usage.prompt_tokens} tokens, "
              f"{tokens} completion tokens per sequence, greedy", flush=True)
        seen: dict[int, list[float]] = {b: [] for b in SIZES}
        for r in range(rounds):  # sizes interleaved, so drift in machine speed hits each alike
            for b in SIZES:
                reqs = [Request.of(prompt, max_tokens=tokens) for _ in range(b)]
                t0 = time.perf_counter()
                outs = await lm.generate(reqs)
                seen[b].append(sum(c.usage.completion_tokens for c in outs) / (time.perf_counter() - t0))
            print(f"  round {r + 1}: " + " ".join(f"B{b} {seen[b][-1]:.1f}" for b in SIZES), flush=True)
        rates = {b: statistics.median(v) for b, v in seen.items()}
        for b in SIZES:
            print(f"  batch {b:>2}: median {rates[b]:6.1f} tokens/s over {rounds} rounds "
                  f"(min {min(seen[b]):.1f}, max {max(seen[b]):.1f}) = {rates[b] / rates[1]:.2f}x batch 1")
        return lm.model_id, rates
    finally:
        await lm.aclose()


def decode_ceiling(model: str, steps: int, threads: int | None, rounds: int,
                   repack: bool) -> dict[int, float]:
    """Tokens/s of bare llama_decode steps of B sequences (Part 0), median over ``rounds``."""
    from thoughtloom.lm.llamacpp import embedded_model_path
    from thoughtloom.lm.llamacpp_engine import Engine

    path = ModelSpec.parse(model).path or embedded_model_path()
    engine = Engine(str(path), threads=threads or os.cpu_count(), max_parallel=max(SIZES), repack=repack,
                    resident=0)
    ll = engine.ll
    try:
        prompt, _ = engine.render([{"role": "user", "content": shared_prompt()}])
        engine.batch.n_tokens = 0
        for i, tok in enumerate(prompt):  # the shared prompt once, on sequence 0
            engine._add(tok, i, 0, i == len(prompt) - 1)
        engine._decode()
        seen: dict[int, list[float]] = {b: [] for b in SIZES}
        for _ in range(rounds):
            for b in SIZES:
                for seq in range(1, b):
                    ll.llama_memory_seq_cp(engine.mem, 0, seq, 0, len(prompt))
                t0 = time.perf_counter()
                for step in range(steps):
                    engine.batch.n_tokens = 0
                    for seq in range(b):
                        engine._add(prompt[-1], len(prompt) + step, seq, True)
                    engine._decode()
                seen[b].append(b * steps / (time.perf_counter() - t0))
                ll.llama_memory_seq_rm(engine.mem, 0, len(prompt), -1)  # back to the prompt alone
                for seq in range(1, b):
                    ll.llama_memory_seq_rm(engine.mem, seq, -1, -1)
        rates = {b: statistics.median(v) for b, v in seen.items()}
        label = "on " if repack else "off"
        for b in SIZES:
            print(f"  bare llama_decode, repack {label}, batch {b:>2}: median {rates[b]:6.1f} tokens/s "
                  f"(min {min(seen[b]):.1f}, max {max(seen[b]):.1f}) = {rates[b] / rates[1]:.2f}x batch 1",
                  flush=True)
        return rates
    finally:
        engine.close()


def eval_walls(model: str, n: int, threads: int | None) -> dict[str, float]:
    data = DATA / "gsm8k" / "test.jsonl"
    if not data.is_file():
        print(f"  (skipping the cot-sc eval: {data} is absent)")
        return {}
    tmp = Path(tempfile.mkdtemp())
    walls: dict[str, float] = {}
    rates: dict[str, float] = {}
    for label, parallel in (("sequential", 1), ("batched", None)):
        args = ["eval", "--strategy", "cot-sc", "--set", "n=8", "--task", "gsm8k", "--data", str(data),
                "--limit", str(n), "--model", model, "--no-cache", "--out", str(tmp / label)]
        if parallel:
            args += ["--parallel", str(parallel)]
        if threads:
            args += ["--threads", str(threads)]
        summary, wall = thoughtloom(*args)
        walls[label] = wall
        run, made = summary["this_run"], summary["usage"]["completion_tokens"]
        rates[label] = made / run["wall_s"]
        print(f"  cot-sc n=8 on {n} GSM8K problems, {label:<10}: wall {wall:7.1f} s · "
              f"{run['calls']} calls · {made} completion tokens = {rates[label]:.1f} tokens/s in the eval "
              f"loop · accuracy {summary['metrics']['accuracy']:.2f}", flush=True)
    # Sampled replies differ in the last bits between the two runs, and so do
    # their lengths: compare tokens/s, not wall time alone.
    print(f"  speedup {rates['batched'] / rates['sequential']:.2f}x in tokens/s "
          f"({walls['sequential'] / walls['batched']:.2f}x in wall time)")
    return walls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--eval-n", type=int, default=5)
    ap.add_argument("--skip-eval", action="store_true")
    ap.add_argument("--ceiling", action="store_true", help="also time bare llama_decode (Part 0)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    ModelSpec.parse(a.model)  # a bad --model fails before any work
    print(f"batched decode ({os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start)")
    ceiling = {("on" if repack else "off"): decode_ceiling(a.model, a.tokens, a.threads, a.rounds, repack)
               for repack in (True, False)} if a.ceiling else {}
    model_id, rates = asyncio.run(decode_rates(a.model, a.tokens, a.threads, a.rounds))
    walls = {} if a.skip_eval else eval_walls(a.model, a.eval_n, a.threads)
    if a.json:
        print(json.dumps({"model": model_id, "tok_s": {str(b): round(r, 2) for b, r in rates.items()},
                          "speedup_8": round(rates[8] / rates[1], 3),
                          "speedup_16": round(rates[16] / rates[1], 3),
                          "cot_sc_wall_s": {k: round(v, 1) for k, v in walls.items()},
                          **({"ceiling": {k: {str(b): round(r, 2) for b, r in v.items()} for k, v in ceiling.items()}}
                             if ceiling else {})}))


if __name__ == "__main__":
    sys.exit(main())
