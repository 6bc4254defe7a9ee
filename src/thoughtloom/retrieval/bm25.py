"""BM25 over a sparse term matrix, with bm25s (imported lazily).

Tokenization: lower-cased ``\\w\\w+`` words, optional Snowball stemming
(PyStemmer) and optional stop-word removal, both recorded in the index's
settings so queries are tokenized exactly as the corpus was. Passages with
a zero score (no query term in common) are not returned.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ..core.errors import ConfigError
from ..core.options import Options, make

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BM25Settings(Options):
    k1: float = 1.5
    b: float = 0.75
    method: str = "lucene"  # bm25s variants: robertson, atire, bm25l, bm25+, lucene
    stemmer: str | None = "english"  # a Snowball language, or None for no stemming
    stopwords: str | None = "en"  # "en" (bm25s's English list) or None
    threads: int = 0  # query threads; 0 = one

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "BM25Settings":
        """From ``--set bm25.KEY=V`` text or typed values (a manifest), by the one options coercer."""
        return make(cls, d, owner="bm25 index")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _bm25s():
    try:
        import bm25s
    except ImportError as exc:  # pragma: no cover - depends on install
        raise ConfigError("BM25 needs the bm25s package", hint="pip install bm25s PyStemmer") from exc
    logging.getLogger("bm25s").setLevel(max(logging.WARNING, logging.getLogger().level))
    return bm25s


def _tokenizer(settings: BM25Settings):
    from bm25s.tokenization import Tokenizer

    stem = None
    if settings.stemmer:
        try:
            import Stemmer
        except ImportError as exc:  # pragma: no cover - depends on install
            raise ConfigError("stemming needs PyStemmer", hint="pip install PyStemmer, or set stemmer=None") from exc
        try:
            stem = Stemmer.Stemmer(settings.stemmer).stemWord
        except KeyError as exc:
            raise ConfigError(f"unknown stemmer language {settings.stemmer!r}",
                              hint=f"one of {', '.join(Stemmer.algorithms())}") from exc
    return Tokenizer(lower=True, stopwords=settings.stopwords or [], stemmer=stem)


class BM25Searcher:
    """Builds, saves and queries a bm25s index in one folder."""

    def __init__(self, retriever: Any, tokenizer: Any, settings: BM25Settings) -> None:
        self.retriever = retriever
        self.tokenizer = tokenizer
        self.settings = settings

    @classmethod
    def build(cls, texts: Iterable[str], settings: BM25Settings, *, show_progress: bool = False) -> "BM25Searcher":
        bm25s = _bm25s()
        tokenizer = _tokenizer(settings)
        ids = tokenizer.tokenize(list(texts), update_vocab=True, return_as="tuple", show_progress=show_progress)
        retriever = bm25s.BM25(k1=settings.k1, b=settings.b, method=settings.method)
        retriever.index(ids, show_progress=show_progress)
        return cls(retriever, tokenizer, settings)

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.retriever.save(str(folder), show_progress=False)
        self.tokenizer.save_vocab(str(folder))

    @classmethod
    def load(cls, folder: Path, settings: BM25Settings, *, mmap: bool = True) -> "BM25Searcher":
        bm25s = _bm25s()
        retriever = bm25s.BM25.load(str(folder), mmap=mmap, show_progress=False)
        tokenizer = _tokenizer(settings)
        tokenizer.load_vocab(str(folder))
        return cls(retriever, tokenizer, settings)

    @property
    def n_docs(self) -> int:
        return int(self.retriever.scores["num_docs"])

    def search_rows(self, queries: Sequence[str], k: int) -> list[list[tuple[int, float]]]:
        """(row, score) of the top ``k`` rows for each query, best first (ties: lower row first).

        Scores come from bm25s's sparse matrix; the top k is taken among the
        passages with a non-zero score only, which on a large corpus is a
        small fraction (bm25s's own selection partitions the full score vector).
        """
        if not queries:
            return []
        ids = self.tokenizer.tokenize(list(queries), update_vocab=False, return_as="ids", show_progress=False)
        out = []
        for token_ids in ids:
            token_ids = [t for t in token_ids if t != 0]  # 0 is bm25s's empty / unknown token
            if not token_ids:
                out.append([])
                continue
            scores = np.asarray(self.retriever.get_scores(token_ids))
            hits = np.flatnonzero(scores > 0)
            if len(hits) > k:
                hits = hits[np.argpartition(-scores[hits], k - 1)[:k]]
            hits = hits[np.lexsort((hits, -scores[hits]))]
            out.append([(int(r), float(scores[r])) for r in hits])
        return out
