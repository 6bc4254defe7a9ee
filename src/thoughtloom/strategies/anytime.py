"""Anytime trajectories: what a run would have answered at every smaller call budget.

A run capped at ``b`` calls (``--max-calls b``) is refused at the first batch
that does not fit, and answers with its best result so far
(:meth:`Context.best_so_far`). So one uncapped run can say what every capped
run would have answered, if it looks at its best result so far each time a
batch is about to go out: the eval runner's :class:`~thoughtloom.lm.meter.Metered`
calls :meth:`Anytime.before_batch` with the calls sent so far ``c`` and the
tokens back so far, before it checks the budget; the answer seen there is the
answer of a run capped anywhere from ``c`` up to (not including) the next
point's calls. The run's own end is the last point.

What holds a point at budget ``b`` equal to a run capped at ``b``:

- the strategy's choices must not read the remaining budget. Two do:
  ``cot-sc`` sizes its one batch of samples to the budget left, and says
  through :meth:`Context.within_batch` what it would answer with the first
  ``i`` samples (the vote over them, exactly what a capped run votes), so its
  curve is exact at every budget; the tree searches trim their last batch to
  the budget left (``treesearch/budget.affordable``), so theirs is exact at
  the recorded points, and between two points a capped run may have sent
  part of a batch more (``Strategy.anytime_exact = "batch boundaries"``).
- the budget counts calls still in flight, so concurrent batches are refused
  in the same order in both runs (``Metered`` does).
- a look at the answer so far must change nothing: the trace is muted while
  the strategy's maker runs, and makers leave the run's state as it was.

Against tokens, a point sits at the tokens back when the batch went out: a
run capped at that many tokens answers the same; between points it is an
approximation (a token-capped run is refused only once it has passed its cap).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..core.trace import Trace

log = logging.getLogger(__name__)

#: ``Strategy.anytime_exact``: where a point equals a run capped at its budget.
EXACT = ("every budget", "batch boundaries")


@dataclass(frozen=True)
class Point:
    """The answer a run capped at ``calls`` calls (or at ``tokens`` tokens) gives."""

    calls: int
    tokens: int
    answer: str | None  # None: the strategy's answer so far could not be read (its maker failed)
    truncated: bool = False


class Anytime:
    """One run's trajectory, recorded as its batches go out (made per question by the runner)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.points: list[Point] = []
        self._peek: Callable[[], Any] | None = None
        self._batch = (0, 0)  # calls and tokens when the latest batch went out

    def watch(self, peek: Callable[[], Any]) -> None:
        """``peek()`` returns the run's best result so far (set by ``Strategy.run``)."""
        self._peek = peek

    def before_batch(self, calls: int, tokens: int) -> None:
        self._batch = (calls, tokens)
        self.points.append(self._look(calls, tokens))

    def within_batch(self, tokens: Sequence[int], results: Sequence[Any]) -> None:
        """``results[i]``: the answer had the budget let only the first ``i + 1`` calls of the
        latest batch go out; ``tokens[i]``: the tokens of its ``i``-th call. Only the first
        ``len - 1`` are points (the whole batch's answer is the next point's)."""
        calls, total = self._batch
        for i, result in enumerate(results[:-1]):
            total += tokens[i]
            self.points.append(Point(calls + i + 1, total, _answer(result), bool(result.truncated)))

    def finish(self, calls: int, tokens: int, result: Any) -> None:
        self.points.append(Point(calls, tokens, _answer(result), bool(result.truncated)))

    def trajectory(self, score: Callable[[Point], dict[str, float]]) -> list[dict[str, Any]]:
        """The points as records, scored by ``score``: the first, each where the answer or its
        scores change, and the last (the run's end)."""
        out: list[dict[str, Any]] = []
        last = len(self.points) - 1
        for i, p in enumerate(self.points):
            entry = {"calls": p.calls, "tokens": p.tokens, "answer": p.answer, "metrics": score(p)}
            if out and i != last and (entry["answer"], entry["metrics"]) == (out[-1]["answer"], out[-1]["metrics"]):
                continue
            if out and i == last and out[-1]["calls"] == p.calls and out[-1]["tokens"] == p.tokens:
                out.pop()  # the end, seen at the same spend (a refused batch): the end wins
            out.append(entry)
        return out

    def _look(self, calls: int, tokens: int) -> Point:
        if self._peek is None:
            return Point(calls, tokens, "")
        try:
            with self.trace.muted():
                result = self._peek()
        except Exception as exc:  # a maker that fails mid-run: no answer there, the run goes on
            log.debug("best-so-far at %d calls failed: %s", calls, exc)
            return Point(calls, tokens, None)
        return Point(calls, tokens, _answer(result), bool(result.truncated))


def _answer(result: Any) -> str | None:
    """A result's answer where it is text (a strategy's bug can put anything there)."""
    answer = result.answer
    return answer if isinstance(answer, str) else None
