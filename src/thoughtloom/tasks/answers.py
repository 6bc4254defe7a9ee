"""Reading the final answer out of a model's reply.

Chat models mark their answer in many ways. :func:`marked_answer` finds the
*last* explicit marker in a reply, whichever form it takes, and returns the
text it marks with markdown emphasis and a trailing full stop removed:

- ``The answer is: X`` / ``The answer is X`` / ``Answer: X`` / ``Final answer: X``,
  also bolded (``**Answer:** X``, ``**Answer**: X``, ``The answer is **X**``);
- ``\\boxed{X}`` (LaTeX, as math-tuned models end);
- ``#### X`` (GSM8K's own solution format);
- ``[[ ## answer ## ]]`` followed by X (DSPy's chat-adapter field layout).

Each task's ``extract_answer`` is built on it: free text falls back to the
first non-empty line, numbers (:func:`extract_number`) fall back to the last
bolded number and then to the last number in the reply.

Every pattern here is linear in the reply's length (no nested optional
runs that backtrack on long blanks); replies are clipped first.
"""

from __future__ import annotations

import re
from typing import Iterable

from ..core.bounded import clip
from .metrics import format_number, parse_number

# Markers that point at the rest of their line (or the next line, after a bare marker).
# Possessive runs (*+) never backtrack, so a long blank stays linear.
_LEADS = re.compile(
    r"answer[ \t*]*+(?:is\b[ \t*]*+:?|:)"      # 'answer is', 'answer:', '**Answer:**', 'answer is:'
    r"|####"                                   # GSM8K's solution format
    r"|\[\[ ?## ?answer ?## ?\]\]",               # DSPy's chat-adapter field
    re.IGNORECASE,
)
_AFTER_LEAD = re.compile(r"[ \t*]*+\n?[ \t]*+")
_BOXED = re.compile(r"\\boxed\{([^{}\n]*)\}")
_BOLD = re.compile(r"\*\*([^*\n]{1,200})\*\*")
_NUM = r"-?\$?\s?\d[\d,]*(?:\.\d+)?(?:/\d+(?:\.\d+)?)?"
_NUMBER = re.compile(_NUM)


def _clean(value: str) -> str:
    """The marked text without markdown emphasis (``*``, ``_``, backticks) or a final full stop."""
    value = value.strip()
    for _ in range(3):  # '**Paris**.' -> 'Paris'; a few passes cover nested marks
        value = value.rstrip(".").strip().strip("*_`").strip()
    return value


def _marks(text: str) -> list[tuple[int, str]]:
    """(position, marked text) of every answer marker, in reply order.

    A lead marker marks the rest of its line up to the next marker, so
    'Answer: A. No, the answer is: B' marks 'A. No, the' and 'B'.
    """
    boxed = [(m.start(), m.end(), m.group(1)) for m in _BOXED.finditer(text)]
    leads = [(m.start(), m.end(), None) for m in _LEADS.finditer(text)]
    marks = sorted(boxed + leads)
    found = []
    for i, (start, end, value) in enumerate(marks):
        if value is None:
            end = _AFTER_LEAD.match(text, end).end()
            stop = text.find("\n", end)
            stop = len(text) if stop < 0 else stop
            if i + 1 < len(marks):
                stop = min(stop, max(end, marks[i + 1][0]))
            value = text[end:stop]
        found.append((start, value))
    return found


def marked_answer(text: str) -> str | None:
    """The text the last answer marker points at, cleaned; None without a marker."""
    for _, value in reversed(_marks(clip(text))):
        value = _clean(value)
        if value:
            return value
    return None


def first_line(text: str) -> str | None:
    for line in clip(text).splitlines():
        if line.strip():
            return _clean(line) or line.strip()
    return None


def _number(candidates: Iterable[str]) -> str | None:
    """The first of ``candidates`` (number-like matches) that reads as a number, normalized."""
    for candidate in candidates:
        value = parse_number(candidate)
        if value is not None:
            return format_number(value)
    return None


def extract_number(text: str) -> str | None:
    """The final numeric answer in a reply, normalized ('18', '2.5').

    The first number after the last answer marker that holds one
    (:func:`marked_answer`'s forms), else the last number in the last bolded
    span that holds one, else the last number in the reply.
    """
    text = clip(text)
    for _, value in reversed(_marks(text)):
        number = _number(_NUMBER.findall(value))  # the first number after the marker
        if number is not None:
            return number
    for bold in reversed(_BOLD.findall(text)):
        number = _number(reversed(_NUMBER.findall(bold)))
        if number is not None:
            return number
    return _number(reversed(_NUMBER.findall(text)))
