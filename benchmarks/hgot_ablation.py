"""Ablation: grid over HGOT's (alpha, beta, gamma) and (w1, w2, w3).

Each setting runs HGOT on the same examples (default: HotpotQA medium, the
paper's Table 9 set-up) with the same model, retriever and judge, and the
table lists EM / F1 per setting. Completions are cached, so settings share
every call whose prompt they share.

    PYTHONPATH=src python benchmarks/hgot_ablation.py \\
        --data ../shared/data/hotpotqa/hotpot_dev_distractor_subset.jsonl --index /tmp/hotpot-bm25 \\
        --n 6 --model PATH.gguf --thought "0.2,0.4,0.4;1,0,0" --passage "0.2,0.55,0.25;1,0,0"
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from thoughtloom import strategies, tasks
from thoughtloom.cli.options import run_spec
from thoughtloom.eval.runner import EvalResources, EvalSettings, evaluate

from hgot_table import open_judge, open_retriever  # type: ignore[import-not-found]


def triples(spec: str) -> list[tuple[float, float, float]]:
    out = []
    for part in spec.split(";"):
        vals = tuple(float(x) for x in part.split(","))
        if len(vals) != 3:
            raise SystemExit(f"bad triple {part!r}: use a,b,c;a,b,c")
        out.append(vals)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="hotpotqa")
    ap.add_argument("--data", required=True)
    ap.add_argument("--stratum", default="medium")
    ap.add_argument("--index")
    ap.add_argument("--n", type=int, default=6)
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--cache", default="/tmp/hgot-cache.sqlite")
    ap.add_argument("--judge", default="lexical")
    ap.add_argument("--thought", default="0.2,0.4,0.4;1,0,0;0,0.5,0.5")
    ap.add_argument("--passage", default="0.2,0.55,0.25;1,0,0;0.3,0.6,0.1")
    ap.add_argument("--out", default="runs/hgot_ablation")
    ap.add_argument("--set", dest="sets", action="append", default=[])
    args = ap.parse_args()

    task = tasks.get(args.task)
    examples = [e for e in task.load(args.data) if e.problem.meta["stratum"] == args.stratum][: args.n]
    lm = run_spec(args.model, Path(args.cache), "use").open_lm()
    res = EvalResources(lm, retriever=open_retriever(args.index), entail=open_judge(args.judge, lm))
    cls = strategies.get("hgot")
    base = dict(s.split("=", 1) for s in args.sets)
    rows = []

    async def go() -> None:
        try:
            for a, b, g in triples(args.thought):
                for w1, w2, w3 in triples(args.passage):
                    sets = {**base, "alpha": str(a), "beta": str(b), "gamma": str(g),
                            "w1": str(w1), "w2": str(w2), "w3": str(w3)}
                    tag = f"a{a}_b{b}_g{g}__w{w1}_{w2}_{w3}"
                    summary = await evaluate(cls(strategies.make_config(cls, sets)), task, examples, res,
                                             Path(args.out) / tag, settings=EvalSettings())
                    m = summary.get("metrics", {})
                    rows.append({"alpha": a, "beta": b, "gamma": g, "w1": w1, "w2": w2, "w3": w3,
                                 "n": len(examples), "summary": summary})
                    print(f"({a},{b},{g}) ({w1},{w2},{w3}): {json.dumps(m)}", flush=True)
        finally:
            await lm.aclose()

    asyncio.run(go())
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "ablation.json").write_text(json.dumps(rows, indent=1, default=str))


if __name__ == "__main__":
    main()
