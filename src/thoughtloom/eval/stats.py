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


def weighted_strata_ci(strata: Sequence[tuple[Sequence[float] | Sequence[Sequence[float]], float]], *,
                       confidence: float = 0.95, replicates: int = DEFAULT_REPLICATES, seed: int = 0) -> Estimate:
    """The strata's means averaged with weights, and a stratified bootstrap interval.

    ``strata``: per stratum, its per-example scores (or one row per seed, as :func:`mean_ci`
    takes them) and its weight, e.g. HGOT's Table 2 Overall, the Long / Medium / Short means
    weighted by each stratum's size in the benchmark slice rather than by how many of its
    questions ran. Each replicate resamples examples within every stratum on its own (a
    stratum's size is fixed by the design) and, with several seeds, the same seed draw for
    every stratum (a seed is one run over all of them). Strata with no examples are left out.
    A stratum of one example has no spread to resample (its every replicate is that example), so
    with one the interval is NaN: not computed, rather than narrower than the data allow.
    """
    parts = [(_finite(v), float(w)) for v, w in strata]
    parts = [(m if m.ndim == 2 else m[None, :], w) for m, w in parts]
    parts = [(m, w) for m, w in parts if m.shape[1] > 0]
    n = sum(m.shape[1] for m, _ in parts)
    total = sum(w for _, w in parts)
    if not parts or total <= 0:
        return Estimate(float("nan"), float("nan"), float("nan"), n, confidence)
    seeds = {m.shape[0] for m, _ in parts}
    if len(seeds) != 1:
        raise ValueError("every stratum needs the same number of seeds")
    (runs,) = seeds
    rng = np.random.default_rng(seed)
    seed_draws = rng.integers(0, runs, size=(replicates, runs)) if runs > 1 else None
    boot = np.zeros(replicates)
    for m, w in parts:
        draws = rng.integers(0, m.shape[1], size=(replicates, m.shape[1]))
        if seed_draws is None:
            means = m[0][draws].mean(axis=1)
        else:
            means = np.array([m[np.ix_(s, e)].mean() for s, e in zip(seed_draws, draws)])
        boot += w * means
    boot /= total
    low, high = _percentiles(boot, confidence)
    point = sum(w * float(m.mean()) for m, w in parts) / total
    if any(m.shape[1] < 2 for m, _ in parts):
        low = high = float("nan")
    return Estimate(point, low, high, n, confidence)
