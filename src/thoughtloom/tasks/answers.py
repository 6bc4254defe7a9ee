"""Reading the final answer out of a model's reply.

Chat models mark their answer in many ways. :func:`marked_answer` finds the
*last* explicit marker in a reply, whichever form it takes, and returns the
text it marks with markdown emphasis and a trailing full stop removed:

- ``The answer is: X`` / ``The answer is X`` / ``Answer: X`` / ``Final answer: X``,
  also bolded (``**Answer:** X``, ``**Answer**: X``, ``The answer is **X**``);
- ``\\boxed{X}`` (LaTeX, as math-tuned models end);
- ``#### X`` (GSM8K's own solution format);
- ``[[ ## answer ## ]]`` followed by X (DSPy's chat-adapter field layout).

Each free-text task's ``extract_answer`` is built on it: :func:`short_answer`
(the marked text, else the first line after a chat model's lead-in, else the
first non-empty line).

Numbers are read the way the chain-of-thought papers read them (Wei et al.
2022; Wang et al. 2023; Decomposed Prompting, appendix B: "the number after
'answer is'"): :func:`answer_statement` is the text after the last "answer
is" in a chain, with no fallback (a chain without an answer statement has no
answer), and :func:`read_number` reads the first number in a text. The math
tasks read every arm's prediction with :func:`read_number`, so a chain's
statement "18 dollars" and an extraction prompt's "18 dollars" read alike.

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
    r"answer(?: to (?:the|this|your|that) question)?+"  # 'the answer to the question is: X'
    r"[ \t*]*+(?:is\b[ \t*]*+:?|:)"      # 'answer is', 'answer:', '**Answer:**', 'answer is:'
    r"|####"                                   # GSM8K's solution format
    r"|\[\[ ?## ?answer ?## ?\]\]",               # DSPy's chat-adapter field
    re.IGNORECASE,
)
_AFTER_LEAD = re.compile(r"[ \t*]*+\n?[ \t]*+")
_BOXED = re.compile(r"\\boxed\{([^{}\n]*)\}")
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


# A chat model's opening words before the answer: "Sure!", "Here is the answer:", "Let me think."
_PREAMBLE = re.compile(
    r"(?:sure|okay|ok|certainly|of course|great question|good question|alright|well)\b[^\n]{0,80}[!.:,]?[ \t]*+$"
    r"|(?:here(?:'s| is)|let me|i will|i'll|i can)\b[^\n]{0,80}$"
    r"|[^\n]{0,120}:[ \t]*+$",  # any short line that ends in a colon leads into what follows
    re.IGNORECASE,
)


def short_answer(text: str) -> str | None:
    """A free-form question's short answer in a chatty reply, the one reading every strategy's reply
    gets (through the task's ``extract_answer``), so that their votes and scores agree:

    - the text the last answer marker points at (:func:`marked_answer`; "The answer to the question
      is: H2O" -> "H2O");
    - else, after opening lines that only lead in ("Sure!", "Here is the answer:"), the first line
      that does not ("Sure! Here you go:\nMars." -> "Mars");
    - else the first non-empty line (:func:`first_line`).
    """
    marked = marked_answer(text)
    if marked is not None:
        return marked
    lines = [line.strip() for line in clip(text).splitlines() if line.strip()]
    start = 0
    while start < len(lines) - 1 and _PREAMBLE.match(lines[start]):
        start += 1
    if start:
        return _clean(lines[start]) or lines[start]
    return first_line(text)


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


# "answer is", also "answer is:", bolded ("The answer is **18**") and in other cases ("ANSWER IS")
_ANSWER_IS = re.compile(r"\banswer[ \t*]*+is\b[ \t*]*+:?", re.IGNORECASE)


def answer_statement(text: str) -> str | None:
    """What the last "answer is" in ``text`` states: the rest of its line (or the next
    line, after a bare "answer is"), cleaned; None where there is no statement."""
    text = clip(text)
    last = None
    for last in _ANSWER_IS.finditer(text):
        pass
    if last is None:
        return None
    start = _AFTER_LEAD.match(text, last.end()).end()  # type: ignore[union-attr]
    stop = text.find("\n", start)
    value = _clean(text[start:] if stop < 0 else text[start:stop])
    return value or None


def read_number(text: str | None) -> str | None:
    """The first number in ``text``, normalized ('18', '2.5', '1234.5'); None without one."""
    if not text:
        return None
    return _number(_NUMBER.findall(clip(text)))
