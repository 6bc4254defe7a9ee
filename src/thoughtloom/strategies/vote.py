"""Voting over sampled answers: :func:`weighted_vote` tallies them, :func:`vote_samples`
reads, traces and votes a batch of sampled replies (self-consistency)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from ..core.types import Completion
from .context import Context
from .result import Result


# a reply that declines to answer ("I cannot tell.", "Unknown", "The passages do not say"): whole-answer
# patterns, so an answer that merely contains "not" ("Not Fade Away") is none. FEVER's label
# "NOT ENOUGH INFO" is a verdict, not a refusal.
_REFUSAL = re.compile(
    r"^(?:i\s+|we\s+|it\s+)?(?:cannot|can\s*not|can't|could\s+not|couldn't|am\s+unable\s+to|is\s+impossible\s+to"
    r"|unable\s+to|do\s+not|don't)\s+(?:tell|say|know|determine|answer|be\s+determined|find|be\s+found)\b.*"
    r"|^(?:unknown|not\s+known|n/?a|none|no\s+answer|unanswerable|insufficient\s+information"
    r"|(?:there\s+is\s+)?not\s+enough\s+information(?:\s+to\s+.*)?|no\s+information(?:\s+.*)?)$"
    r"|^(?:the\s+)?(?:passages?|context|documents?|sources?|text)\s+(?:do(?:es)?\s+not|don't|doesn't)\s+"
    r"(?:say|mention|state|specify|provide|contain|give)\b.*"
    r"|^(?:it\s+is\s+|this\s+is\s+)?not\s+(?:mentioned|specified|stated|provided|given|available|known)\b.*$",
    re.IGNORECASE)


def is_refusal(answer: str) -> bool:
    """True for an answer that declines to answer ("Unknown", "Not specified", "I cannot tell").

    The one refusal rule of the package. In a vote a refusal counts like any answer
    (:func:`weighted_vote`), for every method alike, as the authors' ``dsp.majority`` and
    electoral college tally every answer; where an answer is passed on as a fact (HGOT's
    rewrite of a dependent step, its optional hints) a refusal is no answer.
    """
    return bool(_REFUSAL.match(" ".join(answer.split()).strip(" .!")))


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
    (nothing could be extracted) and empty normalized answers do not vote; every other
    answer does, a refusal (:func:`is_refusal`) too: one rule for every method's vote.
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


def vote_samples(ctx: Context, replies: Sequence[Completion]) -> tuple[Result, Vote]:
    """Self-consistency over sampled replies: each one's answer (traced as a
    ``sample`` event; a sample cut off at ``max_tokens`` has none, so it does not
    vote), the majority vote (traced as ``vote``), and the result: the winner,
    the reply that gave it, its vote share, ``truncated`` when every sample was,
    ``details["samples"]``. Callers add their own details."""
    answers = [None if c.truncated else ctx.task.extract_answer(c.text) for c in replies]
    for i, (answer, reply) in enumerate(zip(answers, replies)):
        ctx.trace.emit("sample", index=i, answer=answer, truncated=reply.truncated)
    vote = weighted_vote(answers, ctx.task.normalize)
    ctx.trace.emit("vote", tally=vote.tally, winner=vote.key, confidence=vote.confidence)
    best = next((c.text for c, a in zip(replies, answers)
                 if a is not None and ctx.task.normalize(a) == vote.key), "")
    result = Result(answer=vote.winner or "", text=best, confidence=vote.confidence,
                    truncated=all(c.truncated for c in replies), details={"samples": answers})
    return result, vote
