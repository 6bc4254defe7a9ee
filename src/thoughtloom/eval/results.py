"""The results file: append-only JSON lines that survive a crash.

Each finished example is one line, written and flushed at once. A process
killed mid-write can leave a partial last line; :class:`ResultsFile` drops it
on open, so rerunning the same command resumes with no lost and no
duplicated records. The trace file is kept consistent with the results: it
is compacted on open to the events of examples that have a result.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

RESULTS = "results.jsonl"
TRACE = "trace.jsonl"
SUMMARY = "summary.json"


def _read_lines(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Parsed records, and the byte length of the clean prefix of the file."""
    records: list[dict[str, Any]] = []
    good = 0
    if not path.exists():
        return records, 0
    with path.open("rb") as fh:
        for raw in fh:
            if not raw.endswith(b"\n"):
                break  # a partial write from a killed process
            try:
                records.append(json.loads(raw))
            except json.JSONDecodeError:
                break
            good += len(raw)
    return records, good


class ResultsFile:
    def __init__(self, out_dir: str | Path, *, retry_errors: bool = False) -> None:
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / RESULTS
        self.trace_path = self.dir / TRACE
        records, good = _read_lines(self.path)
        if retry_errors:
            records = [r for r in records if not r.get("error")]
        # Last record per id wins; keep file order.
        by_id: dict[str, dict[str, Any]] = {}
        for r in records:
            by_id[r["id"]] = r
        rewrite = good != (self.path.stat().st_size if self.path.exists() else 0) \
            or len(by_id) != len(records) or retry_errors
        self.records = by_id
        if rewrite:
            self._rewrite(self.path, by_id.values())
        self._compact_trace()
        self._fh = self.path.open("a", encoding="utf-8")
        self._trace_fh = self.trace_path.open("a", encoding="utf-8")

    @staticmethod
    def _rewrite(path: Path, records: Iterable[dict[str, Any]]) -> None:
        tmp = path.with_suffix(path.suffix + ".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        os.replace(tmp, path)

    def _compact_trace(self) -> None:
        events, good = _read_lines(self.trace_path)
        if not events and good == 0:
            return
        keep = [e for e in events if e.get("example") in self.records]
        if len(keep) != len(events) or good != self.trace_path.stat().st_size:
            self._rewrite(self.trace_path, keep)

    def done(self) -> set[str]:
        return set(self.records)

    def append(self, record: dict[str, Any], events: Iterable[dict[str, Any]] = ()) -> None:
        """Trace events first, then the result line that makes them count."""
        lines = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events)
        if lines:
            self._trace_fh.write(lines)
            self._trace_fh.flush()
        self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.records[record["id"]] = record

    def close(self) -> None:
        self._fh.close()
        self._trace_fh.close()

    def write_summary(self, summary: dict[str, Any]) -> Path:
        path = self.dir / SUMMARY
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, path)
        return path
