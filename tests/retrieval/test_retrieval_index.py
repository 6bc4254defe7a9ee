"""Indexes: persistence round trips, settings, corpus fingerprints, fusion, caching."""

from __future__ import annotations

import json

import numpy as np
import pytest

from retrieval_fakes import HashEncoder
from thoughtloom.core.errors import ConfigError
from thoughtloom.core.protocols import Retriever
from thoughtloom.retrieval import (CachedRetriever, IndexMismatch, build_index, open_index,
                                   read_corpus)
from thoughtloom.retrieval.dense import top_k
from thoughtloom.retrieval.hybrid import FusionSettings, rrf

DOCS = [
    {"id": "llama", "title": "Llama", "text": "Llamas are running animals of the Andes mountains."},
    {"id": "paris", "title": "Paris", "text": "The Eiffel Tower stands in Paris, France."},
    {"id": "python", "title": "Python", "text": "Python is a programming language with dynamic types."},
    {"id": "andes", "title": "Andes", "text": "The Andes are the longest mountain range."},
    {"id": "run", "title": "Marathon", "text": "A marathon run is 42 kilometres long."},
]


@pytest.fixture
def corpus_file(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    return path


def ids(hits):
    return [h.passage.id for h in hits]


def test_bm25_round_trip_and_protocol(corpus_file, tmp_path):
    corpus = read_corpus(corpus_file)
    manifest = build_index(corpus, "bm25", tmp_path / "idx")
    assert manifest["corpus"]["passages"] == 5 and manifest["settings"]["bm25"]["stemmer"] == "english"
    index = open_index(tmp_path / "idx")
    assert isinstance(index, Retriever)
    first = index.search_sync(["andes mountains", "eiffel tower"], 3)
    assert ids(first[0])[:2] == ["andes", "llama"] and ids(first[1]) == ["paris"]  # zero scores dropped
    assert [h.rank for h in first[0]] == list(range(len(first[0])))
    assert all(a.score >= b.score for a, b in zip(first[0], first[0][1:]))
    again = open_index(tmp_path / "idx").search_sync(["andes mountains", "eiffel tower"], 3)
    assert [[(h.passage, h.score) for h in q] for q in again] == [[(h.passage, h.score) for h in q] for q in first]
    assert first[1][0].passage.title == "Paris" and first[1][0].passage.text.startswith("The Eiffel")


async def test_async_search_is_batched(corpus_file, tmp_path):
    build_index(read_corpus(corpus_file), "bm25", tmp_path / "idx")
    index = open_index(tmp_path / "idx")
    results = await index.search(["python language", "marathon"], 1)
    assert [ids(r) for r in results] == [["python"], ["run"]]


def test_stemming_and_stopwords_are_settings(corpus_file, tmp_path):
    corpus = read_corpus(corpus_file)
    build_index(corpus, "bm25", tmp_path / "stem")
    build_index(corpus, "bm25", tmp_path / "plain", {"bm25": {"stemmer": None, "stopwords": None}})
    stem, plain = open_index(tmp_path / "stem"), open_index(tmp_path / "plain")
    # "runs" reaches "running"/"run" only through the stemmer
    assert set(ids(stem.search_sync(["runs"], 5)[0])) == {"llama", "run"}
    assert plain.search_sync(["runs"], 5)[0] == []
    # "the" is a stop word unless stop words are off
    assert stem.search_sync(["the"], 5)[0] == []
    assert set(ids(plain.search_sync(["the"], 5)[0])) == {"paris", "andes", "llama"}
    assert plain.manifest["settings"]["bm25"]["stopwords"] is None


def test_changed_corpus_file_is_refused(corpus_file, tmp_path):
    build_index(read_corpus(corpus_file), "bm25", tmp_path / "idx")
    with corpus_file.open("a") as fh:
        fh.write(json.dumps({"id": "new", "text": "A new passage."}) + "\n")
    with pytest.raises(IndexMismatch, match=r"docs\.jsonl changed since index .* was built.*rebuild"):
        open_index(tmp_path / "idx")
    assert len(open_index(tmp_path / "idx", check_sources=False)) == 5  # explicit opt-out
    corpus_file.unlink()  # a missing source is fine: the index holds its passages
    assert len(open_index(tmp_path / "idx")) == 5


def test_given_corpus_must_match_fingerprint(corpus_file, tmp_path):
    corpus = read_corpus(corpus_file)
    build_index(corpus, "bm25", tmp_path / "idx")
    assert len(open_index(tmp_path / "idx", corpus=corpus)) == 5
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps(DOCS[0]) + "\n")
    with pytest.raises(IndexMismatch, match="built from a different corpus .*5 passages.*given 1 passages"):
        open_index(tmp_path / "idx", corpus=read_corpus(other))


