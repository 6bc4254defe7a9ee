"""Table-2-style comparison: Long / Medium / Short / Overall x methods.

Runs each strategy on the same examples (``n`` per length stratum, taken in
the task loader's interleaved order), the same retriever and the same model,
through the library's resumable eval runner, then prints one markdown table
with the task metrics per stratum, LLM calls, tokens, wall time and — where
the data names supporting paragraphs (HotpotQA dev) — the recall of gold
titles among the passages each method gathered.

    PYTHONPATH=src python benchmarks/hgot_table.py --task hotpotqa \\
        --data ../shared/data/hotpotqa/hotpot_dev_distractor_subset.jsonl \\
        --index /tmp/hotpot-bm25 --n 4 --model PATH.gguf --judge lexical \\
        --strategies io,retrieve-then-read,self-ask,react,dsp,hgot --out runs/table

Retrieval: ``--index DIR`` (an index from ``thoughtloom index build``).
Judge for HGOT's thought quality: ``lexical`` (fast word overlap), ``llm``
(the same model asked yes/no) or ``none`` (plain self-consistency).
Strategy options: ``--set STRATEGY.KEY=VALUE`` (repeatable).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from thoughtloom import strategies, tasks
from thoughtloom.cli.options import run_spec
from thoughtloom.eval.runner import EvalResources, EvalSettings, evaluate
from thoughtloom.lm import Budget


def open_retriever(index: str | None):
    """The same retriever ``--index DIR`` gives the CLI (cached, traced per question)."""
    from thoughtloom.eval.services import open_retriever as _open

    return _open(Path(index) if index else None)


def open_judge(spec: str, lm):
    """The same judge ``--entail SPEC`` gives the CLI: lexical, llm[:opts], cross:PATH or none."""
    from thoughtloom.eval.services import open_entail

    return open_entail(spec, lm)


def parse_sets(items: list[str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for item in items:
        key, _, value = item.partition("=")
        name, _, opt = key.partition(".")
        if not opt:
            raise SystemExit(f"bad --set {item!r}: use STRATEGY.KEY=VALUE")
        out.setdefault(name, {})[opt] = value
    return out


def support_recall(records: list[dict[str, Any]]) -> float | None:
    """Mean share of gold supporting titles among the titles a method gathered."""
    values = []
    for r in records:
        gold = r.get("gold")
        if not isinstance(gold, dict) or not gold.get("support"):
            return None
        titles = set((r.get("details") or {}).get("gathered_titles") or [])
        values.append(len(titles & set(gold["support"])) / len(gold["support"]))
    return sum(values) / len(values) if values else None


def malformed_thoughts(trace: Path) -> str:
    """``bad/all`` sampled HGOT thoughts without a usable answer, from the run's trace ("-" if none sampled)."""
    bad = total = 0
    if trace.exists():
        for line in trace.read_text().splitlines():
            event = json.loads(line) if line.strip() else {}
            if event.get("type") == "malformed" and event.get("what") == "hgot_thought":
                bad += 1
            elif event.get("type") == "hgot_infer":
                total += len(event["thoughts"])
    return f"{bad}/{total}" if total else "-"


async def run_one(name: str, task, examples, res: EvalResources, out: Path, sets: dict[str, str],
                  concurrency: int) -> dict[str, Any]:
    cls = strategies.get(name)
    strat = cls(strategies.make_config(cls, sets))
    t0 = time.perf_counter()
    summary = await evaluate(strat, task, examples, res, out / name,
                             settings=EvalSettings(concurrency=concurrency, budget=Budget()))
    records = [json.loads(line) for line in (out / name / "results.jsonl").read_text().splitlines() if line]
    return {"strategy": name, "summary": summary, "wall_s": time.perf_counter() - t0,
            "report": task.report(records), "support_recall": support_recall(records), "n": len(records),
            "calls": sum(r["usage"]["calls"] for r in records),
            "tokens": sum(r["usage"]["total_tokens"] for r in records),
            "latency_s": sum(r["latency_s"] for r in records),
            "malformed": malformed_thoughts(out / name / "trace.jsonl")}


def table(rows: list[dict[str, Any]], metrics: tuple[str, ...]) -> str:
    head = ["method"] + [f"{s} {m.upper()}" for s in ("Long", "Medium", "Short", "Overall") for m in metrics]
    head += ["n", "LLM calls", "tokens", "wall s (sum per question)", "gold-title recall", "malformed thoughts"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["strategy"]]
        for s in ("long", "medium", "short", "overall"):
            for m in metrics:
                st = r["report"]["strata"][m].get(s)
                cells.append(f"{100 * st['mean']:.1f} (n={st['n']})" if st else "-")
        rec = r["support_recall"]
        cells += [str(r["n"]), str(r["calls"]), str(r["tokens"]), f"{r['latency_s']:.0f}",
                  "-" if rec is None else f"{100 * rec:.1f}", r["malformed"]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--index")
    ap.add_argument("--n", type=int, default=3, help="examples per length stratum")
    ap.add_argument("--strategies", default="io,retrieve-then-read,self-ask,react,dsp,hgot")
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--cache", default="/tmp/hgot-cache.sqlite")
    ap.add_argument("--judge", default="lexical")
    ap.add_argument("--out", default="runs/hgot_table")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--set", dest="sets", action="append", default=[])
    args = ap.parse_args(argv)

    task = tasks.get(args.task)
    examples = task.load(args.data)
    picked, counts = [], {"long": 0, "medium": 0, "short": 0}
    for e in examples:
        s = e.problem.meta["stratum"]
        if counts[s] < args.n:
            picked.append(e)
            counts[s] += 1
    lm = run_spec(args.model, Path(args.cache), "use", concurrency=args.concurrency, n_ctx=args.n_ctx).open_lm()
    res = EvalResources(lm, retriever=open_retriever(args.index), entail=open_judge(args.judge, lm))
    sets = parse_sets(args.sets)
    out = Path(args.out)

    async def go() -> list[dict[str, Any]]:
        try:
            return [await run_one(name, task, picked, res, out, sets.get(name, {}), args.concurrency)
                    for name in args.strategies.split(",")]
        finally:
            await lm.aclose()

    rows = asyncio.run(go())
    md = table(rows, task.metrics if hasattr(task, "metrics") else ("em",))
    print(md)
    (out / "table.md").write_text(md + "\n")
    (out / "table.json").write_text(json.dumps(rows, indent=1, default=str))
    print(f"\nexamples per stratum: {counts}; model {lm.model_id}; judge {args.judge}; index {args.index}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
