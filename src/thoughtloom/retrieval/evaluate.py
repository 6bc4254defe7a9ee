"""Retrieval quality: recall of supporting titles in the top k.

``recall_all@k``: share of questions whose supporting titles are *all* among
the titles of the top k passages. ``recall_any@k``: share with at least one.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from .formats import GoldQuestion
from .index import Index


def recall_at(hit_titles: Sequence[Sequence[str]], gold: Sequence[GoldQuestion],
              ks: Sequence[int]) -> dict[str, float]:
    out: dict[str, float] = {}
    n = len(gold)
    for k in ks:
        all_n = any_n = 0
        for titles, g in zip(hit_titles, gold):
            top = {" ".join(t.split()) for t in titles[:k]}
            found = sum(1 for t in g.titles if t in top)
            all_n += found == len(g.titles)
            any_n += found > 0
        out[f"recall_all@{k}"] = round(all_n / n, 4) if n else 0.0
        out[f"recall_any@{k}"] = round(any_n / n, 4) if n else 0.0
    return out


def evaluate_index(index: Index, gold: Sequence[GoldQuestion], ks: Sequence[int],
                   batch_size: int = 256) -> dict[str, Any]:
    """Search every question once at max(ks) and report recall at each k, n and timing."""
    kmax = max(ks)
    titles: list[list[str]] = []
    t0 = time.perf_counter()
    for start in range(0, len(gold), batch_size):
        batch = gold[start:start + batch_size]
        for hits in index.search_rows([g.question for g in batch], kmax):
            titles.append([index.passages.get(row).title for row, _ in hits])
    seconds = time.perf_counter() - t0
    return {**recall_at(titles, gold, ks), "n": len(gold), "kind": index.kind,
            "passages": len(index), "search_s": round(seconds, 3),
            "queries_per_s": round(len(gold) / seconds, 1) if seconds > 0 else None}
