"""Model judge for outline runs made without one: interestingness of each record's outlines.

    PYTHONPATH=src python benchmarks/outline_judge.py RUN_DIR [RUN_DIR ...] --model PATH.gguf

An eval of the outline task judges its answers itself (``thoughtloom.eval.judge``, on the
eval's model; ``details.judge`` in each record). This script judges a finished run again with
another model: the given outline, each step's best (``details.step_best``) and the final one,
by the same judge (ThoughtSculpt App. A.1's content-evaluator prompt, yes/no per story point;
an outline scores the share judged interesting). It writes RUN_DIR/judge.json and prints the
means. A MODEL JUDGE, not the paper's fine-tuned Flan-T5 classifier.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from thoughtloom import tasks
from thoughtloom.eval.judge import judge_answer
from thoughtloom.lm import open_lm


async def judge_run(lm, run: Path) -> dict:
    task = tasks.get("outline")
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]
    rows = []
    for r in records:
        _, entry = await judge_answer(task, lm, r["gold"], r.get("prediction"), r.get("details") or {})
        rows.append({"id": r["id"], **entry})

    def mean(key):
        vals = [row[key] for row in rows if row[key] is not None]
        return round(sum(vals) / len(vals), 3) if vals else None

    out = {"judge": rows[0]["judge"] if rows else "", "n": len(rows), "mean_initial": mean("initial"),
           "mean_final": mean("final"), "rows": rows}
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
            print(f"{run}: n={out['n']} initial={out['mean_initial']} final={out['mean_final']} ({out['judge']})")
    finally:
        await lm.aclose()


if __name__ == "__main__":
    asyncio.run(main())
