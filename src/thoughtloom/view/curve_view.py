"""Anytime curves of runs (:mod:`thoughtloom.eval.curves`) as data and as inline SVG.

:func:`curve_data` reads each run's trajectories (its cap from ``run.json``'s
budget), puts the runs on one budget grid per axis and gives, per run, each
metric's mean and 95% bootstrap band at each budget where the run has a
curve: JSON-ready, for ``compare --json`` and both pages. :func:`curve_section`
draws the primary metric against calls and against tokens, one step line per
run with its band, and says under the figure what each run's curve rests on
(examples left out, batch-boundary exactness, where a cut run's curve ends).
Every text goes through :func:`.markup.h`, so run names and metric names are
escaped.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..eval.curves import AXES, NOT_RECORDED, Axis, RunCurves, budget_grid, curve, run_curves
from ..eval.stats import Estimate
from .markup import Raw, h
from .rundir import RunFolder

#: Bootstrap replicates behind a drawn band (a figure, not a judged claim; compare --at-* uses the full count).
CURVE_REPLICATES = 2_000
PALETTE = ("#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#0a7ea4", "#57606a")
W, H, LEFT, RIGHT, TOP, BOTTOM = 640, 240, 50, 14, 10, 36
AXIS_WORDS = {"calls": "calls", "tokens": "tokens (exact at recorded points, approximate between them)"}


def curves_of(run: RunFolder) -> RunCurves:
    """The run's trajectories, each example cut by its budget known up to the run's recorded cap."""
    budget = run.setting("budget")
    return run_curves(run.records, budget if isinstance(budget, dict) else None)


def spent(budget: int, axis: Axis) -> str:
    """``1 call``, ``20 calls``, ``1,500 tokens``."""
    return f"{budget:,} {axis if budget != 1 else axis[:-1]}"


def _estimate(e: Estimate) -> dict[str, Any]:
    return {"mean": round(e.mean, 6), "ci_low": round(e.ci_low, 6), "ci_high": round(e.ci_high, 6), "n": e.n}


def horizon(run: RunCurves, axis: Axis) -> int | None:
    """Where a run's curve ends on ``axis`` (None: it holds at every budget, or there is no curve)."""
    edge = run.horizon(axis)
    return int(edge) if math.isfinite(edge) and edge >= 0 else None


def summary(run: RunCurves) -> dict[str, Any]:
    """What a run's curves rest on: recorded, exact, notes, and where each axis ends."""
    return {"recorded": run.recorded, "exact": run.exact if run.recorded else None,
            "examples": len(run.examples) if run.recorded else 0,
            "notes": list(run.notes) if run.recorded else [NOT_RECORDED],
            "horizon": {axis: horizon(run, axis) for axis in AXES}}


def curve_data(runs: Sequence[RunCurves], metrics: Sequence[Sequence[str]], *,
               replicates: int = CURVE_REPLICATES) -> dict[str, Any]:
    """Per axis: the shared ``grid`` and, per run, ``points`` (budget, metric -> estimate) for the
    metrics that run has (``metrics``: one list per run)."""
    out: dict[str, Any] = {}
    for axis in AXES:
        grid = budget_grid(runs, axis)
        out[axis] = {"grid": grid, "runs": [
            [{"budget": b, "metrics": {m: _estimate(e) for m, e in found.items()}}
             for b, found in curve(r, axis, grid, names, replicates=min(replicates, CURVE_REPLICATES))]
            if r.recorded else [] for r, names in zip(runs, metrics)]}
    return out


def _steps(points: list[tuple[float, float]], end: float) -> str:
    """A step line through ``points`` (x, y), holding each value until the next point and the last to ``end``."""
    (x0, y0), rest = points[0], points[1:]
    parts = [f"M{x0:.1f},{y0:.1f}"]
    for x, y in rest:
        parts.append(f"H{x:.1f}V{y:.1f}")
    parts.append(f"H{end:.1f}")
    return "".join(parts)


def _band(xs: list[float], highs: list[float], lows: list[float], end: float) -> str:
    """The area between the upper and the lower step lines: along the upper, back along the lower."""
    back = [f"V{lows[-1]:.1f}"]
    for k in range(len(xs) - 1, 0, -1):
        back.append(f"H{xs[k]:.1f}V{lows[k - 1]:.1f}")
    return _steps(list(zip(xs, highs)), end) + "".join(back) + f"H{xs[0]:.1f}Z"


def _ticks(top: float) -> list[int]:
    if top <= 0:
        return [0]
    raw = top / 4
    step = 10 ** math.floor(math.log10(raw))
    step = next(s * step for s in (1, 2, 5, 10) if s * step >= raw)
    return list(range(0, int(top) + 1, int(max(step, 1))))


