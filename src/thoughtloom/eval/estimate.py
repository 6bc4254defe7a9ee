"""What a run will still cost, extrapolated from the examples already done.

``--dry-run`` runs a pilot of a few examples into the real results folder
(through the completion cache, so the real run resumes past them and reuses
every call), then extrapolates from every record in the folder: the mean
per example of LLM calls, prompt and completion tokens and wall seconds,
times the examples still to run, with a prediction interval for that total
(:func:`predict_total`: the bootstrap interval of the mean,
:func:`..stats.mean_ci`, widened by the spread of that many fresh examples).
An interval from 3 examples is wide, and says so; a pilot whose examples
happen to cost alike gives a narrow one, which only a larger ``--pilot``
can check.

Calls count what the budget counts: every call a strategy makes, cache hits
included (a remaining example whose calls are cached costs its calls but no
model time). Seconds are the examples' own wall times divided by the
concurrency they ran at, so they assume the real run keeps it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .results import number, read_records
from .stats import mean_ci

QUANTITIES = ("calls", "prompt_tokens", "completion_tokens", "seconds")


@dataclass(frozen=True)
class Span:
    """An estimate with the low and high ends of its interval."""

    estimate: float
    low: float
    high: float

    def __add__(self, other: "Span") -> "Span":
        return Span(self.estimate + other.estimate, self.low + other.low, self.high + other.high)

    def scaled(self, factor: float) -> "Span":
        return Span(self.estimate * factor, self.low * factor, self.high * factor)

    def as_dict(self, digits: int = 1) -> dict[str, float]:
        return {"estimate": round(self.estimate, digits), "low": round(self.low, digits),
                "high": round(self.high, digits)}


ZERO = Span(0.0, 0.0, 0.0)


@dataclass(frozen=True)
class CostEstimate:
    """The cost of ``remaining`` examples, from ``sample`` done ones (``done`` of them in this slice)."""

    done: int
    remaining: int
    sample: int
    spans: Mapping[str, Span]  # one per QUANTITIES

    def __add__(self, other: "CostEstimate") -> "CostEstimate":
        """Two parts of one run; their intervals add (a conservative total)."""
        return CostEstimate(self.done + other.done, self.remaining + other.remaining, self.sample + other.sample,
                            {q: self.spans[q] + other.spans[q] for q in QUANTITIES})

    def money(self, price_in: float, price_out: float) -> Span:
        """Dollars at ``price_in`` / ``price_out`` per million prompt / completion tokens."""
        return (self.spans["prompt_tokens"].scaled(price_in / 1e6)
                + self.spans["completion_tokens"].scaled(price_out / 1e6))

    def as_dict(self, price_in: float | None = None, price_out: float | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {q: self.spans[q].as_dict() for q in QUANTITIES}
        out.update(examples_done=self.done, examples_remaining=self.remaining, examples_sampled=self.sample)
        if price_in is not None or price_out is not None:
            out["cost_usd"] = self.money(price_in or 0.0, price_out or 0.0).as_dict(digits=4)
        return out


NOTHING = CostEstimate(0, 0, 0, {q: ZERO for q in QUANTITIES})


def per_example(record: Mapping[str, Any], concurrency: int = 1) -> dict[str, float]:
    """One record's calls, tokens and (concurrency-shared) seconds."""
    usage = record.get("usage") if isinstance(record.get("usage"), dict) else {}
    return {"calls": number(usage.get("calls")), "prompt_tokens": number(usage.get("prompt_tokens")),
            "completion_tokens": number(usage.get("completion_tokens")),
            "seconds": number(record.get("latency_s")) / max(1, concurrency)}


def predict_total(values: Sequence[float], remaining: int, confidence: float = 0.95) -> Span:
    """The sum of ``remaining`` more values like ``values``, with a prediction interval.

    Two things are uncertain: the per-example mean (its bootstrap interval,
    :func:`..stats.mean_ci`, times ``remaining``) and how far ``remaining``
    fresh examples stray from it even when the mean is known (about
    ``z * sd * sqrt(remaining)``). Each side of the interval combines the two
    in quadrature; a total is never below 0.
    """
    if remaining == 0:
        return ZERO
    est = mean_ci(values, confidence=confidence)
    spread = NormalDist().inv_cdf((1 + confidence) / 2) * float(np.std(values, ddof=1)) * math.sqrt(remaining) \
        if len(values) > 1 else 0.0
    center = est.mean * remaining
    below = math.hypot((est.mean - est.ci_low) * remaining, spread)
    above = math.hypot((est.ci_high - est.mean) * remaining, spread)
    return Span(center, max(0.0, center - below), center + above)


def extrapolate(records: Iterable[Mapping[str, Any]], *, done: int, remaining: int, concurrency: int = 1,
                confidence: float = 0.95) -> CostEstimate:
    """The cost of ``remaining`` more examples like ``records``.

    With no record to go on and work left, the estimate is unknown: NaN
    (the caller runs a pilot first, so this means every pilot example failed
    before its first call).
    """
    rows = [per_example(r, concurrency) for r in records]
    spans = {q: predict_total([row[q] for row in rows], remaining, confidence) for q in QUANTITIES}
    return CostEstimate(done, remaining, len(rows), spans)


def folder_estimate(out_dir: str | Path, ids: Sequence[str], *, concurrency: int = 1) -> CostEstimate:
    """The cost of the examples ``ids`` not yet in ``out_dir``, from those that are."""
    wanted = set(ids)
    done = [r for i, r in read_records(out_dir).items() if i in wanted]
    return extrapolate(done, done=len(done), remaining=len(wanted) - len(done), concurrency=concurrency)
