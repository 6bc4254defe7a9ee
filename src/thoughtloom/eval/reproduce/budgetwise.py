"""A card's claim judged along the call budget, from its cells' anytime trajectories.

A claim is judged at the suite's equal budget from the records' own scores
(:mod:`.card`); each record's trajectory (:mod:`thoughtloom.eval.curves`)
also says what the cell would have scored at every smaller call budget. So
the claim is judged again at every call budget ``b`` from 1 to the suite's
``max_calls`` (or, without one, to the most any example spent) at which
some example's answer can change, each by :func:`..curves.differences_at`
on the same examples and with the same pairing as the claim's own verdict
(each example's score at ``b`` averaged over the cell's seeds first). The
verdict at ``b`` holds up to the next such budget, so the judged budgets
cover every budget in between, and the run of verdicts is read as one
phrase (:func:`phrase`):

- one verdict throughout: ``holds at every budget up to 20 calls``;
- two: the upper first, ``holds at budgets ≥ 12 calls, inconclusive below``
  (``holds at 20 calls, inconclusive below`` when the upper run is one budget);
- more: in order of budget, ``inconclusive at ≤ 4 calls, does not hold at
  5–10 calls, holds at ≥ 11 calls`` (a one-budget run is ``7 calls``,
  ``1 call``).

Where a cell's examples have no trajectory (results recorded before anytime
trajectories, e.g. replayed old folders) the claim gets no budget-wise
verdict (:data:`NO_TRAJECTORIES`) rather than an invented one; examples with
an unreadable trajectory are left out (the phrase then says on how many of
the claim's examples it rests, and the card's notes say which). Where a
run's budget cut an example before the suite's ``max_calls`` is reached
(a suite with a token budget only), the curves, and the phrase, end there
and the phrase says so.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Collection, Sequence

from ..curves import NOT_RECORDED, Axis, Difference, RunCurves, budget_grid, differences_at
from ..stats import Verdict

NO_TRAJECTORIES = f"no budget-wise verdict: {NOT_RECORDED}"
NO_READABLE = "no budget-wise verdict: no readable trajectory"
NO_SHARED = "no budget-wise verdict: no example both cells scored"


@dataclass(frozen=True)
class SeedMean:
    """A cell's seeds read as one run on the claim's examples: each example's score at a budget is
    its mean over the seeds (as the claim's own verdict pairs them); an example some seed cannot
    read at that budget is left out. What :func:`..curves.differences_at` reads of a run."""

    seeds: tuple[RunCurves, ...]
    ids: frozenset[str]

    @property
    def recorded(self) -> bool:
        return bool(self.seeds) and all(s.recorded for s in self.seeds)

    def known(self) -> set[str]:
        """The claim's examples every seed has a readable trajectory for."""
        return {i for i in self.ids if all(i in s.examples for s in self.seeds)}

    def horizon(self, axis: Axis) -> float:
        return min(s.horizon(axis) for s in self.seeds)

    def scores_at(self, axis: Axis, budget: float, metric: str) -> dict[str, float] | None:
        found = [s.scores_at(axis, budget, metric) for s in self.seeds]
        if any(f is None for f in found):
            return None
        return {i: sum(f[i] for f in found) / len(found)  # type: ignore[index]
                for i in sorted(self.known())}


@dataclass(frozen=True)
class Segment:
    """Budgets ``low`` to ``high`` calls (both included) where the claim has one verdict."""

    low: int
    high: int
    verdict: Verdict


def calls(n: int) -> str:
    return f"{n:,} call{'s' if n != 1 else ''}"


def segments(differences: Sequence[Difference], top: int) -> list[Segment]:
    """The judged budgets' verdicts as runs: each verdict holds from its budget up to the next
    judged one (exclusive), the last up to ``top``; neighbours with one verdict merge."""
    out: list[Segment] = []
    ordered = sorted(differences, key=lambda d: d.budget)
    for k, d in enumerate(ordered):
        high = ordered[k + 1].budget - 1 if k + 1 < len(ordered) else top
        if out and out[-1].verdict == d.verdict:
            out[-1] = Segment(out[-1].low, high, d.verdict)
        else:
            out.append(Segment(d.budget, high, d.verdict))
    return out


def _span(seg: Segment, first: bool, last: bool) -> str:
    if seg.low == seg.high:
        return calls(seg.low)
    if last:
        return f"≥ {seg.low:,} calls"
    if first:
        return f"≤ {seg.high:,} calls"
    return f"{seg.low:,}–{seg.high:,} calls"


def phrase(segs: Sequence[Segment]) -> str:
    """The runs of verdicts as one phrase (the rules are the module docstring's)."""
    if len(segs) == 1:
        return f"{segs[0].verdict} at every budget up to {calls(segs[0].high)}"
    if len(segs) == 2:
        upper = segs[1]
        where = calls(upper.low) if upper.low == upper.high else f"budgets ≥ {upper.low:,} calls"
        return f"{upper.verdict} at {where}, {segs[0].verdict} below"
    return ", ".join(f"{s.verdict} at {_span(s, k == 0, k == len(segs) - 1)}" for k, s in enumerate(segs))


def along_budget(better: Sequence[RunCurves], worse: Sequence[RunCurves], ids: Collection[str], metric: str,
                 max_calls: int | None, *, replicates: int = 10_000) -> str:
    """The claim "``better`` beats ``worse``" on ``metric`` over ``ids`` along the call budget, as
    one phrase (``better``/``worse``: each cell's seeds' curves)."""
    a, b = SeedMean(tuple(worse), frozenset(ids)), SeedMean(tuple(better), frozenset(ids))
    if not a.recorded or not b.recorded:
        return NO_TRAJECTORIES
    if not ids:
        return NO_SHARED
    shared = a.known() & b.known()
    if not shared:
        return NO_READABLE
    runs = list(a.seeds) + list(b.seeds)
    edge = min(a.horizon("calls"), b.horizon("calls"))  # past it, some example was cut by its run's budget
    reach = max_calls if max_calls is not None else max(r.spent("calls") for r in runs)
    top = int(min(reach, edge))
    if top < 1:
        return NO_READABLE
    budgets = sorted({1} | {g for g in budget_grid(runs, "calls", most=sys.maxsize) if 1 <= g <= top})
    found = differences_at(a, b, "calls", budgets, [metric], replicates=replicates)  # type: ignore[arg-type]
    said = phrase(segments(found, top))
    if top < reach:
        said += f" (the curves end at {calls(top)}, where a run's budget cut an example)"
    if len(shared) < len(ids):
        said += f" (on the {len(shared)} of {len(ids)} examples with a readable trajectory)"
    return said
