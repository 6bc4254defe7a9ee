"""Retrieval quality and speed on HotpotQA dev: BM25, dense (MiniLM) and hybrid (RRF).

Corpus and questions: ../shared/data/hotpotqa/hotpot_dev_distractor_subset.jsonl
and ircot_hotpotqa_dev_subsampled.jsonl pooled (paragraphs deduplicated by
title + text; questions deduplicated by id, first file first).

    PYTHONPATH=src python benchmarks/retrieval_hotpotqa.py --out /tmp/tl-retrieval-bench

The corpus is embedded in chunks under the shared bench lock
(/tmp/tl-bench.lock), which is released every --hold seconds so other
benchmarks are not held up for long; chunks are kept in OUT/embeddings and a
rerun reuses them. The dense build time reported
is the sum of the chunk encoding times plus writing the index. Prints a
table, then one JSON object.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from thoughtloom.retrieval import build_index, disk_size, open_index, read_corpus, read_questions  # noqa: E402
from thoughtloom.retrieval.dense import DenseSettings, SentenceTransformerEncoder  # noqa: E402
from thoughtloom.retrieval.evaluate import evaluate_index  # noqa: E402
from thoughtloom.retrieval.store import index_text  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "hotpotqa"
FILES = [DATA / "hotpot_dev_distractor_subset.jsonl", DATA / "ircot_hotpotqa_dev_subsampled.jsonl"]
KS = (2, 5, 10, 20)


@contextmanager
def bench_lock(path: str = "/tmp/tl-bench.lock"):
    if os.environ.get("TL_BENCH_LOCK_HELD"):  # the caller runs us under `flock` already
        yield
        return
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class PrecomputedEncoder:
    """Serves stored corpus vectors by text; anything else goes to the real encoder."""

    def __init__(self, texts: list[str], vectors: np.ndarray, inner: SentenceTransformerEncoder) -> None:
        self.rows = {t: i for i, t in enumerate(texts)}
        self.vectors = vectors
        self.inner = inner

    def encode(self, texts, *, show_progress: bool = False) -> np.ndarray:
        if all(t in self.rows for t in texts):
            return self.vectors[[self.rows[t] for t in texts]]
        return self.inner.encode(texts, show_progress=show_progress)


def embed_corpus(texts: list[str], folder: Path, encoder: SentenceTransformerEncoder, chunk: int,
                 hold_s: float) -> tuple[np.ndarray, float]:
    """Embed in chunks saved to ``folder``; the bench lock is held for at most ~hold_s at a time."""
    folder.mkdir(parents=True, exist_ok=True)
    seconds_file = folder / "seconds.json"
    seconds = json.loads(seconds_file.read_text()) if seconds_file.exists() else {}
    starts = list(range(0, len(texts), chunk))
    name = lambda start: f"chunk_{start:08d}_{min(start + chunk, len(texts)):08d}.npy"  # noqa: E731
    todo = [s for s in starts if not (folder / name(s)).exists()]
    while todo:
        with bench_lock():
            t_hold = time.perf_counter()
            while todo and time.perf_counter() - t_hold < hold_s:
                start = todo.pop(0)
                t0 = time.perf_counter()
                vecs = encoder.encode(texts[start:start + chunk])
                seconds[name(start)] = time.perf_counter() - t0
                np.save(folder / name(start), vecs)
                seconds_file.write_text(json.dumps(seconds))
                print(f"  embedded {min(start + chunk, len(texts))}/{len(texts)} "
                      f"({seconds[name(start)]:.1f}s)", file=sys.stderr, flush=True)
    vectors = np.concatenate([np.load(folder / name(s)) for s in starts])
    return vectors, sum(seconds[name(s)] for s in starts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/tl-retrieval-bench"))
    ap.add_argument("--chunk", type=int, default=1024, help="passages embedded per saved chunk")
    ap.add_argument("--hold", type=float, default=480, help="release the bench lock after about this many seconds")
    args = ap.parse_args()

    corpus = read_corpus(FILES)
    gold = read_questions(FILES)  # pooled; a question in both files counts once
    print(f"corpus: {len(corpus)} passages ({corpus.duplicates} duplicates merged); questions: {len(gold)}",
          file=sys.stderr)
    texts = [index_text(p) for p in corpus.passages]
    settings = DenseSettings()
    encoder = SentenceTransformerEncoder(settings.model, batch_size=settings.batch_size,
                                         max_seq_length=settings.max_seq_length)
    emb_dir = args.out / "embeddings" / corpus.fingerprint()[:16]
    vectors, encode_s = embed_corpus(texts, emb_dir, encoder, args.chunk, args.hold)

    with bench_lock():
        results = {}
        t0 = time.perf_counter()
        build_index(corpus, "bm25", args.out / "bm25", overwrite=True)
        bm25_build = time.perf_counter() - t0
        t0 = time.perf_counter()
        manifest = build_index(corpus, "hybrid", args.out / "hybrid", overwrite=True,
                               encoder=PrecomputedEncoder(texts, vectors, encoder))
        hybrid_write = time.perf_counter() - t0 - manifest["build"]["bm25_s"]
        hy = args.out / "hybrid"
        sizes = {
            "bm25": disk_size(args.out / "bm25"),
            "dense": disk_size(hy / "dense") + (hy / "passages.jsonl").stat().st_size + (hy / "offsets.npy").stat().st_size,
            "hybrid": disk_size(hy),
        }
        builds = {"bm25": bm25_build, "dense": encode_s + hybrid_write,
                  "hybrid": encode_s + hybrid_write + manifest["build"]["bm25_s"]}
        for kind in ("bm25", "dense", "hybrid"):
            index = open_index(hy, kind=kind, encoder=encoder)
            index.search_rows(["warm up"], 5)
            r = evaluate_index(index, gold, KS)
            r.update(build_s=round(builds[kind], 2), index_mb=round(sizes[kind] / 1e6, 2))
            results[kind] = r
            index.close()

    cols = [f"recall_all@{k}" for k in KS] + ["recall_any@10", "build_s", "index_mb", "queries_per_s"]
    print("| kind | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for kind, r in results.items():
        print(f"| {kind} | " + " | ".join(str(r[c]) for c in cols) + " |")
    print(json.dumps({"passages": len(corpus), "questions": len(gold), "results": results}))


if __name__ == "__main__":
    main()
