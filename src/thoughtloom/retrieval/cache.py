"""Retrieval cache around any ``Retriever``.

``CachedRetriever`` keys results by (index fingerprint, query, k): a query
seen before with the same k is answered from memory, and only the misses of
a batch go to the wrapped retriever, together in one call. (Searches are
traced by the strategies' ``Context.search``, not here.)
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Sequence

from ..core.protocols import Retriever
from ..core.types import ScoredPassage


class CachedRetriever:
    def __init__(self, inner: Retriever, *, fingerprint: str | None = None, max_entries: int = 100_000) -> None:
        self.inner = inner
        self.fingerprint = fingerprint or getattr(inner, "fingerprint", None) or f"object-{id(inner)}"
        self.max_entries = max_entries
        self._store: OrderedDict[tuple[str, str, int], list[ScoredPassage]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    async def search(self, queries: Sequence[str], k: int) -> list[list[ScoredPassage]]:
        keys = [(self.fingerprint, q, k) for q in queries]
        todo = list(dict.fromkeys(key for key in keys if key not in self._store))
        self.hits += len(keys) - len(todo)  # a repeat within the batch is a hit too
        self.misses += len(todo)
        if todo:
            found = await self.inner.search([q for _, q, _ in todo], k)
            for key, hits in zip(todo, found):
                self._store[key] = hits
                if len(self._store) > self.max_entries:
                    self._store.popitem(last=False)
        out = []
        for key in keys:
            hits = self._store.get(key)
            if hits is None:  # evicted within this batch (tiny max_entries): ask again
                hits = (await self.inner.search([key[1]], k))[0]
            else:
                self._store.move_to_end(key)
            out.append(hits)
        return out
