"""Plan replies of a model to HGOT's planner prompt, for labelling the plan parser's test file.

Each question of a HotpotQA JSONL file is probed (BM25 over the file's own
paragraphs, as an eval without ``--index`` does), then planned once with the
``hgot_plan`` prompt at the defaults (``plan_context`` passages, no demos,
greedy); with ``--stages 3`` also through self-reflection and formalization
(paper appendix C). One JSON line per question: the question, the replies,
and the steps and edges our parser reads from them. Prints the calls made
and how many plans were usable.

    nice -n 5 env PYTHONPATH=src python benchmarks/hgot_plan_replies.py \\
        --model "$(../shared/tools/get-bench-model)" --n 30 --out /tmp/plan_replies.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from thoughtloom import tasks
from thoughtloom.cli.options import run_spec
from thoughtloom.eval.services import pooled_retriever
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.hgot import plan as planmod
from thoughtloom.strategies.hgot.stages import ask_plan
from thoughtloom.strategies.hgot.config import HGOTConfig
from thoughtloom.strategies.hgot.probe import probe

SAMPLE = Path(__file__).resolve().parents[1] / "src/thoughtloom/tasks/data/samples/hotpotqa/hotpot_dev_distractor_subset.jsonl"


async def plan_one(ctx: Context, cfg: HGOTConfig, question: str) -> dict:
    (pool,) = await probe(ctx, [question], cfg.k)
    texts = [s.text(cfg.passage_words) for s in pool[: cfg.plan_context]]
    replies = await ask_plan(ctx, cfg, question, texts, "")
    row: dict = {"question": question, "reply": replies.plan.text, **replies.record()}
    try:
        plan = replies.parse(cfg.max_steps)
        row.update(steps=list(plan.steps), edges=[list(e) for e in plan.edges],
                   dropped=[list(e) for e in plan.dropped])
    except planmod.PlanError as exc:
        row.update(error=str(exc))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", default=str(SAMPLE))
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--skip", type=int, default=0, help="questions to skip first")
    ap.add_argument("--stages", type=int, default=1, choices=(1, 3))
    ap.add_argument("--cache", default="/tmp/hgot-plan-cache.sqlite")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    task = tasks.get("hotpotqa")
    examples = task.load(args.data)[args.skip: args.skip + args.n]
    lm = run_spec(args.model, Path(args.cache), "use").open_lm()
    retriever = pooled_retriever(task.pooled_corpus())
    cfg = HGOTConfig(plan_stages=args.stages)

    async def go() -> list[dict]:
        rows = []
        try:
            with open(args.out, "w", encoding="utf-8") as fh:
                for ex in examples:  # one line per question as it is planned, so a stopped run keeps them
                    ctx = Context(lm=lm, task=task, retriever=retriever)
                    rows.append(await plan_one(ctx, cfg, ex.problem.question))
                    fh.write(json.dumps(rows[-1], ensure_ascii=False) + "\n")
                    fh.flush()
        finally:
            await lm.aclose()
        return rows

    start = time.time()
    rows = asyncio.run(go())
    usable = sum("error" not in r for r in rows)
    calls = sum(3 if "reflection" in r else 1 for r in rows)  # the stages run only after a usable plan
    print(f"{len(rows)} questions, {calls} plan calls, {usable} usable plans, "
          f"{sum(len(r.get('edges', [])) for r in rows)} edges, {time.time() - start:.0f} s -> {args.out}")


if __name__ == "__main__":
    main()
