"""Evaluation: the resumable runner, results files, stratification."""

from .runner import EvalResources, EvalSettings, RunStats, evaluate, run_example, summarize
from .stratify import length_strata, question_length, stratified_means

__all__ = [
    "EvalResources", "EvalSettings", "RunStats", "evaluate", "length_strata",
    "question_length", "run_example", "stratified_means", "summarize",
]
