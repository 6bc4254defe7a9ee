"""An approximate, deterministic entailment score from word overlap.

NOT an NLI model: it measures how much of the hypothesis's content (words
minus stop words, crudely stemmed; numbers must match exactly) appears in the
premise, and cannot see paraphrase. Negation it sees only crudely: in the
premise sentence that carries most of the hypothesis's words, never anywhere
in the premise (a premise is often several passages, and one "not" in any of
them said nothing about the statement). Use it as a fast fallback or in
tests; every judgement it makes is labelled ``lexical``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .base import Judgement, Pair

_WORD = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")
STOPWORDS = frozenset(
    "a an the and or but if of to in on at by for with from as is are was were be been being it its "
    "this that these those there here he she they them his her their we our you your i me my not no "
    "do does did has have had will would can could should may might shall must than then so such "
    "which who whom whose what when where why how into onto over under about also very".split())
_NEGATIONS = frozenset({"not", "no", "never", "none", "nor", "without"})
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _stem(word: str) -> str:
    for suffix in ("ies", "es", "s", "ing", "ed", "ly"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            stem = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            if suffix in ("ing", "ed") and len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "aeiouls":
                stem = stem[:-1]  # running -> run, stopped -> stop
            return stem
    return word


def content_words(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def _negated(text: str) -> bool:
    return bool(_NEGATIONS & set(_WORD.findall(text.lower())))


def _support(premise: str, hyp: set[str]) -> str:
    """The premise sentence sharing the most content words with the hypothesis."""
    best, best_n = "", 0
    for sentence in _SENTENCE.split(premise):
        n = len(hyp & set(content_words(sentence)))
        if n > best_n:
            best, best_n = sentence, n
    return best


@dataclass(frozen=True)
class LexicalJudge:
    """Coverage of the hypothesis's content words by the premise, in [0, 1].

    ``negation_penalty`` is subtracted when exactly one side is negated: the
    hypothesis, or the premise sentence that shares the most content words
    with the hypothesis (the first such sentence on a tie).
    """

    negation_penalty: float = 0.5
    approximate: bool = True
    judge_id: str = "lexical-v2"

    def score(self, premise: str, hypothesis: str) -> float:
        hyp = content_words(hypothesis)
        if not hyp:
            return 0.0
        prem = set(content_words(premise))
        covered = sum(1 for w in hyp if w in prem) / len(hyp)
        neg_p = _negated(_support(premise, set(hyp)))
        neg_h = _negated(hypothesis)
        if neg_p != neg_h:
            covered -= self.negation_penalty
        return round(min(1.0, max(0.0, covered)), 6)

    def judge_detailed(self, pairs: Sequence[Pair]) -> list[Judgement]:
        return [Judgement(self.score(p, h), "lexical") for p, h in pairs]

    async def judge(self, pairs: Sequence[Pair]) -> list[float]:
        return [j.prob for j in self.judge_detailed(pairs)]
