"""Length stratification, as the HGOT paper reports results.

Questions longer than the ``long_pct`` percentile of question length (in
words) are *long*, shorter than the ``short_pct`` percentile *short*, the rest
*medium*. HGOT uses 98.5 / 1.5 for FEVER and Open-SQuAD and 98 / 2 for
HotpotQA. ``overall`` weights each stratum's mean by its size.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np


def length_strata(lengths: Sequence[int], *, long_pct: float = 98.0, short_pct: float = 2.0) -> list[str]:
    """'short' / 'medium' / 'long' per item, by percentile thresholds of ``lengths``."""
    if not lengths:
        return []
    arr = np.asarray(lengths, dtype=float)
    hi, lo = np.percentile(arr, long_pct), np.percentile(arr, short_pct)
    return ["long" if x > hi else "short" if x < lo else "medium" for x in arr]


def question_length(text: str) -> int:
    return len(text.split())


def stratified_means(
    strata: Sequence[str], values: Sequence[float]
) -> dict[str, Mapping[str, float]]:
    """Mean and count per stratum plus the size-weighted ``overall``."""
    out: dict[str, Mapping[str, float]] = {}
    total_n, total = 0, 0.0
    for name in ("long", "medium", "short"):
        xs = [v for s, v in zip(strata, values) if s == name]
        if xs:
            out[name] = {"n": len(xs), "mean": sum(xs) / len(xs)}
            total_n += len(xs)
            total += sum(xs)
    out["overall"] = {"n": total_n, "mean": total / total_n if total_n else 0.0}
    return out
