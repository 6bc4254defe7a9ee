"""What an eval's progress display sees: :class:`RunStats` and the :class:`Progress` protocol.

The runner (:func:`~thoughtloom.eval.runner.evaluate`) keeps one
:class:`RunStats` for the invocation and calls its ``progress`` object:

- ``start(stats)`` once, before the first question;
- ``live(update, stats)`` at every model call and phase change of a
  question still running (``update`` is that question's
  :class:`~thoughtloom.core.progress.ProgressUpdate`; ``stats.running``
  holds the latest update of every running question), so call and token
  counters move while questions are in flight, not only when one ends;
- ``update(record, stats)`` when a question ends, with its record as the
  JSON object its line holds (:meth:`~thoughtloom.eval.record.EvalRecord.to_dict`);
- ``refresh(stats)`` about once a second while the server fails
  (``stats.server.status()`` says how: retries in flight, paused for how long).

``live`` and ``refresh`` are optional, each a declared protocol
(:class:`LiveProgress`, :class:`ServerProgress`): an object with only
``start`` and ``update`` hears of finished questions alone.

:meth:`RunStats.usage_so_far` adds the running questions' calls and tokens
to the finished ones'; :meth:`RunStats.eta_s` estimates the time left from
this invocation's pace. A rich bar that shows both is
:class:`thoughtloom.eval.rich_progress.RichProgress`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..core.progress import ProgressUpdate
from ..lm.meter import UsageTotals
from .breaker import CircuitBreaker


@dataclass
class RunStats:
    """Running figures of this invocation, for progress displays."""

    total: int = 0
    done: int = 0  # finished, earlier runs' records included
    new: int = 0  # finished by this invocation
    errors: int = 0
    truncated: int = 0
    budget_stopped: int = 0
    metric_sum: float = 0.0
    metric_n: int = 0
    usage: UsageTotals = field(default_factory=UsageTotals)  # of the questions this invocation finished
    # questions still running: each one's latest progress (its calls and tokens so far, its phase)
    running: dict[str | None, ProgressUpdate] = field(default_factory=dict)
    server: CircuitBreaker | None = None  # the run's breaker: its ``status()`` while the server fails

    @property
    def running_metric(self) -> float | None:
        return self.metric_sum / self.metric_n if self.metric_n else None

    def usage_so_far(self) -> UsageTotals:
        """Calls and tokens of this invocation: finished questions and those still running."""
        total = UsageTotals()
        total.merge(self.usage)
        for u in self.running.values():
            total.merge(UsageTotals(calls=u.calls, cached_calls=u.cached_calls, prompt_tokens=u.prompt_tokens,
                                    completion_tokens=u.completion_tokens))
        return total

    @property
    def in_flight(self) -> int:
        """Model calls the running questions have out."""
        return sum(u.in_flight for u in self.running.values())

    def eta_s(self, elapsed_s: float) -> float | None:
        """Seconds until every question is done at this invocation's pace (``elapsed_s`` for
        ``new`` questions, concurrency included); None until one has finished."""
        if self.new <= 0:
            return None
        return elapsed_s / self.new * max(0, self.total - self.done)


class Progress(Protocol):
    def start(self, stats: RunStats) -> None: ...

    def update(self, record: dict[str, Any], stats: RunStats) -> None: ...


@runtime_checkable
class LiveProgress(Protocol):
    """Optional beside :class:`Progress`: a display that hears of every model call and phase change."""

    def live(self, update: ProgressUpdate, stats: RunStats) -> None: ...


@runtime_checkable
class ServerProgress(Protocol):
    """Optional beside :class:`Progress`: a display that shows the server's state while it fails."""

    def refresh(self, stats: RunStats) -> None: ...
