"""Answer metrics: exact match and token F1 with SQuAD normalization, numeric match."""

from __future__ import annotations

import re
import string
from collections import Counter
from fractions import Fraction

from ..core.bounded import to_fraction
from ..core.errors import ParseError

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_text(s: str) -> str:
    """SQuAD normalization: lower case, drop punctuation and articles, squash spaces."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def exact_match(prediction: str | None, gold: str | list[str]) -> float:
    golds = [gold] if isinstance(gold, str) else list(gold)
    p = normalize_text(prediction or "")
    return float(any(p == normalize_text(g) for g in golds))


def token_f1(prediction: str | None, gold: str | list[str]) -> float:
    """Best token-level F1 against any gold answer (SQuAD's definition)."""
    golds = [gold] if isinstance(gold, str) else list(gold)
    p_toks = normalize_text(prediction or "").split()
    best = 0.0
    for g in golds:
        g_toks = normalize_text(g).split()
        if not p_toks or not g_toks:
            best = max(best, float(p_toks == g_toks))
            continue
        common = Counter(p_toks) & Counter(g_toks)
        same = sum(common.values())
        if same == 0:
            continue
        precision, recall = same / len(p_toks), same / len(g_toks)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


# -- numbers -----------------------------------------------------------------

def parse_number(text: str) -> Fraction | None:
    """'1,234' -> 1234, '$18.50' -> 37/2, '3/4' -> 3/4; None if not a number."""
    t = text.replace("$", "").replace(",", "").replace(" ", "").rstrip(".")
    try:
        if "/" in t:
            num, den = t.split("/", 1)
            value = to_fraction(num) / to_fraction(den)
        else:
            value = to_fraction(t)
    except (ParseError, ZeroDivisionError):  # not a number, or over MAX_DIGITS digits
        return None
    return value


def format_number(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)  # parse_number bounds the digits, so str() is safe
    try:
        return f"{float(value):.6g}"
    except OverflowError:  # beyond float range (about 1e308): keep it exact
        return f"{value.numerator}/{value.denominator}"


def numbers_equal(prediction: str | None, gold: str, tol: float = 1e-6) -> float:
    if prediction is None:
        return 0.0
    p, g = parse_number(prediction), parse_number(gold)
    if p is None or g is None:
        return 0.0
    return float(abs(p - g) <= Fraction(tol) * max(1, abs(g)))  # exact: no float overflow
