"""BM25 at scale: build time, peak memory and queries/s on a synthetic corpus.

Passages are made of words drawn from a Zipf-like distribution over a
synthetic vocabulary (default 1,000,000 passages of about 60 words, 200,000
word types), written as JSONL, then read, indexed and queried through the
library exactly as `thoughtloom index build` / `search` do. Run it under the
bench lock:

    flock /tmp/tl-bench.lock env PYTHONPATH=src python benchmarks/bm25_scale.py --n 1000000

Prints one line per phase (seconds, peak RSS so far) and a JSON summary.
The corpus can be written beforehand, outside the lock, with
``--generate-only PATH`` and then given with ``--corpus PATH``.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from thoughtloom.retrieval import build_index, disk_size, open_index, read_corpus  # noqa: E402


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024


def make_vocab(n_types: int, rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(3, 10, size=n_types)
    words = {"".join(rng.choice(letters, size=n)) for n in lengths}
    while len(words) < n_types:
        words.add("".join(rng.choice(letters, size=8)))
    return sorted(words)[:n_types]


def write_corpus(path: Path, n: int, words_per: int, vocab: list[str], rng: np.random.Generator) -> None:
    ranks = np.arange(1, len(vocab) + 1)
    probs = 1.0 / ranks ** 1.07
    probs /= probs.sum()
    vocab_arr = np.array(vocab, dtype=object)
    with path.open("w", encoding="utf-8") as fh:
        for start in range(0, n, 10_000):
            m = min(10_000, n - start)
            lengths = rng.integers(words_per // 2, words_per * 3 // 2, size=m)
            ids = rng.choice(len(vocab), size=int(lengths.sum()), p=probs)
            pos = 0
            lines = []
            for i, length in enumerate(lengths):
                words = vocab_arr[ids[pos:pos + length]]
                pos += length
                lines.append(json.dumps({"id": f"s{start + i}", "title": f"Doc {start + i}",
                                         "text": " ".join(words)}))
            fh.write("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--words", type=int, default=60, help="mean words per passage")
    ap.add_argument("--types", type=int, default=200_000, help="vocabulary size")
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--work", type=Path, default=Path("/tmp/tl-bm25-scale"))
    ap.add_argument("--keep", action="store_true", help="keep the corpus and index files")
    ap.add_argument("--corpus", type=Path, default=None,
                    help="reuse a corpus written by --generate-only (same --n/--words/--types) instead of writing one")
    ap.add_argument("--generate-only", type=Path, default=None, metavar="PATH",
                    help="only write the synthetic corpus to PATH (no timing; needs no lock) and exit")
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    if args.generate_only is not None:
        vocab = make_vocab(args.types, rng)
        write_corpus(args.generate_only, args.n, args.words, vocab, rng)
        return
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    phases: dict[str, float] = {}

    def phase(name: str, t0: float) -> None:
        phases[name] = round(time.perf_counter() - t0, 2)
        print(f"{name:>12}: {phases[name]:8.2f}s   peak RSS {peak_rss_gb():.2f} GB", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    vocab = make_vocab(args.types, rng)  # same seed: the same vocabulary as --generate-only
    corpus_path = args.corpus or args.work / "corpus.jsonl"
    if args.corpus is None:
        write_corpus(corpus_path, args.n, args.words, vocab, rng)
    phase("generate", t0)

    t0 = time.perf_counter()
    corpus = read_corpus(corpus_path, "jsonl")
    phase("read", t0)

    t0 = time.perf_counter()
    manifest = build_index(corpus, "bm25", args.work / "index", {"bm25": {"stemmer": None}})
    phase("build", t0)
    n_passages = len(corpus)
    del corpus

    t0 = time.perf_counter()
    index = open_index(args.work / "index")
    phase("open", t0)

    # queries: 4 words each from the mid-frequency band (ranks 100..20,000)
    qwords = rng.integers(100, min(20_000, len(vocab)), size=(args.queries, 4))
    queries = [" ".join(vocab[i] for i in row) for row in qwords]
    t0 = time.perf_counter()
    hits = 0
    for start in range(0, len(queries), 500):
        for res in index.search_sync(queries[start:start + 500], 10):
            hits += len(res)
    search_s = time.perf_counter() - t0
    phase("search", t0)

    summary = {
        "passages": n_passages, "words_per_passage": args.words, "vocab": args.types,
        "build_s": round(manifest["build"]["passages_s"] + manifest["build"]["bm25_s"], 2),
        "bm25_s": manifest["build"]["bm25_s"], "read_s": phases["read"], "open_s": phases["open"],
        "queries": len(queries), "queries_per_s": round(len(queries) / search_s, 1),
        "mean_hits": round(hits / len(queries), 2),
        "index_mb": round(disk_size(args.work / "index") / 1e6, 1),
        "bm25_files_mb": round(disk_size(args.work / "index" / "bm25") / 1e6, 1),
        "peak_rss_gb": round(peak_rss_gb(), 2),
    }
    print(json.dumps(summary))
    index.close()
    if not args.keep:
        shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
