"""The embedded engine's candidate llama.cpp libraries, side by side, on the same workloads.

Candidates (``--candidates``, default ``src,prebuilt``):

- ``src``: our engine (lm/llamacpp_engine.py) on llama-cpp-python, the
  library compiled at install (``library="llama-cpp-python"``);
- ``prebuilt``: the same engine on the llama.cpp that the xllamacpp wheel ships,
  through our ctypes binding (lm/llamacpp_capi.py; ``library="xllamacpp"``);
- ``server``: xllamacpp's own in-process server engine
  (``xllamacpp.Server(params).handle_chat_completions``: continuous batching,
  prompt cache), called from a thread per request in flight.

Workloads (greedy unless said, ``--tokens`` each):

- ``single``: one request with a short prompt; completion tokens/s.
- ``samples``: ``--n`` samples (temperature 0.8) of one prompt over a ~300-token
  few-shot preamble (cot-sc, a node's children); aggregate tokens/s.
- ``arrive-cK``: ``--questions`` questions over that preamble, K in flight at
  once (``eval -c K``): each one that ends lets the next in, while the others
  are still decoding; aggregate tokens/s.
- ``batchK``: K questions over that preamble handed over together, one batch
  of K sequences from the start; aggregate tokens/s (the yardstick of issue 41).
- ``stagger-cK``: ``--questions`` questions over that preamble, K in flight at
  once, with replies of three lengths (``--tokens`` x 1/2, 1, 3/2, greedy): the
  questions of ``eval -c K`` end at different times, and each one that ends lets
  the next in; aggregate tokens/s. With continuous batching the newcomer joins
  the running batch; before it, it waited for the whole batch to end.
- ``prefix``: questions over the preamble asked one after another, 8 tokens
  each (the preamble kept from an earlier call); calls/s.
- ``ttft``: a fresh ~300-token prompt (no prefix seen before), 1 token: 1/latency.
- ``eval-gsm8k-cK``: ``thoughtloom``'s own eval runner, ``cot`` on ``--questions``
  GSM8K test questions with K in flight (``eval -c K``), chains capped at
  ``--tokens`` x 4, no cache; aggregate completion tokens/s. Each round takes
  the next questions, the same for every candidate.
- ``eval-hotpot-cK``: the same with ``retrieve-then-read`` (n = 1, greedy; 5
  passages, so prompts of about 1,000 tokens: prefill-heavy, like HGOT's
  reading prompts) on HotpotQA dev questions, over the pooled index.
  Both read ``$THOUGHTLOOM_DATA`` (default ``../shared/data``).

Every figure is a rate (higher is faster). Candidates run in interleaved
rounds (A B, then B A, ...) on models loaded once, because the CPU of a shared
machine drifts; the table gives each candidate's median and, for each
candidate against the first, the ratio per round as min and median.

Usage: python benchmarks/engines.py --model PATH [--rounds 2] [--tokens 32] [--n 8]
       [--questions 8] [--threads T] [--candidates src,prebuilt,server] [--workloads a,b] [--json]

Before/after a change to the engine: run it once per checkout
(``PYTHONPATH=checkout/src``), alternating, on the same workloads.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from thoughtloom.core import Request
from thoughtloom.lm.llamacpp import LlamaCppLM

LIBRARY = {"src": "llama-cpp-python", "prebuilt": "xllamacpp"}


def preamble() -> str:
    rng = random.Random(7)
    shots = []
    for i in range(9):
        a, b, c = rng.randint(3, 90), rng.randint(2, 40), rng.randint(2, 9)
        shots.append(f"Q: A shop has {a} boxes and gets {b} more, then sells {c}. How many are left?\n"
                     f"A: {a} + {b} = {a + b}; {a + b} - {c} = {a + b - c}. The answer is {a + b - c}.")
    return "Solve each problem step by step.\n\n" + "\n\n".join(shots) + "\n\n"


def question(i: int) -> str:
    return (f"{preamble()}Q: A farm has {i + 12} sheep and buys {2 * i + 5} more, then sells {i + 3}. "
            "How many are left?\nA:")


class EngineCandidate:
    """Our engine in its worker process, on one llama.cpp library."""

    def __init__(self, model: str, library: str, max_parallel: int, threads: int | None) -> None:
        self.lm = LlamaCppLM(model, n_ctx=4096, max_parallel=max_parallel, threads=threads, library=library)

    async def generate(self, requests: list[Request]) -> list[int]:
        return [c.usage.completion_tokens for c in await self.lm.generate(requests)]

    async def close(self) -> None:
        await self.lm.aclose()


class ServerCandidate:
    """xllamacpp's in-process server engine (one slot per request in flight)."""

    def __init__(self, model: str, slots: int, threads: int | None) -> None:
        import os

        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = model
        params.n_parallel = slots
        params.n_ctx = 4096 * slots
        params.cpuparams.n_threads = threads or os.cpu_count() or 1
        params.cpuparams_batch.n_threads = threads or os.cpu_count() or 1
        params.warmup = False
        self.server = xllamacpp.Server(params)
        self.pool = ThreadPoolExecutor(max_workers=slots)

    def _one(self, r: Request) -> int:
        body = {"messages": [{"role": m.role, "content": m.content} for m in r.messages],
                "max_tokens": r.max_tokens, "temperature": r.temperature, "seed": r.derived_seed()}
        out = self.server.handle_chat_completions(body)
        return int(out["usage"]["completion_tokens"])

    async def generate(self, requests: list[Request]) -> list[int]:
        loop = asyncio.get_running_loop()
        return list(await asyncio.gather(*(loop.run_in_executor(self.pool, self._one, r) for r in requests)))

    async def close(self) -> None:
        self.pool.shutdown(wait=True)


