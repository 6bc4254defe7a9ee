"""Anytime curves: a run's metrics against the budget it could have spent.

Each result record (:class:`~.record.EvalRecord`) of a run made with anytime
trajectories carries ``record.anytime``: ``points`` (``calls``, ``tokens``, ``answer``,
``metrics``), in order, the first at 0 calls and 0 tokens, kept only where
the answer changed, the last the run's end; and ``exact`` ("every budget",
or "batch boundaries" when the strategy trims its last batch to the budget,
so a run capped between two recorded points could differ). From them:

- an example's metrics at a **call budget** ``b`` are those of its last
  point with ``calls <= b``: what the same run capped at ``--max-calls b``
  returns (exactly so where ``exact`` is "every budget");
- at a **token budget** ``t``: its last point with ``tokens <= t``, exact
  at the points' own token counts and an approximation between them (a run
  capped at ``t`` tokens would stop inside a batch the trajectory counts
  whole);
- past its last point: the last point holds for every larger budget,
  unless the record says ``stopped: "budget"``: its run cut it, so it is
  known only up to the run's own cap on that axis (``run.json``'s
  ``max_calls`` / ``max_tokens``; where that is not recorded, up to the
  last point). A run's curve ends at the smallest budget up to which every
  example is known (:attr:`RunCurves.horizon`);
- an error record scores its own ``metrics`` (the no-answer scores, 0 for an
  unscored example, as :func:`~thoughtloom.eval.results.score` and the
  summary count it) at every budget;
- a record without a trajectory (written before trajectories were recorded)
  or with one that cannot be read (non-numbers, budgets going backwards, a
  metric missing) is left out of the curve and counted in
  :attr:`RunCurves.notes`; a run where no record has one has no curve
  (:attr:`RunCurves.recorded` is false).

:func:`budget_grid` puts several runs on one grid, :func:`curve` gives a
run's means with 95% bootstrap bands on it (:mod:`thoughtloom.eval.stats`),
and :func:`differences_at` the paired differences between two runs at
chosen budgets (:func:`thoughtloom.eval.inference.paired_test`). A curve is
descriptive: a difference at a budget carries its test, but no verdict is
read from the many budgets one curve crosses (a card's verdict is taken
once, at its suite's budget).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Sequence

from .record import EvalRecord, finite_number
from .inference import PairedTest, paired_test
from .stats import Estimate, mean_ci

Axis = Literal["calls", "tokens"]
AXES: tuple[Axis, ...] = ("calls", "tokens")
#: The budget key of ``run.json``'s ``budget`` for each axis.
CAP_KEYS: dict[str, str] = {"calls": "max_calls", "tokens": "max_tokens"}
#: The ``exact`` value of a trajectory that holds between its points too.
EVERY_BUDGET = "every budget"
#: Recorded before anytime trajectories existed: where a curve would be.
NOT_RECORDED = "recorded before anytime trajectories"
#: A metric the model judge scores once, after the method and outside its budget (``Task.judged_metrics``).
JUDGED_METRIC = "a model-judged metric, scored once after the run, has no budget trajectory"
#: Most budgets on a drawn grid (see :func:`budget_grid`).
GRID_POINTS = 40


class Unreadable(ValueError):
    """A record's ``anytime`` that cannot be read as a trajectory; the message says why."""


@dataclass(frozen=True)
class Point:
    calls: int
    tokens: int
    metrics: Mapping[str, float]

    def value(self, metric: str) -> float:
        # an unscored point (no metrics at all) scores 0, as an unscored record does
        return self.metrics.get(metric, 0.0)


@dataclass(frozen=True)
class ExampleCurve:
    """One example's trajectory: its points and, per axis, the largest budget it is known at."""

    points: tuple[Point, ...]
    horizon: Mapping[str, float]  # axis -> budget (math.inf: every budget)
    exact: bool = True

    def at(self, axis: Axis, budget: float) -> Point | None:
        """The point in force at ``budget`` (the last one at or under it); None past the horizon."""
        if budget > self.horizon[axis]:
            return None
        spent = [getattr(p, axis) for p in self.points]
        return self.points[max(bisect_right(spent, budget) - 1, 0)]


