"""Whether an answer is right, said plainly, for one question without a data set.

``thoughtloom run`` answers a question no data file goes with, so it has no
gold answer unless the user gives one (``--gold``). Some tasks can still
judge an answer by their own rules: a Game of 24 expression either uses the
four numbers once each and equals 24 or it does not (the symbolic checker
the task scores with), and a crossword board shows how many of its 25
letters are filled. :func:`check_answer` returns that verdict; a task of
the user's own offers one by defining ``check_answer(problem, answer) ->
(ok, message)`` (``ok`` None where the rule cannot say right or wrong).
:func:`against_gold` scores an answer against a gold one with the task's
own scorer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.types import Problem
from .arith import check_24
from .base import Task
from .crosswords import BLANK, MiniCrosswords
from .game24 import Game24, puzzle_numbers


@dataclass(frozen=True)
class Check:
    """A verdict on one answer: right (True), wrong (False) or not decidable (None), and why."""

    ok: bool | None
    message: str


def check_answer(task: Task, problem: Problem, answer: str | None) -> Check | None:
    """The task's own verdict on ``answer`` with no gold answer; None where the task has no rule."""
    if type(task).check_answer is not Task.check_answer:  # a task with a rule of its own (Task.check_answer)
        verdict = task.check_answer(problem, answer)
        if verdict is None:
            return None
        ok, message = verdict
        return Check(None if ok is None else bool(ok), str(message))
    if isinstance(task, Game24):
        try:
            numbers = puzzle_numbers(problem.question)
        except Exception:  # not four numbers: the task's loader would have refused it
            return None
        solved, why = check_24(answer, numbers)
        return Check(True, "a solution: it uses each of the four numbers once and equals 24") if solved \
            else Check(False, f"not a solution ({why})")
    if isinstance(task, MiniCrosswords):
        board = answer or ""
        if len(board) != 25:
            return Check(False, "no board of 25 letters")
        filled = sum(ch not in (BLANK, " ") for ch in board)
        return Check(None, f"{filled} of 25 letters filled (only a gold board can say which are right: "
                           "pass --gold with the 25 letters)")
    return None


def gold_applies(task: Task) -> bool:
    """Whether a gold answer can be given for one question: not for Game of 24, whose answers
    are checked by its rule (its 'gold' is the puzzle itself)."""
    return not isinstance(task, Game24)


def against_gold(task: Task, answer: str | None, gold: Any) -> tuple[bool, dict[str, float]]:
    """(right, scores): ``answer`` scored against ``gold`` by the task's own scorer; right when the
    task's primary metric is 1 (or, where it does not report that metric, every score is)."""
    scores = task.score(answer, gold)
    primary = scores.get(task.primary_metric)
    right = primary >= 1.0 if primary is not None else bool(scores) and all(v >= 1.0 for v in scores.values())
    return right, scores


__all__ = ["Check", "against_gold", "check_answer", "gold_applies"]
