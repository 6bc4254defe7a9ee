"""Local corpora and indexes: BM25 (bm25s), dense (sentence-transformers) and hybrid.

Importing this package is cheap: bm25s, torch and sentence-transformers are
imported only when an index of that kind is built or opened.

::

    from thoughtloom.retrieval import read_corpus, build_index, open_index
    corpus = read_corpus(["hotpot.jsonl", "ircot.jsonl"])      # pooled, deduplicated
    build_index(corpus, "bm25", "idx/")
    index = open_index("idx/")                                # a batched Retriever
    hits = await index.search(["question one", "question two"], k=5)
"""

from .cache import CachedRetriever
from .corpus import FORMATS, read_corpus
from .formats import GoldQuestion, read_questions
from .index import KINDS, Index, TemporaryIndex, build_index, disk_size, open_index
from .sources import Corpus
from .store import IndexMismatch

__all__ = [
    "FORMATS", "KINDS", "CachedRetriever", "Corpus", "GoldQuestion", "Index", "IndexMismatch",
    "TemporaryIndex", "build_index", "disk_size", "open_index", "read_corpus", "read_questions",
]