async def timed(cand: Any, requests: list[Request]) -> tuple[int, float]:
    t0 = time.perf_counter()
    tokens = await cand.generate(requests)
    return sum(tokens), time.perf_counter() - t0


async def workload(name: str, cand: Any, args: argparse.Namespace, round_no: int) -> float:
    """One sitting of one workload: its rate (higher is faster)."""
    if name == "single":
        n, s = await timed(cand, [Request.of("Count from 1 to 200, separated by commas.",
                                             max_tokens=args.tokens)])
        return n / s
    if name == "samples":
        reqs = [Request.of(question(100 + round_no), max_tokens=args.tokens, temperature=0.8, sample_index=i)
                for i in range(args.n)]
        n, s = await timed(cand, reqs)
        return n / s
    if name.startswith("arrive-c"):
        k = int(name.removeprefix("arrive-c"))
        gate = asyncio.Semaphore(k)
        base = 1000 * (round_no + 1) + 10 * k

        async def ask(i: int) -> int:
            async with gate:
                [t] = await cand.generate([Request.of(question(base + i), max_tokens=args.tokens)])
                return t

        t0 = time.perf_counter()
        tokens = await asyncio.gather(*(ask(i) for i in range(args.questions)))
        return sum(tokens) / (time.perf_counter() - t0)
    if name.startswith("batch"):
        k = int(name.removeprefix("batch"))
        n, s = await timed(cand, [Request.of(question(3000 + 100 * round_no + i), max_tokens=args.tokens)
                                  for i in range(k)])
        return n / s
    if name.startswith("stagger-c"):
        k = int(name.removeprefix("stagger-c"))
        gate = asyncio.Semaphore(k)
        base = 4000 + 100 * round_no + 10 * k

        async def ask_varied(i: int) -> int:
            async with gate:
                length = args.tokens * (1 + i % 3) // 2
                [t] = await cand.generate([Request.of(question(base + i), max_tokens=length)])
                return t

        stats = getattr(getattr(cand, "lm", None), "engine_stats", None)  # absent before issue 41
        before = await stats() if stats else None
        t0 = time.perf_counter()
        tokens = await asyncio.gather(*(ask_varied(i) for i in range(args.questions)))
        rate = sum(tokens) / (time.perf_counter() - t0)
        if before is not None:
            after = await stats()
            steps = after["decode_steps"] - before["decode_steps"]
            joined = after["joined"] - before["joined"]
            print(f"  {name}: {sum(tokens) - args.questions} tokens from {steps} decode steps = "
                  f"{(sum(tokens) - args.questions) / steps:.2f} sequences a step (the first token of each "
                  f"reply comes from its prefill); {joined} of "
                  f"{after['admitted'] - before['admitted']} requests joined a running batch",
                  file=sys.stderr, flush=True)
        return rate
    if name == "prefix":
        await timed(cand, [Request.of(question(5000 + round_no), max_tokens=1)])  # the preamble is seen once
        t0 = time.perf_counter()
        for i in range(4):
            await timed(cand, [Request.of(question(6000 + 10 * round_no + i), max_tokens=8)])
        return 4 / (time.perf_counter() - t0)
    if name == "ttft":
        nonce = f"Session {random.Random(round_no).randint(10**8, 10**9)}. "
        _, s = await timed(cand, [Request.of(nonce + question(7000 + round_no), max_tokens=1)])
        return 1 / s
    if name.startswith("eval-"):
        return await eval_rate(name, cand, args, round_no)
    raise ValueError(name)


#: eval workloads: strategy, task, data file under $THOUGHTLOOM_DATA, strategy options
EVALS = {"gsm8k": ("cot", "gsm8k", "gsm8k/test.jsonl", {}),
         "hotpot": ("retrieve-then-read", "hotpotqa", "hotpotqa/hotpot_dev_distractor_subset.jsonl",
                    {"n": 1, "k": 5})}


_INDEXES: dict[Path, Path] = {}


