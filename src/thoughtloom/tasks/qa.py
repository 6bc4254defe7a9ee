"""Your own question-answering data: ``thoughtloom eval --task qa --data my.jsonl``.

The ``qa`` task reads a JSONL file (one object per line), a JSON list of
objects or a CSV/TSV file with a header. Each record gives the question in
``input_field`` (default ``question``) and the gold answer in
``gold_field`` (default ``answer``): a string, a number, or in JSON a list
of acceptable answers. An ``id`` field names the example (else its line).

The metric is one of :data:`METRICS` or a function of the user's:

- ``em`` (default, reported with ``f1``): exact match after SQuAD
  normalization (lower case, no punctuation or articles);
- ``f1``: SQuAD token F1;
- ``contains``: the normalized gold appears in the normalized answer as
  whole words (for verbose models);
- ``numeric``: the number the answer states (:func:`.answers.read_number`
  of what its answer marker points at) equals the gold number;
- ``choice``: the option letter of the answer (``B``, ``(B)``, ``B.``,
  ``Answer: B``) equals the gold letter.

A user metric is ``fn(prediction, gold) -> float | bool``; ``prediction`` is
the extracted answer (``None`` when there is none), ``gold`` the record's
gold value. Its name is the metric's name in the results (and the task's
one declared metric, ``Task.metrics``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..core.errors import ConfigError, DataError
from ..core.files import csv_rows
from ..core.names import unknown
from ..core.types import Problem
from .answers import answer_statement, marked_answer, read_number
from .base import Example, Task, _must_exist, read_json, read_jsonl
from .metrics import exact_match, normalize_text, numbers_equal, token_f1

Metric = Callable[[str | None, Any], Any]


def _golds(gold: Any) -> list[str]:
    return [str(g) for g in gold] if isinstance(gold, (list, tuple)) else [str(gold)]


def contains(prediction: str | None, gold: Any) -> float:
    """1 if a normalized gold answer occurs in the normalized prediction as whole words."""
    said = f" {normalize_text(prediction or '')} "
    return float(any(normalize_text(g) and f" {normalize_text(g)} " in said for g in _golds(gold)))


def numeric(prediction: str | None, gold: Any) -> float:
    """1 if the prediction's number equals a gold number (relative tolerance 1e-6)."""
    number = read_number(prediction)
    return max(numbers_equal(number, g) for g in _golds(gold))


_CHOICE = re.compile(r"\(([A-Za-z])\)|([A-Za-z])(?:[).:]|$)")


def choice_letter(text: str | None) -> str | None:
    """The option letter an answer opens with: 'B', 'b', '(B) Paris', 'B. Paris', 'B)', 'Answer: B' -> 'B';
    None for prose ('A cat', 'Paris')."""
    if not text:
        return None
    m = _CHOICE.match((marked_answer(text) or text).strip())
    return (m.group(1) or m.group(2)).upper() if m else None


def choice(prediction: str | None, gold: Any) -> float:
    """1 if the prediction's option letter is a gold letter (case-insensitive)."""
    picked = choice_letter(prediction)
    return float(picked is not None and any(picked == g.strip().strip("()").upper() for g in _golds(gold)))


def em(prediction: str | None, gold: Any) -> float:
    return exact_match(prediction, _golds(gold))


def f1(prediction: str | None, gold: Any) -> float:
    return token_f1(prediction, _golds(gold))


#: The built-in metrics by name.
METRICS: dict[str, Metric] = {"em": em, "f1": f1, "contains": contains, "numeric": numeric, "choice": choice}


