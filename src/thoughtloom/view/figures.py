"""A run's figures for the report and the comparison: metric means with
95% bootstrap intervals (overall and per stratum, :mod:`thoughtloom.eval.stats`),
usage, time and counts, all from the records themselves (so a run still in
progress shows what it has)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..eval.record import EvalRecord
from ..eval.stats import Estimate, mean_ci
from ..eval.summary import step_problem_lines, tally_step_problems
from .rundir import RunFolder

USAGE = ("calls", "cached_calls", "prompt_tokens", "completion_tokens", "total_tokens", "latency_s")
STATUSES = ("correct", "partial", "wrong", "error")


def status(record: EvalRecord, metric: str) -> str:
    """correct (full marks on the primary metric), partial, wrong, or error."""
    if record.failed:
        return "error"
    value = record.score(metric)
    return "correct" if value >= 1.0 - 1e-9 else "partial" if value > 0 else "wrong"


@dataclass(frozen=True)
class RunFigures:
    primary: str
    metrics: dict[str, Estimate]
    strata: dict[str, dict[str, Estimate]]  # stratum -> metric -> estimate (only with 2+ strata)
    n: int
    total: int | None
    complete: bool
    usage: dict[str, float]
    statuses: dict[str, int]
    truncated: int
    budget_stopped: int
    wall_s: float | None
    wall_note: str
    extra_counts: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # what went wrong inside the examples, one line a kind

    def per_example(self, key: str) -> float:
        return self.usage[key] / self.n if self.n else float("nan")

    @property
    def tokens_per_correct(self) -> float:
        """Tokens spent per full-marks-equivalent answer (the primary metric's sum)."""
        solved = self.metrics[self.primary].mean * self.n if self.primary in self.metrics and self.n else 0.0
        return self.usage["total_tokens"] / solved if solved > 0 else float("nan")

    @property
    def cached_share(self) -> float:
        return self.usage["cached_calls"] / self.usage["calls"] if self.usage["calls"] else float("nan")


def figures(run: RunFolder, *, replicates: int = 10_000) -> RunFigures:
    records = list(run.records.values())
    names = run.metric_names()
    primary = run.primary_metric(names)
    metrics = {m: mean_ci([r.score(m) for r in records], replicates=replicates) for m in names}
    groups: dict[str, list[EvalRecord]] = {}
    for r in records:
        stratum = run.stratum(r)
        if stratum is not None:
            groups.setdefault(stratum, []).append(r)
    strata = {}
    if len(groups) > 1:
        strata = {s: {m: mean_ci([r.score(m) for r in rs], replicates=replicates) for m in names}
                  for s, rs in sorted(groups.items())}
    statuses = {s: 0 for s in STATUSES}
    for r in records:
        statuses[status(r, primary)] += 1
    total = run.summary.get("total") if isinstance(run.summary.get("total"), int) else None
    wall, note = _wall(run)
    counts = {k: v for k, v in run.summary.items() if k.startswith("n_") and k not in (
        "n_errors", "n_truncated", "n_budget_stopped") and isinstance(v, (int, float))}
    return RunFigures(
        primary=primary, metrics=metrics, strata=strata, n=len(records), total=total,
        complete=bool(run.summary.get("complete")),
        usage={k: sum(r.used(k) for r in records) for k in USAGE}, statuses=statuses,
        truncated=sum(1 for r in records if r.truncated is True),
        budget_stopped=sum(1 for r in records if r.budget_stopped),
        wall_s=wall, wall_note=note, extra_counts=counts,
        problems=step_problem_lines(tally_step_problems(r.step_problems for r in records),
                                    examples=len(records)))


def _wall(run: RunFolder) -> tuple[float | None, str]:
    """Wall time: the run's own figure where it records one, else the last invocation's."""
    for source in (run.identity, run.summary):
        value = source.get("wall_s")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value), ""
    this_run = run.summary.get("this_run")
    if isinstance(this_run, dict) and isinstance(this_run.get("wall_s"), (int, float)):
        return float(this_run["wall_s"]), "last invocation"
    return None, ""


def scores(run: RunFolder, metric: str) -> dict[str, float]:
    """Example id -> score, for paired differences."""
    return {rid: r.score(metric) for rid, r in run.records.items()}
