"""Uncertainty of one run's figures: the mean of per-example scores with a bootstrap interval.

One place for the per-run intervals that `compare`, `view` and the reproduction
cards print, so that every "0.62 [0.48, 0.75]" in the product means the same thing:

- :func:`mean_ci` — the mean of per-example scores with a percentile bootstrap
  interval over examples. With several seeds (a runs × examples matrix) each
  bootstrap replicate resamples examples *and* seeds, so seed-to-seed noise
  widens the interval instead of being averaged away.

A difference between two runs, its test and its verdict are
:mod:`thoughtloom.eval.inference`'s (exact paired tests, Holm's correction,
power figures), never an interval read here.

Resampling is seeded so a report is reproducible; 10,000 replicates keep the
Monte Carlo error of a 95% bound well under a percentage point.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

DEFAULT_REPLICATES = 10_000


@dataclass(frozen=True)
class Estimate:
    """A mean with its ``confidence`` bootstrap interval over ``n`` examples."""

    mean: float
    ci_low: float
    ci_high: float
    n: int
    confidence: float = 0.95

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.mean:.3f} [{self.ci_low:.3f}, {self.ci_high:.3f}] (n={self.n})"


def _finite(values: Any) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(array)):
        raise ValueError("scores must be finite numbers (an unscored example is 0, not NaN)")
    return array


def mean_ci(values: Sequence[float] | Sequence[Sequence[float]], *, confidence: float = 0.95,
            replicates: int = DEFAULT_REPLICATES, seed: int = 0) -> Estimate:
    """Mean and bootstrap interval of per-example scores.

    ``values`` is one score per example, or one row per seed (every row the
    same examples in the same order). An empty input gives NaNs with ``n=0``.
    """
    matrix = _finite(values)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    if matrix.ndim != 2:
        raise ValueError("values must be a list of scores or a list of per-seed score lists")
    seeds, n = matrix.shape
    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0, confidence)
    rng = np.random.default_rng(seed)
    example_draws = rng.integers(0, n, size=(replicates, n))
    if seeds == 1:
        boot = matrix[0][example_draws].mean(axis=1)
    else:
        seed_draws = rng.integers(0, seeds, size=(replicates, seeds))
        # replicate r: rows seed_draws[r], columns example_draws[r]
        boot = np.array([matrix[np.ix_(s, e)].mean() for s, e in zip(seed_draws, example_draws)])
    low, high = _percentiles(boot, confidence)
    return Estimate(float(matrix.mean()), low, high, n, confidence)


def _percentiles(boot: np.ndarray, confidence: float) -> tuple[float, float]:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(boot, [tail, 100 - tail])
    return float(low), float(high)
