"""Evaluation: the resumable runner and its results files (length stratification is a task's report:
:mod:`thoughtloom.tasks.stratify`)."""

from .assembly import RunSpec, default_out
from .lock import OutputLock, OutputLocked
from .progress import Progress, RunStats
from .runner import DEFAULT_MAX_CALLS, EvalResources, EvalSettings, ProblemRun, evaluate, run_example, run_problem
from .summary import summarize

__all__ = [
    "DEFAULT_MAX_CALLS", "EvalResources", "EvalSettings", "OutputLock", "OutputLocked", "ProblemRun", "Progress",
    "RunSpec", "RunStats", "default_out", "evaluate", "run_example", "run_problem", "summarize",
]
