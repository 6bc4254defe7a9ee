"""Corpora: read passages from files, pool and deduplicate them, fingerprint them.

A corpus is an ordered list of :class:`~thoughtloom.core.types.Passage`.
Passages read from benchmark files are pooled across every question and
deduplicated on (title, whitespace-normalized text), which is how the
Decomposed Prompting paper builds its open-domain corpora. A passage's id is
the record's own id when the source has one (generic JSONL/JSON/CSV with an
``id`` field, files in a folder), else a short hash of title and text, so ids
are stable across runs and across corpora that share the passage.

Bad records raise :class:`DataError` naming ``file:line``; with
``skip_bad=True`` they are skipped and counted in ``Corpus.skipped`` (and
the first few reasons kept in ``Corpus.problems``), never dropped silently.
"""

from __future__ import annotations

import csv
import io
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ..core.errors import ConfigError, DataError
from ..core.files import read_utf8, utf8_lines
from ..core.types import Passage

#: formats with a reader; "auto" picks one from the file name and contents.
FORMATS = ("auto", "jsonl", "json", "csv", "dir", "hotpotqa", "2wiki", "ircot", "musique",
           "hipporag", "fever")

TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".rst")


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


# -- low-level readers: (where, record) pairs with file:line locations -------

def _must_exist(path: Path) -> None:
    if not path.exists():
        raise ConfigError(f"corpus not found: {path}", hint="check --corpus")


def iter_jsonl(path: Path, builder: CorpusBuilder) -> Iterator[tuple[str, Any]]:
    for lineno, raw in utf8_lines(path):
        where = f"{path}:{lineno}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            builder.corpus.read += 1
            builder.bad(where, f"not valid UTF-8 (byte 0x{raw[exc.start:exc.start + 1].hex()}, column {exc.start + 1})")
            continue
        if not line.strip():
            continue
        try:
            yield where, json.loads(line)
        except json.JSONDecodeError as exc:
            builder.corpus.read += 1
            builder.bad(where, f"invalid JSON ({exc.msg})")


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


# -- generic formats ----------------------------------------------------------

TEXT_FIELDS = ("text", "paragraph_text", "contents", "content", "body", "passage")
TITLE_FIELDS = ("title", "wikipedia_title", "name")


def add_generic(where: str, record: Any, builder: CorpusBuilder) -> None:
    """A flat record: text under one of TEXT_FIELDS, optional title and id."""
    if not isinstance(record, dict):
        builder.corpus.read += 1
        builder.bad(where, "expected a JSON object with a 'text' field")
        return
    text_key = next((k for k in TEXT_FIELDS if k in record), None)
    if text_key is None:
        builder.corpus.read += 1
        builder.bad(where, f"no text field (expected one of {', '.join(TEXT_FIELDS)})")
        return
    title = next((record[k] for k in TITLE_FIELDS if k in record), "")
    pid = record.get("id", record.get("_id"))
    meta = {k: v for k, v in record.items()
            if k not in (text_key, "id", "_id", *TITLE_FIELDS) and isinstance(v, (str, int, float, bool))}
    builder.add(where, title, record[text_key], pid, meta)


def read_generic_records(path: Path, builder: CorpusBuilder) -> None:
    for where, record in iter_records(path, builder):
        add_generic(where, record, builder)


def read_csv(path: Path, builder: CorpusBuilder) -> None:
    with io.StringIO(read_utf8(path), newline="") as fh:
        reader = csv.DictReader(fh)
        fields = [f.lower() for f in reader.fieldnames or []]
        if not any(k in fields for k in TEXT_FIELDS):
            raise DataError(f"{path}:1: CSV header has no text column (expected one of {', '.join(TEXT_FIELDS)})")
        for row in reader:
            add_generic(f"{path}:{reader.line_num}", {k.lower(): v for k, v in row.items() if k}, builder)


def read_dir(path: Path, builder: CorpusBuilder, max_words: int = 200) -> None:
    """Every .txt/.md/.rst file under ``path``, split into passages of about ``max_words``.

    Paragraphs (blank-line separated) are packed into chunks; a passage's id
    is ``relative/path#chunk`` and its title the first Markdown heading or
    the file name.
    """
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
    if not files:
        raise ConfigError(f"no {'/'.join(TEXT_SUFFIXES)} files under {path}", hint="check --corpus")
    for file in files:
        rel = file.relative_to(path).as_posix()
        try:
            content = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            builder.corpus.read += 1
            builder.bad(f"{file}:1", f"not UTF-8 text ({exc.reason})")
            continue
        title = _title_of(content) or file.stem.replace("_", " ")
        for n, (line, chunk) in enumerate(chunk_paragraphs(content, max_words)):
            builder.add(f"{file}:{line}", title, chunk, f"{rel}#{n}", {"path": rel, "line": line})


def _title_of(content: str) -> str:
    for line in content.splitlines():
        if line.strip():
            return line.lstrip("#").strip() if line.startswith("#") else ""
    return ""


def chunk_paragraphs(content: str, max_words: int) -> Iterator[tuple[int, str]]:
    """(first line number, text) of chunks packing whole paragraphs up to ``max_words`` words.

    A paragraph longer than ``max_words`` is cut into pieces of that size.
    """
    paragraphs: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 0
    for lineno, line in enumerate(content.splitlines() + [""], 1):
        line = line.lstrip("#").strip() if line.startswith("#") else line  # Markdown heading marks
        if line.strip():
            if not current:
                start = lineno
            current.extend(line.split())
        elif current:
            paragraphs.append((start, current))
            current = []
    chunk: list[str] = []
    chunk_start = 0
    for start, words in paragraphs:
        if chunk and len(chunk) + len(words) > max_words:
            yield chunk_start, " ".join(chunk)
            chunk = []
        if not chunk:
            chunk_start = start
        chunk.extend(words)
        while len(chunk) > max_words:
            yield chunk_start, " ".join(chunk[:max_words])
            chunk = chunk[max_words:]
    if chunk:
        yield chunk_start, " ".join(chunk)


# -- entry point --------------------------------------------------------------

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


Reader = Callable[[Path, CorpusBuilder], None]


def readers() -> dict[str, Reader]:
    from . import formats

    return {
        "jsonl": read_generic_records, "json": read_generic_records, "csv": read_csv, "dir": read_dir,
        "hipporag": read_generic_records, **formats.READERS,
    }


def read_corpus(paths: str | Path | Iterable[str | Path], fmt: str = "auto", *,
                skip_bad: bool = False) -> Corpus:
    """Read and pool one or more corpus files or folders into one deduplicated corpus."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if fmt not in FORMATS:
        raise ConfigError(f"unknown corpus format {fmt!r}", hint=f"use one of {', '.join(FORMATS)}")
    builder = CorpusBuilder(skip_bad=skip_bad)
    table = readers()
    for raw in paths:
        path = Path(raw).expanduser()
        _must_exist(path)
        kind = detect_format(path) if fmt == "auto" else fmt
        if kind == "dir" and not path.is_dir():
            raise ConfigError(f"--format dir needs a folder, got a file: {path}")
        if kind != "dir" and path.is_dir():
            raise ConfigError(f"{path} is a folder", hint="use --format dir (or auto) for a folder of .txt/.md files")
        table[kind](path, builder)
        builder.corpus.sources.append(str(path))
    if not builder.corpus.passages:
        raise DataError(f"no passages read from {', '.join(builder.corpus.sources)}",
                        hint="check --format; every record was empty, duplicate or skipped")
    return builder.corpus
