"""What a strategy answers: :class:`Result`, and :class:`SoFar`, the result it gives
when its budget runs out before it finishes (see :meth:`.context.Context.best_so_far`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Result:
    """A strategy's answer. The runner adds usage, timing and the trace."""

    answer: str
    text: str = ""
    confidence: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    # the answer came from a reply cut off at max_tokens: the runner scores it
    # as no answer unless the task allows (``Task.score_truncated``)
    truncated: bool = False
    # why the run ended before the strategy finished: "budget" (a call or token
    # budget ran out; the result is its best so far, see Context.best_so_far)
    stopped: str | None = None


@dataclass
class SoFar:
    """The result a run gives if its budget runs out first (see :meth:`Context.best_so_far`)."""

    make: Callable[[], Result] | None = None

    def peek(self) -> Result:
        """The result a budget stop here would give; the run's state is left as it was."""
        return self.stopped("budget")

    def stopped(self, reason: str) -> Result:
        result = self.make() if self.make is not None else Result(answer="")
        result.stopped = reason
        return result