def _count(value: Any, what: str) -> int:
    if not finite_number(value) or value < 0 or value != int(value):
        raise Unreadable(f"{what} is {value!r}, not a count")
    return int(value)


def _metrics(value: Any, what: str) -> dict[str, float]:
    if not isinstance(value, dict):
        raise Unreadable(f"{what} is not an object")
    out = {}
    for name, score in value.items():
        if not finite_number(score):
            raise Unreadable(f"{what}[{name!r}] is {score!r}, not a finite number")
        out[str(name)] = float(score)
    return out


def read_trajectory(record: EvalRecord | Mapping[str, Any], caps: Mapping[str, Any] | None = None) -> ExampleCurve:
    """The trajectory of ``record`` (see the module docstring); raises :class:`Unreadable`.

    ``caps``: the run's budget (``{"max_calls": 20, "max_tokens": None}``, as run.json has it)."""
    record = EvalRecord.of(record)
    own = _metrics(record.metrics, "metrics")
    if record.failed:
        return ExampleCurve((Point(0, 0, own),), {a: math.inf for a in AXES})
    anytime = record.anytime
    if not isinstance(anytime, dict):
        raise Unreadable("no trajectory" if anytime is None else "anytime is not an object")
    raw = anytime.get("points")
    if not isinstance(raw, list) or not raw:
        raise Unreadable("anytime.points is not a non-empty list")
    points = []
    for i, p in enumerate(raw):
        if not isinstance(p, dict):
            raise Unreadable(f"point {i} is not an object")
        point = Point(_count(p.get("calls"), f"point {i} calls"), _count(p.get("tokens"), f"point {i} tokens"),
                      _metrics(p.get("metrics"), f"point {i} metrics"))
        if point.metrics and not set(own) <= set(point.metrics):
            raise Unreadable(f"point {i} lacks metric {sorted(set(own) - set(point.metrics))[0]!r}")
        if points and (point.calls < points[-1].calls or point.tokens < points[-1].tokens):
            raise Unreadable(f"point {i} spends less than the point before it")
        points.append(point)
    if points[0].calls or points[0].tokens:
        raise Unreadable("the first point is not at 0 calls and 0 tokens")
    horizon: dict[str, float] = {a: math.inf for a in AXES}
    if record.budget_stopped:  # cut by its run's cap: known up to that cap only
        for axis in AXES:
            cap = (caps or {}).get(CAP_KEYS[axis])
            last = getattr(points[-1], axis)
            ok = isinstance(cap, int) and not isinstance(cap, bool) and cap >= last
            horizon[axis] = float(cap) if ok else float(last)
    return ExampleCurve(tuple(points), horizon, anytime.get("exact") == EVERY_BUDGET)


@dataclass(frozen=True)
class RunCurves:
    """A run's readable trajectories (by example id) and what was left out."""

    examples: Mapping[str, ExampleCurve]
    recorded: bool  # some record has a trajectory
    notes: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return all(e.exact for e in self.examples.values())

    def horizon(self, axis: Axis) -> float:
        """The largest budget at which every example is known (math.inf: every budget; -1: no curve)."""
        if not self.recorded or not self.examples:
            return -1.0
        return min(e.horizon[axis] for e in self.examples.values())

    def scores_at(self, axis: Axis, budget: float, metric: str) -> dict[str, float] | None:
        """Example id -> ``metric`` at ``budget``; None where the run has no curve there."""
        if budget > self.horizon(axis):
            return None
        return {rid: e.at(axis, budget).value(metric) for rid, e in self.examples.items()}  # type: ignore[union-attr]

    def change_points(self, axis: Axis) -> set[int]:
        """The budgets at which some example's metrics can change (and finite horizons)."""
        found = {getattr(p, axis) for e in self.examples.values() for p in e.points}
        found |= {int(e.horizon[axis]) for e in self.examples.values() if math.isfinite(e.horizon[axis])}
        return found

    def spent(self, axis: Axis) -> int:
        """The most any example spent (or may be read at: a finite horizon)."""
        return max(self.change_points(axis), default=0)


