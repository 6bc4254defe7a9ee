"""LexicalJudge: deterministic, approximate word-overlap scores."""

from __future__ import annotations

from thoughtloom.core.protocols import Entailment
from thoughtloom.entail import LexicalJudge


async def test_overlap_scores_and_labels():
    judge = LexicalJudge()
    assert isinstance(judge, Entailment) and judge.approximate
    premise = "The Eiffel Tower was completed in 1889 in Paris."
    probs = await judge.judge([
        (premise, "The Eiffel Tower was completed in 1889."),   # fully covered
        (premise, "The tower was completed in 1890."),          # a number differs
        (premise, "Llamas live in the Andes."),                 # unrelated
        (premise, "The Eiffel Tower was not completed in 1889."),  # negated
        (premise, "the of and"),                                # no content words
    ])
    assert probs[0] == 1.0
    assert 0.5 < probs[1] < 1.0
    assert probs[2] == 0.0
    assert probs[3] == 0.5
    assert probs[4] == 0.0
    assert judge.judge_detailed([(premise, "Paris")])[0].source == "lexical"


async def test_stemming_matches_inflections():
    judge = LexicalJudge()
    assert await judge.judge([("Llamas are running in the hills.", "A llama runs.")]) == [1.0]
