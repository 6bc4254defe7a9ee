"""Run traces: one JSON object per event, appended in order.

Trace format (JSON lines, one event per line)::

    {"type": "llm_call", "t": 0.153, "example": "gsm8k-7", ...}

Common keys: ``type`` (event kind), ``t`` (seconds since the trace started),
plus any fields the trace was opened with (the eval runner adds ``example``),
and ``within`` on the events of a step that one strategy runs inside another
(:meth:`Trace.within`: a DecomP handler, HGOT's Infer), the scopes it runs in.
Every event type the package emits, with its fields and meaning, is in
:mod:`.events` (the schema a run inspector reads).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import time
from typing import Any, Callable, Iterable, Iterator

from .types import to_json

Sink = Callable[[dict[str, Any]], None]

#: The scopes the running code is inside (:meth:`Trace.within`) and the trace they belong to. A
#: context variable, not a field of the trace, so that every event the step causes carries them --
#: the meter's ``llm_call`` of the step's calls too, which the meter emits on the run's trace --
#: while a step running beside it (another task: its own copy of the context) carries its own.
_SCOPES: contextvars.ContextVar[tuple["Trace | None", tuple[dict[str, Any], ...]]] = contextvars.ContextVar(
    "thoughtloom_trace_scopes", default=(None, ()))


class Trace:
    """Collects events in memory and optionally forwards each to a sink."""

    def __init__(self, sink: Sink | None = None, **fields: Any) -> None:
        self._t0 = time.perf_counter()
        self._sink = sink
        self._fields = fields
        self._muted = 0
        self.events: list[dict[str, Any]] = []

    def emit(self, type: str, **data: Any) -> dict[str, Any]:
        event = {"type": type, "t": round(time.perf_counter() - self._t0, 6), **self._fields}
        if self._muted:
            return event
        owner, scopes = _SCOPES.get()
        if scopes and owner is self:
            event["within"] = [dict(s) for s in scopes]
        event.update(to_json(data))
        self.events.append(event)
        if self._sink is not None:
            self._sink(event)
        return event

    @contextlib.contextmanager
    def muted(self) -> Iterator[None]:
        """Emit nothing inside: for a look at a run's state (its answer so far) that must not
        show in its trace. Only for synchronous code: a coroutine awaiting inside would mute
        other coroutines' events too."""
        self._muted += 1
        try:
            yield
        finally:
            self._muted -= 1

    @contextlib.contextmanager
    def within(self, **scope: Any) -> Iterator[None]:
        """Every event of this trace emitted inside (by this coroutine and the tasks it starts) carries
        ``within``: the scopes it runs in, outermost first, this one last. For a step that a strategy
        runs inside another (a strategy as a DecomP handler, HGOT's Infer), so its events stay in the
        one trace and say whose step they belong to; events outside it (a step running beside it)
        are untouched."""
        owner, scopes = _SCOPES.get()
        token = _SCOPES.set((self, (scopes if owner is self else ()) + (to_json(scope),)))
        try:
            yield
        finally:
            _SCOPES.reset(token)

    def of_type(self, type: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == type]


def write_jsonl(events: Iterable[dict[str, Any]], path: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        for event in events:
            fh.write(json.dumps(event, ensure_ascii=False) + "\n")
