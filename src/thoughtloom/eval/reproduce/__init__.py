"""Reproduction suites: each paper's comparison run at equal budgets, estimated before it
spends, and summed up in a card with confidence intervals and judged claims.

- :mod:`.suites` -- the suite files (``suites/*.toml``, package data), read and checked
- :mod:`.run` -- the plan of cells, running them through the eval runner, the dry-run pilot
  and estimate, the sittings log
- :mod:`.card` -- what the card says, from the results folders alone (no model calls)
- :mod:`.render` -- the card as Markdown and HTML
"""

from ..assembly import RunSpec
from .card import CardData, collect
from .render import write_card
from .run import Cell, SuitePlan, estimate, load_slices, make_plan, pilot, run_cells
from .suites import Suite, available, load

__all__ = ["CardData", "Cell", "RunSpec", "Suite", "SuitePlan", "available", "collect", "estimate", "load",
           "load_slices", "make_plan", "pilot", "run_cells", "write_card"]
