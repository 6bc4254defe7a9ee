"""Answer selection: self-consistency voting weighted by thought quality (§3.2)."""

from __future__ import annotations

from typing import Sequence

from ...core.protocols import TaskView
from ..vote import Vote, weighted_vote
from .thought import Thought


def thought_answer(task: TaskView, thought: Thought) -> str | None:
    """The thought's answer read through the task (e.g. FEVER maps it onto a label); None
    (no vote) when there is none. A refusal votes like any answer, as in every other vote
    (:func:`thoughtloom.strategies.vote.weighted_vote`)."""
    if thought.answer is None:
        return None
    return task.extract_answer(f"Answer: {thought.answer}")


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
