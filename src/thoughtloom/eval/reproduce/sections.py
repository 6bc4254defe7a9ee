"""The card's optional sections, each shown only where its data are: the Overall note under the
length strata (HGOT Table 2), the judged score by revision step (ThoughtSculpt Fig. 4) and the
suite's grid searches (DecomP's K grid, Appendix A.2; HGOT's weight grid, Table 9).

Blocks as :mod:`.render` writes them (``("h3", text)``, ``("p", text)``, ``("table", headers,
rows)``), so the Markdown and the HTML say the same.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..stats import Estimate
from .card import CellResult, GridChoice

#: What the strata table's Overall is (HGOT's Table 2), said under it.
OVERALL = ("Overall is Table 2's: the Long, Medium and Short means weighted by each stratum's size in the "
           "loaded slice (the task's report, HGOT §4), with a stratified bootstrap interval (examples resampled "
           "within each stratum; none while a stratum has one example, whose spread cannot be resampled); it is "
           "not the plain mean over the examples that ran (the results table above), which leans to whichever "
           "strata ran more of their share.")


def _pct(e: Estimate | None) -> str:
    if e is None or e.n == 0 or math.isnan(e.mean):
        return "–"
    return f"{100 * e.mean:.1f} [{100 * e.ci_low:.1f}, {100 * e.ci_high:.1f}] (n={e.n})"


def per_step(cells: Sequence[CellResult], metric: str) -> list[Any]:
    """Fig. 4's view: the judged score by revision step for each method whose records carry one;
    nothing when none does."""
    stepped = [c for c in cells if c.steps]
    if not stepped:
        return []
    depth = max(len(c.steps) for c in stepped)
    rows = [[c.method.label] + [_pct(c.steps[s]) if s < len(c.steps) else "–" for s in range(depth)]
            for c in stepped]
    headers = ["method"] + ["step 0 (given)"] + [f"step {s}" for s in range(1, depth)]
    return [("h3", f"{metric} by revision step (Fig. 4)"),
            ("table", headers, rows),
            ("p", "Each step's figure is the model judge's mean score (% [95% CI], n the examples judged at that "
                  "step) of the best-scored outline within that many revisions of the given one "
                  "(details.step_best, judged after the run: details.judge.steps); a search that ended shallower "
                  "keeps its last step's outline at later steps. Only tree searches record steps; the other "
                  "methods are in the results table.")]


def grid_search(choices: Sequence[GridChoice]) -> list[Any]:
    """Each grid search on this dataset: every point's primary metric and the one chosen."""
    if not choices:
        return []
    metric = choices[0].dataset.primary
    rows = []
    for g in choices:
        for c in g.points:
            settings = ", ".join(f"{k}={v}" for k, v in c.method.settings.items())
            mark = "chosen" if g.chosen is not None and c.method.id == g.chosen.method.id else ""
            rows.append([g.family, c.method.label, settings or "–",
                         _pct(c.metrics.get(metric)) if c.n else "not run", mark])
    return [("h3", f"Grid search: {metric} at each point, chosen on these questions"),
            ("table", ["grid", "point", "settings", f"{metric} % [95% CI]", "choice"], rows),
            ("p", "The chosen point has the highest mean on these questions (the first listed on a tie). The "
                  "choice is made here and used elsewhere: it is a setting picked on held-out questions, not a "
                  "result, and points whose intervals overlap are not told apart at this n.")]
