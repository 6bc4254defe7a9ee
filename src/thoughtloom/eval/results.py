"""The results file: append-only JSON lines that survive a crash.

Each finished example is one line (an :class:`~.record.EvalRecord`, read
back through its one reader), written and flushed at once. On open,
:class:`ResultsFile` keeps every valid line: a partial last line (a process
killed mid-write) is dropped, and a corrupt line in the middle (a disk
error, a hand edit) is set aside in ``results.jsonl.bad`` with its line
number, never taking the lines after it down with it. Rerunning the same
command resumes with no lost and no duplicated records.

The trace file is kept consistent with the results: on open it is compacted
to one trace per kept example (its last block of events), so a re-run
example (``--retry-errors``) does not leave its earlier events behind.

A record and its events are checked before they are written
(:func:`writable`): what JSON cannot hold becomes the example's error
(:func:`describe_error`), never a half-written line.

Every rewrite writes a new file and renames it over the old one, so a kill
at any moment leaves either the old or the new file, never half of one; a
write that fails (a full disk) removes its temporary file. A full disk or
quota is :class:`DiskFull` (:func:`disk_errors`), naming the folder and
what to do: the records already written stay, and the same command resumes.
Lines are made encodable (lone surrogates -> U+FFFD) as they are written.

The folder is meant to be held by one writer: the runner takes
:class:`~thoughtloom.eval.lock.OutputLock` before opening it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import logging
import os
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..core.files import jsonl_lines
from ..core.text import encodable
# the record (one line) is eval.record's; these names were this module's and stay importable from it
from .tally import Tally
from .record import EvalRecord, dump_line, finite_number, meta, number, record_lines, score, usage

__all__ = ["RESULTS", "TRACE", "SUMMARY", "BAD_SUFFIX", "EvalRecord", "RecordAndTrace", "ResultsFile", "DiskFull",
           "atomic_write", "describe_error", "disk_errors", "dump_line", "finite_number", "last_blocks", "meta",
           "number", "read_lines", "read_records", "score", "usage", "writable"]

log = logging.getLogger(__name__)

RESULTS = "results.jsonl"
TRACE = "trace.jsonl"
SUMMARY = "summary.json"
BAD_SUFFIX = ".bad"


#: Longest ``error`` text kept in a record (a parse error may quote a whole reply).
MAX_ERROR_CHARS = 1000


def describe_error(exc: BaseException) -> str:
    text = encodable(f"{type(exc).__name__}: {exc}")
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + " ..."


#: One example's record and its trace events, as the results file writes them.
RecordAndTrace = tuple[EvalRecord, list[dict[str, Any]]]


def writable(record: EvalRecord, events: list[dict[str, Any]]) -> RecordAndTrace:
    """``record`` and ``events`` as the results file can write them.

    An event JSON cannot hold (say an int past Python's 4,300-digit limit)
    is replaced by an ``error`` event; a record that cannot be written loses
    its prediction and details and gets an error saying why.
    """
    safe_events = []
    for event in events:
        try:
            dump_line(event)
            safe_events.append(event)
        except ValueError as exc:
            safe_events.append({"type": "error", "t": event.get("t", 0.0), "example": record.id,
                                "error": f"unwritable {event.get('type')} event: {describe_error(exc)}"})
    try:
        record.to_json()
    except ValueError as exc:
        error = f"unwritable record: {describe_error(exc)}"
        record = dataclasses.replace(record, prediction=None, confidence=None, details={},
                                     error=f"{record.error}; {error}" if record.error else error)
        safe_events.append({"type": "error", "t": 0.0, "example": record.id, "error": error})
        record.to_json()  # every remaining field came from our code or the data file
    return record, safe_events


class DiskFull(OSError):
    """No space (or quota) left where an eval writes; says which folder and what to do."""

    def __init__(self, folder: Path | str) -> None:
        super().__init__(errno.ENOSPC, "no space left on device")
        self.folder = str(folder)

    def __str__(self) -> str:
        return (f"no space left on device writing {self.folder} (free space in {self.folder} or choose another "
                "--out; finished records are kept and the same command resumes)")


@contextlib.contextmanager
def disk_errors(folder: Path | str) -> Iterator[None]:
    """Inside, a full disk or quota (ENOSPC, EDQUOT) comes out as :class:`DiskFull` naming ``folder``."""
    try:
        yield
    except DiskFull:
        raise
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            raise DiskFull(folder) from exc
        raise


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a synced temporary file and a rename; a failed write
    (a full disk) leaves no temporary file behind."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def read_lines(path: Path) -> tuple[list[dict[str, Any]], list[tuple[int, bytes]], bool]:
    """JSON-object lines of ``path`` (the trace's events; a results file's lines are read as
    records by :func:`~.record.record_lines`): (objects, corrupt (line number, raw), whether to rewrite).

    A last line without its newline is a partial write: dropped, not corrupt.
    """
    records: list[dict[str, Any]] = []
    bad: list[tuple[int, bytes]] = []
    dirty = False
    if not path.exists():
        return records, bad, dirty
    for line in jsonl_lines(path, "torn", max_line_bytes=None):  # our own file: every line it holds
        if line.value is not None:
            records.append(line.value)
            continue
        dirty = True  # a partial write from a killed process, a blank line or a damaged one
        if line.error is not None:
            bad.append((line.number, line.raw))
    return records, bad, dirty


def last_blocks(events: list[dict[str, Any]], keep: set[str]) -> list[dict[str, Any]]:
    """The events of examples in ``keep``, each example's last contiguous block only.

    The runner writes an example's events in one block just before its
    record, so an earlier block of the same example is from an earlier,
    superseded attempt.
    """
    blocks: dict[str, tuple[int, int]] = {}  # example -> (start, end) of its last block
    start = 0
    for i in range(1, len(events) + 1):
        if i == len(events) or events[i].get("example") != events[start].get("example"):
            ex = events[start].get("example")
            if isinstance(ex, str) and ex in keep:
                blocks[ex] = (start, i)
            start = i
    spans = sorted(blocks.values())
    return [e for a, b in spans for e in events[a:b]]


class ResultsFile:
    """The results file of an output folder, opened for appending (see the module docstring).

    It holds the kept ids (in file order) and the summary's running :class:`~.summary.Tally`,
    never the records themselves, so a long run's memory does not grow with its records;
    :attr:`records` reads them back from the file.
    """

    def __init__(self, out_dir: str | Path, *, retry_errors: bool = False) -> None:
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / RESULTS
        self.trace_path = self.dir / TRACE
        records: list[EvalRecord] = []
        bad: list[tuple[int, bytes]] = []
        dirty = False
        if self.path.exists():
            for line, record in record_lines(self.path, "torn"):
                if record is not None:
                    records.append(record)
                    continue
                dirty = True  # a partial write (a killed process), a blank or damaged line, an object with no id
                if line.error is not None:
                    bad.append((line.number, line.raw))
        if bad:
            self._set_aside(bad)
        kept = [r for r in records if not r.failed] if retry_errors else records
        # Last record per id wins; keep file order.
        by_id: dict[str, EvalRecord] = {}
        for r in kept:
            by_id[r.id] = r
        self.ids: dict[str, None] = dict.fromkeys(by_id)
        self.tally = Tally.of(by_id.values())
        if dirty or len(by_id) != len(records):
            atomic_write(self.path, "".join(r.to_json() for r in by_id.values()))
        del records, kept, by_id
        self._compact_trace()
        self._fh = self.path.open("a", encoding="utf-8")
        self._trace_fh = self.trace_path.open("a", encoding="utf-8")

    def _set_aside(self, bad: list[tuple[int, bytes]]) -> None:
        """Keep corrupt lines (with their line numbers) where a person can look at them."""
        aside = self.path.with_name(self.path.name + BAD_SUFFIX)
        with aside.open("ab") as fh:
            for lineno, raw in bad:
                fh.write(f"{lineno}\t".encode() + raw)
        log.warning("%s: %d corrupt line(s) (first: line %d) set aside in %s; those examples run again",
                    self.path, len(bad), bad[0][0], aside)

    def _compact_trace(self) -> None:
        events, _bad, dirty = read_lines(self.trace_path)
        if not events and not dirty:
            return
        keep = last_blocks(events, set(self.ids))
        if dirty or len(keep) != len(events):
            atomic_write(self.trace_path, "".join(dump_line(e) for e in keep))

    @property
    def records(self) -> dict[str, EvalRecord]:
        """The kept records by example id, in file order, read from the file."""
        return read_records(self.dir)

    def each(self) -> Iterator[EvalRecord]:
        """The kept records one at a time, read from the file as they are wanted (each id once:
        the file is rewritten to one line per id on open, and a run appends each id once)."""
        self._fh.flush()
        for _line, record in record_lines(self.path, "torn"):
            if record is not None:
                yield record

    def done(self) -> set[str]:
        return set(self.ids)

    def append(self, record: EvalRecord, events: Iterable[dict[str, Any]] = ()) -> None:
        """Trace events first, then the result line that makes them count.

        Everything is serialized before anything is written, so a value JSON
        cannot hold raises ``ValueError`` with both files untouched.
        """
        lines = "".join(dump_line(e) for e in events)
        line = record.to_json()
        if lines:
            self._trace_fh.write(lines)
            self._trace_fh.flush()
        self._fh.write(line)
        self._fh.flush()
        os.fsync(self._fh.fileno())
        if record.id in self.ids:  # not the runner's way (it runs each id once): count the file again
            self.ids.pop(record.id)
            self.ids[record.id] = None
            self.tally = Tally.of(self.records.values())
        else:
            self.ids[record.id] = None
            self.tally.add(record)

    def close(self) -> None:
        self._fh.close()
        self._trace_fh.close()

    def write_summary(self, summary: dict[str, Any]) -> Path:
        path = self.dir / SUMMARY
        atomic_write(path, encodable(json.dumps(summary, indent=2, ensure_ascii=False, default=str)) + "\n")
        return path


def read_records(out_dir: str | Path) -> dict[str, EvalRecord]:
    """The records of a results folder by example id (the last one per id), read without
    taking the folder: for reports and estimates beside or after a run."""
    path = Path(out_dir) / RESULTS
    if not path.exists():
        return {}
    return {record.id: record for _line, record in record_lines(path, "torn") if record is not None}