def test_build_refuses_to_clobber(corpus_file, tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    corpus = read_corpus(corpus_file)
    with pytest.raises(ConfigError, match="exists and is not empty"):
        build_index(corpus, "bm25", tmp_path / "busy")
    with pytest.raises(ConfigError, match="not an index folder"):
        build_index(corpus, "bm25", tmp_path / "busy", overwrite=True)
    with pytest.raises(ConfigError, match="not an index"):
        open_index(tmp_path / "busy")
    with pytest.raises(ConfigError, match="unknown index kind"):
        build_index(corpus, "faiss", tmp_path / "x")


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_dense_round_trip_memory_mapped(corpus_file, tmp_path, dtype):
    enc = HashEncoder()
    corpus = read_corpus(corpus_file)
    build_index(corpus, "dense", tmp_path / "d", {"dense": {"dtype": dtype, "block_rows": 2}}, encoder=enc)
    index = open_index(tmp_path / "d", encoder=enc)
    assert isinstance(index.dense.matrix, np.memmap) and index.dense.matrix.dtype == np.dtype(dtype)
    hits = index.search_sync(["Eiffel Tower Paris"], 5)[0]
    assert hits[0].passage.id == "paris"
    # exact search: same order as brute force over the stored matrix (block_rows=2 merges 3 blocks)
    q = enc.encode(["Eiffel Tower Paris"])[0]
    brute = np.argsort(-(np.asarray(index.dense.matrix, dtype=np.float32) @ q), kind="stable")
    assert [h.passage.id for h in hits] == [corpus.passages[i].id for i in brute]


def test_top_k_orders_and_breaks_ties_by_index():
    scores = np.array([[0.1, 0.9, 0.5, 0.9, 0.2]])
    idx, val = top_k(scores, 3)
    assert idx.tolist() == [[1, 3, 2]] and val.tolist() == [[0.9, 0.9, 0.5]]
    assert top_k(scores, 10)[0].tolist() == [[1, 3, 2, 4, 0]]


def test_rrf_arithmetic():
    fused = rrf([[1, 2, 3], [3, 1]], [1.0, 1.0], k=3, c=60)
    assert [r for r, _ in fused] == [1, 3, 2]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1][1] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2][1] == pytest.approx(1 / 62)
    weighted = rrf([[1, 2, 3], [3, 1]], [1.0, 2.0], k=2, c=60)
    assert [r for r, _ in weighted] == [3, 1]  # 1/63 + 2/61 > 1/61 + 2/62
    assert rrf([[5], [6]], [1.0, 1.0], k=5)[0][0] == 5  # ties: first appearance first
    with pytest.raises(ConfigError):
        FusionSettings(depth=0)


def test_hybrid_fuses_both_halves(corpus_file, tmp_path):
    enc = HashEncoder()
    corpus = read_corpus(corpus_file)
    settings = {"fusion": {"rrf_k": 10, "dense_weight": 0.5, "depth": 5}}
    build_index(corpus, "hybrid", tmp_path / "h", settings, encoder=enc)
    hybrid = open_index(tmp_path / "h", encoder=enc)
    bm25 = open_index(tmp_path / "h", kind="bm25")
    dense = open_index(tmp_path / "h", kind="dense", encoder=enc)
    query = ["mountain range of the Andes"]
    b = [r for r, _ in bm25.search_rows(query, 5)[0]]
    d = [r for r, _ in dense.search_rows(query, 5)[0]]
    expected = rrf([b, d], [1.0, 0.5], k=3, c=10)
    assert hybrid.search_rows(query, 3)[0] == expected
    assert hybrid.fingerprint != bm25.fingerprint
    build_index(corpus, "bm25", tmp_path / "b")
    with pytest.raises(ConfigError, match="cannot be opened as dense.*only a hybrid index"):
        open_index(tmp_path / "b", kind="dense")


