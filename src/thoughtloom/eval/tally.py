"""The running sums a run's summary is made of (:class:`Tally`), kept as records come.

:mod:`.summary` says them; :class:`~.results.ResultsFile` keeps one for its file,
so an eval holds the sums, never its records.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..core.events import RENAMED, STEP_PROBLEMS
from .record import EvalRecord, number

USAGE_KEYS = ("calls", "cached_calls", "prompt_tokens", "completion_tokens", "total_tokens", "truncated_calls")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


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


def add_by_role(into: dict[str, dict[str, float]], record: EvalRecord) -> None:
    """Add ``record``'s ``usage.by_role`` (each role's usage, where the run put a role on a model of
    its own) into ``into``, role by role; a record without one adds nothing."""
    roles = record.usage.get("by_role")
    for role, u in (roles.items() if isinstance(roles, Mapping) else ()):
        if isinstance(u, Mapping):
            mine = into.setdefault(str(role), dict.fromkeys(USAGE_KEYS, 0.0))
            for k in USAGE_KEYS:
                mine[k] += number(u.get(k))


def usage_by_role(records: Iterable[EvalRecord]) -> dict[str, dict[str, float]]:
    """Each role's usage summed over ``records`` (:func:`add_by_role`), by role name; empty when no
    record has one."""
    out: dict[str, dict[str, float]] = {}
    for r in records:
        add_by_role(out, r)
    return dict(sorted(out.items()))


class Tally:
    """What the summary says of a run's records, summed as each record comes: its memory does not
    grow with the records (a 20,000-question run held every record for this and grew 37%)."""

    def __init__(self) -> None:
        self.n = self.errors = self.truncated = self.budget_stopped = 0
        self.metric_sums: dict[str, float] = {}
        self.scored_names: frozenset[str] | None = None  # the metrics every scored record has
        self.usage = dict.fromkeys(USAGE_KEYS, 0.0)
        self.step_problems: dict[str, dict[str, Any]] = {}
        self.latency_s = 0.0
        self.by_role: dict[str, dict[str, float]] = {}  # the records' usage.by_role, summed (--role-model)

    @classmethod
    def of(cls, records: Iterable[EvalRecord | Mapping[str, Any]]) -> "Tally":
        tally = cls()
        for record in records:
            tally.add(record)
        return tally

    def add(self, record: EvalRecord | Mapping[str, Any]) -> None:
        """Count ``record``; one scored with other metrics than the records before it is the
        :class:`ConfigError` of :meth:`EvalRecord.score` (a means over mixed metrics means nothing)."""
        r = EvalRecord.of(record)
        if r.metrics:
            names = frozenset(r.metrics)
            if self.scored_names is None:
                self.scored_names = names
            for name in self.scored_names - names:
                r.score(name)  # raises, naming the metric and the ones the record has
            if names - self.scored_names:
                EvalRecord(id="(an earlier record)", metrics={k: 0.0 for k in self.scored_names}).score(
                    min(names - self.scored_names))
        for name in r.metrics:
            self.metric_sums[name] = self.metric_sums.get(name, 0.0) + r.score(name)
        self.n += 1
        self.errors += r.failed
        self.truncated += r.truncated is True
        self.budget_stopped += r.budget_stopped
        for k in USAGE_KEYS:
            self.usage[k] += number(r.usage.get(k))
        add_by_role(self.by_role, r)
        for key, cat in tally_step_problems([r.step_problems]).items():
            mine = self.step_problems.setdefault(key, {"total": 0, "examples": 0, "by": {}})
            mine["total"] += cat["total"]
            mine["examples"] += cat["examples"]
            for what, count in cat["by"].items():
                mine["by"][what] = mine["by"].get(what, 0) + count
        self.latency_s += number(r.latency_s)
