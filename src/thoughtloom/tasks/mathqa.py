"""Math word problems with a numeric answer: GSM8K and MultiArith.

One reader for every method (Decomposed Prompting, appendix B: "most CoT
systems extract the number after 'answer is'"): a chain of thought's answer
is the number in its last answer statement (:func:`~.answers.answer_statement`),
with no fallback, so a chain that states no answer has none; and every
prediction, whichever method made it (a chain's statement, an extraction
prompt's reply such as "10 dollars"), is scored by reading its first number
(:func:`~.answers.read_number`) and comparing it with the gold number.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..core.errors import DataError
from ..core.types import Demo, Problem
from .base import Example, Task, read_json, read_jsonl, require
from .answers import answer_statement, read_number
from .metrics import format_number, numbers_equal, parse_number

# Our own worked examples (not taken from any benchmark).
_DEMOS = (
    Demo(
        question="A shelf holds 4 boxes with 6 pencils each. Mia takes 5 pencils. How many pencils are left?",
        rationale="The boxes hold 4 * 6 = 24 pencils. After Mia takes 5, 24 - 5 = 19 remain.",
        answer="19",
    ),
    Demo(
        question="Tom earns $12 an hour and works 3 hours a day for 5 days. How much does he earn?",
        rationale="He works 3 * 5 = 15 hours. At $12 an hour he earns 15 * 12 = 180 dollars.",
        answer="180",
    ),
    Demo(
        question="A rope 30 meters long is cut into pieces of 4 meters. How many whole pieces are there?",
        rationale="30 / 4 = 7.5, so there are 7 whole pieces.",
        answer="7",
    ),
)


class MathWordProblems(Task):
    instruction = "Solve the math word problem. The answer is a number."
    primary_metric = "accuracy"

    def demos(self) -> Sequence[Demo]:
        return _DEMOS

    def extract_answer(self, text: str) -> str | None:
        """The number after the chain's last "answer is"; None without that statement."""
        return read_number(answer_statement(text))

    def normalize(self, answer: str) -> str:
        number = read_number(answer)
        return number if number is not None else answer.strip()

    def answered(self, prediction: Any) -> bool:
        return isinstance(prediction, str) and read_number(prediction) is not None

    def score(self, prediction: str | None, gold: Any) -> dict[str, float]:
        return {"accuracy": numbers_equal(read_number(prediction), str(gold))}


class GSM8K(MathWordProblems):
    """GSM8K jsonl: ``question`` and ``answer`` whose last line is ``#### N``."""

    name = "gsm8k"

    def load(self, path: str | Path) -> list[Example]:
        examples = []
        for lineno, rec in read_jsonl(path):
            where = f"{path}:{lineno}"
            question = require(rec, "question", where)
            solution = require(rec, "answer", where)
            if "####" not in solution:
                raise DataError(f"{where}: answer has no '#### N' final answer")
            gold = solution.rsplit("####", 1)[1].strip()
            value = parse_number(gold)
            if value is None:
                raise DataError(f"{where}: final answer {gold!r} is not a number")
            examples.append(Example(Problem(id=f"gsm8k-{len(examples)}", question=question),
                                    format_number(value)))
        return examples


class MultiArith(MathWordProblems):
    """MultiArith JSON list: ``iIndex``, ``sQuestion``, ``lSolutions``."""

    name = "multiarith"

    def load(self, path: str | Path) -> list[Example]:
        data = read_json(path)
        if not isinstance(data, list):
            raise DataError(f"{path}: expected a JSON list of problems")
        examples = []
        for i, rec in enumerate(data):
            where = f"{path}: record {i}"
            if not isinstance(rec, dict):
                raise DataError(f"{where}: expected an object")
            question = require(rec, "sQuestion", where).strip()
            solutions = require(rec, "lSolutions", where, list)
            if not solutions or not isinstance(solutions[0], (int, float)):
                raise DataError(f"{where}: lSolutions needs a number")
            value = parse_number(repr(float(solutions[0])))
            assert value is not None
            examples.append(Example(Problem(id=f"multiarith-{rec.get('iIndex', i)}", question=question),
                                    format_number(value)))
        return examples
