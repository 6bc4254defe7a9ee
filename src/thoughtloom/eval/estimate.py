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
included. Seconds are the examples' own wall times divided by the
concurrency they ran at, so they assume the real run keeps it. A pilot
answered from the cache (an earlier eval made the same calls) took next to
no time, which says nothing of the examples still to run: the model time
stored with each cache entry it read (:func:`cached_time`) is added back,
scaled by how much the calls that did run overlapped (a batch of samples
runs at once), and :class:`CachedShare` says how much of the pilot that was.

An interval needs a spread to stand on: from fewer than
:data:`MIN_FOR_INTERVAL` examples there is none (NaN ends; ``None`` in
JSON), only the point estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .record import EvalRecord, number
from .results import TRACE, read_lines, read_records
from .stats import mean_ci

QUANTITIES = ("calls", "prompt_tokens", "completion_tokens", "seconds")
#: Fewer examples than this give a point estimate only: one or two say nothing of the spread.
MIN_FOR_INTERVAL = 3


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

    def as_dict(self, digits: int = 1) -> dict[str, float | None]:
        return {"estimate": _rounded(self.estimate, digits), "low": _rounded(self.low, digits),
                "high": _rounded(self.high, digits)}


def _rounded(value: float, digits: int) -> float | None:
    return None if math.isnan(value) else round(value, digits)


@dataclass(frozen=True)
class CachedShare:
    """How much of the pilot the cache answered, and the model time added back for it."""

    calls: int  # the pilot's calls answered from the cache
    of: int  # the pilot's calls in all
    model_s: float  # the model time stored with those entries
    overlap: float | None  # wall / model time of the calls that did run (None: none ran; 1 is assumed)

    def __add__(self, other: "CachedShare") -> "CachedShare":
        return CachedShare(self.calls + other.calls, self.of + other.of, self.model_s + other.model_s, None)

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "of": self.of, "model_s": round(self.model_s, 3),
                "overlap": None if self.overlap is None else round(self.overlap, 3)}


NO_CACHE_HITS = CachedShare(0, 0, 0.0, None)


ZERO = Span(0.0, 0.0, 0.0)


