"""A batch cut to the calls the question's budget has left."""

from __future__ import annotations

from ...core.types import Request
from ..context import Context


def affordable(ctx: Context, requests: list[Request]) -> list[Request]:
    """As many of ``requests`` as the call budget has room for (at least
    one, so an empty budget raises BudgetExceeded): a last, partial batch
    still adds to the tree instead of being refused whole."""
    remaining = ctx.remaining_calls()
    if remaining is not None and 0 < remaining < len(requests):
        ctx.trace.emit("tree_budget_trim", wanted=len(requests), sent=remaining)
        return requests[:remaining]
    return requests
