"""Corpus sources: records with ``file:line`` locations, format sniffing, and the pooling builder.

Every corpus reader (:mod:`.corpus` for generic files, :mod:`.formats` for
benchmark files) walks records with :func:`iter_records` and hands passages
to a :class:`CorpusBuilder`, which pools and deduplicates them on (title,
whitespace-normalized text). A passage's id is the record's own id when the
source has one, else a short hash of title and text, so ids are stable
across runs and across corpora that share the passage.

Bad records raise :class:`DataError` naming ``file:line``; with
``skip_bad=True`` they are skipped and counted in ``Corpus.skipped`` (and
the first few reasons kept in ``Corpus.problems``), never dropped silently.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..core.errors import DataError
from ..core.files import jsonl_lines, read_utf8
from ..core.types import Passage


def normalize_space(text: str) -> str:
    return " ".join(text.split())


def passage_key(title: str, text: str) -> str:
    """Content hash used for deduplication and for ids of id-less passages."""
    raw = f"{normalize_space(title)}\x00{normalize_space(text)}".encode("utf-8")
    return hashlib.sha1(raw).hexdigest()[:16]


@dataclass
class Corpus:
    """Passages in order plus the bookkeeping of how they were read."""

    passages: list[Passage] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    read: int = 0  # records seen (before deduplication)
    duplicates: int = 0
    skipped: int = 0
    problems: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.passages)

    def fingerprint(self) -> str:
        """sha256 over ids, titles and texts in order: changes when any passage does."""
        h = hashlib.sha256()
        for p in self.passages:
            for part in (p.id, p.title, p.text):
                h.update(part.encode("utf-8"))
                h.update(b"\x00")
            h.update(b"\x01")
        return h.hexdigest()

    def summary(self) -> dict[str, Any]:
        return {"passages": len(self.passages), "records_read": self.read,
                "duplicates_merged": self.duplicates, "skipped": self.skipped,
                "sources": list(self.sources)}


class CorpusBuilder:
    """Pools passages from several readers, deduplicating on title + text."""

    def __init__(self, skip_bad: bool = False, max_problems: int = 20) -> None:
        self.corpus = Corpus()
        self.skip_bad = skip_bad
        self.max_problems = max_problems
        self._seen_keys: set[str] = set()
        self._seen_ids: dict[str, str] = {}

    def bad(self, where: str, why: str) -> None:
        """Record a bad record: raise, or count it when skipping."""
        message = f"{where}: {why}"
        if not self.skip_bad:
            raise DataError(message, hint="fix the record, or pass --skip-bad to skip and count such records")
        self.corpus.skipped += 1
        if len(self.corpus.problems) < self.max_problems:
            self.corpus.problems.append(message)

    def add(self, where: str, title: Any, text: Any, pid: Any = None, meta: dict | None = None) -> None:
        self.corpus.read += 1
        if not isinstance(title, str) or not isinstance(text, str):
            self.bad(where, "title and text must be strings")
            return
        title, text = normalize_space(title), normalize_space(text)
        if not text:
            self.bad(where, "empty passage text")
            return
        key = passage_key(title, text)
        if key in self._seen_keys:
            self.corpus.duplicates += 1
            return
        pid = key if pid in (None, "") else str(pid)
        if pid in self._seen_ids:
            self.bad(where, f"duplicate id {pid!r} with different content (first at {self._seen_ids[pid]})")
            return
        self._seen_keys.add(key)
        self._seen_ids[pid] = where
        self.corpus.passages.append(Passage(id=pid, text=text, title=title, meta=meta or {}))



# -- records with file:line locations ----------------------------------------

def iter_jsonl(path: Path, builder: CorpusBuilder) -> Iterator[tuple[str, Any]]:
    for line in jsonl_lines(path, "skip"):
        where = f"{path}:{line.number}"
        if line.error is not None:
            builder.corpus.read += 1
            builder.bad(where, line.error)
        elif line.value is not None:
            yield where, line.value


def iter_json(path: Path, builder: CorpusBuilder) -> Iterator[tuple[str, Any]]:
    """Elements of a top-level JSON array (or the values of an object), with their lines."""
    text = read_utf8(path)
    decoder = json.JSONDecoder()
    i = _skip_ws(text, 0)
    if i >= len(text) or text[i] not in "[{":
        raise DataError(f"{path}:1: expected a JSON array or object of records")
    if text[i] == "{":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
        for key, value in data.items():
            yield f"{path}:[{key!r}]", value
        return
    i = _skip_ws(text, i + 1)
    line, pos = 1, 0
    while i < len(text) and text[i] != "]":
        line += text.count("\n", pos, i)
        pos = i
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
        yield f"{path}:{line}", value
        i = _skip_ws(text, end)
        if i < len(text) and text[i] == ",":
            i = _skip_ws(text, i + 1)
        elif i < len(text) and text[i] != "]":
            raise DataError(f"{path}:{line + text.count(chr(10), pos, i)}: expected ',' or ']'")


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def iter_records(path: Path, builder: CorpusBuilder) -> Iterator[tuple[str, Any]]:
    """JSONL or JSON, by suffix (``.json`` is an array or object, anything else JSON lines)."""
    if path.suffix.lower() == ".json":
        return iter_json(path, builder)
    return iter_jsonl(path, builder)


# -- format sniffing -----------------------------------------------------------

def detect_format(path: Path) -> str:
    """Guess a format from the path and the first record."""
    if path.is_dir():
        return "dir"
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    first = _first_record(path)
    if isinstance(first, dict):
        if "context" in first and "supporting_facts" in first:
            return "2wiki" if "evidences" in first else "hotpotqa"
        if "contexts" in first:
            return "ircot"
        if "paragraphs" in first:
            return "musique"
        if "evidence" in first and "claim" in first and isinstance(first["evidence"], str):
            return "fever"
    return "json" if suffix == ".json" else "jsonl"


def _first_record(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as fh:
            if path.suffix.lower() == ".json":
                head = fh.read(1 << 20)
                start = head.find("{")
                if start < 0:
                    return None
                value, _ = json.JSONDecoder().raw_decode(head, start)
                return value
            for line in fh:
                if line.strip():
                    return json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return None
