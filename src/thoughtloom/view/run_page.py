"""The run page: what ran (strategy, task, model, settings, n), how well
(metrics overall and per stratum with 95% bootstrap intervals), at what
cost (calls, tokens, cached share, wall and model time, errors and budget
stops), a plot of each example's score against the tokens it spent, the
run's anytime curves (:mod:`.curve_view`), and a sortable, filterable table
of the examples, each linking to its page."""

from __future__ import annotations

import json
import math
from typing import Any
from urllib.parse import quote

from .figures import STATUSES, RunFigures, status
from .curve_view import CURVE_REPLICATES, curve_data, curve_section, curves_of, summary
from .example_page import BY_RULE
from .markup import Raw, answer_text, clip, fold, h, number, table, text_block
from .rundir import RunFolder

#: summary.json keys that are figures, not settings.
_FIGURE_KEYS = {"n", "total", "complete", "metrics", "usage", "mean_latency_s", "this_run", "task_report",
                "task_report_error", "strategy", "task", "model", "identity", "step_problems"}


def example_href(example_id: str) -> str:
    return "#example=" + quote(example_id, safe="")


def run_page(run: RunFolder, fig: RunFigures, *, compare_href: str | None = None,
             replicates: int = CURVE_REPLICATES) -> Raw:
    done = f"{fig.n} of {fig.total}" if fig.total is not None else str(fig.n)
    state = "complete" if fig.complete else "incomplete (still running, or stopped early)"
    head = [h("h1", None, f"{run.strategy} on {run.task_name}"),
            h("p", {"class": "sub"}, f"model {run.model} · {done} examples, {state} · folder {run.path}"),
            h("p", None, h("a", {"href": compare_href}, "compare with the other runs")) if compare_href else ""]
    if run.skipped_lines:
        head.append(h("p", {"class": "note"}, f"{run.skipped_lines} unreadable lines in the run's files were "
                                              "skipped (a run still writing, or a damaged file)."))
    problems = h("ul", {"class": "problems"}, [h("li", None, line) for line in fig.problems]) if fig.problems else ""
    return h("section", {"id": "run"}, head, _cards(fig), problems, _settings(run), _metrics(fig), _plot(run, fig),
             _curves(run, fig, replicates), _examples(run, fig))


def _curves(run: RunFolder, fig: RunFigures, replicates: int) -> Raw:
    """The primary metric against calls and against tokens, as the run's trajectories give it."""
    curves = curves_of(run)
    data = curve_data([curves], [[fig.primary]], replicates=replicates) if curves.recorded else {}
    return curve_section(data, [summary(curves)], fig.primary, [run.name])


def _cards(fig: RunFigures) -> Raw:
    main = fig.metrics.get(fig.primary)
    cards = [(f"{fig.primary}", f"{main.mean:.3f}" if main and main.n else "–",
              f"95% CI [{main.ci_low:.3f}, {main.ci_high:.3f}]" if main and main.n else "no examples"),
             ("calls", number(int(fig.usage["calls"])), f"{number(fig.per_example('calls'), 1)} per example"),
             ("tokens", number(int(fig.usage["total_tokens"])),
              f"{number(int(fig.usage['prompt_tokens']))} prompt + {number(int(fig.usage['completion_tokens']))} "
              "completion"),
             ("cached", "–" if math.isnan(fig.cached_share) else f"{fig.cached_share:.0%}", "of the calls"),
             ("time", f"{number(fig.wall_s, 1)} s" if fig.wall_s is not None else "–",
              f"wall{f' ({fig.wall_note})' if fig.wall_note else ''}; "
              f"model {number(fig.usage['latency_s'], 1)} s, the sum of every call's time: calls that run "
              "at once overlap, so it can exceed the wall time"),
             ("errors", str(fig.statuses["error"]),
              f"{fig.budget_stopped} budget stops, {fig.truncated} cut off")]
    cards += [(k[2:].replace("_", " "), number(v), "from summary.json") for k, v in fig.extra_counts.items()]
    return h("div", {"class": "cards"}, [h("div", {"class": "card"}, h("span", None, name), h("b", None, big),
                                           h("span", None, small)) for name, big, small in cards])


def _interval(estimate: Any) -> str:
    if not estimate.n:
        return "–"
    return f"{estimate.mean:.3f} [{estimate.ci_low:.3f}, {estimate.ci_high:.3f}]"


def _metrics(fig: RunFigures) -> Raw:
    names = list(fig.metrics)
    rows = [["all", *[_interval(fig.metrics[m]) for m in names], str(fig.n)]]
    rows += [[s, *[_interval(by[m]) for m in names], str(next(iter(by.values())).n)] for s, by in fig.strata.items()]
    return h("div", None, h("h2", None, "Metrics (mean, 95% bootstrap CI over examples)"),
             table(["examples", *names, "n"], rows),
             h("p", {"class": "note"}, "Strata are the task's own (e.g. question length for HGOT's tasks).")
             if fig.strata else "")


