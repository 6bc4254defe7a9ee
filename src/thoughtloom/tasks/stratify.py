"""Length strata, as the HGOT paper builds and reports them (§4, Table 2).

A question's length is its number of tokens (:func:`question_length`, as the authors'
``data.py`` counts with NLTK's ``word_tokenize``). Over a whole file, questions longer than
the ``long_pct`` percentile are *long*, those at or below the ``short_pct`` percentile
*short*, the rest *medium* (HGOT: 98 / 2 for HotpotQA, 98.5 / 1.5 for FEVER and
Open-SQuAD). Each stratum is then capped at ``round(N * p)`` questions (p = 2% or 1.5%; at
least :data:`MIN_STRATUM`) by a random draw (:func:`select_strata`): "about 1.5% of FEVER and Open-SQuAD examples and 2% of
HotPotQA examples are randomly selected" from the medium stratum, and the tails are cut to
the same size when length ties make them larger.

``overall`` (:func:`stratified_means`) is Table 2's weighted average of the three strata's
means, each weighted by its size in the benchmark slice (``sizes``), not by how many of its
questions happened to run.
"""

from __future__ import annotations

import random
import re
from typing import Mapping, Sequence

import numpy as np

# a word_tokenize-like split: contractions (n't, 's), numbers with thousands commas, words
# joined by - – / . :, then any other symbol alone; an abbreviation keeps its period
_TOKEN = re.compile(r"n't\b|'\w*|\w+(?=n't\b)|\d+(?:,\d+)+|\w+(?:[-\u2013/.:]\w+)*|[^\w\s]")
_WORD = re.compile(r"\w+(?:\.\w+)*")


def question_length(text: str) -> int:
    """Tokens in ``text`` as NLTK's ``word_tokenize`` counts them, approximately: punctuation
    and contractions are tokens of their own, a period stays with an abbreviation ("Jr.",
    "U.S.", "A.") unless it ends the text. On the ``Question Length`` column of the paper's
    CSVs this gives the same count for 96.5% of HotpotQA, 94.4% of FEVER and 99.0% of
    Open-SQuAD questions (the rest off by one or two)."""
    text = " ".join(text.split())
    end = len(text)
    out: list[str] = []
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok == "." and out and m.end() < end and _WORD.fullmatch(out[-1]) and (len(out[-1]) <= 3 or "." in out[-1]):
            out[-1] += "."
            continue
        out.append(tok)
    return len(out)


def length_strata(lengths: Sequence[int], *, long_pct: float = 98.0, short_pct: float = 2.0) -> list[str]:
    """'short' / 'medium' / 'long' per item: long above the ``long_pct`` percentile of
    ``lengths``, short at or below the ``short_pct`` one (the authors' ``>`` and ``<=``)."""
    if not lengths:
        return []
    arr = np.asarray(lengths, dtype=float)
    hi, lo = np.percentile(arr, long_pct), np.percentile(arr, short_pct)
    return ["long" if x > hi else "short" if x <= lo else "medium" for x in arr]


#: a file too small for the paper's share (the packaged samples, a test's few lines) keeps at
#: least this many questions per stratum (our choice: 2% of 30 questions would be one)
MIN_STRATUM = 10


def select_strata(strata: Sequence[str], fraction: float, seed: int = 42) -> list[int]:
    """Indices of the items evaluated: every stratum capped at ``round(N * fraction)`` items
    (at least :data:`MIN_STRATUM`) by a random draw under ``seed`` (the medium stratum; a tail
    only when ties make it larger), in their file order."""
    cap = max(MIN_STRATUM, round(len(strata) * fraction))
    keep: list[int] = []
    rng = random.Random(seed)
    for name in ("long", "medium", "short"):
        idx = [i for i, s in enumerate(strata) if s == name]
        keep.extend(idx if len(idx) <= cap else rng.sample(idx, cap))
    return sorted(keep)


def stratified_means(strata: Sequence[str], values: Sequence[float],
                     sizes: Mapping[str, int] | None = None) -> dict[str, Mapping[str, float]]:
    """Mean and count per stratum, and ``overall``: the strata's means weighted by ``sizes``
    (each stratum's size in the benchmark slice, Table 2's weighting), or by the counts that
    ran when no sizes are known. Only strata that ran enter the average."""
    out: dict[str, Mapping[str, float]] = {}
    total_n, weighted, weight = 0, 0.0, 0.0
    for name in ("long", "medium", "short"):
        xs = [v for s, v in zip(strata, values) if s == name]
        if xs:
            mean = sum(xs) / len(xs)
            out[name] = {"n": len(xs), "mean": mean}
            w = float(sizes.get(name, len(xs))) if sizes else float(len(xs))
            total_n += len(xs)
            weighted += w * mean
            weight += w
    out["overall"] = {"n": total_n, "mean": weighted / weight if weight else 0.0}
    return out
