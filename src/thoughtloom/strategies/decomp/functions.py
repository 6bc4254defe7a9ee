"""Symbolic functions: the registry and the built-ins, plain Python over the sub-question's text.

:func:`symbolic` registers a function ``str -> str | list`` under a handler
name; ``handlers.py`` wraps a registered function as a ``symbolic`` handler.
Each built-in reads what it needs from the sub-question (the last quoted
span, a JSON list, an ordinal) and raises ``ValueError`` when the text does
not say it; the controller records that as a handler error, never a crash.
"""

from __future__ import annotations

import json
import re
from typing import Callable

from ...tasks.arith import parse_expression
from .language import Answer, parse_value

SymbolicFn = Callable[[str], Answer]
_SYMBOLIC: dict[str, SymbolicFn] = {}


def symbolic(name: str) -> Callable[[SymbolicFn], SymbolicFn]:
    """Register a Python function as the symbolic handler ``name``."""

    def deco(fn: SymbolicFn) -> SymbolicFn:
        _SYMBOLIC[name] = fn
        return fn

    return deco


def symbolic_function(name: str) -> SymbolicFn | None:
    """The function registered as ``name``, if any."""
    return _SYMBOLIC.get(name)


def symbolic_names() -> list[str]:
    return sorted(_SYMBOLIC)


_QUOTED = re.compile(r'"([^"]*)"')
_LIST = re.compile(r"\[[^\[\]]*\]")
_ORDINAL = re.compile(r"\b(?:position|index|number)\s+(\d{1,9})\b|\b(\d{1,9})\s*(?:st|nd|rd|th)\b", re.IGNORECASE)
_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
          "eighth": 8, "ninth": 9, "tenth": 10}
#: The separators a question may name, by word (whole words: "Commander" names no comma).
SEPARATORS = {"semi-colon": ";", "semicolon": ";", "comma": ",", "space": " ", "hyphen": "-",
              "dash": "-", "underscore": "_"}
_SEPARATOR_WORD = re.compile(r"\b(semi-colon|semicolon|comma|space|hyphen|dash|underscore)s?\b", re.IGNORECASE)
# "without spaces", "with no separator", "no spaces", "nothing in between": joined with nothing
_NO_SEPARATOR = re.compile(r"\b(?:without|with\s+no|no)\s+(?:any\s+)?(?:separators?|delimiters?|spaces?|"
                           r"semi-?colons?|commas?|hyphens?|dashes?|underscores?)\b|\bnothing\b", re.IGNORECASE)
_LITERAL_SEPARATOR = re.compile(r'\b(?:using|with|by)\s+"([^"]*)"')


def last_quoted(question: str) -> str:
    found = _QUOTED.findall(question)
    if not found:
        raise ValueError(f"no quoted text in {question[:80]!r}")
    return found[-1]


def a_list(question: str) -> list[str]:
    for m in reversed(_LIST.findall(question)):
        value = parse_value(m)
        if isinstance(value, list):
            return value
    raise ValueError(f"no JSON list in {question[:80]!r}")


def _instruction(question: str) -> str:
    """The question without its quoted spans and lists: the words it asks with, not the
    words it asks about (a word "Last", a name "Commander")."""
    return _LIST.sub(" ", _QUOTED.sub(" ", question))


def position(question: str) -> int:
    """1-based position named in the question; -1 for 'last'. Quoted text and lists are
    what is asked about, so their words ("Last", "first") name no position."""
    text = _instruction(question)
    if re.search(r"\blast\b", text, re.IGNORECASE):
        return -1
    m = _ORDINAL.search(text)
    if m:
        return int(m.group(1) or m.group(2))
    for word, n in _WORDS.items():
        if re.search(rf"\b{word}\b", text, re.IGNORECASE):
            return n
    raise ValueError(f"no position in {question[:80]!r}")


def separator(question: str) -> str:
    """The separator a question asks to join with: a quoted one (``using "-"``), none
    ("without spaces", "no separator", "nothing"), else the first separator word outside
    quotes and lists ("using a space"); a question that names none joins with nothing."""
    literal = _LITERAL_SEPARATOR.search(_LIST.sub(" ", question))
    if literal:
        return literal.group(1)
    text = _instruction(question)
    if _NO_SEPARATOR.search(text):
        return ""
    m = _SEPARATOR_WORD.search(text)
    return SEPARATORS[m.group(1).lower()] if m else ""


