"""Reciprocal-rank fusion of ranked lists (Cormack et al., 2009).

A passage's fused score is ``sum_i w_i / (c + rank_i)`` over the lists it
appears in, with 1-based ranks and the usual ``c = 60``. Each list is cut at
``depth`` before fusing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

from ..core.options import Options, make, option


@dataclass(frozen=True)
class FusionSettings(Options):
    rrf_k: float = option(60.0, min=0)
    bm25_weight: float = option(1.0, min=0)
    dense_weight: float = option(1.0, min=0)
    depth: int = option(100, min=1)  # how deep each list is read before fusing

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "FusionSettings":
        """From ``--set fusion.KEY=V`` text or typed values (a manifest), by the one options coercer."""
        return make(cls, d, owner="fusion index")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def rrf(lists: Sequence[Sequence[int]], weights: Sequence[float], k: int, c: float = 60.0) -> list[tuple[int, float]]:
    """Fuse ranked lists of row ids; the top ``k`` (row, fused score), best first.

    Ties keep the order of first appearance (list by list, rank by rank), so
    fusion is deterministic.
    """
    if len(lists) != len(weights):
        raise ValueError("one weight per list")
    scores: dict[int, float] = {}
    for rows, w in zip(lists, weights):
        for rank, row in enumerate(rows, 1):
            scores[row] = scores.get(row, 0.0) + w / (c + rank)
    order = sorted(scores.items(), key=lambda kv: -kv[1])  # stable: first appearance wins ties
    return order[:k]
