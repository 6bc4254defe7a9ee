"""Evaluation: the resumable runner, results files, stratification."""

from .lock import OutputLock, OutputLocked
from .runner import DEFAULT_MAX_CALLS, EvalResources, EvalSettings, RunStats, evaluate, run_example
from .summary import summarize
from .stratify import length_strata, question_length, stratified_means

__all__ = [
    "DEFAULT_MAX_CALLS", "EvalResources", "EvalSettings", "OutputLock", "OutputLocked", "RunStats", "evaluate", "length_strata",
    "question_length", "run_example", "stratified_means", "summarize",
]
