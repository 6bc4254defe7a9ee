"""Paired inference: whether run (or method) B beats A on the examples both scored.

The one place where ``compare``, the reproduction cards and the Python API
test a difference and read a verdict from it (docs/verdicts.md gives the
formulas, their sources and a worked example). A difference is always
``b - a`` over the example ids both sides scored, each example once (a
caller with several seeds averages each example's scores over its seeds
first, as the cards do).

- **0/1 scores, independent examples**: the exact McNemar test -- under "no
  difference" each discordant pair (one side right, the other wrong) favours
  B with chance 1/2, so the count of B's wins among the ``k`` discordant pairs
  is Binomial(k, 1/2); the two-sided p-value is twice the smaller tail
  (at most 1). The interval is Newcombe's (1998) method 10 for a difference
  of paired proportions: Wilson score limits for each side's proportion,
  combined with the phi correlation of the 2x2 table, which keeps its
  coverage at small n where a bootstrap's [-1, -1] does not.
- **graded scores** (or 0/1 scores averaged over seeds, or grouped
  examples): the paired sign-flip permutation test -- under "no difference"
  each paired difference is as likely to have had the other sign, so the
  p-value is the share of the ``2^m`` sign patterns of the ``m`` non-zero
  differences whose sum is at least as far from 0 as the observed one
  (enumerated exactly for m <= 16; past that, a seeded Monte Carlo of
  ``replicates`` patterns, ``(1 + hits) / (1 + replicates)``). The interval
  is the BCa bootstrap (Efron 1987): percentile limits moved by the
  bootstrap's median bias ``z0`` and the jackknife's acceleration ``a``.
- **grouped examples** (several questions over one context: a record's
  group, :meth:`thoughtloom.tasks.Task.group`): the unit of resampling is the
  group, not the example (Miller 2024, "clustered standard errors"): the
  sign-flip test flips each group's summed difference as one, the bootstrap
  draws whole groups, and the standard error is the cluster-robust one.

Every test says the smallest p-value it can give on these pairs
(:attr:`PairedTest.min_p`: ``2^(1-k)`` for McNemar on k discordant pairs,
``2^(1-m)`` for a sign flip on m non-zero units), so "inconclusive" can say
when n alone forbids a verdict. :func:`holm` corrects a family of p-values
(a card's claims, a comparison's differences) and :func:`judge` reads a
verdict from an adjusted p-value, with its reason in words.

The power figures are at a two-sided ``alpha`` = 0.05 and 80% power
(:attr:`PairedTest.mde`, the minimum detectable effect at this n;
:meth:`PairedTest.n_needed`, the n a given difference needs). Where the test
cannot reach ``alpha`` at all, there is no detectable effect (None). For
0/1 scores the MDE is exact and conditional on the ``k`` discordant pairs
seen: the smallest ``(2 pi - 1) * k / n`` such that McNemar's test rejects
with probability 0.8 when each discordant pair favours B with chance
``pi``. Otherwise it is Miller's (2024) normal form ``(z_0.975 + z_0.80) *
SE``, SE the (clustered) standard error of the mean difference. The n a
difference ``delta`` needs is Miller's ``(z_0.975 + z_0.80)^2 * v /
delta^2`` with ``v`` the variance per example: the observed share of
discordant pairs for 0/1 scores (at least ``|delta|``, which a difference
needs), else ``n * SE^2``.

Everything is numpy and the standard library (``statistics.NormalDist`` for
the normal quantiles); resampling is seeded, so a report repeats.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any, Literal, Mapping, Sequence

import numpy as np

Verdict = Literal["holds", "does not hold", "inconclusive"]

ALPHA = 0.05
POWER = 0.80
DEFAULT_REPLICATES = 10_000
#: Up to this many non-zero units the sign-flip test enumerates every sign pattern (2^16 = 65,536).
EXACT_UNITS = 16
_NORMAL = NormalDist()
#: z_{1 - alpha/2} + z_{power}: 1.96 + 0.84 = 2.80 at alpha 0.05 and 80% power.
POWER_Z = _NORMAL.inv_cdf(1 - ALPHA / 2) + _NORMAL.inv_cdf(POWER)

MCNEMAR = "exact McNemar (two-sided binomial on the discordant pairs)"
NEWCOMBE = "Newcombe's method 10 (Wilson score limits, paired)"
BCA = "BCa bootstrap"


@dataclass(frozen=True)
class PairedTest:
    """``mean(b - a)`` over ``n`` shared examples with its interval, the test of "no difference",
    and the power figures (the module docstring says how each is made)."""

    mean: float
    ci_low: float
    ci_high: float
    n: int
    p_value: float  # two-sided, before any correction
    test: str  # the test's name
    interval: str  # how the interval is made
    min_p: float  # the smallest p-value this test can give on these pairs
    wins: int  # examples where b scored more than a
    losses: int  # examples where b scored less
    units: int  # independent units: groups where examples are grouped, else n
    se: float  # the standard error of the mean difference (McNemar's null one, sqrt(k) / n, for 0/1 scores)
    mde: float | None = None  # the minimum detectable effect at 80% power (None: none is detectable here)
    confidence: float = 0.95

    @property
    def ties(self) -> int:
        return self.n - self.wins - self.losses

    @property
    def short(self) -> str:
        """The test in a few words, for a table cell."""
        if self.test == MCNEMAR:
            return f"exact McNemar, {self.wins + self.losses} discordant of {self.n}"
        if not self.test.startswith("paired sign-flip"):
            return self.test
        kind = "exact" if "(exact" in self.test else "Monte Carlo"
        return f"sign-flip, {kind}" + (f", over {self.units} groups" if self.units < self.n else "")

    def n_needed(self, difference: float) -> int | None:
        """Examples needed to detect a true ``difference`` with 80% power at alpha 0.05, at this design's
        variance per example (None where there is no spread or no difference)."""
        if not self.n or self.se <= 0 or not difference or not math.isfinite(difference):
            return None
        variance = self.n * self.se ** 2
        if self.test == MCNEMAR:  # the share of discordant pairs, which a difference cannot exceed
            variance = max(variance, abs(difference))
        return max(1, math.ceil(POWER_Z ** 2 * variance / difference ** 2))

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(ties=self.ties)
        return out


# -- tests --------------------------------------------------------------------------------------

#: Up to this many discordant pairs McNemar's tail is summed in exact integers; past it, in log space.
EXACT_PAIRS = 1000


def _half_pmf(k: int) -> np.ndarray:
    """Binomial(k, 1/2) probabilities of 0..k."""
    if k <= EXACT_PAIRS:  # comb(1000, 500) / 2^1000 and its neighbours are ordinary floats
        return np.array([math.comb(k, i) for i in range(k + 1)], dtype=float) / 2.0 ** k
    return np.exp(_log_comb(k) - k * math.log(2))


def _log_comb(k: int) -> np.ndarray:
    log_factorial = np.array([math.lgamma(i + 1) for i in range(k + 1)])
    return log_factorial[k] - log_factorial - log_factorial[::-1]


def mcnemar_p(wins: int, losses: int) -> float:
    """Two-sided exact McNemar p-value: twice the smaller Binomial(k, 1/2) tail, k = wins + losses."""
    k = wins + losses
    if k == 0:
        return 1.0
    if k <= EXACT_PAIRS:
        tail = sum(math.comb(k, i) for i in range(min(wins, losses) + 1)) / 2 ** k
    else:
        tail = float(_half_pmf(k)[: min(wins, losses) + 1].sum())
    return min(1.0, 2 * tail)


def mcnemar_mde(k: int, n: int, *, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """The smallest difference ``(2 pi - 1) * k / n`` that the exact McNemar test on ``k`` discordant pairs
    of ``n`` rejects with probability ``power``, each pair favouring B with chance ``pi`` (None: the
    test cannot reject at ``k``)."""
    if k == 0:
        return None
    tails = np.cumsum(_half_pmf(k))
    w = np.arange(k + 1)
    rejects = np.minimum(1.0, 2 * tails[np.minimum(w, k - w)]) <= alpha
    if not rejects.any():
        return None
    log_comb = _log_comb(k)

    def chance(pi: float) -> float:
        pi = min(pi, 1 - 1e-15)
        return float(np.exp(log_comb + w * math.log(pi) + (k - w) * math.log(1 - pi))[rejects].sum())

    low, high = 0.5, 1.0
    for _ in range(60):  # the power rises with pi above 1/2: bisect for the 80% point
        mid = (low + high) / 2
        low, high = (mid, high) if chance(mid) < power else (low, mid)
    return (2 * high - 1) * k / n


def sign_flip_p(units: Sequence[float], *, replicates: int = DEFAULT_REPLICATES, seed: int = 0) -> tuple[float, bool]:
    """Two-sided sign-flip p-value of ``sum(units)`` and whether it was enumerated exactly."""
    values = np.asarray(units, dtype=float)
    values = values[values != 0]
    m = values.size
    if m == 0:
        return 1.0, True
    observed = abs(values.sum())
    tolerance = 1e-9 * max(1.0, observed)  # a pattern equal to the observed sum counts, rounding aside
    if m <= EXACT_UNITS:
        signs = 1 - 2 * ((np.arange(2 ** m)[:, None] >> np.arange(m)) & 1)
        return float(np.mean(np.abs(signs @ values) >= observed - tolerance)), True
    rng = np.random.default_rng(seed)
    hits, left = 0, replicates
    while left:  # in chunks, so a large m does not hold replicates x m signs at once
        rows = min(left, max(1, 2_000_000 // m))
        signs = rng.choice(np.array([-1.0, 1.0]), size=(rows, m))
        hits += int(np.sum(np.abs(signs @ values) >= observed - tolerance))
        left -= rows
    return (1 + hits) / (1 + replicates), False


# -- intervals ----------------------------------------------------------------------------------

def wilson(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a proportion."""
    z = _NORMAL.inv_cdf(1 - (1 - confidence) / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def newcombe_paired(both: int, only_b: int, only_a: int, neither: int,
                    confidence: float = 0.95) -> tuple[float, float]:
    """Newcombe's (1998) method 10 interval for ``p_b - p_a`` from a paired 2x2 table: both right,
    only B right, only A right, neither."""
    n = both + only_b + only_a + neither
    p_b, p_a = (both + only_b) / n, (both + only_a) / n
    l_b, u_b = wilson(both + only_b, n, confidence)
    l_a, u_a = wilson(both + only_a, n, confidence)
    margins = (both + only_b) * (only_a + neither) * (both + only_a) * (only_b + neither)
    cross = both * neither - only_b * only_a
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    else:  # the phi coefficient, continuity-corrected when positive (Newcombe's phi-hat)
        phi = (cross - n / 2 if cross > 0 else cross) / math.sqrt(margins)
    diff = p_b - p_a
    low = diff - math.sqrt(max(0.0, (p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2))
    high = diff + math.sqrt(max(0.0, (p_a - l_a) ** 2 - 2 * phi * (p_a - l_a) * (u_b - p_b) + (u_b - p_b) ** 2))
    return max(-1.0, low), min(1.0, high)


def bca(sums: np.ndarray, sizes: np.ndarray, *, confidence: float = 0.95, replicates: int = DEFAULT_REPLICATES,
        seed: int = 0) -> tuple[float, float]:
    """BCa bootstrap interval of ``sum(sums) / sum(sizes)``, drawing whole units (examples, or groups
    of examples with their summed differences and sizes)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    theta = float(sums.sum() / sizes.sum())
    count = sums.size
    if count < 2 or np.allclose(sums / sizes, theta, rtol=0, atol=1e-12):
        return theta, theta
    rng = np.random.default_rng(seed)
    parts, left = [], replicates
    while left:  # in chunks, so many units do not hold replicates x units draws at once
        rows = min(left, max(1, 2_000_000 // count))
        draws = rng.integers(0, count, size=(rows, count))
        parts.append(sums[draws].sum(axis=1) / sizes[draws].sum(axis=1))
        left -= rows
    boot = np.concatenate(parts)
    below = (np.sum(boot < theta) + 0.5 * np.sum(boot == theta)) / replicates
    below = min(max(below, 1 / (replicates + 1)), replicates / (replicates + 1))
    z0 = _NORMAL.inv_cdf(below)
    jack = (sums.sum() - sums) / (sizes.sum() - sizes)  # each unit left out
    spread = jack.mean() - jack
    denominator = 6 * float(np.sum(spread ** 2)) ** 1.5
    accel = float(np.sum(spread ** 3)) / denominator if denominator > 0 else 0.0
    z = _NORMAL.inv_cdf(1 - (1 - confidence) / 2)

    def level(zq: float) -> float:
        shifted = z0 + zq
        bend = 1 - accel * shifted
        return _NORMAL.cdf(z0 + shifted / bend) if bend > 0 else _NORMAL.cdf(zq)

    low, high = np.quantile(boot, [level(-z), level(z)])
    return float(min(low, theta)), float(max(high, theta))


# -- the paired test ----------------------------------------------------------------------------

def _finite(values: list[float]) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(array)):
        raise ValueError("scores must be finite numbers (an unscored example is 0, not NaN)")
    return array


def _empty(confidence: float) -> PairedTest:
    nan = float("nan")
    return PairedTest(nan, nan, nan, 0, 1.0, "none (no example both sides scored)", "–", 1.0, 0, 0, 0, 0.0, None,
                      confidence)


def paired_test(a: Mapping[str, float], b: Mapping[str, float], *, groups: Mapping[str, str] | None = None,
                confidence: float = 0.95, replicates: int = DEFAULT_REPLICATES, seed: int = 0) -> PairedTest:
    """``b - a`` over the ids both scored, tested and bounded (see the module docstring).

    ``groups``: example id -> group (several questions over one context); an id without one is a
    group of its own. With no group of two or more shared examples, the examples are independent."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    shared = sorted(set(a) & set(b))
    if not shared:
        return _empty(confidence)
    sa, sb = _finite([a[i] for i in shared]), _finite([b[i] for i in shared])
    diffs = sb - sa
    n = diffs.size
    wins, losses = int(np.sum(diffs > 0)), int(np.sum(diffs < 0))
    mean = float(diffs.mean())
    keys = [str((groups or {}).get(i, f"\0{i}")) for i in shared]  # an ungrouped id is its own group
    order = {k: j for j, k in enumerate(dict.fromkeys(keys))}
    clustered = len(order) < n
    binary = bool(np.all(np.isin(sa, (0.0, 1.0))) and np.all(np.isin(sb, (0.0, 1.0))))
    if binary and not clustered:
        both = int(np.sum((sa == 1) & (sb == 1)))
        low, high = newcombe_paired(both, wins, losses, n - both - wins - losses, confidence)
        return PairedTest(mean, low, high, n, mcnemar_p(wins, losses), MCNEMAR, NEWCOMBE,
                          mcnemar_p(wins + losses, 0), wins, losses, n, math.sqrt(wins + losses) / n,
                          mcnemar_mde(wins + losses, n), confidence)
    index = np.array([order[k] for k in keys])
    sums = np.bincount(index, weights=diffs, minlength=len(order))
    sizes = np.bincount(index, minlength=len(order)).astype(float)
    p, exact = sign_flip_p(sums, replicates=replicates, seed=seed)
    m = int(np.sum(sums != 0))
    how = f"exact over all {2 ** m:,} sign patterns" if exact else \
        f"Monte Carlo, {replicates:,} of the 2^{m} sign patterns, seed {seed}"
    where = f", whole groups flipped ({len(order)} groups)" if clustered else ""
    low, high = bca(sums, sizes, confidence=confidence, replicates=replicates, seed=seed)
    residual = sums - mean * sizes  # cluster-robust (sandwich) standard error; the plain one without groups
    units = len(order)
    se = math.sqrt(float(np.sum(residual ** 2)) * units / (units - 1)) / n if units > 1 else 0.0
    min_p = min(1.0, 2.0 ** (1 - m))
    mde = POWER_Z * se if se > 0 and 2.0 ** (1 - units) <= ALPHA else None  # with every unit non-zero
    return PairedTest(mean, low, high, n, p, f"paired sign-flip permutation ({how}{where})",
                      BCA + (" over groups" if clustered else ""), min_p, wins, losses, units, se, mde, confidence)


# -- corrections and verdicts -------------------------------------------------------------------

def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's (1979) step-down adjusted p-values, in the order given: the i-th smallest of m is
    multiplied by ``m - i + 1``, kept at least as large as the one before it, and capped at 1."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class Judgement:
    """A verdict on "b beats a", the p-value it rests on after the correction, and why."""

    verdict: Verdict
    reason: str
    p_adjusted: float
    family: int  # the p-values corrected together (1: none)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _p(value: float) -> str:
    return f"{value:.2g}" if value < 0.01 else f"{value:.3g}"


def _design(test: PairedTest) -> str:
    if test.units < test.n:
        return f"n = {test.n} in {test.units} groups"
    if test.test == MCNEMAR:
        k = test.wins + test.losses
        return f"n = {test.n}" + (f", {k} discordant" if k != test.n else "")
    return f"n = {test.n}" + (f", {test.wins + test.losses} not tied" if test.ties else "")


def judge(test: PairedTest, p_adjusted: float | None = None, family: int = 1, *, what: str = "claims",
          alpha: float = ALPHA) -> Judgement:
    """"holds" / "does not hold" only where the (Holm-adjusted) p-value is at most ``alpha``; else
    "inconclusive", with the reason: the smallest p-value the design allows, or the p-value found."""
    adjusted = test.p_value if p_adjusted is None else p_adjusted
    if test.n == 0:
        return Judgement("inconclusive", "no example both sides scored", 1.0, family)
    holm_said = f"; {_p(adjusted)} after Holm's correction over {family} {what}" if family > 1 else ""
    if test.min_p > alpha:
        return Judgement("inconclusive", f"{_design(test)}: the smallest p-value possible is {_p(test.min_p)}",
                         adjusted, family)
    if adjusted > alpha:
        return Judgement("inconclusive", f"p = {_p(test.p_value)}{holm_said}: above {alpha:g}", adjusted, family)
    verdict: Verdict = "holds" if test.mean > 0 else "does not hold"
    return Judgement(verdict, f"p = {_p(test.p_value)}{holm_said}: at most {alpha:g}", adjusted, family)


def judge_all(tests: Sequence[PairedTest | None], *, what: str = "claims",
              alpha: float = ALPHA) -> list[Judgement | None]:
    """Each test judged after Holm's correction over the tests of the family that have examples
    (None stays None: nothing to test)."""
    live = [i for i, t in enumerate(tests) if t is not None and t.n]
    adjusted = dict(zip(live, holm([tests[i].p_value for i in live])))  # type: ignore[union-attr]
    return [None if t is None else judge(t, adjusted.get(i), max(len(live), 1), what=what, alpha=alpha)
            for i, t in enumerate(tests)]
