"""``summary.json``: written when a run starts, kept current as it goes.

The runner writes the summary at start (``complete: false``), again at most
every ``every_s`` seconds while examples finish, and a last time when the
run ends, successfully or not; each write replaces the file atomically. So
``summary.json`` always exists beside ``results.jsonl``, always parses, and
says ``complete: true`` only when every example has a record.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any, Callable, Iterable

log = logging.getLogger(__name__)

USAGE_KEYS = ("calls", "cached_calls", "prompt_tokens", "completion_tokens", "total_tokens", "truncated_calls")


def _number(value: Any) -> float:
    """A finite number from a record read back from disk, else 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    return float(value) if math.isfinite(value) else 0.0


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def summarize(
    records: Iterable[dict[str, Any]], *, total: int, stats: Any, wall_s: float, meta: dict[str, Any],
    finished: bool,
) -> dict[str, Any]:
    """Metric means, usage totals and this invocation's figures over ``records``."""
    records = list(records)
    n = len(records)
    metric_names = sorted({k for r in records for k in _dict(r.get("metrics"))})
    metrics = {
        name: round(sum(_number(_dict(r.get("metrics")).get(name)) for r in records) / n, 6) if n else 0.0
        for name in metric_names
    }
    usage: dict[str, Any] = {k: int(sum(_number(_dict(r.get("usage")).get(k)) for r in records))
                             for k in USAGE_KEYS}
    usage["per_example"] = {k: round(usage[k] / n, 3) if n else 0.0 for k in USAGE_KEYS}
    return {
        **meta,
        "n": n,
        "total": total,
        "complete": finished and n >= total,
        "n_errors": sum(1 for r in records if r.get("error")),
        "n_truncated": sum(1 for r in records if r.get("truncated") is True),
        "n_budget_stopped": sum(1 for r in records if r.get("stopped") == "budget"),
        "metrics": metrics,
        "usage": usage,
        "mean_latency_s": round(sum(_number(r.get("latency_s")) for r in records) / n, 4) if n else 0.0,
        "this_run": {
            "examples": stats.new,
            "calls": stats.usage.calls,
            "cached_calls": stats.usage.cached_calls,
            "new_calls": stats.usage.calls - stats.usage.cached_calls,
            "prompt_tokens": stats.usage.prompt_tokens,
            "completion_tokens": stats.usage.completion_tokens,
            "wall_s": round(wall_s, 3),
        },
    }


class SummaryWriter:
    """Writes the summary now (``write``) or when ``every_s`` has passed (``tick``).

    ``build(finished, final)`` makes it; ``final`` is the last write of a run.
    """

    def __init__(self, build: Callable[[bool, bool], dict[str, Any]], write: Callable[[dict[str, Any]], Any],
                 every_s: float = 2.0) -> None:
        self._build = build
        self._write = write
        self.every_s = every_s
        self._last = -math.inf

    def write(self, finished: bool = False, *, final: bool = False) -> dict[str, Any]:
        summary = self._build(finished, final)
        self._write(summary)
        self._last = time.monotonic()
        return summary

    def tick(self) -> None:
        if time.monotonic() - self._last >= self.every_s:
            self.write(False)
