"""Probe: one batched search for the questions of one level; passage pools with quality scores."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...core.types import Passage
from ..base import Context
from ..passages import passage_text
from .quality import normalize_retriever_scores


@dataclass(frozen=True)
class Scored:
    """A passage in a question's pool with its current quality."""

    passage: Passage
    score: float

    def text(self, words: int = 0) -> str:
        """The passage as prompts show it (see :mod:`..passages`)."""
        return passage_text(self.passage, words)


async def probe(ctx: Context, queries: Sequence[str], k: int) -> list[list[Scored]]:
    """One search for all queries (closed book: empty pools); scores normalized per set."""
    pools = []
    for hits in await ctx.search(queries, k):
        norm = normalize_retriever_scores([h.score for h in hits])
        pools.append([Scored(h.passage, s) for h, s in zip(hits, norm)])
    return pools


def merge_pools(parent: Sequence[Scored], children: Sequence[Sequence[Scored]], *,
                parent_weight: float, clip: int) -> list[Scored]:
    """Pool for the level's second Infer: the parent's passages (scores times
    ``parent_weight``) plus every child's final passages; a passage found
    more than once gets the mean of its scores; the best ``clip`` are kept."""
    acc: dict[str, tuple[Passage, list[float]]] = {}
    for item in parent:
        acc.setdefault(item.passage.id, (item.passage, []))[1].append(item.score * parent_weight)
    for pool in children:
        for item in pool:
            acc.setdefault(item.passage.id, (item.passage, []))[1].append(item.score)
    merged = [Scored(p, sum(s) / len(s)) for p, s in acc.values()]
    merged.sort(key=lambda x: x.score, reverse=True)
    return merged[:clip]