def _settings(run: RunFolder) -> Raw:
    rows = [["strategy", run.strategy], ["task", run.task_name], ["model", run.model]]
    command = run.identity.get("command")
    if command:
        rows.append(["command", " ".join(map(str, command)) if isinstance(command, list) else str(command)])
    rows += [[key, str(run.identity[key])] for key in ("started", "updated") if run.identity.get(key)]
    for key, val in run.summary.items():
        if key in _FIGURE_KEYS or key.startswith("n_"):
            continue
        if key == "strategy_config" and isinstance(val, dict):
            val = ", ".join(f"{k}={v}" for k, v in val.items())
        rows.append([key, val if isinstance(val, str) else json.dumps(val, ensure_ascii=False, default=str)])
    extra = fold("run.json", text_block(json.dumps(run.identity, indent=1, ensure_ascii=False, default=str))) \
        if run.identity else ""
    report = run.summary.get("task_report")
    task_report = fold("the task's report (summary.json)", text_block(json.dumps(report, indent=1))) if report else ""
    return fold(f"settings: {len(rows)} recorded (data, limits, options...)",
                table(["setting", "value"], rows, class_="grid kv"), extra, task_report, class_="settings")


def _plot(run: RunFolder, fig: RunFigures) -> Raw:
    """Each example's primary score against its tokens (log scale), jittered, linked to its page."""
    points = [(rid, r.used("total_tokens"), r.score(fig.primary), status(r, fig.primary))
              for rid, r in run.records.items()]
    if not points:
        return Raw("")
    w, ht, left, bottom = 640, 220, 46, 30
    lo = math.log10(max(1.0, min(p[1] for p in points)))
    hi = math.log10(max(10.0, max(p[1] for p in points)))
    span = max(hi - lo, 1e-9)
    circles = []
    for i, (rid, tokens, value, state) in enumerate(points):
        x = left + (math.log10(max(tokens, 1.0)) - lo) / span * (w - left - 12)
        jitter = ((i * 37) % 11 - 5) * 1.6  # spread equal scores apart, the same way on every build
        y = 10 + (1 - min(max(value, 0.0), 1.0)) * (ht - bottom - 20) + jitter
        circles.append(h("a", {"href": example_href(rid)},
                         h("circle", {"cx": f"{x:.1f}", "cy": f"{y:.1f}", "r": 4, "class": state},
                           h("title", None, f"{rid}: {fig.primary} {value:.2f}, {tokens:.0f} tokens"))))
    axes = [h("line", {"class": "axis", "x1": left, "y1": ht - bottom, "x2": w - 6, "y2": ht - bottom}),
            h("line", {"class": "axis", "x1": left, "y1": 6, "x2": left, "y2": ht - bottom}),
            h("text", {"x": left - 6, "y": 14, "text-anchor": "end"}, "1"),
            h("text", {"x": left - 6, "y": ht - bottom - 6, "text-anchor": "end"}, "0"),
            h("text", {"x": left, "y": ht - 8}, f"{10 ** lo:.0f} tokens"),
            h("text", {"x": w - 6, "y": ht - 8, "text-anchor": "end"}, f"{10 ** hi:.0f} tokens (log scale)")]
    legend = h("p", {"class": "legend"}, f"{fig.primary} of each example against the tokens it spent; colour: ",
               ", ".join(f"{s} {fig.statuses[s]}" for s in STATUSES), ". Click a point to open the example.")
    return h("div", None, h("h2", None, "Score against tokens spent"),
             h("svg", {"class": "plot", "width": w, "height": ht, "viewBox": f"0 0 {w} {ht}", "role": "img",
                       "aria-label": "score against tokens"}, axes, circles), legend)


def _examples(run: RunFolder, fig: RunFigures) -> Raw:
    metrics = list(fig.metrics)
    ruled = run.checked_by_rule()
    head = ["id", "status", *metrics, "tokens", "calls", "seconds", "prediction", "gold"]
    numeric = {*metrics, "tokens", "calls", "seconds"}
    rows = []
    for rid, r in run.records.items():
        state = status(r, fig.primary)
        cells = [(h("a", {"href": example_href(rid)}, rid), rid), (state, state)]
        cells += [(number(r.score(m), 3), r.score(m)) for m in metrics]
        cells += [(number(int(r.used("total_tokens"))), r.used("total_tokens")),
                  (number(int(r.used("calls"))), r.used("calls")),
                  (number(r.latency_s, 2), r.latency_s or 0)]
        pred = "" if r.prediction is None else str(r.prediction)
        gold = BY_RULE if ruled else answer_text(r.gold)
        cells += [(clip(pred, 80), pred), (clip(gold, 60), gold)]
        rows.append(h("tr", {"data-status": state},
                      [h("td", {"data-v": v, "class": "clip" if i >= len(head) - 2 else None}, c)
                       for i, (c, v) in enumerate(cells)]))
    options = [h("option", {"value": ""}, "all")] + [h("option", {"value": s}, f"{s} ({fig.statuses[s]})")
                                                      for s in STATUSES]
    filters = h("div", {"class": "filters"},
                h("input", {"id": "filter-text", "type": "search", "placeholder": "filter by text"}),
                h("select", {"id": "filter-status"}, options), h("span", {"id": "filter-count", "class": "muted"}))
    return h("div", None, h("h2", None, "Examples"), filters,
             h("table", {"class": "grid", "id": "examples"},
               h("thead", None, h("tr", None, [h("th", {"data-numeric": c in numeric}, c) for c in head])),
               h("tbody", None, rows)))
