"""Recall of reciprocal-rank fusion across dense weights and rrf_k, from one search of each half.

Needs the hybrid index written by retrieval_hotpotqa.py (OUT/hybrid). Each
half is searched once at depth 100; fusion is recomputed per setting. Recall
only, no timings, so it needs no bench lock:

    PYTHONPATH=src python benchmarks/fusion_sweep.py --index /tmp/tl-retrieval-bench/hybrid
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from thoughtloom.retrieval import open_index, read_questions  # noqa: E402
from thoughtloom.retrieval.evaluate import recall_at  # noqa: E402
from thoughtloom.retrieval.hybrid import rrf  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "hotpotqa"
FILES = [DATA / "hotpot_dev_distractor_subset.jsonl", DATA / "ircot_hotpotqa_dev_subsampled.jsonl"]
KS = (2, 5, 10, 20)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, default=Path("/tmp/tl-retrieval-bench/hybrid"))
    ap.add_argument("--depth", type=int, default=100)
    args = ap.parse_args()
    gold = read_questions(FILES)  # pooled; a question in both files counts once
    bm25 = open_index(args.index, kind="bm25")
    dense = open_index(args.index, kind="dense")
    questions = [g.question for g in gold]
    b_rows = [[r for r, _ in hits] for hits in bm25.search_rows(questions, args.depth)]
    d_rows = [[r for r, _ in hits] for hits in dense.search_rows(questions, args.depth)]
    title = bm25.passages.get

    def recall(lists):
        return recall_at([[title(r).title for r in rows] for rows in lists], gold, KS)

    print("| setting | " + " | ".join(f"recall_all@{k}" for k in KS) + " |")
    print("|---|" + "---|" * len(KS))
    for name, lists in (("bm25 only", b_rows), ("dense only", d_rows)):
        r = recall([rows[:max(KS)] for rows in lists])
        print(f"| {name} | " + " | ".join(f"{r[f'recall_all@{k}']:.4f}" for k in KS) + " |")
    for c in (10, 60):
        for w in (0.25, 0.5, 0.75, 1.0, 1.5):
            fused = [[row for row, _ in rrf([b, d], [1.0, w], max(KS), c)] for b, d in zip(b_rows, d_rows)]
            r = recall(fused)
            print(f"| rrf_k={c}, dense_weight={w} | " + " | ".join(f"{r[f'recall_all@{k}']:.4f}" for k in KS) + " |")


if __name__ == "__main__":
    main()
