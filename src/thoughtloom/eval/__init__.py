"""Evaluation: the resumable runner, its typed records (:class:`EvalRecord`) and results files (length
stratification is a task's report: :mod:`thoughtloom.tasks.stratify`)."""

from .assembly import RunSpec, default_out
from .lock import OutputLock, OutputLocked
from .progress import Progress, RunStats
from .record import EvalRecord
from .runner import DEFAULT_MAX_CALLS, EvalResources, EvalSettings, ProblemRun, evaluate, run_example, run_problem
from .summary import summarize

__all__ = [
    "DEFAULT_MAX_CALLS", "EvalRecord", "EvalResources", "EvalSettings", "OutputLock", "OutputLocked", "ProblemRun",
    "Progress", "RunSpec", "RunStats", "default_out", "evaluate", "run_example", "run_problem", "summarize",
]
