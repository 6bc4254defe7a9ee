"""Local corpora and indexes: BM25 (bm25s), dense (sentence-transformers) and hybrid.

Importing this package is cheap: bm25s, torch and sentence-transformers are
imported only when an index of that kind is built or opened.

::

    from thoughtloom.retrieval import read_corpus, build_index, open_index
    corpus = read_corpus(["hotpot.jsonl", "ircot.jsonl"])      # pooled, deduplicated
    build_index(corpus, "bm25", "idx/")
    index = open_index("idx/")                                # a batched Retriever
    hits = await index.search(["question one", "question two"], k=5)

Code outside this package (strategies) reaches an encoder through the
:func:`sentence_encoder` factory, never through the backend modules.
"""

from .cache import CachedRetriever
from .corpus import FORMATS, read_corpus
from .dense import DEFAULT_MODEL, Encoder
from .formats import GoldQuestion, read_questions
from .index import KINDS, Index, TemporaryIndex, build_index, disk_size, open_index, spell_settings
from .sources import Corpus
from .store import IndexMismatch

__all__ = [
    "FORMATS", "KINDS", "CachedRetriever", "Corpus", "Encoder", "GoldQuestion", "Index", "IndexMismatch",
    "TemporaryIndex", "build_index", "disk_size", "open_index", "read_corpus", "read_questions",
    "sentence_encoder", "spell_settings",
]


def sentence_encoder(model: str = DEFAULT_MODEL) -> Encoder:
    """The sentence encoder dense indexes use (the packaged all-MiniLM-L6-v2 by default), for
    callers that embed text themselves, e.g. HGOT's kNN choice of demonstrations. Needs the
    ``dense`` extra; torch is imported by this call, not by importing the package."""
    from .dense import SentenceTransformerEncoder

    return SentenceTransformerEncoder(model)
