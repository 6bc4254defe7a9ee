"""One eval record: what ``results.jsonl`` holds for each example, typed, with its one reader.

The runner writes an :class:`EvalRecord` per finished example (its
:meth:`~EvalRecord.to_json` line); everything that reads a run back -- the
results file on resume, the summary, the run inspector, the reproduction
card, the anytime curves, estimates -- reads it through
:meth:`EvalRecord.from_dict` (a file's lines through :func:`record_lines`).

A line's fields, in the order they are written::

    id, input, prediction, gold, metrics, confidence, truncated, stopped,
    anytime, usage, latency_s, error, step_problems, meta, details, example_sha256

(``example_sha256``: a digest of the example's question, context and gold,
:func:`~.data_change.example_sha256`, by which a resume over a changed data
file checks that the example is the same), followed by any key this version does not know (:attr:`EvalRecord.extra`,
kept as read and written back after the others).

What a reader tolerates (a record is text on disk: older versions wrote it,
a person may have edited it):

- a line whose JSON is not an object with a string ``id`` is not a record
  (:class:`NotARecord`); what happens to it is the file policy of
  :func:`~thoughtloom.core.files.jsonl_lines` the caller names (``torn``
  for the runner's own file, ``skip`` for the inspector);
- a missing key reads as its default: records written before ``truncated``,
  ``stopped``, ``step_problems`` or ``anytime`` existed read as not
  truncated, not stopped, no step problems, no trajectory;
- a value of the wrong JSON type reads as that default too (``metrics``,
  ``usage``, ``step_problems``, ``meta``, ``details`` not an object;
  ``confidence`` or ``latency_s`` not a number; ``truncated`` not ``true``;
  ``stopped`` or ``example_sha256`` not a string; ``error`` not a string is its ``str`` when it is
  truthy, else none);
- values are never converted otherwise (an int stays an int), so a record
  read and written again is the same line; ``input``, ``prediction``,
  ``gold`` and ``anytime`` are kept as read (``anytime``'s reader is
  :func:`thoughtloom.eval.curves.read_trajectory`, which says why a
  trajectory cannot be read), as are the numbers inside ``metrics`` and
  ``usage`` (:meth:`EvalRecord.score` and :meth:`EvalRecord.used` read a
  number that is not finite as 0).

Such a record written back (the results file compacts itself after a
partial write or a rerun example) is written in today's form.
"""

from __future__ import annotations

import dataclasses
import json
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Iterator, Mapping

from ..core.errors import ConfigError
from ..core.files import JsonLine, jsonl_lines
from ..core.text import encodable


def dump_line(obj: Any) -> str:
    """One JSON line, encodable as UTF-8. Objects JSON cannot hold become their ``str``.

    Raises ``ValueError`` only for what ``json`` itself refuses (an int over
    Python's digit limit, a circular reference); callers inside the
    per-example boundary turn that into the example's error.
    """
    return encodable(json.dumps(obj, ensure_ascii=False, default=str)) + "\n"


