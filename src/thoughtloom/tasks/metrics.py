"""Answer metrics: exact match and token F1 with SQuAD normalization, numeric match.

Each benchmark is scored by its official evaluation script's rules: SQuAD
(Open-SQuAD) by :func:`squad_f1`, HotpotQA and 2WikiMultihopQA by
:func:`hotpot_f1`, MuSiQue (and SQuAD v2.0) by :func:`token_f1`, all with
:func:`exact_match`; FEVER's label accuracy is its own (``tasks.factqa``).
"""

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
    """1 when the normalized prediction equals a normalized gold answer: every official
    script this package follows (SQuAD v1.1/v2.0, HotpotQA, 2Wiki, MuSiQue) defines EM so."""
    golds = [gold] if isinstance(gold, str) else list(gold)
    p = normalize_text(prediction or "")
    return float(any(p == normalize_text(g) for g in golds))


def _f1(p_toks: list[str], g_toks: list[str]) -> float:
    same = sum((Counter(p_toks) & Counter(g_toks)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p_toks), same / len(g_toks)
    return 2 * precision * recall / (precision + recall)


def _golds(gold: str | list[str]) -> list[str]:
    return [gold] if isinstance(gold, str) else list(gold)


def token_f1(prediction: str | None, gold: str | list[str]) -> float:
    """Best token-level F1 against any gold answer, the rule of SQuAD v2.0's official
    ``evaluate-v2.0.py`` and of MuSiQue's ``metrics/answer.py`` (StonyBrookNLP/musique):
    bags of normalized tokens; when either side has no token, 1 if both have none, else 0."""
    p_toks = normalize_text(prediction or "").split()
    best = 0.0
    for g in _golds(gold):
        g_toks = normalize_text(g).split()
        best = max(best, float(p_toks == g_toks) if not p_toks or not g_toks else _f1(p_toks, g_toks))
    return best


def squad_f1(prediction: str | None, gold: str | list[str]) -> float:
    """Best token F1 against any gold answer by SQuAD v1.1's official ``evaluate-v1.1.py``:
    as :func:`token_f1`, except that no shared token means 0 even when both sides are empty."""
    p_toks = normalize_text(prediction or "").split()
    return max((_f1(p_toks, normalize_text(g).split()) for g in _golds(gold)), default=0.0)


_YES_NO = ("yes", "no", "noanswer")


def hotpot_f1(prediction: str | None, gold: str | list[str]) -> float:
    """Best token F1 against any gold answer by HotpotQA's official ``hotpot_evaluate_v1.py``
    (2WikiMultihopQA's ``2wikimultihop_evaluate_v1.1.py`` keeps the rule and takes the best
    over the answer's aliases): when the normalized prediction or gold is "yes", "no" or
    "noanswer" and the two differ, F1 is 0 (no partial credit for "yes it is" against "yes");
    otherwise SQuAD v1.1's token F1."""
    p = normalize_text(prediction or "")
    best = 0.0
    for g in (normalize_text(x) for x in _golds(gold)):
        if p != g and (p in _YES_NO or g in _YES_NO):
            continue
        best = max(best, _f1(p.split(), g.split()))
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