class QA(Task):
    """Question answering over the user's own records, scored by the chosen metric."""

    name = "qa"
    instruction = "Answer the question with a short answer."
    primary_metric = "em"
    question_shape = "qa"
    metrics = ("em", "f1")  # the default; a chosen metric is the only one (set per instance)

    def __init__(self, input_field: str = "question", gold_field: str = "answer",
                 metric: str | Metric | None = None) -> None:
        if not input_field or not gold_field:
            raise ConfigError("the input and gold fields need names", hint="pass --input-field NAME --gold-field NAME")
        if isinstance(metric, str) and metric not in METRICS:
            raise unknown("metric", metric, sorted(METRICS))
        if metric is not None and not isinstance(metric, str) and not callable(metric):
            raise ConfigError(f"metric {metric!r} is neither a name nor a function",
                              hint=f"pass one of {', '.join(METRICS)} or a function fn(prediction, gold)")
        self.input_field, self.gold_field, self.metric = input_field, gold_field, metric
        self.metric_name = (None if metric is None else metric if isinstance(metric, str)
                            else getattr(metric, "__name__", "metric"))
        self.primary_metric = self.metric_name or "em"
        self.metrics = ("em", "f1") if metric is None else (self.primary_metric,)

    def settings(self) -> dict[str, Any]:
        """What the run's identity records of this task (the fields and metric it was scored by)."""
        fn = self.metric if callable(self.metric) else None
        where = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', '?')}" if fn else self.metric_name
        return {"input_field": self.input_field, "gold_field": self.gold_field, "metric": where or "em"}

    def extract_answer(self, text: str) -> str | None:
        if self.metric == "numeric":
            return read_number(answer_statement(text) or marked_answer(text) or text)
        if self.metric == "choice":
            return choice_letter(text) or super().extract_answer(text)
        return super().extract_answer(text)

    def score(self, prediction: str | None, gold: Any) -> dict[str, float]:
        if self.metric is None:
            return {"em": em(prediction, gold), "f1": f1(prediction, gold)}
        fn = METRICS[self.metric] if isinstance(self.metric, str) else self.metric
        return _as_scores(self.primary_metric, fn(prediction, gold))

    def load(self, path: str | Path) -> list[Example]:
        path = Path(path)
        _must_exist(path)
        return self.examples(_records(path), where=str(path))

    def examples(self, records: Sequence[tuple[int, Mapping[str, Any]]], where: str = "examples") -> list[Example]:
        """(line or position, record) pairs as examples; a missing field names ``where:line``."""
        out = []
        for line, record in records:
            at = f"{where}:{line}"
            if not isinstance(record, Mapping):
                raise DataError(f"{at}: expected an object with fields {self.input_field!r} and {self.gold_field!r}")
            question, gold = (_field(record, name, at, flag)
                              for name, flag in ((self.input_field, "--input-field"), (self.gold_field, "--gold-field")))
            if not isinstance(question, str) or not question.strip():
                raise DataError(f"{at}: field {self.input_field!r} should be a non-empty string")
            if isinstance(gold, (list, tuple)) and not gold or isinstance(gold, (dict, bool)) or gold is None:
                raise DataError(f"{at}: field {self.gold_field!r} should be a string, a number or a list of them")
            ident = record.get("id", record.get("_id"))
            out.append(Example(Problem(id=str(ident) if ident not in (None, "") else f"qa-{line}",
                                       question=question.strip()), gold))
        ids = [e.problem.id for e in out]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise DataError(f"{where}: the id {dup!r} names two examples", hint="give each record its own id")
        return out


def _as_scores(name: str, value: Any) -> dict[str, float]:
    """A metric's result as its one score: a finite number or a bool, under ``name``."""
    if isinstance(value, bool) or isinstance(value, (int, float)) and math.isfinite(value):
        return {name: float(value)}
    raise TypeError(f"metric {name!r} returned {value!r}: return a finite number or a bool")


def _field(record: Mapping[str, Any], name: str, where: str, flag: str) -> Any:
    if name not in record:
        fields = ", ".join(map(repr, list(record)[:12])) or "none"
        raise DataError(f"{where}: no field {name!r} (fields: {fields})", hint=f"name the right one with {flag}")
    return record[name]


def _records(path: Path) -> list[tuple[int, Mapping[str, Any]]]:
    """The file's records with their line numbers: CSV/TSV by suffix, a JSON list, else JSONL."""
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return list(csv_rows(path, delimiter="\t" if suffix == ".tsv" else ","))
    if suffix == ".json":
        data = read_json(path)
        if not isinstance(data, list):
            raise DataError(f"{path}: expected a JSON list of objects (or write JSONL: one object per line)")
        return list(enumerate(data, 1))
    return list(read_jsonl(path))


__all__ = ["METRICS", "QA", "choice", "choice_letter", "contains", "em", "f1", "numeric"]
