"""A safe arithmetic-expression parser with exact rational arithmetic.

Model text never reaches Python's built-in evaluator. :func:`parse_expression` reads
numbers, ``+ - * /`` (also ``x × · ∗ ÷ − –``) and parentheses with a small
recursive-descent parser and returns the exact value as a ``Fraction`` and
the numbers it used, in order. Anything else is a :class:`ExpressionError`.

Bounded for model text: at most :data:`MAX_TOKENS` tokens, :data:`MAX_NUMBER_DIGITS`
digits per number and :data:`~thoughtloom.core.bounded.MAX_DEPTH` nested
parentheses, so no expression can exhaust the recursion limit, Python's
4,300-digit ``int``/``str`` limit or the CPU; beyond them is an
:class:`ExpressionError` too.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from ..core.bounded import MAX_DEPTH
from ..core.errors import ParseError

#: Longest expression read, in tokens (numbers, operators, parentheses).
MAX_TOKENS = 400
#: Most digits in one number of an expression.
MAX_NUMBER_DIGITS = 40

_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?)|(.))")
_SYNONYMS = {"×": "*", "x": "*", "X": "*", "·": "*", "⋅": "*", "∗": "*", "÷": "/", "∕": "/",
             "−": "-", "–": "-", "[": "(", "]": ")"}
#: every character :func:`parse_expression` reads (digits, point, blanks, operators and brackets)
EXPRESSION_CHARS = "0123456789. \t+-*/()" + "".join(_SYNONYMS)


class ExpressionError(ParseError, ValueError):
    """Not a well-formed + - * / expression, or it divides by zero, or beyond the bounds."""


@dataclass(frozen=True)
class Evaluated:
    value: Fraction
    numbers: tuple[Fraction, ...]


def _tokens(text: str) -> list[str | Fraction]:
    out: list[str | Fraction] = []
    for m in _TOKEN.finditer(text.strip()):
        if len(out) >= MAX_TOKENS:
            raise ExpressionError(f"expression longer than {MAX_TOKENS} tokens")
        num, other = m.groups()
        if num is not None:
            if len(num) - ("." in num) > MAX_NUMBER_DIGITS:  # digits, the decimal point not counted
                raise ExpressionError(f"number with more than {MAX_NUMBER_DIGITS} digits")
            out.append(Fraction(num))
        elif other is not None:
            op = _SYNONYMS.get(other, other)
            if op not in "+-*/()":
                raise ExpressionError(f"unexpected character {other!r}")
            out.append(op)
    return out


class _Parser:
    def __init__(self, tokens: list[str | Fraction], unary_minus: bool = False) -> None:
        self.unary_minus = unary_minus
        self.tokens, self.pos, self.numbers = tokens, 0, []  # type: ignore[var-annotated]
        self.depth = 0

    def peek(self) -> str | Fraction | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str | Fraction | None:
        tok = self.peek()
        self.pos += 1
        return tok

    def expr(self) -> Fraction:
        value = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            rhs = self.term()
            value = value + rhs if op == "+" else value - rhs
        return value

    def term(self) -> Fraction:
        value = self.factor()
        while self.peek() in ("*", "/"):
            op = self.take()
            rhs = self.factor()
            if op == "*":
                value = value * rhs
            else:
                if rhs == 0:
                    raise ExpressionError("division by zero")
                value = value / rhs
        return value

    def factor(self) -> Fraction:
        tok = self.take()
        if isinstance(tok, Fraction):
            self.numbers.append(tok)
            return tok
        if tok == "(":
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise ExpressionError(f"parentheses nested deeper than {MAX_DEPTH}")
            value = self.expr()
            self.depth -= 1
            if self.take() != ")":
                raise ExpressionError("unbalanced parentheses")
            return value
        if tok == "-" and self.unary_minus:
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise ExpressionError(f"signs nested deeper than {MAX_DEPTH}")
            value = -self.factor()
            self.depth -= 1
            return value
        if tok == "-":  # only where the caller allows negation (check_24 does)
            raise ExpressionError("unary minus is not allowed")
        raise ExpressionError(f"expected a number or '(' but found {tok!r}")


def parse_expression(text: str, *, unary_minus: bool = False) -> Evaluated:
    """Value and numbers of ``text``; ``unary_minus`` allows ``-x`` (negating a
    number or a bracket; the number read is ``x``, never ``-x``)."""
    tokens = _tokens(text)
    if not tokens:
        raise ExpressionError("empty expression")
    p = _Parser(tokens, unary_minus)
    value = p.expr()
    if p.pos != len(tokens):
        raise ExpressionError(f"unexpected {tokens[p.pos]!r} after the expression")
    return Evaluated(value, tuple(p.numbers))


def check_24(expression: str | None, puzzle: list[int] | tuple[int, ...], target: int = 24) -> tuple[bool, str]:
    """(solved, reason): every puzzle number used exactly once, nothing else,
    and the exact value equals ``target``.

    Unary minus is arithmetic on the given numbers, so it is accepted:
    ``-(1 - 5) * 6 * 1`` uses 1, 5, 6, 1 and equals 24 (it is ``(5 - 1) * 6 * 1``
    written another way); ``-4`` uses the number 4, never a new number -4.
    """
    if not expression or not expression.strip():
        return False, "no expression"
    try:
        ev = parse_expression(expression, unary_minus=True)
    except ExpressionError as exc:
        return False, str(exc)
    used = Counter(ev.numbers)
    want = Counter(Fraction(n) for n in puzzle)
    if used != want:
        missing = want - used
        extra = used - want
        parts = []
        if missing:
            parts.append("unused: " + " ".join(_fmt(n) for n in missing.elements()))
        if extra:
            parts.append("not allowed or used twice: " + " ".join(_fmt(n) for n in extra.elements()))
        return False, "; ".join(parts)
    if ev.value != target:
        return False, f"equals {_fmt(ev.value)}, not {target}"
    return True, "correct"


def _fmt(x: Fraction) -> str:
    if max(abs(x.numerator), x.denominator).bit_length() > 3000:  # str() refuses > 4,300 digits
        return "a number too large to print"
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
