"""DSP-style automatic annotation of HGOT demonstrations (paper appendix D).

Runs HGOT on training questions, keeps the runs whose prediction matches the
gold answer, whose plan steps are all questions and whose mean step length
passes the IQR rule, and writes them in the authors' CSV format (the same
columns as ``../shared/data/hgot_demos/*.csv``), ready for
``--set demo_file=FILE --set demos=knn|sampling``. (An eval with ``demos=knn|sampling`` and
no ``demo_file`` does the same on the task's packaged sample by itself: ``thoughtloom.eval.annotate``.)

    PYTHONPATH=src python benchmarks/hgot_annotate.py --task hotpotqa \\
        --data ../shared/data/hotpotqa/ircot_hotpotqa_dev_subsampled.jsonl --n 20 \\
        --index /tmp/hotpot-bm25 --model PATH.gguf --out runs/hgot_demos.csv
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from thoughtloom import strategies, tasks
from thoughtloom.cli.options import run_spec
from thoughtloom.eval.annotate import qualified_rows
from thoughtloom.eval.runner import EvalResources, EvalSettings, evaluate

from hgot_table import open_judge, open_retriever  # type: ignore[import-not-found]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="hotpotqa")
    ap.add_argument("--data", required=True)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--index")
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--cache", default="/tmp/hgot-cache.sqlite")
    ap.add_argument("--judge", default="lexical")
    ap.add_argument("--out", default="runs/hgot_demos.csv")
    args = ap.parse_args()

    task = tasks.get(args.task)
    examples = task.load(args.data)[: args.n]
    lm = run_spec(args.model, Path(args.cache), "use").open_lm()
    res = EvalResources(lm, retriever=open_retriever(args.index), entail=open_judge(args.judge, lm))
    step = strategies.build("hgot", {"demos": "knn"}).demo_annotation()  # HGOT's own annotation step
    assert step is not None
    run_dir = Path(args.out).with_suffix("") / "runs"

    async def go() -> None:
        try:
            await evaluate(step.plain, task, examples, res, run_dir, settings=EvalSettings())
        finally:
            await lm.aclose()

    asyncio.run(go())
    records = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines() if x]
    rows = qualified_rows(step, task, records)
    step.write(rows, args.out)
    print(f"{len(rows)} of {len(records)} runs qualified -> {args.out}")


if __name__ == "__main__":
    main()
