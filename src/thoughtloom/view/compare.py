"""Runs side by side: :func:`compare_runs` and its HTML page.

Per run: each metric's mean with its 95% bootstrap interval, calls and
tokens per example, tokens per correct answer, wall time. Per pair of runs
(``b`` against ``a``, ``a`` the one named first): the paired difference
``b - a`` of each metric both have, over the examples both runs scored,
tested by :func:`thoughtloom.eval.inference.paired_test` (its interval,
p-value, test name and power figure; examples the task groups are
resampled as groups), and the verdict read after Holm's correction over
every difference of the comparison (``family``); and a note wherever the
two runs differ in task, data or model, or share only some of their
examples. Along the budget axis (:mod:`thoughtloom.eval.curves`): each
run's anytime curves on one shared grid (``curves``) and, at chosen
budgets (``at``), each run's metrics and each pair's paired differences
with their tests, descriptive (``"reading": "descriptive"``: extra looks,
no verdict). The result is one JSON-ready dict (``runs``, ``pairs``,
``curves``, ``at``);
``thoughtloom compare`` prints it, as a table or ``--json``, and
:func:`comparison_page` renders it.
"""

from __future__ import annotations

import itertools
import math
import os
from pathlib import Path
from typing import Any, Sequence

from ..eval.curves import NOT_RECORDED, Axis, RunCurves, differences_at, estimates_at
from ..eval.inference import judge_all, paired_test
from .curve_view import curve_data, curve_section, curves_of, spent, summary
from .figures import RunFigures, figures, scores
from .markup import Raw, content_security_policy, h, join, number, table
from .rundir import UNKNOWN, RunFolder


