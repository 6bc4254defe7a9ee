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

import csv
import io
import re
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any, Sequence

from ..core.bounded import clip
from ..core.errors import DataError
from ..core.types import Demo, Problem
from .arith import ExpressionError, check_24, parse_expression
from ..core.files import read_utf8
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

_LINE_PREFIX = re.compile(r"^\s*(?:[-*>#]\s*)?(?:the\s+)?(?:final\s+)?(?:answer|expression|solution)\s*(?:is\s*)?(?:[:=]\s*)?",
                          re.IGNORECASE)
_EXPR_CHARS = re.compile(r"[0-9+\-*/×÷−xX().\s\[\]]+")


def puzzle_numbers(question: str) -> list[int]:
    nums = [int(n) for n in re.findall(r"\d+", question)]
    if len(nums) != 4:
        raise DataError(f"a Game of 24 puzzle needs four numbers, got {question!r}")
    return nums


def find_expression(text: str) -> str | None:
    """The last arithmetic expression written in ``text`` (an 'Expression:' /
    'answer is' line first, else the last line that parses), without any
    trailing '= 24'."""
    lines = [ln.strip().strip("`*").strip() for ln in clip(text).splitlines() if ln.strip()]
    marked = [ln for ln in lines if _LINE_PREFIX.match(ln) and _LINE_PREFIX.sub("", ln).strip()]
    for line in reversed(marked + lines if marked else lines):
        candidate = _clean(_LINE_PREFIX.sub("", line))
        if candidate:
            return candidate
    return None


def _clean(line: str) -> str | None:
    line = line.split("=")[0].strip().rstrip(".").strip("$` ")
    runs = [m.group().strip() for m in _EXPR_CHARS.finditer(line) if any(ch.isdigit() for ch in m.group())]
    for run in sorted(runs, key=len, reverse=True):
        try:
            parse_expression(run)
        except ExpressionError:
            continue
        return " ".join(run.split())
    return None


class Game24(Task):
    name = "game24"
    instruction = ("Use each of the four given numbers exactly once, with + - * / and parentheses, "
                   "to write an expression equal to 24.")
    primary_metric = "success"

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
        with io.StringIO(read_utf8(path), newline="") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames is None or "Puzzles" not in reader.fieldnames:
                raise DataError(f"{path}:1: expected a CSV header with a 'Puzzles' column")
            for lineno, row in enumerate(reader, 2):
                try:
                    nums = puzzle_numbers(row["Puzzles"] or "")
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
        expr = find_expression(text)
        if expr is None or not any(op in expr for op in "+-*/×÷−"):
            return None  # a bare number ("24") is no attempt at the puzzle
        return expr

    def evaluation_items(self, problem: Problem, candidate: str) -> Sequence[str]:
        return ()

    def evaluation_guide(self, problem: Problem) -> str:
        return ("Calculate the expression step by step. Check that it uses each of the numbers "
                f"{problem.question} exactly once and no other numbers, and whether the result is 24. "
                "Score 10 only if both hold; a partial expression that can still reach 24 deserves a middle score.")

    def change_kind(self, parent: str, child: str) -> str:
        p, c = "".join(parent.split()), "".join(child.split())
        return "extended" if p in c else "revised"  # an empty parent is extended by anything

    def symbolic_score(self, problem: Problem, candidate: str) -> float | None:
        """1 if solved; else the share of the puzzle's numbers the expression
        uses legally (a partial expression is worth building on), halved."""
        nums = puzzle_numbers(problem.question)
        solved, _ = check_24(candidate, nums)
        if solved:
            return 1.0
        try:
            used = Counter(parse_expression(candidate).numbers)
        except ExpressionError:
            return 0.0
        want = Counter(Fraction(n) for n in nums)
        if used - want:
            return 0.0
        return 0.5 * sum(used.values()) / 4

    def candidate_answer(self, problem: Problem, candidate: str) -> str:
        return candidate
