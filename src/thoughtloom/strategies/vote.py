"""Voting over sampled answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence


@dataclass(frozen=True)
class Vote:
    winner: str | None  # a representative raw answer of the winning class
    key: str | None  # the winning normalized answer
    confidence: float  # winner's share of the total weight (0 when nothing voted)
    tally: dict[str, float]  # normalized answer -> summed weight


def weighted_vote(
    answers: Sequence[str | None],
    normalize: Callable[[str], str],
    weights: Sequence[float] | None = None,
) -> Vote:
    """Self-consistency vote: sum the weight of each normalized answer.

    With every weight 1 this is plain majority voting. ``None`` answers
    (nothing could be extracted) and empty normalized answers do not vote.
    Ties go to the answer that appeared first, so results are deterministic.
    """
    if weights is None:
        weights = [1.0] * len(answers)
    if len(weights) != len(answers):
        raise ValueError("one weight per answer")
    tally: dict[str, float] = {}
    first: dict[str, str] = {}
    for answer, weight in zip(answers, weights):
        if answer is None:
            continue
        key = normalize(answer)
        if not key:
            continue
        tally[key] = tally.get(key, 0.0) + weight
        first.setdefault(key, answer)
    total = sum(tally.values())
    if not tally:
        return Vote(None, None, 0.0, {})
    key = max(tally, key=lambda k: tally[k])  # max keeps the first of equal weights
    return Vote(first[key], key, tally[key] / total if total > 0 else 0.0, tally)
