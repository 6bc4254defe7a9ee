"""Entailment judge throughput (pairs/s): batched vs one pair at a time.

Pairs: the first N FEVER-Symmetric dev records (evidence sentence, claim),
SUPPORTS or REFUTES. Judges: LLMJudge on the embedded SmolLM2-135M (built
with logprobs on, so the judge reads P(yes) from the first token's top
logprobs), LLMJudge in votes mode (3 samples), and LexicalJudge. No cache, so
every call reaches the model. Agreement with the gold label (P >= 0.5 means
SUPPORTS) is printed too, as a sanity figure, not a quality claim. Run it
under the bench lock:

    flock /tmp/tl-bench.lock env PYTHONPATH=src python benchmarks/entail_throughput.py --n 32
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from thoughtloom.entail import LexicalJudge, LLMJudge, LLMJudgeConfig  # noqa: E402
from thoughtloom.lm.llamacpp import LlamaCppLM  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "fever" / "fever_symmetric_v0.2_dev.jsonl"


def load_pairs(n: int) -> tuple[list[tuple[str, str]], list[bool]]:
    pairs, gold = [], []
    with DATA.open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            pairs.append((rec["evidence"], rec["claim"]))
            gold.append(rec["gold_label"] == "SUPPORTS")
            if len(pairs) == n:
                break
    return pairs, gold


async def timed(judge, pairs, one_at_a_time: bool) -> tuple[list[float], float]:
    t0 = time.perf_counter()
    if one_at_a_time:
        probs = [(await judge.judge([p]))[0] for p in pairs]
    else:
        probs = await judge.judge(pairs)
    return probs, time.perf_counter() - t0


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=32)
    args = ap.parse_args()
    pairs, gold = load_pairs(args.n)
    lm = LlamaCppLM(logprobs=True)
    judges = {
        "llm-logprobs": LLMJudge(lm, LLMJudgeConfig(mode="logprobs")),
        "llm-votes3": LLMJudge(lm, LLMJudgeConfig(mode="votes", votes=3)),
        "lexical": LexicalJudge(),
    }
    await judges["llm-logprobs"].judge([("warm up", "warm up")])  # load the model outside the timing
    rows = []
    for name, judge in judges.items():
        for one in (False, True):
            probs, seconds = await timed(judge, pairs, one)
            agree = sum((p >= 0.5) == g for p, g in zip(probs, gold)) / len(pairs)
            rows.append({"judge": name, "mode": "one at a time" if one else "batched", "pairs": len(pairs),
                         "seconds": round(seconds, 2), "pairs_per_s": round(len(pairs) / seconds, 2),
                         "agreement": round(agree, 3)})
            print(f"{name:>13} {rows[-1]['mode']:>13}: {rows[-1]['pairs_per_s']:8.2f} pairs/s "
                  f"({seconds:.1f}s), agreement with gold {agree:.2f}", file=sys.stderr, flush=True)
    malformed = {name: getattr(j, "stats", None).malformed for name, j in judges.items() if hasattr(j, "stats")}
    print("| judge | mode | pairs | pairs/s | agreement with gold |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['judge']} | {r['mode']} | {r['pairs']} | {r['pairs_per_s']} | {r['agreement']} |")
    print(json.dumps({"model": lm.model_id, "rows": rows, "malformed_replies": malformed}))
    await lm.aclose()


if __name__ == "__main__":
    asyncio.run(main())
