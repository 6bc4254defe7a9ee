"""Answer selection: self-consistency voting weighted by thought quality (§3.2)."""

from __future__ import annotations

import re
from typing import Sequence

from ...core.protocols import TaskView
from ..vote import Vote, weighted_vote
from .thought import Thought


# a reply that declines to answer ("I cannot tell.", "Unknown", "The passages do not say"): whole-answer
# patterns, so an answer that merely contains "not" ("Not Fade Away") still votes. FEVER's label
# "NOT ENOUGH INFO" is an answer, not a refusal: the task reads labels before this check.
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
    """True for an answer that declines to answer (it then casts no vote)."""
    return bool(_REFUSAL.match(" ".join(answer.split()).strip(" .!")))


def thought_answer(task: TaskView, thought: Thought) -> str | None:
    """The thought's answer read through the task (e.g. FEVER maps it onto a label);
    None (no vote) when there is none or it is a refusal (:func:`is_refusal`)."""
    if thought.answer is None:
        return None
    answer = task.extract_answer(f"Answer: {thought.answer}")
    return None if answer is None or is_refusal(answer) else answer


def select_answer(task: TaskView, thoughts: Sequence[Thought], qualities: Sequence[float]) -> Vote:
    """Quality-weighted self-consistency::

        W(a)  = sum_t q(t) * 1[ norm(answer(t)) = a ]
        y^    = argmax_a W(a)
        conf  = W(y^) / sum_a W(a)

    With every q(t) = 1, W(a) is the vote count and this is exactly plain
    self-consistency (Wang et al. 2022) with its vote-share confidence; both
    go through :func:`thoughtloom.strategies.vote.weighted_vote`.
    """
    answers = [thought_answer(task, t) for t in thoughts]
    return weighted_vote(answers, task.normalize, list(qualities))
