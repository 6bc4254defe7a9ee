"""Probe: one batched search for the questions of one level; passage pools with quality scores.

A pool is a list of :class:`~thoughtloom.core.types.ScoredPassage`, best
first: ``score`` is the passage's current quality (HGOT §3.3), ``rank`` its
place in the pool (0 = best).
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ...core.types import Passage, ScoredPassage
from ..context import Context
from .quality import rank_scores


def ranked(scored: Iterable[tuple[Passage, float]]) -> list[ScoredPassage]:
    """A pool from (passage, quality) pairs: best first (ties keep their order), ranks renumbered."""
    order = sorted(scored, key=lambda ps: ps[1], reverse=True)
    return [ScoredPassage(p, s, r) for r, (p, s) in enumerate(order)]


async def probe(ctx: Context, queries: Sequence[str], k: int) -> list[list[ScoredPassage]]:
    """One search for all queries (closed book: empty pools); each passage's initial quality
    is 1/rank in its set (:func:`.quality.rank_scores`)."""
    pools = []
    for hits in await ctx.search(queries, k):
        pools.append([ScoredPassage(h.passage, s, r) for r, (h, s) in enumerate(zip(hits, rank_scores(len(hits))))])
    return pools


def merge_pools(parent: Sequence[ScoredPassage], children: Sequence[Sequence[ScoredPassage]], *,
                parent_weight: float, clip: int) -> list[ScoredPassage]:
    """Pool for the level's second Infer: the parent's passages (scores times
    ``parent_weight``) plus every child's final passages; a passage found
    more than once gets the mean of its scores; the best ``clip`` are kept."""
    acc: dict[str, tuple[Passage, list[float]]] = {}
    for item in parent:
        acc.setdefault(item.passage.id, (item.passage, []))[1].append(item.score * parent_weight)
    for pool in children:
        for item in pool:
            acc.setdefault(item.passage.id, (item.passage, []))[1].append(item.score)
    return ranked((p, sum(s) / len(s)) for p, s in acc.values())[:clip]
