"""A safe arithmetic-expression parser with exact rational arithmetic.

Model text never reaches Python's built-in evaluator. :func:`parse_expression` reads
numbers, ``+ - * /`` (also ``x × ÷ −``) and parentheses with a small
recursive-descent parser and returns the exact value as a ``Fraction`` and
the numbers it used, in order. Anything else is a :class:`ExpressionError`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?)|(.))")
_SYNONYMS = {"×": "*", "x": "*", "X": "*", "÷": "/", "−": "-", "–": "-", "[": "(", "]": ")"}


class ExpressionError(ValueError):
    """Not a well-formed + - * / expression, or it divides by zero."""


@dataclass(frozen=True)
class Evaluated:
    value: Fraction
    numbers: tuple[Fraction, ...]


def _tokens(text: str) -> list[str | Fraction]:
    out: list[str | Fraction] = []
    for m in _TOKEN.finditer(text.strip()):
        num, other = m.groups()
        if num is not None:
            out.append(Fraction(num))
        elif other is not None:
            op = _SYNONYMS.get(other, other)
            if op not in "+-*/()":
                raise ExpressionError(f"unexpected character {other!r}")
            out.append(op)
    return out


class _Parser:
    def __init__(self, tokens: list[str | Fraction]) -> None:
        self.tokens, self.pos, self.numbers = tokens, 0, []  # type: ignore[var-annotated]

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
            value = self.expr()
            if self.take() != ")":
                raise ExpressionError("unbalanced parentheses")
            return value
        if tok == "-":  # unary minus is not a Game-of-24 operation; reject it clearly
            raise ExpressionError("unary minus is not allowed")
        raise ExpressionError(f"expected a number or '(' but found {tok!r}")


def parse_expression(text: str) -> Evaluated:
    tokens = _tokens(text)
    if not tokens:
        raise ExpressionError("empty expression")
    p = _Parser(tokens)
    value = p.expr()
    if p.pos != len(tokens):
        raise ExpressionError(f"unexpected {tokens[p.pos]!r} after the expression")
    return Evaluated(value, tuple(p.numbers))


def check_24(expression: str | None, puzzle: list[int] | tuple[int, ...], target: int = 24) -> tuple[bool, str]:
    """(solved, reason): every puzzle number used exactly once, nothing else,
    and the exact value equals ``target``."""
    if not expression or not expression.strip():
        return False, "no expression"
    try:
        ev = parse_expression(expression)
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
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
