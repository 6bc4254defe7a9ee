"""A run folder as the inspector reads it.

``thoughtloom eval --out DIR`` leaves ``results.jsonl`` (one record per
example), ``trace.jsonl`` (every event, each example's events in one
block), ``summary.json`` and, from runs that record their identity,
``run.json``. :class:`RunFolder` reads the records (through the eval's own
reader, :class:`~thoughtloom.eval.record.EvalRecord`) and the small files
at once, and streams the trace one example's block at a time, so a large
run is never held in memory as parsed events all together. A run still in progress, or one
killed half way, reads as far as it got; an unreadable line is skipped and
counted (``skipped_lines``), never fatal.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from .. import tasks
from ..core.errors import ConfigError
from ..core.events import current_names
from ..core.files import jsonl_lines
from ..eval.identity import RUN
from ..eval.record import EvalRecord, record_lines
from ..eval.results import RESULTS, SUMMARY, TRACE

log = logging.getLogger(__name__)

#: Longest line of a run's results or trace the report reads (16 MiB); a longer one (a run made
#: from a huge data record) is skipped and counted, never held.
MAX_RUN_LINE_BYTES = 16 << 20

#: A setting the run's files do not record.
UNKNOWN = "?"


def _json_file(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (ValueError, UnicodeDecodeError) as exc:
        log.warning("%s: unreadable (%s); shown without it", path, exc)
        return {}
    return value if isinstance(value, dict) else {}


def _events(path: Path, counter: list[int]) -> Iterator[dict[str, Any]]:
    """Each JSON-object line of the trace ``path``; a line that is not one (a partial last line of
    a run still writing, or a damaged one) adds 1 to ``counter[0]``."""
    if not path.exists():
        return
    for line in jsonl_lines(path, "skip", max_line_bytes=MAX_RUN_LINE_BYTES):
        if line.value is not None:
            yield line.value
        elif line.error is not None:
            counter[0] += 1


@dataclass
class RunFolder:
    """One run's files: its summary, identity, records (by id, file order) and trace."""

    path: Path
    summary: dict[str, Any]
    identity: dict[str, Any]
    records: dict[str, EvalRecord]
    skipped: list[int] = field(default_factory=lambda: [0])

    @classmethod
    def open(cls, path: str | Path) -> "RunFolder":
        path = Path(path)
        if not (path / RESULTS).is_file():
            raise ConfigError(f"{path} is not a run folder (no {RESULTS})",
                              hint="pass the --out folder of `thoughtloom eval`")
        skipped = [0]
        records: dict[str, EvalRecord] = {}
        # the eval's own reader; "skip": a partial last line of a run still writing is counted, not fatal
        for line, record in record_lines(path / RESULTS, "skip", max_line_bytes=MAX_RUN_LINE_BYTES):
            if record is not None:
                records[record.id] = record  # the last record of an id wins, as on resume
            elif line.error is not None:
                skipped[0] += 1
        summary = _json_file(path / SUMMARY)
        identity = _json_file(path / RUN) or summary.get("identity")  # the runner keeps a copy there
        return cls(path, summary, identity if isinstance(identity, dict) else {}, records, skipped)

    @property
    def skipped_lines(self) -> int:
        return self.skipped[0]

    @property
    def name(self) -> str:
        return self.path.resolve().name

    def setting(self, key: str) -> Any:
        """A run setting from run.json, else summary.json (``strategy``, ``task``, ``model``...)."""
        for source in (self.identity, self.identity.get("config") or {}, self.summary):
            if isinstance(source, dict) and source.get(key) not in (None, ""):
                return source[key]
        return None

    @property
    def strategy(self) -> str:
        return str(self.setting("strategy") or UNKNOWN)

    @property
    def task_name(self) -> str:
        return str(self.setting("task") or UNKNOWN)

    @property
    def model(self) -> str:
        model = self.setting("model")
        if isinstance(model, dict):  # run.json's config describes the model: its id names it
            model = model.get("id")
        return str(model or UNKNOWN)

    def data_identity(self) -> str:
        """The data file the examples came from: its hash where run.json has one, else its path."""
        data = self.setting("data")
        if isinstance(data, dict):
            data = f"sha256:{data['sha256']}" if data.get("sha256") else data.get("path")
        return str(data) if data else UNKNOWN

    def checked_by_rule(self) -> bool:
        """Whether the run's task checks answers by its rules, so a record's gold is no answer to show
        (Game of 24: the gold is the puzzle)."""
        from ..tasks.checks import gold_applies

        task = self.task()
        return task is not None and not gold_applies(task)

    def task(self) -> tasks.Task | None:
        """The run's task, when this version of thoughtloom knows it."""
        try:
            return tasks.get(self.task_name)
        except ConfigError:
            return None

    def metric_names(self) -> list[str]:
        """Every metric some record has, the run's primary one first."""
        names = sorted({k for r in self.records.values() for k in r.metrics})
        primary = self.primary_metric(names)
        return [primary, *[n for n in names if n != primary]] if primary in names else names

    def primary_metric(self, names: list[str] | None = None) -> str:
        """The metric the run was judged by: the one its summary records (``--metric contains``, a
        user function's name), else its task's primary metric where the records have it, else the
        first metric they have (a run from before the summary recorded it, or of an unknown task)."""
        recorded = self.summary.get("primary_metric")
        if isinstance(recorded, str) and recorded:
            return recorded
        names = names if names is not None else sorted({k for r in self.records.values() for k in r.metrics})
        task = self.task()
        if task is not None and (task.primary_metric in names or not names):
            return task.primary_metric
        return names[0] if names else "em"

    def stratum(self, record: EvalRecord) -> str | None:
        """The record's stratum by the task's own rule (None: the task has no strata)."""
        return self._by_task(record, "stratum", lambda task, meta: task.stratum(meta))

    def group(self, record: EvalRecord) -> str | None:
        """The record's group by the task's own rule: examples sharing a context (None: on its own)."""
        return self._by_task(record, "group", lambda task, meta: task.group(meta))

    def _by_task(self, record: EvalRecord, key: str, rule: Callable[[Any, dict], str | None]) -> str | None:
        """``rule(task, meta)``, the task's own reading of the record, or without the task its meta ``key``."""
        task = self.task()
        if task is None:
            value = record.meta.get(key)
            return None if value is None else str(value)
        return rule(task, record.meta)

    def groups(self) -> dict[str, str]:
        """Example id -> group, for the records that have one."""
        return {rid: g for rid, r in self.records.items() if (g := self.group(r)) is not None}

    def trace_blocks(self) -> Iterator[tuple[str, list[dict[str, Any]]]]:
        """(example id, its events) for each contiguous block of ``trace.jsonl``, in file order.

        The runner writes an example's events in one block just before its
        record, so a later block of the same id supersedes an earlier one
        (a rerun example); callers keep the last. Events without an
        ``example`` (a hand-made trace) form blocks of id ``""``. Events named before a rename
        (:data:`~thoughtloom.core.events.RENAMED`) come with today's names.
        """
        block: list[dict[str, Any]] = []
        current: str | None = None
        for event in _events(self.path / TRACE, self.skipped):
            example = event.get("example") if isinstance(event.get("example"), str) else ""
            if block and example != current:
                yield current or "", block
                block = []
            current = example
            block.append(current_names(event))  # an old trace with today's names
        if block:
            yield current or "", block
