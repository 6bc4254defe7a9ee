import pytest

from thoughtloom.strategies.hgot.quality import (Statement, citation_frequency, citation_scores,
                                                 entailment_pairs, normalize_retriever_scores,
                                                 passage_quality, split_statements, thought_quality)
import json

import jsonschema

from thoughtloom.strategies.hgot.demos import Annotated, render_infer_demos
from thoughtloom.strategies.hgot.thought import parse_thought, thought_schema

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


def test_parse_json_thought_reads_statements_cites_and_answer():
    reply = json.dumps({"statements": [{"text": "Jaws was directed by Spielberg.", "cites": [1]},
                                       {"text": "He was born in 1946", "cites": [2, 9, 2]}],
                        "answer": "1946."})
    jsonschema.validate(json.loads(reply.replace("9, ", "")), thought_schema(2))
    t = parse_thought("Sure:\n" + reply, 2)
    assert t.answer == "1946"
    assert [s.cites for s in t.statements] == [(0,), (1,)]  # [9] of 2 passages dropped, repeats once
    assert t.rationale == "Jaws was directed by Spielberg [1]. He was born in 1946 [2]."
    # the same rationale in the lines format gives the same statements
    assert parse_thought(t.rationale + "\nAnswer: 1946", 2).statements == t.statements


def test_parse_json_thought_without_answer_or_broken_falls_back():
    assert parse_thought('{"statements": [{"text": "x", "cites": []}], "answer": ""}', 1).answer is None
    # truncated JSON is not a JSON thought; the lines parser then finds no answer
    assert parse_thought('{"statements": [{"text": "Jaws was', 1).answer is None
    # a lines reply with a bracketed citation is not mistaken for JSON
    assert parse_thought("Jaws {sic} was directed by Spielberg [1].\nAnswer: Spielberg", 1).answer == "Spielberg"


def test_json_schema_bounds_citations_to_the_passages_shown():
    schema = thought_schema(3)
    ok = {"statements": [{"text": "a", "cites": [3]}], "answer": "b"}
    jsonschema.validate(ok, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"statements": [{"text": "a", "cites": [4]}], "answer": "b"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"statements": [], "answer": "b"}, schema)


def test_infer_demos_render_in_the_requested_format():
    demo = Annotated(question="Who directed Jaws?", answer="Steven Spielberg",
                     rationale="Jaws was directed by Steven Spielberg [1].")
    as_json = render_infer_demos([demo], "json")
    reply = as_json.strip().splitlines()[1]
    assert json.loads(reply) == {"statements": [{"text": "Jaws was directed by Steven Spielberg.", "cites": [1]}],
                                 "answer": "Steven Spielberg"}
    assert "Answer: Steven Spielberg" in render_infer_demos([demo], "lines")


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
