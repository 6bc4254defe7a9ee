"""Admission bookkeeping of the embedded engine, in plain Python (no llama.cpp).

:mod:`.llamacpp_engine` decodes many sequences at once and admits a waiting
request into the running batch whenever a sequence slot is free. Two
questions decide an admission, and both are answered here so that they can
be tested without a model:

- *which* waiting request goes next (:func:`pick_next`): the one whose prompt
  shares the longest prefix with a prompt already in the KV cache (its cells
  are then copied instead of evaluated), oldest first among equals; a request
  passed over ``patience`` times goes next regardless, so a stream of
  requests over one preamble cannot starve a question over another;
- *whether its cells fit* (:class:`KVLedger`): a unified KV cache stores a
  prefix copied between sequences once (``llama_memory_seq_cp`` tags the
  cells), and those cells stay in use until every sequence that holds them is
  removed, so a finished sequence whose prompt prefix another still holds
  keeps counting for that prefix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token lists."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class Waiting(Protocol):
    prompt: list[int]
    passed: int  # times a later request was admitted before this one


def pick_next(waiting: Sequence[Waiting], cached: Sequence[Sequence[int]], patience: int) -> int:
    """Index (into ``waiting``, oldest first) of the request to admit next, given
    the prompts whose KV cells are in the cache. Counts a pass-over for every
    older request the choice skips."""
    overdue = [i for i, w in enumerate(waiting) if w.passed >= patience]
    if overdue:
        chosen = overdue[0]
    else:
        shares = [max((common_prefix(p, w.prompt) for p in cached), default=0) for w in waiting]
        chosen = max(range(len(waiting)), key=lambda i: (shares[i], -i))
    for w in waiting[:chosen]:
        w.passed += 1
    return chosen


@dataclass(eq=False)
class Holding:
    """The KV cells one sequence holds: ``shared`` cells copied from ``parent``'s
    prompt, then its own up to ``extent`` (its prompt and the reply it may
    still write) while ``active``."""

    extent: int
    parent: Holding | None = None
    shared: int = 0
    active: bool = True
    children: list[Holding] = field(default_factory=list)

    def held(self) -> bool:
        return self.active or any(c.held() for c in self.children)

    def tagged(self) -> int:
        """How many leading cells of this sequence are still in the cache: all while
        active; once ended, the longest prefix that a sequence copied from it (or
        from a copy of it) still holds."""
        if self.active:
            return self.extent
        return max([0] + [min(c.shared, c.tagged()) for c in self.children])

    def cells(self) -> int:
        """Cells that this holding alone accounts for (past the prefix it copied)."""
        return max(0, self.tagged() - self.shared)


class KVLedger:
    """Cells in use in a unified KV cache of ``capacity`` cells, counting a copied
    prefix once and until its last holder ends. An active sequence counts the
    reply it may still write (``extent``), so the count bounds what the cache
    will hold."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.holdings: list[Holding] = []

    def in_use(self) -> int:
        return sum(h.cells() for h in self.holdings)

    def fits(self, extent: int, shared: int = 0) -> bool:
        return self.in_use() + extent - shared <= self.capacity

    def hold(self, extent: int, parent: Holding | None = None, shared: int = 0) -> Holding:
        h = Holding(extent=extent, parent=parent if shared > 0 else None, shared=shared if parent else 0)
        if h.parent is not None:
            h.parent.children.append(h)
        self.holdings.append(h)
        return h

    def end(self, h: Holding) -> None:
        """``h``'s sequence was removed from the cache: its cells go, but for the
        prefix that sequences copied from it still hold."""
        h.active = False
        node: Holding | None = h
        while node is not None and not node.held():
            self.holdings.remove(node)
            parent = node.parent
            if parent is not None:
                parent.children.remove(node)
            node = parent
