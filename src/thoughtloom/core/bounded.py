"""Bounded readers for untrusted text: numbers, nesting, JSON, length.

Model replies can break Python's own limits: ``int()`` and ``str()`` refuse
numbers over 4,300 digits (``ValueError``), ``float("1e400")`` is
``inf``, a few hundred nested brackets exhaust the recursion limit of
``json.loads`` or a recursive-descent parser, and a backtracking regex over
a 40k-character line can take seconds. Every parser of model text reads
through these helpers, which check the bound first and raise
:class:`ParseError` (a counted, traced, per-example event; rule 8), never a
built-in error:

* :func:`clip` cuts text to :data:`MAX_PARSE_CHARS` before regexes read it;
* :func:`to_int`, :func:`to_fraction` refuse more than :data:`MAX_DIGITS`
  digits; :func:`to_float` refuses non-finite values (``inf``, ``nan``,
  ``1e400``);
* :func:`check_depth` refuses nesting deeper than :data:`MAX_DEPTH`;
* :func:`loads_json` is ``json.loads`` with all of the above (the one JSON
  decoder for model text; :func:`thoughtloom.lm.structured.parse_json` finds
  the JSON value in a reply and decodes it here).
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from typing import Any

from .errors import ParseError
from .text import encodable

#: Longest text a parser reads (about 25k tokens: more than any reply we ask for).
MAX_PARSE_CHARS = 100_000
#: Most digits in one number (Python's own int/str limit is 4,300).
MAX_DIGITS = 1_000
#: Deepest bracket nesting a parser follows.
MAX_DEPTH = 64


def clip(text: str, limit: int = MAX_PARSE_CHARS) -> str:
    """At most ``limit`` characters of ``text`` (the head: answers are read from there on)."""
    return text if len(text) <= limit else text[:limit]


def _digits(text: str) -> int:
    return sum(ch.isdigit() for ch in text) if len(text) > MAX_DIGITS else 0


def to_int(text: str) -> int:
    """``int(text)`` for at most :data:`MAX_DIGITS` digits, else :class:`ParseError`."""
    if _digits(text) > MAX_DIGITS:
        raise ParseError(f"number with more than {MAX_DIGITS} digits", raw=text[:80])
    try:
        return int(text)
    except ValueError:
        raise ParseError(f"not an integer: {text[:40]!r}", raw=text[:80]) from None


_EXPONENT = re.compile(r"[eE]\s*([+-]?\d+)")


def to_fraction(text: str) -> Fraction:
    """``Fraction(text)`` (exact decimal or ``a/b``) for a bounded number of digits."""
    exponent = _EXPONENT.search(text[:MAX_DIGITS + 40])
    if _digits(text) > MAX_DIGITS or (exponent and len(exponent.group(1).lstrip("+-0")) > 3):
        raise ParseError(f"number with more than {MAX_DIGITS} digits", raw=text[:80])
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise ParseError(f"not a number: {text[:40]!r}", raw=text[:80]) from None


def to_float(text: str | float | int) -> float:
    """A finite float from a number or its text; ``inf``, ``nan``, ``1e400`` are errors."""
    try:
        value = float(text)
    except (ValueError, OverflowError, TypeError):
        raise ParseError(f"not a number: {str(text)[:40]!r}", raw=str(text)[:80]) from None
    if not math.isfinite(value):
        raise ParseError(f"not a finite number: {str(text)[:40]!r}", raw=str(text)[:80])
    return value


def depth(text: str) -> int:
    """Deepest ``[ { (`` nesting in ``text``, outside double-quoted strings."""
    deepest = level = 0
    in_str = escape = False
    for ch in text:
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{(":
            level += 1
            deepest = max(deepest, level)
        elif ch in "]})" and level:
            level -= 1
    return deepest


def check_depth(text: str, limit: int = MAX_DEPTH) -> None:
    """:class:`ParseError` if ``text`` nests brackets deeper than ``limit``."""
    if text.count("[") + text.count("{") + text.count("(") > limit and depth(text) > limit:
        raise ParseError(f"nested deeper than {limit} levels", raw=text[:80])


def _reject_constant(name: str) -> Any:
    raise ParseError(f"non-finite number {name} in JSON", raw=name)


def loads_json(text: str) -> Any:
    """``json.loads`` for model text: bounded size, depth and numbers; errors are ParseError.

    ``NaN``/``Infinity`` literals and floats that overflow are refused, so no
    non-finite number leaves here; a ``\\ud83d`` escape decodes to U+FFFD, not
    to a lone surrogate (encodable text stays encodable).
    """
    if len(text) > MAX_PARSE_CHARS:
        raise ParseError(f"JSON longer than {MAX_PARSE_CHARS} characters", raw=text[:80])
    check_depth(text)
    try:
        value = json.loads(text, parse_int=to_int, parse_float=to_float, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg} at char {exc.pos}", raw=text[:500]) from None
    return _encodable(value) if "\\u" in text else value


def _encodable(value: Any) -> Any:
    """``value`` with lone surrogates in its strings replaced (depth is already bounded)."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, list):
        return [_encodable(v) for v in value]
    if isinstance(value, dict):
        return {encodable(k): _encodable(v) for k, v in value.items()}
    return value
