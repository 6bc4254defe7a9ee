"""What the search is over (llm-reasoners' *world*): one problem and the
task as the search sees it, which is the task itself if it implements
:class:`~thoughtloom.core.protocols.SearchTask`, else a generic stand-in
built from its instruction and answer extraction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...core.errors import ConfigError
from ...core.protocols import SearchTask, TaskView
from ...core.types import Problem

_SEARCH_METHODS = ("describe", "root_candidate", "render", "output_format", "parse_candidate",
                   "evaluation_items", "evaluation_guide", "change_kind", "symbolic_score",
                   "candidate_answer")


def prefix_change_kind(parent: str, child: str) -> str:
    """'extended' when the child keeps the parent's text (whitespace aside) as its start."""
    p, c = " ".join(parent.split()), " ".join(child.split())
    return "extended" if c.startswith(p) else "revised"


class GenericSearchView:
    """Searches any task over free-text answers that end with 'The answer is: ...'."""

    # SearchTask's declared attributes, as ``tasks.Task`` gives them: the generic prompts know
    # nothing of the task's own, so a thought extends its parent, every child gets the whole
    # feedback, one reply is one child, the evaluation is a 0-10 score and no step is judged
    whole_thoughts = False
    child_per_feedback_item = False
    candidate_list = False
    evaluation_style = "score"
    judged_metrics: tuple[str, ...] = ()

    def __init__(self, task: TaskView) -> None:
        self.task = task

    def describe(self, problem: Problem) -> str:
        question = f"{problem.context}\n\n{problem.question}" if problem.context else problem.question
        return f"{self.task.instruction}\n\nQuestion: {question}"

    def root_candidate(self, problem: Problem) -> str | None:
        return None

    def render(self, problem: Problem, candidate: str) -> str:
        return candidate

    def output_format(self, problem: Problem) -> str:
        return 'Reason briefly, then end with a final line of the form "The answer is: <answer>".'

    def parse_candidate(self, problem: Problem, text: str, parent: str | None) -> str | None:
        return text.strip() or None

    def evaluation_items(self, problem: Problem, candidate: str) -> Sequence[str]:
        return ()

    def evaluation_guide(self, problem: Problem) -> str:
        return "Check the reasoning step by step and whether the final answer is right."

    def change_kind(self, parent: str, child: str) -> str:
        return prefix_change_kind(parent, child)

    def symbolic_score(self, problem: Problem, candidate: str) -> float | None:
        return None

    def candidate_answer(self, problem: Problem, candidate: str) -> str:
        answer = self.task.extract_answer(candidate)
        return answer if answer is not None else candidate.strip()


def search_view(task: TaskView) -> SearchTask:
    """``task`` itself where it has SearchTask's methods, else the generic view of it."""
    if not all(callable(getattr(task, m, None)) for m in _SEARCH_METHODS):
        return GenericSearchView(task)
    if not isinstance(task, SearchTask):  # the methods without the attributes a search reads
        raise ConfigError(f"task {task.name!r} has SearchTask's methods but not its declared attributes",
                          hint="derive the task from thoughtloom.tasks.Task, which declares them with defaults")
    return task


@dataclass(frozen=True)
class World:
    """One problem as every part of a search reads it; the description is built once."""

    problem: Problem
    view: SearchTask
    description: str

    @classmethod
    def of(cls, problem: Problem, task: TaskView) -> "World":
        view = search_view(task)
        return cls(problem, view, view.describe(problem))
