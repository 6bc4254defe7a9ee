"""``--dry-run`` for ``eval`` and ``reproduce``: the options and the printed estimate.

The estimate itself is :mod:`thoughtloom.eval.estimate`; this module only
holds the shared flags and renders a :class:`CostEstimate` as text or JSON.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Mapping, Optional

import typer

from ..eval.estimate import QUANTITIES, CostEstimate, Span
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


def duration(seconds: float) -> str:
    if math.isnan(seconds):
        return "?"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def _amount(quantity: str, value: float) -> str:
    if quantity == "seconds":
        return duration(value)
    return "?" if math.isnan(value) else f"{value:,.0f}"


def _span(quantity: str, span: Span) -> str:
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
    out.print(f"[bold]still to run:[/] {total.remaining} examples ({total.done} done; the estimate rests on "
              f"{total.sample} of them, with 95% intervals)")
    for q in QUANTITIES:
        out.print(f"  {_LABELS[q]:<18} {_span(q, total.spans[q])}", highlight=False)
    if price_in is not None or price_out is not None:
        money = total.money(price_in or 0.0, price_out or 0.0)
        out.print(f"  {'money':<18} ${money.estimate:,.2f}  [${money.low:,.2f} – ${money.high:,.2f}] at "
                  f"${price_in or 0:g} / ${price_out or 0:g} per million prompt / completion tokens "
                  "(cache hits would cost nothing)", highlight=False)
    out.print("[dim]calls and tokens count cache hits too; wall time assumes the same --concurrency[/]")
