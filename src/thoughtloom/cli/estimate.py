"""``--dry-run`` for ``eval`` and ``reproduce``: the options and the printed estimate.

The estimate itself is :mod:`thoughtloom.eval.estimate`; this module only
holds the shared flags and renders a :class:`CostEstimate` as text or JSON.
"""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path
from typing import Annotated, Any, Callable, Iterator, Mapping, Optional

import typer

from ..eval.estimate import MIN_FOR_INTERVAL, QUANTITIES, CostEstimate, Span
from ..lm import CompletionStore
from .render import out

DryRun = Annotated[bool, typer.Option(
    "--dry-run", help="Run a pilot of a few examples (kept, so the real run resumes past them) and print what "
                      "the rest will cost: LLM calls, tokens, wall time, with 95% intervals.")]
PilotSize = Annotated[int, typer.Option(
    "--pilot", min=1, help="Examples the dry run's pilot runs (per method in `reproduce`).")]
PriceIn = Annotated[Optional[float], typer.Option(
    "--price-in", min=0.0, help="Dry run: dollars per million prompt tokens, to print the money too.")]
PriceOut = Annotated[Optional[float], typer.Option(
    "--price-out", min=0.0, help="Dry run: dollars per million completion tokens.")]
AsJson = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]

DEFAULT_PILOT = 3
_LABELS = {"calls": "LLM calls", "prompt_tokens": "prompt tokens", "completion_tokens": "completion tokens",
           "seconds": "wall time"}


@contextlib.contextmanager
def stored_times(cache: Path, mode: str) -> Iterator[Callable[[Any], dict[str, float]] | None]:
    """The cache's lookup of stored model time (what its hits took when they ran), or None
    without a cache (``--no-cache``) or where the file is absent."""
    path = cache.expanduser()
    if mode == "off" or not path.is_file():
        yield None
        return
    store = CompletionStore(path)
    try:
        yield store.model_seconds
    finally:
        store.close()


def duration(seconds: float) -> str:
    if math.isnan(seconds):
        return "?"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def dollars(value: float) -> str:
    """Dollars to the cent, and below a cent to its first two significant digits ($0.0018, not $0.00)."""
    if math.isnan(value):
        return "?"
    if value == 0 or abs(value) >= 0.01:
        return f"${value:,.2f}"
    return f"${value:.{2 - math.floor(math.log10(abs(value))) - 1}f}"


def _amount(quantity: str, value: float) -> str:
    if quantity == "seconds":
        return duration(value)
    return "?" if math.isnan(value) else f"{value:,.0f}"


def _span(quantity: str, span: Span) -> str:
    if math.isnan(span.low):
        return f"{_amount(quantity, span.estimate)}  (no interval)"
    return f"{_amount(quantity, span.estimate)}  [{_amount(quantity, span.low)} – {_amount(quantity, span.high)}]"


def estimate_json(total: CostEstimate, price_in: float | None, price_out: float | None,
                  parts: Mapping[str, CostEstimate] | None = None) -> str:
    """``{"calls": {"estimate", "low", "high"}, "prompt_tokens": ..., "completion_tokens": ..., "seconds": ...,
    [cost_usd], examples_*, [cells]}`` for what is still to run."""
    doc = total.as_dict(price_in, price_out)
    if parts:
        doc["cells"] = {name: part.as_dict(price_in, price_out) for name, part in parts.items()}
    return json.dumps(doc, indent=2)


def print_estimate(total: CostEstimate, price_in: float | None, price_out: float | None,
                   parts: Mapping[str, CostEstimate] | None = None, as_json: bool = False) -> None:
    if as_json:
        out.print_json(estimate_json(total, price_in, price_out, parts))
        return
    if parts:
        for name, part in parts.items():
            out.print(f"  {name:<32} {part.done:>5} done  {part.remaining:>5} to run  "
                      f"calls {_span('calls', part.spans['calls'])}  time {_span('seconds', part.spans['seconds'])}",
                      highlight=False)
    interval = "with 95% intervals" if total.has_interval or total.remaining == 0 else "no intervals"
    out.print(f"[bold]still to run:[/] {total.remaining} example{'' if total.remaining == 1 else 's'} "
              f"({total.done} done; the estimate rests on {total.sample} of them, {interval})")
    for q in QUANTITIES:
        out.print(f"  {_LABELS[q]:<18} {_span(q, total.spans[q])}", highlight=False)
    if not total.has_interval and total.remaining:
        out.print(f"[yellow]no interval: fewer than {MIN_FOR_INTERVAL} examples done in a part say nothing of "
                  f"how much examples vary; run a pilot of {MIN_FOR_INTERVAL} or more (--pilot N)[/]")
    share = total.cached
    if share.calls:
        scaled = ("scaled by how much the calls that ran overlapped "
                  f"({share.overlap:.2f})" if share.overlap is not None else "as if they ran one after another")
        out.print(f"[dim]{share.calls} of the {share.of} calls done came from the cache; the wall time counts "
                  f"the {duration(share.model_s)} of model time stored with them, {scaled}[/]")
    if price_in is not None or price_out is not None:
        money = total.money(price_in or 0.0, price_out or 0.0)
        ends = "(no interval)" if math.isnan(money.low) else f"[{dollars(money.low)} – {dollars(money.high)}]"
        out.print(f"  {'money':<18} {dollars(money.estimate)}  {ends} at "
                  f"${price_in or 0:g} / ${price_out or 0:g} per million prompt / completion tokens "
                  "(cache hits would cost nothing)", highlight=False)
    out.print("[dim]calls and tokens count cache hits too; wall time assumes the same --concurrency[/]")
