"""The per-question :class:`Context`: everything a strategy may use for one question.

The caller (the eval runner, ``thoughtloom.solve``, a test) builds one for
each question and passes it explicitly; strategies keep no per-run state of
their own. Through it a strategy calls the model (``ctx.lm``, or a role's own
model: :meth:`Context.lm_for`), renders its
prompts (:meth:`Context.prompt`), retrieves (:meth:`Context.search`, the one
way: it handles the closed-book case and traces every search as one
``retrieval`` event), reads the budget left (:meth:`Context.remaining_calls`)
and says what its best result so far is (:meth:`Context.best_so_far`).
"""

from __future__ import annotations

import dataclasses
import time
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import prompts
from ..core.errors import ConfigError
from ..core.protocols import LM, Entailment, Retriever, TaskView
from ..core.trace import Trace
from ..core.types import Completion, ScoredPassage
from ..lm.meter import remaining_calls
from .anytime import Anytime
from .passages import bounded
from .result import Result, SoFar


#: The roles a method may put on a model of its own (``--role-model ROLE=MODEL``): the tree search's
#: ``generator`` and ``evaluator``, the entailment ``judge`` (HGOT, the retrieval baselines), DecomP's
#: ``decomposer`` and its ``handler`` sub-tasks. A role with no model of its own is ``ctx.lm``.
ROLES = ("generator", "evaluator", "judge", "decomposer", "handler")


def check_role(role: str, where: str = "role") -> str:
    """``role`` if it is one of :data:`ROLES`, else a ConfigError (one line) listing them."""
    if role not in ROLES:
        raise ConfigError(f"unknown {where} {role!r}", hint=f"use one of {', '.join(ROLES)}")
    return role


@dataclass
class Context:
    """Everything a strategy may use for one question, passed explicitly."""

    lm: LM
    task: TaskView
    trace: Trace = field(default_factory=Trace)
    retriever: Retriever | None = None
    entail: Entailment | None = None
    prompt_dir: str | Path | None = None
    seed: int = 0
    # where best_so_far leaves the run's fallback result; made by Strategy.run
    so_far: SoFar | None = field(default=None, repr=False)
    # the run's anytime trajectory, when the eval runner records one (strategies/anytime.py)
    anytime: Anytime | None = field(default=None, repr=False)
    # the models of the roles that have one of their own (ROLES), behind the same budget as ``lm``
    role_lms: typing.Mapping[str, LM] = field(default_factory=dict, repr=False)

    def lm_for(self, role: str) -> LM:
        """The model that ``role`` (one of :data:`ROLES`) asks: its own where the run gave it one
        (``--role-model``), else :attr:`lm`. Either way its calls count against this question's
        one budget and go into its one trace."""
        return self.role_lms.get(check_role(role), self.lm)

    def prompt(self, name: str, **fields: object) -> str:
        return prompts.render(name, self.prompt_dir, **fields)

    def best_so_far(self, make: Callable[[], Result]) -> None:
        """How to build this run's best result so far, should its budget run out.

        ``make`` is called on a budget stop, and, when the runner records an
        anytime trajectory, before each batch of calls (with the trace
        muted), so it may read the run's live state (a tree, a scratchpad)
        but must leave it as it was; call again when a better one appears.
        Without one, a budget stop is a result with no answer.
        """
        if self.so_far is not None:
            self.so_far.make = make

    def within_batch(self, completions: typing.Sequence[Completion],
                     answer_with: Callable[[typing.Sequence[Completion]], Result]) -> None:
        """For a strategy that sizes a batch from the budget left: ``answer_with(first)`` is what it
        answers had only ``first`` (the first ``i`` of ``completions``) come back, as a run capped there
        would (see :mod:`.anytime`). Must describe the batch just returned. The anytime recorder calls it
        (with the trace muted) only when the runner records a trajectory; a strategy does no more."""
        if self.anytime is not None:
            self.anytime.within_batch(completions, answer_with)

    def remaining_calls(self) -> int | None:
        """Calls left in this question's budget (the runner's and the strategy's own,
        whichever is tighter), or None where no call cap applies."""
        if self.anytime is not None:  # what the strategy does next may depend on it (anytime's exactness)
            self.anytime.budget_read()
        return remaining_calls(self.lm)

    async def search(self, queries: typing.Sequence[str], k: int, *,
                     required: bool = False) -> list[list[ScoredPassage]]:
        """The top ``k`` passages for each query, in one batched call to ``retriever``.

        The one way a strategy retrieves, and the one place a ``retrieval``
        trace event is emitted, one per call (its fields:
        :data:`thoughtloom.core.events.EVENTS`). Without a retriever (closed
        book) every list is empty and the event says ``note: "no
        retriever"``; a strategy that cannot work closed
        book passes ``required=True`` and gets a ConfigError naming --index.
        Every passage comes back bounded (:func:`.passages.bounded`): a corpus
        cannot put more than that into a prompt.
        """
        queries = list(queries)
        if not queries:
            return []
        if self.retriever is None:
            if required:
                raise ConfigError("this strategy retrieves, but no retriever is configured",
                                  hint="pass --index DIR (see `thoughtloom index build`)")
            self.trace.emit("retrieval", queries=queries, k=k, results=[[] for _ in queries],
                            note="no retriever")
            return [[] for _ in queries]
        t0 = time.perf_counter()
        results = [[hit if (p := bounded(hit.passage)) is hit.passage else dataclasses.replace(hit, passage=p)
                    for hit in hits] for hits in await self.retriever.search(queries, k)]
        self.trace.emit("retrieval", queries=queries, k=k,
                        results=[[{"id": h.passage.id, "title": h.passage.title, "score": round(h.score, 6),
                                   "rank": h.rank} for h in hits] for hits in results],
                        seconds=round(time.perf_counter() - t0, 6))
        return results
