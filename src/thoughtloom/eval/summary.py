"""``summary.json``: written when a run starts, kept current as it goes.

The runner writes the summary at start (``complete: false``), again at most
every ``every_s`` seconds while examples finish, and a last time when the
run ends, successfully or not; each write replaces the file atomically. So
``summary.json`` always exists beside ``results.jsonl``, always parses, and
says ``complete: true`` only when every example has a record.

``step_problems`` sums what went wrong inside the examples: each record
carries its own counts (``core.events.count_step_problems`` over its
trace), :func:`tally_step_problems` adds them up, and
:func:`step_problem_lines` says each category in one line (``thoughtloom
run`` prints the same lines for one question). Records written before the
counts existed count as none.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any, Callable, Iterable, Mapping

from ..core.events import STEP_PROBLEMS
from ..core.types import to_json
from .record import EvalRecord, number
from ..tasks.base import Task
from .results import describe_error
from .tally import USAGE_KEYS, Tally, _dict, tally_step_problems

__all__ = ["USAGE_KEYS", "STEP_PROBLEM_WORDS", "SummaryWriter", "Tally", "step_problem_lines", "summarize",
           "tally_step_problems", "task_summary"]

log = logging.getLogger(__name__)



#: How each category of :data:`~thoughtloom.core.events.STEP_PROBLEMS` is said: label, unit, units.
STEP_PROBLEM_WORDS: dict[str, tuple[str, str, str]] = {
    "cut_off": ("malformed (cut off at max_tokens)", "reply", "replies"),
    "unparsed": ("malformed (unparsed)", "reply", "replies"),
    "salvaged": ("salvaged (read in part)", "reply", "replies"),
    "limited": ("held to the task's rubric limits (score_limits, a symbolic check)", "evaluation", "evaluations"),
    "budget_stopped": ("budget-stopped", "refused call", "refused calls"),
}


def step_problem_lines(tally: dict[str, Any], *, examples: int | None = None) -> list[str]:
    """One line per category in ``tally``; ``examples``: how many the eval holds (None: one question)."""
    lines = []
    for key, (label, one, many) in STEP_PROBLEM_WORDS.items():
        cat = _dict(tally.get(key))
        total = int(number(cat.get("total")))
        if not total:
            continue
        where = (f" in {int(number(cat.get('examples')))} of {examples} example{'' if examples == 1 else 's'}"
                 if examples is not None else "")
        by = sorted(_dict(cat.get("by")).items(), key=lambda kv: (-number(kv[1]), str(kv[0])))
        lines.append(f"{label}: {total} {one if total == 1 else many}{where} ("
                     + ", ".join(f"{what} {int(number(n))}" for what, n in by) + ")")
    return lines


def summarize(
    records: Iterable[EvalRecord | Mapping[str, Any]] | Tally, *, total: int, stats: Any, wall_s: float,
    meta: dict[str, Any], finished: bool,
) -> dict[str, Any]:
    """Metric means, usage totals and this invocation's figures over ``records`` (or their
    :class:`Tally`, as the runner keeps it)."""
    tally = records if isinstance(records, Tally) else Tally.of(records)
    n = tally.n
    metrics = {name: round(tally.metric_sums[name] / n, 6) if n else 0.0 for name in sorted(tally.metric_sums)}
    usage: dict[str, Any] = {k: int(tally.usage[k]) for k in USAGE_KEYS}
    usage["per_example"] = {k: round(usage[k] / n, 3) if n else 0.0 for k in USAGE_KEYS}
    if tally.by_role:  # the roles a run put on a model of their own (--role-model)
        usage["by_role"] = {role: {k: int(v) for k, v in u.items()} for role, u in sorted(tally.by_role.items())}
    return {
        **meta,
        "n": n,
        "total": total,
        "complete": finished and n >= total,
        "n_errors": tally.errors,
        "n_truncated": tally.truncated,
        "n_budget_stopped": tally.budget_stopped,
        "step_problems": {key: tally.step_problems[key] for key in STEP_PROBLEMS if key in tally.step_problems},
        "metrics": metrics,
        "usage": usage,
        "mean_latency_s": round(tally.latency_s / n, 4) if n else 0.0,
        "this_run": {
            "examples": stats.new,
            "calls": stats.usage.calls,
            "cached_calls": stats.usage.cached_calls,
            "new_calls": stats.usage.calls - stats.usage.cached_calls,
            "prompt_tokens": stats.usage.prompt_tokens,
            "completion_tokens": stats.usage.completion_tokens,
            "wall_s": round(wall_s, 3),
            **(stats.server.facts() if stats.server is not None else {}),
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


def task_summary(task: Any, records: Iterable[EvalRecord]) -> dict[str, Any]:
    """The task's own aggregates (``task_report``); a failing report is noted, not fatal.

    The task (a layer below eval) reads each record as its JSON object (``EvalRecord.to_dict``);
    a task without a report of its own reads none (``records`` may be read from the file)."""
    if type(task).report is Task.report:
        return {}
    try:
        report = task.report([EvalRecord.of(r).to_dict() for r in records])
    except Exception as exc:  # records hold model text; the summary must still be written
        log.warning("task report failed: %s", describe_error(exc))
        return {"task_report_error": describe_error(exc)}
    return {"task_report": to_json(report)} if report else {}
