"""Game of 24: combine four numbers with + - * / to make 24.

Data: ``24.csv`` from the Tree-of-Thoughts repository (column ``Puzzles``,
e.g. ``4 9 10 13``). A problem's question is the four numbers; the CLI
accepts the same form (``thoughtloom run sculpt-mcts --task game24 "4 9 10 13"``).

Success is ALWAYS checked symbolically (:func:`~thoughtloom.tasks.arith.check_24`:
safe parser, exact fractions, each number exactly once). In a search, a
candidate is an expression, possibly partial (using some of the numbers).
The evaluator is the model by default, as in the paper; ``symbolic_score``
offers the exact checker to strategies run with ``--set evaluator=symbolic``,
which label such scores ``symbolic`` in their output.
"""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any, Sequence

from ..core.bounded import clip
from ..core.errors import DataError
from ..core.types import Demo, Problem
from .arith import EXPRESSION_CHARS, ExpressionError, check_24, parse_expression
from ..core.files import csv_rows
from .base import Example, Task, _must_exist

# Our own worked examples (puzzles chosen by us, not from the test data).
_DEMOS = (
    Demo(question="2 3 4 6",
         rationale="6 - 2 = 4 and 4 * 4 = 16 is not 24. Try 3 * 4 = 12 and 12 * 2 = 24, but 6 is left. "
                   "Try (6 - 3) * 2 = 6 and 6 * 4 = 24: all four numbers used once.",
         answer="(6 - 3) * 2 * 4"),
    Demo(question="1 5 5 5",
         rationale="5 * 5 = 25 and 25 - 1 = 24, but one 5 is left. 1 / 5 = 0.2, 5 - 0.2 = 4.8, "
                   "4.8 * 5 = 24: all four numbers used once.",
         answer="(5 - 1 / 5) * 5"),
)

# a marker word, then ':' / 'is' / '=' ("Answer:", "The final answer is", "Expression =")
_MARKER = re.compile(r"\b(?:final\s+)?(?:answer|expression|solution)s?\b\s*(?::|=|is\b)\s*:?", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*>•]\s+|\d+[.)]\s+|#+\s*)")
_BOLD = re.compile(r"\*\*(?=[A-Za-z:\s]|$)|(?<=[A-Za-z:])\*\*")
_FENCE = re.compile(r"^[ \t]*```[^\n]*\n(.*?)(?:^[ \t]*```|\Z)", re.DOTALL | re.MULTILINE)
_FRAC = re.compile(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}")
_LATEX = (("\\times", "*"), ("\\cdot", "*"), ("\\div", "/"), ("\\left", ""), ("\\right", ""),
          ("\\(", " "), ("\\)", " "), ("\\[", " "), ("\\]", " "), ("$", " "))
_EXPR_RUN = re.compile("[" + re.escape(EXPRESSION_CHARS) + "]+")
_OPERATORS = frozenset("+-*/") | {c for c in EXPRESSION_CHARS if c not in "0123456789. \t()[]"}


def puzzle_numbers(question: str) -> list[int]:
    nums = [int(n) for n in re.findall(r"\d+", question)]
    if len(nums) != 4:
        raise DataError(f"a Game of 24 puzzle needs four numbers, got {question!r}")
    return nums


def find_expression(text: str, numbers: Sequence[int] | None = None) -> str | None:
    """The answer expression written in ``text``, without any ``= 24``.

    Read in this order: the last marked line ("Answer:", "Expression:", "The
    final answer is", or the line after a bare marker); else the last line of
    the last code block; else the last line whose expression uses exactly
    ``numbers`` (any four numbers when they are not given); else the last
    line holding an expression with an operator. ``24 = EXPR`` and ``EXPR =
    24`` both give EXPR; LaTeX (``\\times``, ``\\div``, ``\\frac``) and the
    unicode operators (``− × ÷``) are read as ``- * /``. A bare number is
    never an answer.
    """
    lines = [_plain(ln) for ln in _latex(clip(text)).splitlines()]
    marked = []
    for i, line in enumerate(lines):
        found = list(_MARKER.finditer(line))
        if found:
            rest = line[found[-1].end():].strip()
            marked.append(rest or next((ln for ln in lines[i + 1:] if ln.strip("` ")), ""))
    blocks = [ln for block in _FENCE.findall(_latex(clip(text))) for ln in block.splitlines()]
    for group in (marked, blocks):
        for line in reversed(group):
            expr = _expression(line, numbers)
            if expr is not None and _has_operator(expr):
                return expr
    exprs = [e for e in (_expression(ln, numbers) for ln in lines) if e is not None and _has_operator(e)]
    for expr in reversed(exprs):
        if _uses_exactly(expr, numbers):
            return expr
    return exprs[-1] if exprs else None


def _latex(text: str) -> str:
    text = _FRAC.sub(r"((\1)/(\2))", text)
    for old, new in _LATEX:
        text = text.replace(old, new)
    return text


def _plain(line: str) -> str:
    """A line without list bullets, markdown bold and code ticks at its ends."""
    return _BOLD.sub("", _BULLET.sub("", line.strip(), count=1)).strip().strip("`").strip()


