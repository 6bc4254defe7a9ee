"""A card's claim read along the call budget, from its cells' anytime trajectories: descriptive.

A claim is judged once, at the suite's equal budget, from the records' own
scores (:mod:`.card`, by :mod:`thoughtloom.eval.inference`). Each record's
trajectory (:mod:`thoughtloom.eval.curves`) also says what the cell would
have scored at every smaller call budget, so the card also describes the
claim along the budget: at every call budget ``b`` from 1 to the suite's
``max_calls`` (or, without one, to the most any example spent) at which
some example's answer can change, the mean paired difference "better -
worse" on the same examples and with the same pairing as the verdict (each
example's score at ``b`` averaged over the cell's seeds first), read by its
sign: the claimed better method is ``ahead``, ``behind`` or ``tied``. This
is a curve, not a test: dozens of budgets are dozens of looks, and no
verdict is read from them. The sign at ``b`` holds up to the next such
budget, and the run of signs is read as one phrase (:func:`phrase`):

- one sign throughout: ``ahead at every budget up to 20 calls``;
- two: the upper first, ``ahead at budgets ≥ 12 calls, tied below``
  (``ahead at 20 calls, tied below`` when the upper run is one budget);
- more: in order of budget, ``tied at ≤ 4 calls, behind at 5–10 calls,
  ahead at ≥ 11 calls`` (a one-budget run is ``7 calls``, ``1 call``).

Where a cell's examples have no trajectory (results recorded before anytime
trajectories, e.g. replayed old folders) the claim gets no curve
(:data:`NO_TRAJECTORIES`) rather than an invented one; examples with
an unreadable trajectory are left out (the phrase then says on how many of
the claim's examples it rests, and the card's notes say which). Where a
run's budget cut an example before the suite's ``max_calls`` is reached
(a suite with a token budget only), the curves, and the phrase, end there
and the phrase says so.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Collection, Literal, Sequence

from ..curves import JUDGED_METRIC, NOT_RECORDED, Axis, RunCurves, budget_grid

Lead = Literal["ahead", "behind", "tied"]
NO_TRAJECTORIES = f"no curve: {NOT_RECORDED}"
JUDGED = f"no curve: {JUDGED_METRIC}"
NO_READABLE = "no curve: no readable trajectory"
NO_SHARED = "no curve: no example both cells scored"


@dataclass(frozen=True)
class SeedMean:
    """A cell's seeds read as one run on the claim's examples: each example's score at a budget is
    its mean over the seeds (as the claim's own verdict pairs them); an example some seed cannot
    read at that budget is left out."""

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
    """Budgets ``low`` to ``high`` calls (both included) where the claim's mean difference has one sign."""

    low: int
    high: int
    lead: Lead


def calls(n: int) -> str:
    return f"{n:,} call{'s' if n != 1 else ''}"


def lead(difference: float) -> Lead:
    tiny = 1e-12  # seed means of equal scores can differ by a rounding error
    return "ahead" if difference > tiny else "behind" if difference < -tiny else "tied"


def segments(leads: Sequence[tuple[int, Lead]], top: int) -> list[Segment]:
    """The budgets' signs as runs: each ``(budget, lead)`` holds from its budget up to the next one
    (exclusive), the last up to ``top``; neighbours with one sign merge."""
    out: list[Segment] = []
    ordered = sorted(leads)
    for k, (budget, found) in enumerate(ordered):
        high = ordered[k + 1][0] - 1 if k + 1 < len(ordered) else top
        if out and out[-1].lead == found:
            out[-1] = Segment(out[-1].low, high, found)
        else:
            out.append(Segment(budget, high, found))
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
    """The runs of signs as one phrase (the rules are the module docstring's)."""
    if len(segs) == 1:
        return f"{segs[0].lead} at every budget up to {calls(segs[0].high)}"
    if len(segs) == 2:
        upper = segs[1]
        where = calls(upper.low) if upper.low == upper.high else f"budgets ≥ {upper.low:,} calls"
        return f"{upper.lead} at {where}, {segs[0].lead} below"
    return ", ".join(f"{s.lead} at {_span(s, k == 0, k == len(segs) - 1)}" for k, s in enumerate(segs))


def along_budget(better: Sequence[RunCurves], worse: Sequence[RunCurves], ids: Collection[str], metric: str,
                 max_calls: int | None) -> str:
    """The claim "``better`` beats ``worse``" on ``metric`` over ``ids`` along the call budget, as
    one descriptive phrase (``better``/``worse``: each cell's seeds' curves)."""
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
    leads = []
    for budget in budgets:
        sa, sb = a.scores_at("calls", budget, metric), b.scores_at("calls", budget, metric)
        if sa is None or sb is None:  # past a horizon: not reached, every budget here is under both
            continue
        diffs = [sb[i] - sa[i] for i in sorted(shared)]
        leads.append((budget, lead(sum(diffs) / len(diffs))))
    said = phrase(segments(leads, top))
    if top < reach:
        said += f" (the curves end at {calls(top)}, where a run's budget cut an example)"
    if len(shared) < len(ids):
        said += f" (on the {len(shared)} of {len(ids)} examples with a readable trajectory)"
    return said