def run_curves(records: Mapping[str, EvalRecord | Mapping[str, Any]] | Sequence[EvalRecord | Mapping[str, Any]],
               caps: Mapping[str, Any] | None = None) -> RunCurves:
    """The trajectories of a run's records (by id, or a list of records), ``caps`` its budget."""
    pairs = (records.items() if isinstance(records, Mapping)
             else ((EvalRecord.of(r).id, r) for r in records))
    examples: dict[str, ExampleCurve] = {}
    missing, unreadable, recorded = 0, {}, False
    for rid, value in pairs:
        record = EvalRecord.of(value)
        recorded |= record.anytime is not None
        try:
            examples[rid] = read_trajectory(record, caps)
        except Unreadable as exc:
            if record.anytime is None:
                missing += 1
            else:
                unreadable[rid] = str(exc)
    notes = []
    if recorded and missing:
        notes.append(f"{missing} example{'s' if missing != 1 else ''} without a trajectory ({NOT_RECORDED}) "
                     "left out of the curves")
    if unreadable:
        rid, why = next(iter(unreadable.items()))
        notes.append(f"{len(unreadable)} unreadable trajector{'ies' if len(unreadable) != 1 else 'y'} left out "
                     f"of the curves (e.g. {rid}: {why})")
    inexact = sum(not e.exact for e in examples.values())
    if recorded and inexact:
        notes.append(f"{inexact} of {len(examples)} trajectories are exact only at batch boundaries: between "
                     "recorded points a run capped there could differ")
    if recorded and examples:
        for axis in AXES:
            edge = min(e.horizon[axis] for e in examples.values())
            if math.isfinite(edge):
                notes.append(f"examples cut by the run's budget are known up to {int(edge):,} {axis}: "
                             "the curve ends there")
    return RunCurves(examples, recorded, notes)


def budget_grid(runs: Sequence[RunCurves], axis: Axis, *, most: int = GRID_POINTS) -> list[int]:
    """One budget grid for ``runs`` on ``axis``, from 0 to the most any of them spent.

    It holds every budget at which some run's curve can step (an example's
    point, a run's horizon), so each run's curve is exact on it; past ``most``
    of them, the grid keeps ``most`` evenly spaced budgets, each moved down to
    the change point at or under it (where the curves hold the same values)."""
    found = sorted({0}.union(*(r.change_points(axis) for r in runs if r.recorded)))
    if len(found) <= most:
        return found
    top = found[-1]
    grid = {found[max(bisect_right(found, top * i / (most - 1)) - 1, 0)] for i in range(most)}
    edges = {int(r.horizon(axis)) for r in runs if r.recorded and math.isfinite(r.horizon(axis))}
    return sorted(grid | {b for b in edges if b >= 0})


def estimates_at(run: RunCurves, axis: Axis, budget: float, metrics: Sequence[str], *,
                 replicates: int = 10_000) -> dict[str, Estimate] | None:
    """Each metric's mean at ``budget`` with its 95% bootstrap interval; None where the run has no curve."""
    out = {}
    for metric in metrics:
        values = run.scores_at(axis, budget, metric)
        if values is None:
            return None
        out[metric] = mean_ci(list(values.values()), replicates=replicates)
    return out


def curve(run: RunCurves, axis: Axis, grid: Sequence[int], metrics: Sequence[str], *,
          replicates: int = 10_000) -> list[tuple[int, dict[str, Estimate]]]:
    """(budget, metric -> estimate) at each budget of ``grid`` where the run has a curve."""
    out = []
    for budget in grid:
        found = estimates_at(run, axis, budget, metrics, replicates=replicates)
        if found is not None:
            out.append((budget, found))
    return out


@dataclass(frozen=True)
class Difference:
    """``b - a`` of one metric at one budget, paired over the examples both runs scored there:
    descriptive (its test's p-value is one of many looks along the curve, no verdict)."""

    budget: int
    metric: str
    test: PairedTest | None  # None: one of the runs has no curve at this budget



def differences_at(a: RunCurves, b: RunCurves, axis: Axis, budgets: Sequence[int], metrics: Sequence[str], *,
                   replicates: int = 10_000) -> list[Difference]:
    """The paired difference ``b - a`` of each metric at each budget, each with its test."""
    out = []
    for budget in budgets:
        for metric in metrics:
            sa, sb = a.scores_at(axis, budget, metric), b.scores_at(axis, budget, metric)
            found = None if sa is None or sb is None else paired_test(sa, sb, replicates=replicates)
            out.append(Difference(budget, metric, found))
    return out