def pooled_index(path: Path) -> Path:
    """The data file's pooled paragraphs indexed once, as the eval runner's default index is built
    (BM25 with title links), so no eval run's time includes an index build."""
    if path not in _INDEXES:
        import atexit
        import shutil
        import tempfile

        from thoughtloom.retrieval import build_index, read_corpus
        from thoughtloom.tasks.odqa import POOLED_INDEX

        scratch = tempfile.mkdtemp(prefix="engines-index-")
        atexit.register(shutil.rmtree, scratch, ignore_errors=True)
        folder = Path(scratch) / "index"
        build_index(read_corpus([path]), "bm25", folder, dict(POOLED_INDEX))
        _INDEXES[path] = folder
    return _INDEXES[path]


async def eval_rate(name: str, cand: Any, args: argparse.Namespace, round_no: int) -> float:
    """Completion tokens/s of one ``evaluate`` run with K questions in flight on the candidate's model."""
    from thoughtloom import aevaluate

    which, k = name.removeprefix("eval-").rsplit("-c", 1)
    strategy, task, data, options = EVALS[which]
    if not isinstance(cand, EngineCandidate):
        raise SystemExit(f"{name} runs thoughtloom's eval runner on our engine; it has no {type(cand).__name__}")
    path = Path(os.environ.get("THOUGHTLOOM_DATA", "../shared/data")) / data
    if not path.is_file():
        raise SystemExit(f"{name} needs {path} (set THOUGHTLOOM_DATA)")
    index = pooled_index(path) if strategy == "retrieve-then-read" else None
    t0 = time.perf_counter()
    ev = await aevaluate(strategy, task, data=path, model=cand.lm, limit=args.questions,
                         offset=round_no * args.questions, concurrency=int(k), cache_mode="off",
                         max_tokens=args.tokens * 4, index=index, **options)
    return ev["usage"]["completion_tokens"] / (time.perf_counter() - t0)


WORKLOADS = ("single", "samples", "arrive-c1", "arrive-c4", "arrive-c8", "batch4", "stagger-c4", "prefix", "ttft",
             "eval-gsm8k-c1", "eval-gsm8k-c4", "eval-hotpot-c1", "eval-hotpot-c4")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--questions", type=int, default=8)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--candidates", default="src,prebuilt")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    names = args.candidates.split(",")
    work = args.workloads.split(",")
    slots = max(args.n, 8)
    cands = {c: (ServerCandidate(args.model, slots, args.threads) if c == "server"
                 else EngineCandidate(args.model, LIBRARY[c], slots, args.threads)) for c in names}
    try:
        for c in cands.values():  # load the model and warm up; the preamble is then in the KV cache
            await timed(c, [Request.of("Hi", max_tokens=2)])
            await timed(c, [Request.of(question(0), max_tokens=1)])
        rates: dict[str, dict[str, list[float]]] = {w: {c: [] for c in names} for w in work}
        for r in range(args.rounds):
            order = names if r % 2 == 0 else names[::-1]
            for w in work:
                for c in order:
                    rates[w][c].append(await workload(w, cands[c], args, r))
                print(f"round {r + 1} {w}: " + "  ".join(f"{c} {rates[w][c][-1]:.3g}" for c in names),
                      file=sys.stderr, flush=True)
    finally:
        for c in cands.values():
            await c.close()
    base = names[0]
    print(f"{'workload':<11}" + "".join(f"{c:>10}" for c in names)
          + "".join(f"   {c}/{base} min  median" for c in names[1:]))
    table = {}
    for w in work:
        med = {c: statistics.median(rates[w][c]) for c in names}
        ratios = {c: [x / y for x, y in zip(rates[w][c], rates[w][base])] for c in names[1:]}
        table[w] = {"median": med, "ratio_min": {c: min(v) for c, v in ratios.items()},
                    "ratio_median": {c: statistics.median(v) for c, v in ratios.items()}}
        print(f"{w:<11}" + "".join(f"{med[c]:>10.3g}" for c in names)
              + "".join(f"   {min(ratios[c]):>13.2f} {statistics.median(ratios[c]):>7.2f}" for c in names[1:]))
    # the same engine's rate with K questions in flight against one batch of K, per round
    for w in work:
        k = w.removeprefix("stagger-c").removeprefix("arrive-c")
        if w != k and f"batch{k}" in work:
            for c in names:
                per_round = [x / y for x, y in zip(rates[w][c], rates[f"batch{k}"][c])]
                print(f"{c}: {w} / batch{k} per round " + " ".join(f"{r:.2f}" for r in per_round)
                      + f" (median {statistics.median(per_round):.2f})")
    if args.json:
        print(json.dumps({"model": args.model, "rounds": args.rounds, "tokens": args.tokens,
                          "threads": args.threads, "rates": rates, "table": table}))


if __name__ == "__main__":
    asyncio.run(main())
