"""A reproduction card's figures: each dataset's methods' anytime curves, for ``card.html``.

Per dataset, the primary metric against calls, one step line per method
with its 95% bootstrap band (:func:`.curve_view.curve_svg`, on one budget
grid), from each cell's first seed over the examples the card's table
counts, with the budget :func:`thoughtloom.eval.reproduce.render.budget_mark`
names marked: the paper's where the suite declares it, else the suite's own
equal budget (the caption says which). The eval layer draws no SVG, so
``thoughtloom reproduce`` hands these to
:func:`~thoughtloom.eval.reproduce.render.write_card`.
"""

from __future__ import annotations

from ..eval.curves import JUDGED_METRIC, NOT_RECORDED
from ..eval.reproduce.card import CardData, model_judged
from ..eval.reproduce.render import budget_mark
from .curve_view import CURVE_REPLICATES, PALETTE, curve_data, curve_svg, horizon, swatch
from .markup import Raw, h


def card_figures(card: CardData, *, replicates: int = CURVE_REPLICATES) -> dict[str, Raw]:
    """Dataset id -> its figure (a note in its place where no cell has a trajectory)."""
    mark = budget_mark(card.plan)
    out = {}
    for d in card.plan.datasets:
        if d.id not in card.slices:
            continue
        cells = [c for c in card.cells if c.dataset.id == d.id and c.curves]
        drawn = [c for c in cells if c.curves[0].recorded and c.curves[0].examples]
        title = h("h3", None, f"{d.primary} against calls (anytime curves, 95% bootstrap bands)")
        if not drawn:
            why = ("no cell has run" if not cells else
                   JUDGED_METRIC if model_judged(d, d.primary) else NOT_RECORDED)
            out[d.id] = h("div", {"class": "curves"}, title, h("p", None, f"No curves: {why}."))
            continue
        runs = [c.curves[0] for c in drawn]
        data = curve_data(runs, [[d.primary]] * len(runs), replicates=replicates)
        dashed = [not r.exact for r in runs]
        svg = curve_svg(data, "calls", d.primary, [c.method.label for c in drawn],
                        ends=[horizon(r, "calls") for r in runs], dashed=dashed, marks=[mark] if mark else [])
        seeds = max(c.seeds for c in drawn)
        legend = [h("li", None, swatch(PALETTE[i % len(PALETTE)], dashed[i]), " ", h("b", None, c.method.label),
                    f" ({len(r.examples)} examples)" + ("; exact only at batch boundaries" if dashed[i] else ""))
                  for i, (c, r) in enumerate(zip(drawn, runs))]
        left = [c.method.label for c in cells if c not in drawn]
        where = ("the paper's budget as the suite declares it" if card.plan.suite.paper_budget else
                 "this card's own equal budget (the suite declares no paper budget)") if mark else None
        caption = ("Each example's score at a budget is what its run had answered by then; a line ends where "
                   "the run's budget cut some example. Dashed: exact only at batch boundaries."
                   + (f" The rule marks {where}." if where else "")
                   + (" Curves from each method's first seed." if seeds > 1 else "")
                   + (f" No curve ({NOT_RECORDED}): {', '.join(left)}." if left else ""))
        out[d.id] = h("div", {"class": "curves"}, title, svg, h("p", {"class": "note"}, caption),
                      h("ul", {"class": "legend"}, legend))
    return out

