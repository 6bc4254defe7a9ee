"""What every entailment judge shares: a judgement record and a cache.

A judge maps (premise, hypothesis) pairs to the probability that the premise
entails the hypothesis, in one batched call (the ``Entailment`` protocol in
``core/protocols.py``). ``CachedJudge`` wraps any judge: pairs seen before
are answered from memory, repeated pairs in a batch are judged once, and the
rest go to the wrapped judge together.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Sequence

from ..core.protocols import Bindable, Entailment

Pair = tuple[str, str]


@dataclass(frozen=True)
class Judgement:
    """One pair's verdict and how it was reached."""

    prob: float  # P(premise entails hypothesis)
    source: str  # "logprobs", "votes", "model", "lexical", or "malformed"
    malformed: int = 0  # replies that could not be read as yes/no


@dataclass
class JudgeStats:
    """Running counts for reports (a judge is a shared service, like a cache)."""

    pairs: int = 0
    malformed: int = 0
    by_source: dict[str, int] | None = None

    def add(self, judgements: Sequence[Judgement]) -> None:
        self.by_source = self.by_source or {}
        for j in judgements:
            self.pairs += 1
            self.malformed += j.malformed
            self.by_source[j.source] = self.by_source.get(j.source, 0) + 1


class CachedJudge:
    """Memoizes ``judge`` by (judge id, premise, hypothesis)."""

    def __init__(self, inner: Entailment, *, max_entries: int = 100_000) -> None:
        self.inner = inner
        self.judge_id = getattr(inner, "judge_id", type(inner).__name__)
        self.max_entries = max_entries
        self._store: OrderedDict[tuple[str, str, str], float] = OrderedDict()
        self.hits = 0
        self.misses = 0

    async def judge(self, pairs: Sequence[Pair]) -> list[float]:
        keys = [(self.judge_id, p, h) for p, h in pairs]
        todo = list(dict.fromkeys(k for k in keys if k not in self._store))
        self.hits += len(keys) - len(todo)
        self.misses += len(todo)
        fresh: dict[tuple[str, str, str], float] = {}
        if todo:
            probs = await self.inner.judge([(p, h) for _, p, h in todo])
            fresh = dict(zip(todo, probs))
            for key, prob in fresh.items():
                self._store[key] = prob
                if len(self._store) > self.max_entries:
                    self._store.popitem(last=False)
        return [fresh[k] if k in fresh else self._store[k] for k in keys]

    def bind(self, lm, trace):  # noqa: ANN001 - duck-typed like the inner judge's
        """Per-question view that shares this cache (see ``LLMJudge.bind``)."""
        if not isinstance(self.inner, Bindable):  # a judge that asks no model: nothing to bind
            return self
        view = CachedJudge(self.inner.bind(lm, trace), max_entries=self.max_entries)
        view._store = self._store
        return view