def _finite(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else round(value, 6)


def _estimate(e: Any) -> dict[str, Any]:
    """An estimate or a paired test as JSON (a test adds its p-value, names and power: ``mde``)."""
    return {k: _finite(v) if isinstance(v, float) else v for k, v in e.as_dict().items()}


def _run_entry(run: RunFolder, fig: RunFigures) -> dict[str, Any]:
    return {
        "path": str(run.path), "name": run.name, **{k: None if v == UNKNOWN else v for k, v in (
            ("strategy", run.strategy), ("task", run.task_name), ("model", run.model), ("data", run.data_identity()))},
        "n": fig.n, "complete": fig.complete,
        "primary_metric": fig.primary,
        "metrics": {m: _estimate(e) for m, e in fig.metrics.items()},
        "errors": fig.statuses["error"], "budget_stopped": fig.budget_stopped,
        "calls_per_example": _finite(fig.per_example("calls")),
        "tokens_per_example": _finite(fig.per_example("total_tokens")),
        "tokens_per_correct": _finite(fig.tokens_per_correct),
        "wall_s": _finite(fig.wall_s),
    }


def _notes(a: RunFolder, b: RunFolder, shared: int) -> list[str]:
    notes = []
    for what, x, y in (("task", a.task_name, b.task_name), ("data", a.data_identity(), b.data_identity()),
                       ("model", a.model, b.model)):
        if x != y:
            notes.append(f"different {what}: {x} vs {y}")
    if shared < max(len(a.records), len(b.records)):
        notes.append(f"{shared} shared examples (of {len(a.records)} and {len(b.records)})")
    return notes


def _missing(run: RunCurves, axis: Axis, budget: int) -> str:
    """Why a run has no value at ``budget``."""
    if not run.recorded:
        return NOT_RECORDED
    edge = run.horizon(axis)
    return f"no curve at {spent(budget, axis)}: known up to {spent(int(edge), axis)}" if edge >= 0 else \
        "no example with a readable trajectory"


def _at(anytime: list[RunCurves], figs: list[RunFigures], budgets: dict[Axis, Sequence[int]],
        replicates: int) -> list[dict[str, Any]]:
    """Each run's metrics and each pair's paired differences at each chosen budget."""
    out = []
    for axis, chosen in budgets.items():
        for budget in chosen:
            runs = []
            for curves, fig in zip(anytime, figs):
                found = estimates_at(curves, axis, budget, list(fig.metrics), replicates=replicates)
                runs.append({"metrics": {m: _estimate(e) for m, e in found.items()}} if found is not None
                            else {"metrics": None, "note": _missing(curves, axis, budget)})
            pairs = []
            for i, j in itertools.combinations(range(len(anytime)), 2):
                common = [m for m in figs[i].metrics if m in figs[j].metrics]
                found_diffs = differences_at(anytime[i], anytime[j], axis, [budget], common, replicates=replicates)
                pairs.append({"a": i, "b": j, "differences": {
                    d.metric: {**_estimate(d.test), "reading": "descriptive"} for d in found_diffs if d.test}})
            out.append({"axis": axis, "budget": budget, "runs": runs, "pairs": pairs})
    return out


def compare_runs(dirs: Sequence[str | Path], *, replicates: int = 10_000, at_calls: Sequence[int] = (),
                 at_tokens: Sequence[int] = (), curves: bool = True) -> dict[str, Any]:
    """The comparison of the runs in ``dirs`` (see the module docstring); ``at_calls`` and
    ``at_tokens``: the budgets to judge the pairs at; ``curves``: also draw each run's curves."""
    runs = [RunFolder.open(d) for d in dirs]
    figs = [figures(r, replicates=replicates) for r in runs]
    anytime = [curves_of(r) for r in runs]
    pairs, tests = [], []
    for (i, a), (j, b) in itertools.combinations(enumerate(runs), 2):
        shared_ids = set(a.records) & set(b.records)
        found = {}
        for metric in [m for m in figs[i].metrics if m in figs[j].metrics]:
            found[metric] = paired_test(scores(a, metric), scores(b, metric),
                                        groups={**a.groups(), **b.groups()}, replicates=replicates)
            tests.append(found[metric])
        pairs.append({"a": i, "b": j, "a_name": a.name, "b_name": b.name, "shared": len(shared_ids),
                      "differences": found, "notes": _notes(a, b, len(shared_ids))})
    verdicts = iter(judge_all(tests, what="differences"))
    for pair in pairs:  # every difference judged after Holm's correction over all of them
        pair["differences"] = {m: {**_estimate(t), **_judgement(next(verdicts))}
                               for m, t in pair["differences"].items()}
    return {"runs": [{**_run_entry(r, f), "anytime": summary(c)} for r, f, c in zip(runs, figs, anytime)],
            "pairs": pairs, "confidence": 0.95, "alpha": 0.05,
            "difference": "b - a over the examples both runs scored (paired: exact McNemar for 0/1 scores, "
                          "sign-flip permutation otherwise; verdicts after Holm's correction over every "
                          "difference at the full budget)",
            "curves": curve_data(anytime, [list(f.metrics) for f in figs], replicates=replicates) if curves and any(
                c.recorded for c in anytime) else None,
            "at": _at(anytime, figs, {"calls": at_calls, "tokens": at_tokens}, replicates)}


def _judgement(j: Any) -> dict[str, Any]:
    if j is None:
        return {"verdict": "inconclusive", "reason": "no example both runs scored", "p_adjusted": 1.0, "family": 0}
    return {**j.as_dict(), "p_adjusted": _finite(j.p_adjusted)}


def interval(e: dict[str, Any], digits: int = 3) -> str:
    """``mean [low, high]`` of an estimate dict, or a dash when it has no examples."""
    if not e.get("n") or e.get("mean") is None:
        return "–"
    return f"{e['mean']:.{digits}f} [{e['ci_low']:.{digits}f}, {e['ci_high']:.{digits}f}]"


def signed(e: dict[str, Any], digits: int = 3) -> str:
    if not e.get("n") or e.get("mean") is None:
        return "–"
    return f"{e['mean']:+.{digits}f} [{e['ci_low']:+.{digits}f}, {e['ci_high']:+.{digits}f}]"


def said(d: dict[str, Any]) -> str:
    """A difference with its p-value and verdict (or "descriptive" at a chosen budget)."""
    p = d.get("p_value")
    tail = [f"p = {p:.3g}" if isinstance(p, (int, float)) else ""]
    if "verdict" in d:
        tail.append(d["verdict"] + (f": {d['reason']}" if d["verdict"] == "inconclusive" else ""))
    else:
        tail.append(d.get("reading", ""))
    return signed(d) + f" ({', '.join(t for t in tail if t)})"


def comparison_page(result: dict[str, Any], out: Path) -> str:
    """The comparison as one HTML page written at ``out``; each run links to its report."""
    style = ("body{font:14px/1.45 system-ui,sans-serif;margin:20px auto;max-width:1200px;padding:0 20px}"
             "table{border-collapse:collapse}th,td{border:1px solid #d0d5dd;padding:3px 8px;text-align:left}"
             "th{background:#f5f6f8}.note{color:#667085}")
    runs = result["runs"]
    metrics = list(dict.fromkeys(m for r in runs for m in r["metrics"]))
    rows = []
    for r in runs:
        report = Path(r["path"]) / "report.html"
        link = os.path.relpath(report, out.parent) if report.exists() else None
        rows.append([h("a", {"href": link}, r["name"]) if link else r["name"], r["strategy"], r["task"], r["model"],
                     str(r["n"]), *[interval(r["metrics"].get(m, {})) for m in metrics],
                     number(r["calls_per_example"], 1), number(r["tokens_per_example"], 0),
                     number(r["tokens_per_correct"], 0), number(r["wall_s"], 1)])
    pair_rows = [[f"{p['b_name']} − {p['a_name']}", str(p["shared"]),
                  *[said(p["differences"][m]) if m in p["differences"] else "–" for m in metrics],
                  "; ".join(p["notes"])] for p in result["pairs"]]
    body = h("body", None, h("h1", None, "Runs compared"),
             h("p", {"class": "note"}, "Means with 95% bootstrap intervals over examples; differences are "
                                       "paired over the examples both runs scored (b − a: the later run minus "
                                       "the earlier), each with its test's p-value and the verdict after Holm's "
                                       "correction over every difference here; at chosen budgets, descriptive."),
             table(["run", "strategy", "task", "model", "n", *metrics, "calls/ex", "tokens/ex", "tokens/correct",
                    "wall s"], rows),
             h("h2", None, "Paired differences"),
             table(["pair", "shared", *metrics, "notes"], pair_rows) if pair_rows else h("p", None, "One run only."),
             _budget_section(result, metrics))
    head = h("head", None, h("meta", {"charset": "utf-8"}), content_security_policy(styles=[style]),
             h("title", None, "thoughtloom comparison"),
             h("style", None, Raw(style)))
    return "<!DOCTYPE html>\n" + h("html", {"lang": "en"}, head, body) + "\n"


def _budget_section(result: dict[str, Any], metrics: list[str]) -> Raw:
    """The runs' curves (the first run's primary metric) and the table of the chosen budgets."""
    runs = result["runs"]
    names = [r["name"] for r in runs]
    primary = runs[0]["primary_metric"] if runs else ""
    drawn = curve_section(result["curves"] or {}, [r["anytime"] for r in runs], primary, names)
    rows = []
    for at in result["at"]:
        where = spent(at["budget"], at["axis"])
        for r, entry in zip(runs, at["runs"]):
            cells = [interval(entry["metrics"].get(m, {})) for m in metrics] if entry["metrics"] is not None \
                else [entry["note"], *["" for _ in metrics[1:]]]
            rows.append([where, r["name"], *cells])
        for p in at["pairs"]:
            rows.append([where, f"{names[p['b']]} − {names[p['a']]}",
                         *[said(p["differences"][m]) if m in p["differences"] else "–" for m in metrics]])
    chosen = [h("h2", None, "At chosen budgets"), table(["budget", "run or pair", *metrics], rows)] if rows else []
    return join(drawn, chosen)
