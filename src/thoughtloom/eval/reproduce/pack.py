"""A suite's results folder made fit to commit beside its card, so that its n can grow on any machine.

``thoughtloom reproduce SUITE --out docs/cards/runs/SUITE --pack`` runs (or
resumes, or with ``--replay`` only re-renders) the suite there and then packs
the folder: every cell keeps what a resume and a card need -- ``results.jsonl``
(one record per finished example: a later sitting on another machine skips
those and runs only the new ones), ``run.json`` (the identity a resume is
checked against), ``summary.json`` -- and the suite's ``reproduce.json``
(every sitting). Each ``trace.jsonl`` (every model call and event, the bulk of
a folder) is gzip-compressed to ``trace.jsonl.gz``, merged with the one a
previous packing left, and left out where its compressed size is over
``trace_limit`` (default :data:`TRACE_LIMIT`); lock files (``.lock``, which
name a host and pid) are removed. What was kept and left out is written to
``OUT/packed.json``. The completion cache is never part of it (``--cache`` lives
elsewhere), nor is benchmark data.

A packed trace is not read back by the run inspector (``gunzip -k
trace.jsonl.gz`` restores it); a resumed sitting writes a fresh
``trace.jsonl`` beside it, which the next packing merges in (after a trace
was left out once, the next packing holds only the events written since).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from ..lock import LOCK
from ..results import TRACE, atomic_write

#: Compressed bytes of one cell's trace kept in a packed folder (2 MB); a larger one is left out.
TRACE_LIMIT = 2_000_000
PACKED_TRACE = TRACE + ".gz"
PACKED = "packed.json"


@dataclass(frozen=True)
class PackedTrace:
    folder: str  # relative to OUT
    raw_bytes: int
    packed_bytes: int
    kept: bool


def pack(out: Path, trace_limit: int = TRACE_LIMIT) -> list[PackedTrace]:
    """Pack every trace under ``out`` (see the module docstring); returns what happened to each."""
    found = []
    for trace in sorted(out.rglob(TRACE)):
        folder = trace.parent
        packed = folder / PACKED_TRACE
        earlier = gzip.decompress(packed.read_bytes()) if packed.exists() else b""
        data = earlier + trace.read_bytes()
        blob = gzip.compress(data, mtime=0)  # no timestamp: the same events pack to the same bytes
        kept = len(blob) <= trace_limit
        if kept:
            tmp = packed.with_name(packed.name + ".tmp")
            tmp.write_bytes(blob)
            tmp.replace(packed)
        elif packed.exists():
            packed.unlink()
        trace.unlink()
        found.append(PackedTrace(folder.relative_to(out).as_posix(), len(data), len(blob), kept))
    for lock in out.rglob(LOCK):
        lock.unlink()
    if found:
        previous = _previous(out)
        merged = {**previous, **{p.folder: asdict(p) for p in found}}
        atomic_write(out / PACKED, json.dumps({"trace_limit": trace_limit, "traces": merged}, indent=2) + "\n")
    return found


def _previous(out: Path) -> dict[str, dict]:
    try:
        traces = json.loads((out / PACKED).read_text(encoding="utf-8")).get("traces", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return traces if isinstance(traces, dict) else {}
