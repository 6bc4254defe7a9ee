"""Trace events the package emits, and the one event for unreadable model output.

A model reply that cannot be read as what was asked for (a plan, a score,
a step, a thought, an action, a verdict) is one ``malformed`` event,
whoever reads it: ``what`` names the step whose reply it was, ``reason``
says why it could not be read, ``raw`` is the reply (clipped), and the
emitter adds its own context (``node``, ``depth``, ``attempt``...). The
strategy then degrades around it (asks again, falls back, drops the
candidate) and never fails the run for it.
"""

from __future__ import annotations

from typing import Any

from .trace import Trace

#: Longest ``raw`` kept in a ``malformed`` event.
RAW_CHARS = 500


def malformed(trace: Trace, what: str, reason: str, raw: str, **fields: Any) -> None:
    """Trace one unreadable model reply (a ``malformed`` event); ``raw`` is clipped."""
    trace.emit("malformed", what=what, reason=reason, raw=raw[:RAW_CHARS], **fields)
