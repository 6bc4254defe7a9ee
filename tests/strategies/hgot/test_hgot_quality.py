import pytest

from thoughtloom.strategies.hgot.quality import (Statement, citation_frequency, citation_scores,
                                                 entailment_pairs, rank_scores,
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
    assert rank_scores(2) == [1.0, 0.5] and rank_scores(0) == []


# -- exact values the mutation run found unchecked ------------------------------------------------

def test_statements_and_scores_are_frozen_values():
    """A Statement and CitationScores are values (frozen dataclasses): a statement can be a set member
    or a dict key, and no caller can change a thought's scores after the fact."""
    import dataclasses

    s = Statement("Jaws was directed by Spielberg.", (0,))
    assert {s: 1}[Statement("Jaws was directed by Spielberg.", (0,))] == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.cites = (1,)
    sc = citation_scores([s], P, {(P[0], s.text): True}, expand=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sc.recall = 0.0


def test_entailment_pairs_are_exactly_the_ones_the_scores_look_up():
    """A single citation needs one pair, E(p_c, s); a statement citing {1, 2} needs E(concat), and for
    each citation c, E(c alone) and E(the rest: with three citations, the other two) -- the three terms of ALCE's irrelevant(c, s). With
    expand, every passage alone is judged against every statement, cited or not."""
    one = Statement("Jaws was directed by Spielberg.", (0,))
    two = Statement("Spielberg was born in 1946.", (0, 1))
    none = Statement("He is famous.", ())
    assert entailment_pairs([one, none], P, expand=False) == {(P[0], one.text)}
    assert entailment_pairs([two], P, expand=False) == {(P[0] + "\n" + P[1], two.text),
                                                         (P[0], two.text), (P[1], two.text)}
    assert entailment_pairs([none], P, expand=True) == {(p, none.text) for p in P}
    three = Statement("Spielberg, born 1946, made a film about sharks.", (0, 1, 2))
    rests = {(P[1] + "\n" + P[2], three.text), (P[0] + "\n" + P[2], three.text), (P[0] + "\n" + P[1], three.text)}
    assert entailment_pairs([three], P, expand=False) == {("\n".join(P), three.text), *rests,
                                                           *((p, three.text) for p in P)}


def test_irrelevant_needs_both_halves_of_alces_rule():
    """Module docstring (ALCE): irrelevant(c, s) = E(concat(C(s)), s) and not E(c, s) and
    E(concat(C(s) - {c}), s). A citation that alone entails s is never irrelevant, even when the other
    citation also does (both precise: 2 of 2); a citation that does not entail alone but without which
    the rest no longer entails is needed (both precise again); only "not alone AND the rest suffices"
    makes one irrelevant (1 of 2)."""
    s = Statement("Spielberg was born in 1946.", (0, 1))
    joint = (P[0] + "\n" + P[1], s.text)
    each_alone = {joint: True, (P[0], s.text): True, (P[1], s.text): True}
    assert citation_scores([s], P, each_alone, expand=False).precision == 1.0
    only_together = {joint: True, (P[0], s.text): False, (P[1], s.text): False}
    assert citation_scores([s], P, only_together, expand=False).precision == 1.0
    one_suffices = {joint: True, (P[0], s.text): False, (P[1], s.text): True}
    assert citation_scores([s], P, one_suffices, expand=False).precision == 0.5


def test_no_statement_scores_zero_not_a_division_error():
    """"A thought with no statements scores 0 / 0" -- read as 0 recall and 0 precision, nothing cited."""
    sc = citation_scores([], P, {}, expand=True)
    assert (sc.recall, sc.precision, dict(sc.cited_by)) == (0.0, 0.0, {})


async def test_judge_pairs_sends_each_pair_once_and_a_score_equal_to_the_threshold_entails():
    """"a pair counts as entailed when E >= threshold": a score of exactly 0.5 is entailed, 0.49 is not;
    duplicate pairs go to the judge once (sorted), the trace counts pairs and entailed ones, and no pair
    means no judge call at all."""
    from thoughtloom.core.trace import Trace
    from thoughtloom.strategies.hgot.quality import judge_pairs

    class Judge:
        def __init__(self):
            self.calls = []

        async def judge(self, pairs):
            self.calls.append(list(pairs))
            return [0.5 if h == "b" else 0.49 for _, h in pairs]

    judge, trace = Judge(), Trace()
    got = await judge_pairs(judge, [("p", "b"), ("p", "a"), ("p", "b")], threshold=0.5, trace=trace)
    assert got == {("p", "a"): False, ("p", "b"): True}
    assert judge.calls == [[("p", "a"), ("p", "b")]]
    assert [(e["pairs"], e["entailed"]) for e in trace.of_type("entailment")] == [(2, 1)]
    assert await judge_pairs(judge, [], threshold=0.5) == {} and len(judge.calls) == 1
    assert await judge_pairs(judge, [("p", "b")], threshold=0.5) == {("p", "b"): True}  # no trace given


def test_citation_frequency_below_one_is_still_scaled_to_one():
    """§3.3: the weighted frequency is normalized "so the highest passage value in a retrieval set is 1",
    also when every raw frequency is below 1 (q = 0.5, one citation: f = [0.5, 0.25] -> [1, 0.5]);
    a passage index outside the set is ignored."""
    assert citation_frequency([{0: 1}, {1: 1, 7: 3}], [0.5, 0.25], 2) == [1.0, 0.5]


def test_passage_quality_weights_each_term_by_its_own_weight():
    """s'(p) = w1 * s(p) + w2 * f~(p) + w3 * conf with the paper's best (w1, w2, w3) = (0.2, 0.55, 0.25)
    (§6): s = 0.5, f~ = 0.5, conf = 0.4 gives 0.1 + 0.275 + 0.1."""
    assert passage_quality(0.5, 0.5, 0.4, 0.2, 0.55, 0.25) == pytest.approx(0.475)


def test_the_retrieval_term_is_the_ranking_not_the_raw_score():
    """§3.3: passage quality starts from "the retrieval module's ranking"; the authors' search
    module scores the result at position i as 1/position. Three BM25 hits scored 14.2, 13.6,
    13.1 start at 1, 1/2, 1/3 (score / best gave 1, 0.958, 0.923: rank nearly vanished)."""
    import asyncio

    from thoughtloom.core.trace import Trace
    from thoughtloom.core.types import Passage, ScoredPassage
    from thoughtloom.strategies.context import Context
    from thoughtloom.strategies.hgot.probe import probe
    from thoughtloom.tasks.base import Task
    from thoughtloom.testing import ScriptedLM

    class Scored:
        async def search(self, queries, k):
            return [[ScoredPassage(Passage(f"p{i}", f"text {i}", ""), s, i) for i, s in enumerate((14.2, 13.6, 13.1))]
                    for _ in queries]

    assert rank_scores(3) == [1.0, 0.5, pytest.approx(1 / 3)]
    ctx = Context(lm=ScriptedLM([]), task=Task(), trace=Trace(), retriever=Scored())
    (pool,) = asyncio.run(probe(ctx, ["q"], 3))
    assert [round(p.score, 4) for p in pool] == [1.0, 0.5, 0.3333]
