"""What every eval shares: its settings (:class:`EvalSettings`) and its services
(:class:`EvalResources`).

In a module of their own so that the runner, the executors (local and Ray)
and the run identity all read them without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ..core.protocols import LM, Entailment, Retriever
from ..lm.meter import Budget
from ..tasks.base import CorpusFile
from ..strategies.interface import DEFAULT_MAX_CALLS
from .breaker import BreakerSettings


@dataclass(frozen=True)
class EvalSettings:
    concurrency: int = 1
    # Model calls per example when the caller does not say (``--max-calls``):
    # the strategies' own default bound, far above what any strategy's
    # defaults use, low enough that a runaway program ends in seconds.
    budget: Budget = field(default_factory=lambda: Budget(max_calls=DEFAULT_MAX_CALLS))
    retry_errors: bool = False
    seed: int = 0
    trace_text: bool = True
    example_timeout_s: float | None = None  # total deadline per example; None: none
    breaker: BreakerSettings = BreakerSettings()  # when a failing server pauses the eval (.breaker)


@dataclass
class EvalResources:
    """Shared services handed to every question's context."""

    lm: LM
    retriever: Retriever | None = None
    entail: Entailment | None = None
    prompt_dir: str | Path | None = None
    #: the models of the roles that have their own (``--role-model``), each behind the same
    #: cache wrapping as ``lm``; a role not here asks ``lm`` (:meth:`Context.lm_for`)
    role_lms: Mapping[str, LM] = field(default_factory=dict)
    #: the BM25 indexes over pooled paragraphs made on these services (:func:`.executors.with_pooled`), by
    #: corpus: one index however many evals run on them (a suite's cells, each method on one dataset)
    pooled_indexes: dict[CorpusFile, Retriever] = field(default_factory=dict, repr=False, compare=False)