def finite_number(value: Any) -> bool:
    """Whether ``value`` is a finite int or float (not a bool, a NaN or an infinity)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def number(value: Any) -> float:
    """A finite number read back from a record, else 0 (records hold whatever was written)."""
    return float(value) if finite_number(value) else 0.0


class NotARecord(ValueError):
    """A JSON value that is not an eval record (not an object, or no string ``id``); says which."""


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _error(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return str(value) if value else None


#: How a read value of each typed field is made that field's type (the module's tolerance rules).
_READ: dict[str, Any] = {
    "metrics": _object,
    "confidence": lambda v: v if finite_number(v) else None,
    "truncated": lambda v: v is True,
    "stopped": lambda v: v if isinstance(v, str) else None,
    "usage": _object,
    "latency_s": lambda v: v if finite_number(v) else 0.0,
    "error": _error,
    "step_problems": _object,
    "meta": _object,
    "details": _object,
    "example_sha256": lambda v: v if isinstance(v, str) else None,
}


@dataclass(frozen=True)
class EvalRecord:
    """One example's result line (see the module docstring for the fields' order and reading).

    Frozen: a record is made whole by the runner and replaced, never
    changed; its dict fields are the record's own and are not to be
    changed either.
    """

    id: str
    input: Any = None  # the question as the task put it
    prediction: Any = None  # the strategy's answer (str), None without one
    gold: Any = None  # the example's gold, as the data file has it
    metrics: dict[str, Any] = field(default_factory=dict)  # the task's scores (no answer's on an error)
    confidence: float | None = None
    truncated: bool = False  # the answer was cut off at max_tokens
    stopped: str | None = None  # "budget": the strategy's best answer when its budget ran out
    anytime: Any = None  # {"points": [...], "exact": ...}: the answer at every smaller budget (eval.curves)
    usage: dict[str, Any] = field(default_factory=dict)  # lm.meter.UsageTotals.as_dict()
    latency_s: float = 0.0
    error: str | None = None
    step_problems: dict[str, Any] = field(default_factory=dict)  # core.events.count_step_problems
    meta: dict[str, Any] = field(default_factory=dict)  # the example's own fields (e.g. its stratum)
    details: dict[str, Any] = field(default_factory=dict)  # the strategy's Result.details as JSON
    example_sha256: str | None = None  # question, context and gold (eval.data_change); None: an older record
    extra: dict[str, Any] = field(default_factory=dict)  # keys this version does not know, as read

    #: The keys of a line, in the order they are written (every field but ``extra``).
    KEYS: ClassVar[tuple[str, ...]]

    # -- writing ------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The record as its JSON object: :data:`KEYS` in order, then :attr:`extra`."""
        out = {key: getattr(self, key) for key in self.KEYS}
        out.update((k, v) for k, v in self.extra.items() if k not in out)
        return out

    def to_json(self) -> str:
        """The record's line in ``results.jsonl`` (newline included); ``ValueError`` when JSON
        cannot hold a value (:func:`dump_line`)."""
        return dump_line(self.to_dict())

    # -- reading ------------------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, value: Any) -> "EvalRecord":
        """The record a JSON object holds, by the module's tolerance rules; :class:`NotARecord`
        when it is not an object with a string ``id``."""
        if not isinstance(value, Mapping):
            raise NotARecord(f"a record is a JSON object, not {type(value).__name__}")
        if not isinstance(value.get("id"), str):
            raise NotARecord("a record needs a string id" + ("" if "id" not in value else
                                                             f", not {type(value['id']).__name__}"))
        return cls._read(value, value["id"])

    @classmethod
    def from_json(cls, line: str | bytes) -> "EvalRecord":
        """The record of one ``results.jsonl`` line; :class:`NotARecord` when it is none."""
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as exc:  # bad JSON, bad UTF-8, nested past the parser
            raise NotARecord(f"invalid JSON ({exc})") from None
        return cls.from_dict(value)

    @classmethod
    def of(cls, value: "EvalRecord | Mapping[str, Any]") -> "EvalRecord":
        """``value`` as a record: itself, or a mapping read as one (an absent or non-string ``id``
        reads as ""). For the readers that also take a record as a plain dict (tests, old callers)."""
        if isinstance(value, EvalRecord):
            return value
        rid = value.get("id")
        return cls._read(value, rid if isinstance(rid, str) else "")

    @classmethod
    def _read(cls, value: Mapping[str, Any], rid: str) -> "EvalRecord":
        known = {key: _READ.get(key, _same)(value[key]) for key in cls.KEYS if key in value and key != "id"}
        extra = {str(k): v for k, v in value.items() if k not in _KNOWN}
        return cls(id=rid, **known, extra=extra)

    # -- what readers ask of a record ---------------------------------------------------------------

    @property
    def failed(self) -> bool:
        """The example ended in an error (its metrics are no answer's)."""
        return bool(self.error)

    @property
    def budget_stopped(self) -> bool:
        return self.stopped == "budget"

    def score(self, metric: str) -> float:
        """The score on ``metric``; an unscored example (an error with no metrics) counts 0.

        A record that was scored but has no ``metric`` is a :class:`ConfigError`
        naming the metric and the ones the record has: a misspelt metric (a
        suite's ``games`` for the crosswords task's ``game``) never reads as 0.
        """
        if not self.metrics:
            return 0.0
        if metric not in self.metrics:
            raise ConfigError(f"no metric {metric!r} in the record of example {self.id!r}",
                              hint=f"its task emits {', '.join(sorted(map(str, self.metrics)))}")
        return number(self.metrics[metric])

    def used(self, key: str) -> float:
        """One usage figure (``total_tokens`` summed from its parts when absent)."""
        if key == "total_tokens" and "total_tokens" not in self.usage:
            return number(self.usage.get("prompt_tokens")) + number(self.usage.get("completion_tokens"))
        return number(self.usage.get(key))

    # -- the record as a dict, for callers written before it was typed --------------------------------

    # not iterable: with __getitem__ alone, iter() would try record[0], record[1], ...
    __iter__ = None

    def __getitem__(self, key: str) -> Any:
        warnings.warn("reading an eval record by key is deprecated: use its attribute "
                      f"(record.{key}) or record.to_dict()", DeprecationWarning, stacklevel=2)
        return self.to_dict()[key]

    def get(self, key: str, default: Any = None) -> Any:
        warnings.warn("EvalRecord.get is deprecated: use the record's attribute or record.to_dict()",
                      DeprecationWarning, stacklevel=2)
        return self.to_dict().get(key, default)


def _same(value: Any) -> Any:
    return value


EvalRecord.KEYS = tuple(f.name for f in dataclasses.fields(EvalRecord) if f.name != "extra")
_KNOWN = frozenset(EvalRecord.KEYS)


def record_lines(path: str | Path, policy: str = "torn", *,
                 max_line_bytes: int | None = None) -> Iterator[tuple[JsonLine, EvalRecord | None]]:
    """Each line of a results file with its record (None: a blank, torn or corrupt line, a line
    over ``max_line_bytes``, or an object that is no record), under the
    :func:`~thoughtloom.core.files.jsonl_lines` ``policy``. The runner reads its own file whole
    (no limit); a reader of a run that may be huge (the report) passes a limit."""
    for line in jsonl_lines(path, policy, max_line_bytes=max_line_bytes):
        if line.value is None:
            yield line, None
            continue
        try:
            yield line, EvalRecord.from_dict(line.value)
        except NotARecord:
            yield line, None


def score(record: EvalRecord | Mapping[str, Any], metric: str) -> float:
    """A record's score on ``metric`` (:meth:`EvalRecord.score`)."""
    return EvalRecord.of(record).score(metric)


def usage(record: EvalRecord | Mapping[str, Any], key: str) -> float:
    """One usage figure of a record (:meth:`EvalRecord.used`)."""
    return EvalRecord.of(record).used(key)


def meta(record: EvalRecord | Mapping[str, Any]) -> dict[str, Any]:
    """A record's ``meta`` (the example's own fields, e.g. its stratum); {} when it has none."""
    return EvalRecord.of(record).meta
