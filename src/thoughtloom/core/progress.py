"""Live progress of one question: model calls and tokens so far, and the current phase.

A *progress hook* is any callable taking a :class:`ProgressUpdate`. The eval
runner's :func:`~thoughtloom.eval.runner.run_problem` (and so ``thoughtloom
run``, ``demo`` and the library's one-call entry points) accepts one as
``progress=``; it is called once when the question starts, at every model
call, and at every phase change::

    def show(update):
        print(update.phase, update.calls, update.total_tokens)

    await run_problem(strategy, task, problem, resources, settings, progress=show)

Where the figures come from: the question's trace. Every model call is an
``llm_call`` event (emitted by :class:`~thoughtloom.lm.meter.Metered`, one
per completion, in request order when a batch returns) and a strategy names
where it is with ``phase`` events (:func:`thoughtloom.core.events.phase`:
"rollout 3/8", "plan level 2/3", "program step 4"...). A
:class:`QuestionProgress` is a trace sink that turns those two event types
into updates, so progress sees exactly what the trace records and cannot
change any request. ``Metered`` also tells it when a batch goes out
(:meth:`QuestionProgress.flight`), so a display can show calls in flight
while a long batch (cot-sc's samples) decodes.

A hook that raises is logged once and not called again: a broken display
never costs a question its answer. Ready-made displays (rich) are in
:mod:`thoughtloom.eval.progress`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProgressUpdate:
    """One question's progress so far."""

    question: str | None  # the problem's id
    kind: str  # what moved: "start", "sent" (a batch went out), "call" (a call returned) or "phase"
    phase: str  # the current phase ("rollout 3/8"); "" until the strategy names one
    calls: int = 0  # model calls answered so far, cached ones included
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0  # since the question started
    in_flight: int = 0  # calls sent and not back yet (a batch returns together)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


ProgressHook = Callable[[ProgressUpdate], None]


def phase_label(event: Mapping[str, Any]) -> str:
    """A ``phase`` event as one short line: "rollout 3/8", "program step 2 · depth 1", "sampling 5"."""
    step, of, depth = event.get("step"), event.get("of"), event.get("depth")
    count = f"{step}/{of}" if step is not None and of is not None else step if step is not None else of
    text = str(event.get("phase", "")) + ("" if count is None else f" {count}")
    return text + (f" · depth {depth}" if depth else "")


class QuestionProgress:
    """A trace sink (``Trace(sink=...)``) that sends ``hook`` a :class:`ProgressUpdate`
    at every ``llm_call`` and ``phase`` event of one question, and (as
    ``Metered``'s ``in_flight``) when a batch of its calls goes out."""

    def __init__(self, hook: ProgressHook, question: str | None = None) -> None:
        self._hook: ProgressHook | None = hook
        self.question = question
        self.phase = ""
        self.calls = self.cached_calls = self.prompt_tokens = self.completion_tokens = self.in_flight = 0
        self._t0 = time.perf_counter()

    def start(self) -> None:
        """The first update (no calls yet), so a display shows the question at once."""
        self._send("start")

    def flight(self, n: int) -> None:
        """``n`` more calls out (``Metered(in_flight=...)``); only a batch going out is an update."""
        self.in_flight = max(0, self.in_flight + n)
        if n > 0:
            self._send("sent")

    def __call__(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if kind == "llm_call":
            self.calls += 1
            self.cached_calls += bool(event.get("cached"))
            self.prompt_tokens += int(event.get("prompt_tokens") or 0)
            self.completion_tokens += int(event.get("completion_tokens") or 0)
        elif kind == "phase":
            self.phase = phase_label(event)
        else:
            return
        self._send("call" if kind == "llm_call" else "phase")

    def _send(self, kind: str) -> None:
        if self._hook is None:
            return
        update = ProgressUpdate(self.question, kind, self.phase, self.calls, self.cached_calls, self.prompt_tokens,
                                self.completion_tokens, time.perf_counter() - self._t0, self.in_flight)
        try:
            self._hook(update)
        except Exception:  # a display's bug must not fail the question it displays
            log.warning("progress hook %r failed; no more progress for question %s", self._hook,
                        self.question, exc_info=True)
            self._hook = None