class CountingRetriever:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def search(self, queries, k):
        from thoughtloom.core.types import Passage, ScoredPassage

        self.batches.append(list(queries))
        return [[ScoredPassage(Passage(f"{q}-{i}", q), 1.0 / (i + 1), i) for i in range(k)] for q in queries]


async def test_retrieval_cache_keys_on_query_and_k():
    inner = CountingRetriever()
    cached = CachedRetriever(inner, fingerprint="fp")
    first = await cached.search(["a", "b", "a"], 2)
    assert inner.batches == [["a", "b"]] and ids(first[0]) == ids(first[2]) == ["a-0", "a-1"]
    await cached.search(["b", "c"], 2)
    assert inner.batches[-1] == ["c"]
    await cached.search(["a"], 3)  # another k is another entry
    assert inner.batches[-1] == ["a"] and (cached.hits, cached.misses) == (2, 4)


def _bridge_corpus(tmp_path):
    """A bridge question's first hop names the second hop's title; the second hop shares no
    word of the question but its subject, and ten distractors share the question's words."""
    rows = [{"title": "Nightfall Road", "text": "Nightfall Road is a crime film directed by Mara Lindqvist."},
            {"title": "Mara Lindqvist", "text": "Lindqvist grew up in Uppsala and studied painting."}]
    rows += [{"title": f"Road film {i}", "text": f"A film about a road trip, number {i}, directed in a country."}
             for i in range(10)]
    path = tmp_path / "bridge.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return read_corpus(path)


def test_title_links_follow_the_titles_the_first_hop_names(tmp_path):
    """links.seeds = s: the passages whose titles the top s passages name are fused with the
    ordinary ranking (reciprocal-rank fusion), so the second hop of a bridge question, which
    BM25 alone ranks below the distractors, reaches the top k; off (the default) changes nothing."""
    from thoughtloom.retrieval.links import TitleLinks

    corpus = _bridge_corpus(tmp_path)
    question = "In which country was the director of the film Nightfall Road born?"
    plain = open_index(build_index(corpus, "bm25", tmp_path / "plain") and tmp_path / "plain")
    linked = open_index(build_index(corpus, "bm25", tmp_path / "links", {"links": {"seeds": "1"}}) and tmp_path / "links")
    top = lambda index: [h.passage.title for h in index.search_sync([question], 3)[0]]
    assert top(plain)[0] == "Nightfall Road" and "Mara Lindqvist" not in top(plain)
    assert top(linked)[:2] == ["Nightfall Road", "Mara Lindqvist"]
    assert linked.manifest["settings"]["links"]["seeds"] == 1 and "links" not in plain.manifest["settings"]
    assert linked.fingerprint != plain.fingerprint  # the retrieval cache tells them apart
    links = TitleLinks(["Mara Lindqvist", "Road", "A"])
    assert links.named("Directed by MARA LINDQVIST, on the road.") == [0, 1]  # whole words, any case
    with pytest.raises(ConfigError, match="seeds"):
        build_index(corpus, "bm25", tmp_path / "bad", {"links": {"seeds": "-1"}})


def test_build_settings_are_spelt_as_the_index_build_set_keys():
    """The card and the eval log name an index's settings as `index build --set` takes them."""
    from thoughtloom.cli.index import parse_settings
    from thoughtloom.retrieval import spell_settings

    settings = {"links": {"seeds": 3}, "bm25": {"k1": 1.2, "b": 0.75}}
    assert spell_settings(settings) == "links.seeds=3, bm25.k1=1.2, bm25.b=0.75"
    assert parse_settings(spell_settings(settings).split(", ")) == {
        part: {k: str(v) for k, v in kv.items()} for part, kv in settings.items()}
    assert spell_settings({}) == ""