@dataclass(frozen=True)
class CostEstimate:
    """The cost of ``remaining`` examples, from ``sample`` done ones (``done`` of them in this slice)."""

    done: int
    remaining: int
    sample: int
    spans: Mapping[str, Span]  # one per QUANTITIES
    cached: CachedShare = NO_CACHE_HITS

    @property
    def has_interval(self) -> bool:
        return not any(math.isnan(self.spans[q].low) for q in QUANTITIES)

    def __add__(self, other: "CostEstimate") -> "CostEstimate":
        """Two parts of one run; their intervals add (a conservative total)."""
        return CostEstimate(self.done + other.done, self.remaining + other.remaining, self.sample + other.sample,
                            {q: self.spans[q] + other.spans[q] for q in QUANTITIES}, self.cached + other.cached)

    def money(self, price_in: float, price_out: float) -> Span:
        """Dollars at ``price_in`` / ``price_out`` per million prompt / completion tokens."""
        return (self.spans["prompt_tokens"].scaled(price_in / 1e6)
                + self.spans["completion_tokens"].scaled(price_out / 1e6))

    def as_dict(self, price_in: float | None = None, price_out: float | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {q: self.spans[q].as_dict() for q in QUANTITIES}
        out.update(examples_done=self.done, examples_remaining=self.remaining, examples_sampled=self.sample,
                   cached=self.cached.as_dict())
        if price_in is not None or price_out is not None:
            out["cost_usd"] = self.money(price_in or 0.0, price_out or 0.0).as_dict(digits=6)
        return out


NOTHING = CostEstimate(0, 0, 0, {q: ZERO for q in QUANTITIES})


def per_example(record: EvalRecord | Mapping[str, Any], concurrency: int = 1,
                cached_s: float = 0.0) -> dict[str, float]:
    """One record's calls, tokens and (concurrency-shared) seconds; ``cached_s``: the model time its
    cache hits took when they ran, added to its wall time."""
    record = EvalRecord.of(record)
    return {"calls": record.used("calls"), "prompt_tokens": record.used("prompt_tokens"),
            "completion_tokens": record.used("completion_tokens"),
            "seconds": (number(record.latency_s) + cached_s) / max(1, concurrency)}


def predict_total(values: Sequence[float], remaining: int, confidence: float = 0.95) -> Span:
    """The sum of ``remaining`` more values like ``values``, with a prediction interval.

    Two things are uncertain: the per-example mean (its bootstrap interval,
    :func:`..stats.mean_ci`, times ``remaining``) and how far ``remaining``
    fresh examples stray from it even when the mean is known (about
    ``z * sd * sqrt(remaining)``). Each side of the interval combines the two
    in quadrature; the low end is never below ``remaining`` times the
    smallest value seen (every example still to run costs at least what the
    cheapest one done did).
    """
    if remaining == 0:
        return ZERO
    if len(values) < MIN_FOR_INTERVAL:  # no spread to go on: the point estimate alone
        center = float(np.mean(values)) * remaining if len(values) else math.nan
        return Span(center, math.nan, math.nan)
    est = mean_ci(values, confidence=confidence)
    spread = NormalDist().inv_cdf((1 + confidence) / 2) * float(np.std(values, ddof=1)) * math.sqrt(remaining) \
        if len(values) > 1 else 0.0
    center = est.mean * remaining
    below = math.hypot((est.mean - est.ci_low) * remaining, spread)
    above = math.hypot((est.ci_high - est.mean) * remaining, spread)
    # the normal approximation can reach below what the run must still spend: each example still to run
    # is taken to cost at least what the cheapest one done did (not 0 tokens and 0 s while calls remain)
    floor = float(min(values)) * remaining
    return Span(center, min(center, max(floor, center - below)), center + above)


def extrapolate(records: Iterable[EvalRecord | Mapping[str, Any]], *, done: int, remaining: int, concurrency: int = 1,
                confidence: float = 0.95, cached: "CachedTime | None" = None) -> CostEstimate:
    """The cost of ``remaining`` more examples like ``records``.

    ``cached``: the model time the records' cache hits took when they ran
    (:func:`cached_time`), added back to their seconds. With no record to go
    on and work left, the estimate is unknown: NaN (the caller runs a pilot
    first, so this means every pilot example failed before its first call).
    """
    records = [EvalRecord.of(r) for r in records]
    extra = cached.extra_seconds if cached is not None else {}
    rows = [per_example(r, concurrency, extra.get(r.id, 0.0)) for r in records]
    spans = {q: predict_total([row[q] for row in rows], remaining, confidence) for q in QUANTITIES}
    return CostEstimate(done, remaining, len(rows), spans, cached.share if cached is not None else NO_CACHE_HITS)


@dataclass(frozen=True)
class CachedTime:
    """Per example, the seconds to add for its cache hits; and the share of the calls they were."""

    extra_seconds: Mapping[str, float]
    share: CachedShare


def cached_time(folders: Iterable[str | Path], ids: Iterable[str], model_seconds: Any) -> CachedTime:
    """What the cache hits of examples ``ids`` in ``folders`` would have cost had they run.

    Reads each folder's trace (``llm_call`` events: request hash, cached or
    not, latency) and asks ``model_seconds(keys)`` (a cache store's
    :meth:`~thoughtloom.lm.cache.CompletionStore.model_seconds`) for the
    time stored with the hits' entries. Calls of one example overlap when
    they go out together, so the stored times are scaled by the wall/model
    ratio of the examples whose calls all ran (at most 1; 1 where none did).
    """
    wanted = set(ids)
    hits: dict[str, list[str]] = {}
    ran_model: dict[str, float] = {}
    calls = 0
    for folder in folders:
        events, _bad, _dirty = read_lines(Path(folder) / TRACE)
        for e in events:
            example = str(e.get("example"))
            if e.get("type") != "llm_call" or example not in wanted:
                continue
            calls += 1
            if e.get("cached"):
                hits.setdefault(example, []).append(str(e.get("request_hash")))
            else:
                ran_model[example] = ran_model.get(example, 0.0) + number(e.get("latency_s"))
    stored = model_seconds([k for keys in hits.values() for k in keys]) if hits else {}
    walls = {i: number(r.latency_s) for folder in folders for i, r in read_records(folder).items()
             if i in wanted}
    clean = [i for i in ran_model if i not in hits and ran_model[i] > 0]
    overlap = min(1.0, sum(walls.get(i, 0.0) for i in clean) / sum(ran_model[i] for i in clean)) if clean else None
    factor = 1.0 if overlap is None else overlap
    extra = {i: factor * sum(stored.get(k, 0.0) for k in keys) for i, keys in hits.items()}
    share = CachedShare(sum(len(k) for k in hits.values()), calls, sum(extra.values()) / factor if factor else 0.0,
                        overlap)
    return CachedTime(extra, share)


def folder_estimate(out_dir: str | Path, ids: Sequence[str], *, concurrency: int = 1,
                    model_seconds: Any = None) -> CostEstimate:
    """The cost of the examples ``ids`` not yet in ``out_dir``, from those that are; ``model_seconds``
    (a cache store's lookup) adds back the time of the cache hits (:func:`cached_time`)."""
    wanted = set(ids)
    done = [r for i, r in read_records(out_dir).items() if i in wanted]
    cached = cached_time([out_dir], wanted, model_seconds) if model_seconds is not None else None
    return extrapolate(done, done=len(done), remaining=len(wanted) - len(done), concurrency=concurrency,
                       cached=cached)