def _expression(line: str, numbers: Sequence[int] | None) -> str | None:
    """The best expression on one line: each side of an '=' is a candidate,
    and the one using the puzzle's numbers (else the most numbers) wins; a tie keeps
    the side written first."""
    best: tuple[tuple[bool, bool, int], str] | None = None
    for part in line.split("="):
        for m in _EXPR_RUN.finditer(part):
            run = m.group().strip(" \t.*/+")  # trailing full stop, bold marks, dangling operators
            if not any(ch.isdigit() for ch in run):
                continue
            try:
                used = parse_expression(run, unary_minus=True).numbers
            except ExpressionError:
                continue
            expr = " ".join(run.split())
            rank = (_uses_exactly(expr, numbers, used), _has_operator(expr), len(used))
            if best is None or rank > best[0]:
                best = (rank, expr)
    return None if best is None else best[1]


def _has_operator(expr: str) -> bool:
    return any(ch in _OPERATORS for ch in expr)


def _uses_exactly(expr: str, numbers: Sequence[int] | None, used: Sequence[Fraction] | None = None) -> bool:
    if used is None:
        used = parse_expression(expr, unary_minus=True).numbers
    if numbers is None:
        return len(used) == 4
    return Counter(used) == Counter(Fraction(n) for n in numbers)


def numbers_used(expr: str) -> Counter[Fraction] | None:
    """The multiset of numbers an expression uses; None if it does not parse."""
    try:
        return Counter(parse_expression(expr, unary_minus=True).numbers)
    except ExpressionError:
        return None


class Game24(Task):
    name = "game24"
    instruction = ("Use each of the four given numbers exactly once, with + - * / and parentheses, "
                   "to write an expression equal to 24.")
    primary_metric = "success"
    evaluation_style = "check"  # App. H.1's REVISE_SOLUTIONS: calculation, result, feedback, correct

    def demos(self) -> Sequence[Demo]:
        return _DEMOS

    def extract_answer(self, text: str) -> str | None:
        return find_expression(text)

    def normalize(self, answer: str) -> str:
        return "".join(answer.split())

    def score(self, prediction: str | None, gold: Any) -> dict[str, float]:
        solved, _ = check_24(prediction, gold)
        return {"success": float(solved)}

    def load(self, path: str | Path) -> list[Example]:
        path = Path(path)
        _must_exist(path)
        examples = []
        for lineno, row in csv_rows(path, ("Puzzles",)):
            try:
                nums = puzzle_numbers(row["Puzzles"])
            except DataError as exc:
                raise DataError(f"{path}:{lineno}: {exc}") from None
            rank = (row.get("Rank") or str(lineno - 1)).strip()
            question = " ".join(map(str, nums))
            examples.append(Example(Problem(id=f"game24-{rank}", question=question), nums))
        return examples

    # -- SearchTask ----------------------------------------------------------

    def describe(self, problem: Problem) -> str:
        return (f"{self.instruction}\nNumbers: {problem.question}\n"
                "A solution may be partial (using only some of the numbers) while it is being built.")

    def root_candidate(self, problem: Problem) -> str | None:
        return None

    def render(self, problem: Problem, candidate: str) -> str:
        return f"Expression: {candidate}"

    def output_format(self, problem: Problem) -> str:
        return ("Keep any working to two short lines, then write the expression alone on the last line as\n"
                "Expression: <expression using only the given numbers, + - * / and parentheses>")

    def parse_candidate(self, problem: Problem, text: str, parent: str | None) -> str | None:
        # find_expression never returns a bare number ("24"): that is no attempt at the puzzle
        nums = [int(n) for n in re.findall(r"\d+", problem.question)]
        return find_expression(text, nums if len(nums) == 4 else None)

    def evaluation_items(self, problem: Problem, candidate: str) -> Sequence[str]:
        return ()

    def evaluation_guide(self, problem: Problem) -> str:
        return ("Calculate the expression step by step. Check that it uses each of the numbers "
                f"{problem.question} exactly once and no other numbers, and whether the result is 24; it is "
                "correct only if both hold (a partial expression that can still reach 24 is worth building on).")

    def change_kind(self, parent: str, child: str) -> str:
        """'extended' when the child uses every number its parent uses (as a
        multiset: "14+9" does not extend "4+9"); an empty parent is extended by anything."""
        if not parent.strip():
            return "extended"
        p, c = numbers_used(parent), numbers_used(child)
        return "extended" if p is not None and c is not None and not p - c else "revised"

    def symbolic_score(self, problem: Problem, candidate: str) -> float | None:
        """1 if solved; else the share of the puzzle's numbers the expression
        uses legally (a partial expression is worth building on), halved."""
        nums = puzzle_numbers(problem.question)
        solved, _ = check_24(candidate, nums)
        if solved:
            return 1.0
        used = numbers_used(candidate)
        if used is None:
            return 0.0
        want = Counter(Fraction(n) for n in nums)
        if used - want:
            return 0.0
        return 0.5 * sum(used.values()) / 4

    def candidate_answer(self, problem: Problem, candidate: str) -> str:
        return candidate
