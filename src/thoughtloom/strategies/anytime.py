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

- the strategy's choices must not read the remaining budget, or must say
  what they would have been. Two read it: ``cot-sc`` sizes its one batch of
  samples to the budget left, and says through :meth:`Context.within_batch`
  what it would answer with the first ``i`` samples (the vote over them,
  exactly what a capped run votes), so its curve is exact at every budget;
  the tree searches trim their last batch to the budget left
  (``treesearch/budget.affordable``), so theirs is exact at the recorded
  points, and between two points a capped run may have sent part of a batch
  more. The recorder keeps this itself: every read of the budget
  (``Context.remaining_calls``) is noted, and a batch sent after one and not
  described makes the run's curve exact at batch boundaries only
  (:attr:`Anytime.exact`; the record takes the weaker of it and the
  strategy's declared ``Strategy.anytime_exact``), so a strategy of a
  user's that sizes its batches by the budget is not called exact by default.
- the budget counts calls still in flight, so concurrent batches are refused
  in the same order in both runs (``Metered`` does).
- a look at the answer so far must change nothing: the trace is muted while
  the strategy's maker (or its ``within_batch`` answer) runs, here, not in
  strategy code, and makers leave the run's state as it was.

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
        self._sized = False  # the strategy read the budget left since the latest batch went out
        self._undescribed = False  # the latest batch went out after such a read, not yet described
        self._exact = True  # every earlier batch sized by the budget was described

    def watch(self, peek: Callable[[], Any]) -> None:
        """``peek()`` returns the run's best result so far (set by ``Strategy.run``)."""
        self._peek = peek

    def before_batch(self, calls: int, tokens: int) -> None:
        if self._undescribed:  # the batch before was sized by the budget left and not described
            self._exact = False
        self._undescribed, self._sized = self._sized, False
        self._batch = (calls, tokens)
        self.points.append(self._look(calls, tokens))

    def budget_read(self) -> None:
        """The strategy read the budget left (``Context.remaining_calls``): the next batch may be sized
        by it, so a run capped inside that batch may send part of it, unless the strategy says what it
        answers with each part (:meth:`within_batch`)."""
        self._sized = True

    def within_batch(self, completions: Sequence[Any], answer_with: Callable[[Sequence[Any]], Any]) -> None:
        """The latest batch described call by call: ``answer_with(completions[:i])`` is the answer had the
        budget let only its first ``i`` calls go out, for ``i`` from 1 to ``len - 1`` (the whole batch's
        answer is the next point's), each a point; the trace is muted while it answers."""
        self._undescribed = False
        calls, total = self._batch
        with self.trace.muted():
            for i in range(1, len(completions)):
                total += completions[i - 1].usage.total_tokens
                result = answer_with(completions[:i])
                self.points.append(Point(calls + i, total, _answer(result), bool(result.truncated)))

    @property
    def exact(self) -> str:
        """Where this run's points equal runs capped at their budgets (one of :data:`EXACT`): at every
        budget, unless a batch the strategy sized by the budget left went undescribed (then at the
        batch boundaries alone)."""
        return EXACT[0] if self._exact and not self._undescribed else EXACT[1]

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
