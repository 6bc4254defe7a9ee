"""A data file that changed under a run folder: are the examples already run still the same?

A run's identity hashes the whole data file (``config.data.sha256``), so a file
that grew, shrank or was re-split refuses a resume although the examples the
folder has finished may be byte-for-byte what they were (issue 38: a card's
committed run folders resumed after the shared data were cut from 200 records
to their first 150). When that hash is the only difference,
:func:`~.identity.open_identity` asks :func:`check_finished` instead: each
finished record in ``results.jsonl`` against the example of the same id that
this run was given.

What decides an example's result, and so what is compared: the problem's
``question`` and ``context`` (all a strategy reads of it) and the ``gold`` (all
the task scores against). Not the example's ``meta``: strategies do not read
it, and a task may derive it from the slice loaded (factqa's ``strata_sizes``
grows with ``--limit``), so comparing it would refuse every grown run. Nor
the example's position in the file: records are keyed by id.

How: each record written since this check exists carries ``example_sha256``
(:func:`example_sha256`, over question, context and gold), which covers the
context a record does not store. A record written before has no digest; it
is compared by what it holds -- its ``input`` (the question) and ``gold``,
each as written to the record (through the one line writer, so a value JSON
rounds, a tuple read back as a list, compares equal) -- and its context goes
unchecked (said in the run's ``data_changes``: ``compared_by``). Every record
in the file counts, errors included (their ids are done unless
``retry_errors``).

A finished example that is not among this run's examples is a change too:
either the new file lacks it, or this run's slice (``--limit``, ``--n``, a
pilot) stops before it; only the file's hash could tell, and it changed. A
resume that covers it is checked in full.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..core.text import encodable
from ..core.types import Problem, to_json
from ..tasks.base import Example
from .record import EvalRecord, dump_line
from .results import read_records

#: How a finished record was compared: by its digest, or (older records) by its input and gold.
BY_DIGEST, BY_INPUT_AND_GOLD = "example_sha256", "input_and_gold"


def example_sha256(problem: Problem, gold: Any) -> str:
    """sha256 of what decides an example's result: the question, the context and the gold (as JSON
    with sorted keys, so a record's digest does not depend on how a loader ordered a gold dict)."""
    content = {"question": problem.question, "context": problem.context, "gold": to_json(gold)}
    text = json.dumps(content, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(encodable(text).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class FinishedCheck:
    """What :func:`check_finished` found: how many finished records were compared and how, and the
    first that is not the same in this run's examples (None: every one is)."""

    compared_by: dict[str, int] = field(default_factory=dict)  # BY_DIGEST / BY_INPUT_AND_GOLD -> records
    changed: str | None = None  # the first changed example's id
    why: str | None = None  # what about it: "changed (its question)", "is not among this run's examples ..."

    @property
    def finished(self) -> int:
        return sum(self.compared_by.values())


def _as_written(value: Any) -> Any:
    """``value`` as a record line holds it once read back (the runner's one writer, then JSON)."""
    return json.loads(dump_line(value))


def _difference(record: EvalRecord, example: Example) -> tuple[str, str | None]:
    """(how it was compared, what differs or None) for one finished record and this run's example."""
    if record.example_sha256 is not None:
        same = record.example_sha256 == example_sha256(example.problem, example.gold)
        return BY_DIGEST, None if same else "its question, context or gold"
    parts = [name for name, old, new in (("question", record.input, example.problem.question),
                                         ("gold", record.gold, example.gold))
             if old != _as_written(new)]
    return BY_INPUT_AND_GOLD, " and ".join(f"its {p}" for p in parts) or None


def check_finished(folder: str | Path, examples: Sequence[Example]) -> FinishedCheck:
    """Compare every finished record in ``folder`` with the example of its id in ``examples``;
    stops at the first that differs or is not there."""
    by_id = {e.problem.id: e for e in examples}
    counts: dict[str, int] = {}
    for rid, record in read_records(folder).items():
        example = by_id.get(rid)
        if example is None:
            return FinishedCheck(counts, rid, "is not among this run's examples (the new data file lacks it, "
                                              "or this run's limit stops before it)")
        how, why = _difference(record, example)
        if why is not None:
            return FinishedCheck(counts, rid, f"changed ({why})")
        counts[how] = counts.get(how, 0) + 1
    return FinishedCheck(counts)
