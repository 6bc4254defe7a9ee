import pytest

from thoughtloom.strategies.hgot.quality import (Statement, citation_frequency, citation_scores,
                                                 entailment_pairs, normalize_retriever_scores,
                                                 passage_quality, split_statements, thought_quality)
from thoughtloom.strategies.hgot.infer import parse_thought

P = ["Jaws was directed by Steven Spielberg.", "Spielberg was born in 1946.", "Sharks live in oceans."]


def test_split_statements_reads_markers():
    st = split_statements("Jaws was directed by Spielberg [1]. He was born in 1946 [2][3]. "
                          "Both hold [1, 2]. Bogus [9]. No cite here.", 3)
    assert [s.cites for s in st] == [(0,), (1, 2), (0, 1), (), ()]
    assert st[0].text == "Jaws was directed by Spielberg."


def test_parse_thought():
    t = parse_thought("Jaws was directed by Spielberg [1]. He was born in 1946 [2].\nAnswer: 1946.", 2)
    assert t.answer == "1946" and len(t.statements) == 2
    assert parse_thought("I am rambling on without any answer line at all.", 2).answer is None
    bare = parse_thought("1946.", 2)
    assert bare.answer == "1946" and bare.statements == ()


def verdicts(true_pairs, statements, expand=False):
    pairs = entailment_pairs(statements, P, expand=expand)
    return {p: p in true_pairs for p in pairs}


def test_recall_and_precision_hand_computed():
    s1 = Statement("Jaws was directed by Spielberg.", (0,))        # supported
    s2 = Statement("Spielberg was born in 1946.", (1, 2))          # supported by [2] alone; [3] irrelevant
    s3 = Statement("Spielberg likes sharks.", (2,))                # unsupported
    s4 = Statement("He is famous.", ())                            # no citation
    true = {(P[0], s1.text), (P[1], s2.text), (P[1] + "\n" + P[2], s2.text), }
    sc = citation_scores([s1, s2, s3, s4], P, verdicts(true, [s1, s2, s3, s4]), expand=False)
    assert sc.recall == pytest.approx(2 / 4)
    # citations: s1:[1] ok, s2:[2] ok, [3] irrelevant, s3:[3] unsupported -> 2 precise of 4
    assert sc.precision == pytest.approx(2 / 4)
    assert dict(sc.cited_by) == {0: 1, 1: 1, 2: 2}


def test_expansion_counts_entailing_passages():
    s = Statement("Spielberg was born in 1946.", ())
    sc = citation_scores([s], P, verdicts({(P[1], s.text)}, [s], expand=True), expand=True)
    assert sc.recall == 0.0 and sc.precision == 0.0
    assert dict(sc.cited_by) == {1: 1}


def test_thought_quality_formula():
    assert thought_quality(0.5, 0.25, 0.2, 0.4, 0.4) == pytest.approx(0.2 + 0.2 + 0.1)
    assert thought_quality(0.3, 0.9, 1.0, 0.0, 0.0) == 1.0


def test_citation_frequency_normalized_to_best_passage():
    freq = citation_frequency([{0: 2, 1: 1}, {1: 1}], [0.5, 1.0], 3)
    # f = [2*0.5, 1*0.5 + 1*1.0, 0] = [1.0, 1.5, 0]; / 1.5
    assert freq == pytest.approx([1.0 / 1.5, 1.0, 0.0])
    assert max(freq) == 1.0
    assert citation_frequency([{}], [1.0], 2) == [0.0, 0.0]


def test_passage_quality_and_retriever_normalization():
    assert passage_quality(0.5, 1.0, 0.8, 0.2, 0.55, 0.25) == pytest.approx(0.1 + 0.55 + 0.2)
    assert normalize_retriever_scores([12.0, 6.0, 3.0]) == [1.0, 0.5, 0.25]
    assert normalize_retriever_scores([0.0, 0.0]) == [1.0, 0.5]
