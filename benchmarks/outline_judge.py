"""Model judge for the outline task: interestingness 1-10 of each final outline.

    PYTHONPATH=src python benchmarks/outline_judge.py RUN_DIR [RUN_DIR ...] --model PATH.gguf

Reads RUN_DIR/results.jsonl, asks the judge model (one batch per run) for an
interestingness score of the initial outline and of the prediction, writes
RUN_DIR/judge.json and prints the means. This is a MODEL JUDGE (our prompt,
the model you pass), not the paper's fine-tuned Flan-T5 classifier; with a
small model its scores are noisy and favour length and drama.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from thoughtloom.core.types import Request
from thoughtloom.lm import open_lm
from thoughtloom.lm.structured import generate_json
from thoughtloom.tasks.outline import judge_prompt, numbered, outline_items, read_judgement


async def judge_run(lm, run: Path) -> dict:
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]
    prompts = []
    for r in records:
        premise = r["gold"].get("premise", "")
        prompts.append(judge_prompt(premise, numbered(r["gold"]["items"])))
        prompts.append(judge_prompt(premise, numbered(outline_items(r["prediction"] or ""))))
    replies = await generate_json(lm, [Request.of(p, max_tokens=160) for p in prompts], return_errors=True)
    # a reply cut off by the token limit still has its leading score in the raw text
    scores = [read_judgement(getattr(v, "raw", v)) for v in replies]
    rows = [{"id": r["id"], "initial": scores[2 * i], "final": scores[2 * i + 1]} for i, r in enumerate(records)]

    def mean(key):
        vals = [row[key] for row in rows if row[key] is not None]
        return round(sum(vals) / len(vals), 3) if vals else None

    out = {"judge": "model judge: " + lm.model_id, "n": len(rows), "mean_initial": mean("initial"),
           "mean_final": mean("final"), "unreadable": sum(row["final"] is None for row in rows), "rows": rows}
    (run / "judge.json").write_text(json.dumps(out, indent=1))
    return out


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--cache", type=Path, default=None)
    args = ap.parse_args()
    lm = open_lm(args.model, cache_path=args.cache)
    try:
        for run in args.runs:
            out = await judge_run(lm, run)
            print(f"{run}: n={out['n']} initial={out['mean_initial']} final={out['mean_final']} "
                  f"unreadable={out['unreadable']} ({out['judge']})")
    finally:
        await lm.aclose()


if __name__ == "__main__":
    asyncio.run(main())
