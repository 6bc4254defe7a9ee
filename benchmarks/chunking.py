"""Chunking a folder corpus: seconds to cut one long paragraph, and the same text in many paragraphs.

    PYTHONPATH=src python benchmarks/chunking.py            # 1, 2, 4 and 10 MB
    PYTHONPATH=src python benchmarks/chunking.py --mb 1 10

Prints, for each size, the seconds :func:`thoughtloom.retrieval.corpus.chunk_paragraphs`
takes over one paragraph of that many megabytes (one line of words) and over the same
words as paragraphs of 50 words, and the chunks each gave. Linear chunking keeps both
columns within a small factor of each other.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from thoughtloom.retrieval.corpus import chunk_paragraphs  # noqa: E402


def words(mb: float) -> list[str]:
    out, size, i = [], 0, 0
    while size < mb * 1_000_000:
        word = f"w{i % 9973}"
        out.append(word)
        size += len(word) + 1
        i += 1
    return out


def timed(text: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    n = sum(1 for _ in chunk_paragraphs(text, 200))
    return time.perf_counter() - t0, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, nargs="+", default=[1, 2, 4, 10])
    args = parser.parse_args()
    print("MB  one paragraph s  (chunks)  many paragraphs s  (chunks)")
    for mb in args.mb:
        ws = words(mb)
        one_s, one_n = timed(" ".join(ws))
        many_s, many_n = timed("\n\n".join(" ".join(ws[i:i + 50]) for i in range(0, len(ws), 50)))
        print(f"{mb:g}  {one_s:.2f}  ({one_n})  {many_s:.2f}  ({many_n})")


if __name__ == "__main__":
    main()