def separator_phrase(question: str) -> str:
    """How a merge step says the question's separator ("a space", "a semi-colon", "no separator")."""
    sep = separator(question)
    if not sep:
        return "no separator"
    name = next((n for n, s in SEPARATORS.items() if s == sep), None)
    return f"a {name}" if name else f'"{sep}"'


def items(seq: str) -> list[str]:
    return [s.strip() for s in seq.split(",") if s.strip()]


_INDEXED_ITEM = re.compile(r"\(\s*([^(),]+?)\s*,\s*(\d{1,9})\s*\)")
_INDEXED = re.compile(r"\[\s*\([^\[\]]*\)\s*\]")  # no brackets inside: one linear scan


def indexed(items: list[str]) -> str:
    """Items with their 1-based positions, as the paper's general split writes them:
    ``[(A, 1), (d, 2), (a, 3)]``."""
    return "[" + ", ".join(f"({x}, {i})" for i, x in enumerate(items, 1)) + "]"


def an_indexed_list(question: str) -> list[str] | None:
    """The items of the last ``[(x, 1), (y, 2), ...]`` in the question, in position order."""
    found = _INDEXED.findall(question)
    if not found:
        return None
    pairs = [(int(k), x) for x, k in _INDEXED_ITEM.findall(found[-1])]
    return [x for _, x in sorted(pairs)] if pairs else None


@symbolic("split")
def split(question: str) -> Answer:
    """The general split: the words or the letters of the quoted text, with their
    positions when the question asks for them ("the letters and their positions in")."""
    text = last_quoted(question)
    head = _QUOTED.sub("", question).lower()
    parts = list(text.replace(" ", "")) if re.search(r"\bletters\b", head) else text.split()
    return indexed(parts) if "position" in head else parts


def split_letters(question: str) -> list[str]:
    return list(last_quoted(question).replace(" ", ""))


@symbolic("arr_position")
def arr_position(question: str) -> Answer:
    """The item at the named position of the list in the question (a JSON list or an indexed one)."""
    arr = an_indexed_list(question)
    if arr is None:
        arr = a_list(question)
    k = position(_INDEXED.sub("", question))
    if k == -1:
        return arr[-1]
    if not 1 <= k <= len(arr):
        raise IndexError(f"position {k} outside a list of {len(arr)}")
    return arr[k - 1]


@symbolic("str_position")
def str_position(question: str) -> Answer:
    return arr_position(f"{json.dumps(split_letters(question))} {question}")


@symbolic("merge")
def merge(question: str) -> Answer:
    return separator(question).join(a_list(question))


# -- sequences (list reversal) --------------------------------------------------


@symbolic("reverse_small")
def reverse_small(question: str) -> Answer:
    return ", ".join(reversed(items(last_quoted(question))))


@symbolic("split_half")
def split_half(question: str) -> Answer:
    xs = items(last_quoted(question))
    half = len(xs) // 2
    return [", ".join(xs[:half]), ", ".join(xs[half:])]


@symbolic("swap_concat")
def swap_concat(question: str) -> Answer:
    halves = a_list(question)
    if len(halves) != 2:
        raise ValueError("swap_concat needs a list of two sequences")
    return ", ".join(items(halves[1]) + items(halves[0]))


@symbolic("first_item")
def first_item(question: str) -> Answer:
    return items(last_quoted(question))[0]


@symbolic("rest_items")
def rest_items(question: str) -> Answer:
    return ", ".join(items(last_quoted(question))[1:])


@symbolic("append_item")
def append_item(question: str) -> Answer:
    quoted = _QUOTED.findall(question)
    if len(quoted) < 2:
        raise ValueError("append_item needs the item and the sequence, both quoted")
    return ", ".join(items(quoted[1]) + items(quoted[0]))


# -- arithmetic -----------------------------------------------------------------


@symbolic("calculator")
def calculator(question: str) -> Answer:
    """Evaluate the expression after the last colon exactly, with the one arithmetic parser.

    ``tasks.arith.parse_expression`` (no eval) decides what an expression is;
    anything else is its ``ExpressionError`` (a ``ValueError``).
    """
    expr = question.replace(",", "").strip().rstrip("?=. ")
    expr = expr.split(":")[-1]
    value = parse_expression(expr, unary_minus=True).value
    return str(value.numerator) if value.denominator == 1 else f"{float(value):.6g}"
