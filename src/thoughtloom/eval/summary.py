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

from ..core.events import RENAMED, STEP_PROBLEMS
from ..core.types import to_json
from .record import EvalRecord, number
from .results import describe_error

log = logging.getLogger(__name__)

USAGE_KEYS = ("calls", "cached_calls", "prompt_tokens", "completion_tokens", "total_tokens", "truncated_calls")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


#: How each category of :data:`~thoughtloom.core.events.STEP_PROBLEMS` is said: label, unit, units.
STEP_PROBLEM_WORDS: dict[str, tuple[str, str, str]] = {
    "cut_off": ("malformed (cut off at max_tokens)", "reply", "replies"),
    "unparsed": ("malformed (unparsed)", "reply", "replies"),
    "salvaged": ("salvaged (read in part)", "reply", "replies"),
    "limited": ("held to the task's rubric limits (score_limits, a symbolic check)", "evaluation", "evaluations"),
    "budget_stopped": ("budget-stopped", "refused call", "refused calls"),
}


def tally_step_problems(per_example: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Per-example counts (``count_step_problems``) summed: for each category that
    occurred, its ``total``, the ``examples`` that had any, and the total ``by`` step."""
    tally: dict[str, dict[str, Any]] = {}
    for counts in per_example:
        for key, by in _dict(counts).items():
            if key not in STEP_PROBLEMS:
                continue
            cat = tally.setdefault(key, {"total": 0, "examples": 0, "by": {}})
            here = 0
            for what, n in _dict(by).items():
                what, n = RENAMED.get(what, what), int(number(n))  # a record from before a rename
                cat["by"][what] = cat["by"].get(what, 0) + n
                here += n
            cat["total"] += here
            cat["examples"] += here > 0
    return {key: tally[key] for key in STEP_PROBLEMS if key in tally and tally[key]["total"]}


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


def usage_by_role(records: Iterable[EvalRecord]) -> dict[str, dict[str, int]]:
    """Each role's usage summed over ``records`` (their ``usage.by_role``, present where the run
    put a role on a model of its own); empty when none did."""
    out: dict[str, dict[str, int]] = {}
    for r in records:
        roles = r.usage.get("by_role")
        for role, u in (roles.items() if isinstance(roles, Mapping) else ()):
            if isinstance(u, Mapping):
                into = out.setdefault(str(role), dict.fromkeys(USAGE_KEYS, 0))
                for k in USAGE_KEYS:
                    into[k] += int(number(u.get(k)))
    return dict(sorted(out.items()))


def summarize(
    records: Iterable[EvalRecord | Mapping[str, Any]], *, total: int, stats: Any, wall_s: float,
    meta: dict[str, Any], finished: bool,
) -> dict[str, Any]:
    """Metric means, usage totals and this invocation's figures over ``records``."""
    records = [EvalRecord.of(r) for r in records]
    n = len(records)
    metric_names = sorted({k for r in records for k in r.metrics})
    metrics = {
        name: round(sum(r.score(name) for r in records) / n, 6) if n else 0.0
        for name in metric_names
    }
    usage: dict[str, Any] = {k: int(sum(number(r.usage.get(k)) for r in records)) for k in USAGE_KEYS}
    usage["per_example"] = {k: round(usage[k] / n, 3) if n else 0.0 for k in USAGE_KEYS}
    by_role = usage_by_role(records)
    if by_role:
        usage["by_role"] = by_role
    return {
        **meta,
        "n": n,
        "total": total,
        "complete": finished and n >= total,
        "n_errors": sum(1 for r in records if r.failed),
        "n_truncated": sum(1 for r in records if r.truncated is True),
        "n_budget_stopped": sum(1 for r in records if r.budget_stopped),
        "step_problems": tally_step_problems(r.step_problems for r in records),
        "metrics": metrics,
        "usage": usage,
        "mean_latency_s": round(sum(number(r.latency_s) for r in records) / n, 4) if n else 0.0,
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

    The task (a layer below eval) reads each record as its JSON object (``EvalRecord.to_dict``)."""
    try:
        report = task.report([EvalRecord.of(r).to_dict() for r in records])
    except Exception as exc:  # records hold model text; the summary must still be written
        log.warning("task report failed: %s", describe_error(exc))
        return {"task_report_error": describe_error(exc)}
    return {"task_report": to_json(report)} if report else {}