def curve_svg(data: dict[str, Any], axis: Axis, metric: str, names: Sequence[str], *,
              ends: Sequence[int | None] = (), dashed: Sequence[bool] = (),
              marks: Sequence[tuple[int, str]] = ()) -> Raw:
    """``metric`` against ``axis``: one step line per run with its 95% band; empty markup with no curve.

    ``ends``: where each run's curve ends (None: it holds to the grid's end); ``dashed``: runs exact
    only at batch boundaries; ``marks``: (budget, label) drawn as a vertical rule (the budget a
    paper ran at), the plot reaching them."""
    series = [[p for p in pts if metric in p["metrics"]] for pts in data[axis]["runs"]]
    if not any(series):
        return Raw("")
    grid = data[axis]["grid"]
    top = max(grid[-1], 1, *(b for b, _ in marks))  # a run that ended before a mark holds its answer there
    values = [v for pts in series for p in pts for v in (p["metrics"][metric]["ci_low"],
                                                          p["metrics"][metric]["ci_high"])]
    lo, hi = min(0.0, *values), max(1.0, *values)
    span = (hi - lo) or 1.0

    def x(b: float) -> float:
        return LEFT + b / top * (W - LEFT - RIGHT)

    def y(v: float) -> float:
        return TOP + (hi - v) / span * (H - TOP - BOTTOM)

    base = H - BOTTOM
    axes = [h("line", {"x1": LEFT, "y1": base, "x2": W - RIGHT, "y2": base, "stroke": "#98a2b3"}),
            h("line", {"x1": LEFT, "y1": TOP, "x2": LEFT, "y2": base, "stroke": "#98a2b3"})]
    for t in _ticks(top):
        axes.append(h("text", {"x": f"{x(t):.1f}", "y": base + 14, "text-anchor": "middle", "font-size": 11,
                               "fill": "#667085"}, f"{t:,}"))
    for v in sorted({lo, hi, (lo + hi) / 2}):
        axes.append(h("text", {"x": LEFT - 6, "y": f"{y(v) + 4:.1f}", "text-anchor": "end", "font-size": 11,
                               "fill": "#667085"}, f"{v:g}"))
    axes.append(h("text", {"x": (LEFT + W - RIGHT) / 2, "y": H - 4, "text-anchor": "middle", "font-size": 11,
                           "fill": "#667085"}, f"budget: {AXIS_WORDS[axis]}"))
    for budget, label in marks:
        at, left = x(budget), x(budget) > (LEFT + W - RIGHT) / 2  # the label on the side with room
        axes.append(h("g", {"class": "curve-mark", "data-budget": budget},
                      h("line", {"x1": f"{at:.1f}", "y1": TOP, "x2": f"{at:.1f}", "y2": base, "stroke": "#344054",
                                 "stroke-dasharray": "2 3"}),
                      h("text", {"x": f"{at - 4 if left else at + 4:.1f}", "y": TOP + 10, "font-size": 11,
                                 "text-anchor": "end" if left else "start", "fill": "#344054"}, label)))
    drawn = []
    for i, pts in enumerate(series):
        if not pts:
            continue
        colour = PALETTE[i % len(PALETTE)]
        est = [p["metrics"][metric] for p in pts]
        xs = [x(p["budget"]) for p in pts]
        end = xs[-1] if i < len(ends) and ends[i] is not None else x(top)  # a cut run's line ends there
        band = _band(xs, [y(e["ci_high"]) for e in est], [y(e["ci_low"]) for e in est], end)
        drawn.append(h("path", {"class": "curve-band", "data-run": i, "d": band, "fill": colour,
                                "fill-opacity": "0.15", "stroke": "none"}))
        drawn.append(h("path", {"class": "curve-line", "data-run": i,
                                "d": _steps(list(zip(xs, (y(e["mean"]) for e in est))), end), "fill": "none",
                                "stroke": colour, "stroke-width": 2,
                                "stroke-dasharray": "6 3" if i < len(dashed) and dashed[i] else None}))
        for p, px, e in zip(pts, xs, est):
            drawn.append(h("circle", {"cx": f"{px:.1f}", "cy": f"{y(e['mean']):.1f}", "r": 2.5, "fill": colour},
                           h("title", None, f"{names[i]}: {metric} {e['mean']:.3f} [{e['ci_low']:.3f}, "
                                            f"{e['ci_high']:.3f}] at {spent(p['budget'], axis)} (n={e['n']})")))
    return h("svg", {"class": "curve", "data-axis": axis, "xmlns": "http://www.w3.org/2000/svg", "width": W,
                     "height": H, "viewBox": f"0 0 {W} {H}", "role": "img",
                     "aria-label": f"{metric} against {axis}"}, axes, drawn)


def curve_section(data: dict[str, Any], states: Sequence[dict[str, Any]], metric: str,
                  names: Sequence[str]) -> Raw:
    """The two figures (against calls, against tokens) with a legend line per run; ``states``: :func:`summary`."""
    title = h("h2", None, f"{metric} against budget (anytime curves, 95% bootstrap bands)")
    if not any(s["recorded"] for s in states):
        return h("div", {"class": "curves"}, title, h("p", {"class": "note"}, f"No curve: {NOT_RECORDED}."))
    dashed = [s["exact"] is False for s in states]
    legend = []
    for i, (name, state) in enumerate(zip(names, states)):
        line = swatch(PALETTE[i % len(PALETTE)], dashed[i])
        words = "; ".join(state["notes"]) or "exact at every call budget, known at every budget"
        count = state["examples"]
        legend.append(h("li", None, line, " ", h("b", None, name), f" ({count} example{'s' if count != 1 else ''}): ",
                        words))
    return h("div", {"class": "curves"}, title,
             h("p", {"class": "note"}, "Each example's metric at a budget is what its run had answered by then "
                                       "(its last recorded point at or under the budget); a line ends where the "
                                       "run's budget cut some example. Dashed: exact only at batch boundaries."),
             [curve_svg(data, axis, metric, names, ends=[s["horizon"][axis] for s in states], dashed=dashed)
              for axis in AXES],
             h("ul", {"class": "legend"}, legend))


def swatch(colour: str, dashed: bool) -> Raw:
    """A legend's line in its run's colour (SVG attributes: a ``style=`` one would be refused by the
    card's Content-Security-Policy)."""
    return h("svg", {"width": 24, "height": 8, "aria_hidden": "true"},
             h("line", {"x1": 0, "y1": 4, "x2": 24, "y2": 4, "stroke": colour, "stroke_width": 3,
                        "stroke_dasharray": "4 3" if dashed else None}))
